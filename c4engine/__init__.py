"""c4engine: a Connect-Four engine that speaks a UCI-style line protocol, and a Python library.

The public API is exactly what ``__all__`` lists (with the modules ``connectx``, Kaggle's
agent, and ``engine``, the client for protocol engines); every other module may change.
Importing the package is light (no numba, no search), because the protocol
process imports it too and must answer ``uci`` at once.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .api import SolveLimitReached, analyse, best_move, review, solve, use_book, warm_up
from .position import IllegalMoveError, Position
from .service.client import Remote, RemoteError, remote
from .reviewer.verdicts import GameReview, MoveVerdict, PlayerSummary, Value
from .version import __version__

__all__ = [
    "GameReview", "IllegalMoveError", "MoveVerdict", "PlayerSummary", "Position", "Remote", "RemoteError",
    "SolveLimitReached", "Value",
    "__version__", "analyse", "best_move", "connectx", "engine", "remote", "review", "solve", "use_book", "warm_up",
]


_ON_FIRST_USE = ("connectx", "engine")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ON_FIRST_USE))


def __getattr__(name: str) -> ModuleType:
    """``c4engine.engine`` and ``c4engine.connectx`` are imported on first use: the
    protocol process imports the package too and needs neither (the client alone
    costs 15-20 ms of imports before ``uci`` could be answered)."""
    if name in _ON_FIRST_USE:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
