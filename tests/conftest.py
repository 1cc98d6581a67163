"""What every test shares: the fake engines importable, and this checkout's c4engine
in every process the tests start.

The fake engines in ``tests/engines/`` run as scripts (their folder is then on
their path) and are imported as modules by some tests (pytest's ``pythonpath``
setting in pyproject.toml).  An engine process a test starts (``python -m
c4engine``, a fake engine importing c4engine) must run the code under test, not
another installed copy: PYTHONPATH puts this checkout first for them."""

from __future__ import annotations

import os
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent

os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(REPOSITORY), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])
