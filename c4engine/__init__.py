"""c4engine: a Connect-Four engine that speaks a UCI-style line protocol."""

from __future__ import annotations

__version__ = "0.1.0"
