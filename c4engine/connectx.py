"""Kaggle's ConnectX agent interface: ``agent(observation, configuration) -> column``.

Kaggle calls the agent once per move with the board as a flat list (top row
first, 0 empty, 1 and 2 the players' stones), the agent's ``mark`` (1 moves
first), and the game's configuration; it answers a 0-based column.  This
agent searches in-process with the searcher :mod:`c4engine.api` keeps for the board, so
no process starts per move, and it stops in time for ``actTimeout``.

Any board whose configuration c4engine plays (``columns`` x (``rows`` + 1) at most
128, so 8x8 and 10x8 too, ``inarow`` from 3 to the longer side, at most 26 columns); the opening book
is used on 7 columns, 6 rows and 4 in a row only.

Start-up: the first call in a process builds the searcher (numba compiles or
loads the kernel for the board, on 7x6 the opening book is read: a few seconds;
the first use of a new board on a fresh install compiles it, up to 15 s).  Kaggle charges
time past ``actTimeout`` to the agent's overage budget
(``observation.remainingOverageTime``, 60 s by default), so a cold first
move spends its start-up from that budget and then searches only briefly.
To keep the first move within ``actTimeout`` too, call :func:`c4engine.warm_up`
(with the board's ``width``, ``height`` and ``connect``) when the agent's file is
loaded (Kaggle does not time that).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from .api import best_move, warm_up
from .arguments import is_whole_number, seconds
from .geometry import STANDARD, Geometry
from .position import IllegalMoveError, Position, board_shape

__all__ = ["agent"]

KAGGLE_DEFAULTS = {"columns": STANDARD.width, "rows": STANDARD.height, "inarow": STANDARD.connect}
KAGGLE_ACT_TIMEOUT = 2.0
SAFETY_SHARE = 0.1
SAFETY_SECONDS = 0.2
MIN_SEARCH_SECONDS = 0.02
MARKS = {1: "w", 2: "b"}


def agent(observation: object, configuration: object) -> int:
    """The column (0-based, as Kaggle counts) that c4engine plays for ``observation``.

    ``observation`` needs ``board`` (a flat list of ``rows * columns`` cells, top
    row first, holding 0, 1 and 2) and ``mark`` (1 or 2, the side to move);
    ``configuration`` gives ``columns``, ``rows``, ``inarow`` and ``actTimeout``
    (seconds), missing fields taking Kaggle's defaults (7, 6, 4 and 2 s).  Both
    may be dicts or objects with attributes (Kaggle passes structs that are both).

    The search uses ``actTimeout`` less a safety margin (10% and 0.2 s) and less
    the time this call already spent, so a cold first call (see the module's
    notes on start-up) overruns ``actTimeout`` by about the start-up only; an
    ``actTimeout`` of ``inf`` (or a billion seconds or more) searches until the
    result is proven.

    Values are read by the API's one rule (:mod:`c4engine.arguments`): sizes,
    cells and the mark are whole numbers (``1.0`` and ``"7"`` are not), and
    ``actTimeout`` is a number of seconds above 0.  Raises ``ValueError``
    naming a value that breaks it, and :class:`c4engine.IllegalMoveError` (a
    ``ValueError``) for a configuration c4engine cannot play (the message names
    the limit), a board that no game reaches or a game that is already over."""
    started = time.perf_counter()
    act_timeout = seconds(field(configuration, "actTimeout", KAGGLE_ACT_TIMEOUT), "ConnectX: actTimeout")
    geometry = geometry_of(configuration)
    position = position_of(field(observation, "board"), field(observation, "mark"), geometry)
    warm_up(geometry.width, geometry.height, geometry.connect)
    limit = None if act_timeout is None else search_seconds(act_timeout, time.perf_counter() - started)
    return best_move(position, time=limit) - 1


def field(record: object, name: str, default: Any = None) -> Any:
    """``record[name]`` for a mapping, ``record.name`` otherwise; ``default`` if absent."""
    value = record.get(name) if isinstance(record, Mapping) else getattr(record, name, None)
    if value is not None:
        return value
    if default is None:
        raise ValueError(f"ConnectX: no '{name}' given")
    return default


def geometry_of(configuration: object) -> Geometry:
    """The board ``columns``, ``rows`` and ``inarow`` describe; IllegalMoveError
    naming the limit for one c4engine cannot play."""
    given = {name: field(configuration, name, default) for name, default in KAGGLE_DEFAULTS.items()}
    try:
        return board_shape(given["columns"], given["rows"], given["inarow"])
    except IllegalMoveError as err:
        raise IllegalMoveError(
            f"ConnectX: c4engine cannot play {given['columns']!r} columns, {given['rows']!r} rows, "
            f"{given['inarow']!r} in a row: {err}") from None


def position_of(board: Iterable[int], mark: int, geometry: Geometry = STANDARD) -> Position:
    """The position a Kaggle board of ``geometry`` shows, ``mark`` to move (1 is the
    first player).

    The board is written as a FEN and read back, so that every check the FEN
    reader makes (floating stones, counts out of turn, a finished game) applies
    here too."""
    columns, rows = geometry.width, geometry.height
    try:
        cells = list(board)
    except TypeError:
        raise IllegalMoveError(f"ConnectX board {board!r}: expected a list of cells") from None
    if len(cells) != columns * rows:
        raise IllegalMoveError(f"ConnectX board: expected {columns * rows} cells, found {len(cells)}")
    for index, cell in enumerate(cells):
        if not is_whole_number(cell) or cell not in (0, 1, 2):
            raise IllegalMoveError(
                f"ConnectX board: cell {index} is {cell!r}; cells must be 0 (empty), 1 or 2")
    if not is_whole_number(mark) or mark not in MARKS:
        raise IllegalMoveError(f"ConnectX mark {mark!r}: expected 1 or 2")
    ranks = [re.sub("1+", lambda run: str(len(run.group())),
                    "".join("1Pp"[cell] for cell in cells[row * columns:(row + 1) * columns]))
             for row in range(rows)]
    return Position.from_fen(f"{'/'.join(ranks)} {MARKS[mark]}", columns, rows, geometry.connect)


def search_seconds(act_timeout: float, spent: float) -> float:
    """Seconds the search may take: ``act_timeout`` less the safety margin and less
    what the call has ``spent`` already, but at least a brief search (which the
    book and the exact solver often turn into a perfect move anyway)."""
    usable = act_timeout * (1.0 - SAFETY_SHARE) - SAFETY_SECONDS - spent
    return max(MIN_SEARCH_SECONDS, usable)
