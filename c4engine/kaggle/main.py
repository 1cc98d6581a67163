"""c4engine's Kaggle ConnectX agent: the ``main.py`` of a submission bundle.

``c4engine connectx bundle`` copies this file to the root of the archive, beside
the ``c4engine`` package (with numba's compiled kernel for the bundle's board)
and, for 7x6, the opening book in ``book/``.  Kaggle runs it with ``exec`` and
plays the last callable it defines, :func:`agent`; it does not install
c4engine, and on kaggle-environments 1.12.0 it loads the file inside the
agent's first, timed move.  So loading only starts the warm-up (numba loads
or compiles the kernel, the book is mapped) on a thread, and each move waits
for it only as long as ``actTimeout`` allows: until the search is ready, and
wherever numba is missing, a plain-Python player answers (it wins or blocks
a four it sees, else keeps to the centre without handing over a four), which
plays more weakly but never late.

Each board is on its own: a configuration of another board (another
``inarow``, other sizes) starts that board's warm-up on a thread of its own
(once the bundle's board is ready), and its moves are the plain-Python
player's until its kernel is compiled,
while the bundle's board keeps its searcher and its lock (c4engine's API keeps
a searcher per board); a board that fails (one c4engine cannot play, or whose
kernel does not build) gets the plain-Python player from then on, and the
others keep their search.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import time
from typing import Any

STARTED = time.perf_counter()
# Written by the bundle command: the board its kernel was compiled for.
BOARD = (7, 6, 4)
SAFETY_SHARE, SAFETY_SECONDS = 0.1, 0.2  # as c4engine.connectx keeps from actTimeout
KAGGLE_DEFAULTS = {"columns": 7, "rows": 6, "inarow": 4, "actTimeout": 2.0}

# Kaggle runs this file with exec() and no __file__, appending its folder to
# sys.path and popping the last entry afterwards; the package is imported later
# (on the warm-up thread), so the folder goes first on sys.path for good, even
# when Kaggle's entry (an absolute path) names it too.
HERE = os.path.dirname(os.path.abspath(inspect.currentframe().f_code.co_filename))  # type: ignore[union-attr]
if sys.path[:1] != [HERE]:
    sys.path.insert(0, HERE)
# The bundled kernel was compiled for any x86-64 CPU; the book lies beside this file.
os.environ.setdefault("NUMBA_CPU_NAME", "generic")
if os.path.isdir(os.path.join(HERE, "book")):
    os.environ.setdefault("C4ENGINE_BOOK_DIR", os.path.join(HERE, "book"))

READY: dict[tuple[int, int, int], threading.Event] = {}
FAILED: dict[tuple[int, int, int], BaseException] = {}  # by board: only that board's moves fall back


def warm_up(board: tuple[int, int, int]) -> None:
    """Build c4engine's searcher for ``board`` (numba loads the bundled kernel, or compiles one).
    Another board's waits for the bundle's own first: numba loads a cached kernel
    under the lock it compiles under, so a compile started first would hold the
    bundle's board back for as long as it takes."""
    if board != BOARD:
        start_warm_up(BOARD).wait()
    try:
        from c4engine.api import warm_up as build_searcher

        build_searcher(*board)
    except BaseException as err:  # numba missing or broken, or a board it cannot play: the plain-Python player
        FAILED[board] = err
    finally:
        READY[board].set()


def start_warm_up(board: tuple[int, int, int]) -> threading.Event:
    if board not in READY:
        READY[board] = threading.Event()
        threading.Thread(target=warm_up, args=(board,), name="c4engine warm-up", daemon=True).start()
    return READY[board]


def searcher_ready(board: tuple[int, int, int], wait: float) -> bool:
    """Whether c4engine's searcher for ``board`` is built, waiting at most ``wait``
    seconds for its warm-up (started here if it is not yet).  A searcher that the API
    has dropped since, for the boards used after it, is built again on a thread."""
    if not start_warm_up(board).wait(timeout=max(0.0, wait)) or board in FAILED:
        return False
    from c4engine.api import is_warm

    if is_warm(*board):
        return True
    del READY[board]
    start_warm_up(board)
    return False


start_warm_up(BOARD)
FIRST_CALL = [True]


def field(record: Any, name: str) -> Any:
    value = record.get(name) if isinstance(record, dict) else getattr(record, name, None)
    return KAGGLE_DEFAULTS.get(name) if value is None else value


def fallback_column(board: list[int], mark: int, columns: int, rows: int, inarow: int) -> int:
    """A legal column without search: a four of its own, else block one, else the
    most central column that does not let the opponent make a four on top of it."""
    def drop_row(col: int) -> int:
        return max((row for row in range(rows) if board[row * columns + col] == 0), default=-1)

    def makes_four(col: int, who: int) -> bool:
        row = drop_row(col)
        for step_row, step_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
            count = 1
            for sign in (1, -1):
                r, c = row + sign * step_row, col + sign * step_col
                while 0 <= r < rows and 0 <= c < columns and board[r * columns + c] == who:
                    count, r, c = count + 1, r + sign * step_row, c + sign * step_col
            if count >= inarow:
                return True
        return False

    legal = sorted((col for col in range(columns) if drop_row(col) >= 0), key=lambda c: abs(2 * c - columns + 1))
    other = 3 - mark
    for who in (mark, other):
        for col in legal:
            if makes_four(col, who):
                return col
    for col in legal:
        row = drop_row(col)
        board[row * columns + col] = mark
        above = row > 0 and makes_four(col, other)
        board[row * columns + col] = 0
        if not above:
            return col
    return legal[0]


def agent(observation: Any, configuration: Any) -> int:
    """Kaggle's agent: c4engine's move once its search is ready, the plain-Python one until then."""
    called = time.perf_counter()
    spent = called - STARTED if FIRST_CALL[0] else 0.0  # the first call paid for loading this file
    FIRST_CALL[0] = False
    act_timeout = float(field(configuration, "actTimeout"))
    columns, rows, inarow = (int(field(configuration, name)) for name in ("columns", "rows", "inarow"))
    shape = (columns, rows, inarow)
    usable = act_timeout * (1.0 - SAFETY_SHARE) - SAFETY_SECONDS - spent
    if searcher_ready(shape, usable - SAFETY_SECONDS):  # another board than the bundle's compiles first
        from c4engine.connectx import agent as c4engine_agent

        given = {name: field(configuration, name) for name in ("columns", "rows", "inarow")}
        left = act_timeout - (time.perf_counter() - called) - spent
        return c4engine_agent(observation, {**given, "actTimeout": max(left, SAFETY_SECONDS + 0.05)})
    return fallback_column(list(field(observation, "board")), int(field(observation, "mark")), columns, rows, inarow)
