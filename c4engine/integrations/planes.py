"""The board as PettingZoo's ``connect_four_v3`` shows it, for any size, and the
positions c4engine reads from it.

Public names: :func:`planes_of` (cells to an observation), :func:`cells_of` (an
observation to cells and the mover's mark), :func:`action_mask_of`,
:func:`position_of_cells` and :func:`position_of_planes`.  *Cells* are an
``H x W`` array, row 0 at the top, holding 0 (empty), 1 (the first player's
stones) and 2 (the second player's), as Kaggle's board (flat) and
``env.unwrapped.board`` (flat) hold them; a *mark* is 1 or 2.
"""

from __future__ import annotations

import numpy as np

from ..connectx import position_of
from ..position import IllegalMoveError, Position, board_shape


def planes_of(cells: np.ndarray, mark: int) -> np.ndarray:
    """The observation of ``cells`` for player ``mark``: ``H x W x 2`` int8, plane 0
    that player's stones, plane 1 the opponent's."""
    return np.stack([cells == mark, cells == 3 - mark], axis=2).astype(np.int8)


def action_mask_of(cells: np.ndarray) -> np.ndarray:
    """One int8 per column: 1 where a stone still fits (the top cell is empty)."""
    return (cells[0] == 0).astype(np.int8)


def cells_of(planes: object, mark: int | None = None) -> tuple[np.ndarray, int]:
    """The cells an observation shows, and the observer's mark: ``mark`` if given (an
    observation after the game, whose observer need not be the next to move), else
    the mark of the player to move (1 when both have as many stones, else 2), which
    is the observer in the AEC loop's ``env.last()`` while the game goes on.

    Raises :class:`c4engine.IllegalMoveError` (a ``ValueError``) for what is no
    ``H x W x 2`` array of 0s and 1s, two stones on one cell, or stone counts
    that no game reaches."""
    array = np.asarray(planes)
    if array.ndim != 3 or array.shape[2] != 2 or not np.isin(array, (0, 1)).all():
        raise IllegalMoveError(f"observation of shape {array.shape}: expected H x W x 2 planes of 0s and 1s")
    own, other = array[:, :, 0].astype(bool), array[:, :, 1].astype(bool)
    if (own & other).any():
        raise IllegalMoveError("observation: a cell holds stones of both players")
    if mark is None:
        mark = 1 if own.sum() == other.sum() else 2
    first, second = (own.sum(), other.sum()) if mark == 1 else (other.sum(), own.sum())
    if first - second not in (0, 1):
        raise IllegalMoveError(f"observation: {own.sum()} stones against {other.sum()}; "
                               f"no game reaches that with player {mark} observing")
    cells = np.zeros(own.shape, dtype=np.int8)
    cells[own], cells[other] = mark, 3 - mark
    return cells, mark


def position_of_cells(cells: np.ndarray, mark: int, connect: int = 4) -> Position:
    """The position ``cells`` show, ``mark`` to move, ``connect`` in a row (the FEN
    reader's checks apply: :func:`c4engine.connectx.position_of`)."""
    height, width = cells.shape
    return position_of(cells.ravel().tolist(), mark, board_shape(width, height, connect))


def position_of_planes(planes: object, connect: int = 4) -> Position:
    """The position an observation of the player to move shows (see :func:`cells_of`)."""
    cells, mark = cells_of(planes)
    return position_of_cells(cells, mark, connect)
