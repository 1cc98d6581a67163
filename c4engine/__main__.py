"""``python -m c4engine``: the same as the ``c4engine`` command."""

from __future__ import annotations

from .cli import main

main()
