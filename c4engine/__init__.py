"""c4engine: a Connect-Four engine that speaks a UCI-style line protocol, and a Python library.

The public API is exactly what ``__all__`` lists (with the modules ``connectx``, Kaggle's
agent, and ``engine``, the client for protocol engines); every other module may change.
Importing the package is light (no numba, no search), because the protocol
process imports it too and must answer ``uci`` at once.
"""

from __future__ import annotations

from . import connectx, engine
from .api import analyse, best_move, solve, warm_up
from .position import IllegalMoveError, Position

__version__ = "0.1.0"

__all__ = [
    "IllegalMoveError", "Position", "__version__", "analyse", "best_move", "connectx", "engine", "solve",
    "warm_up",
]
