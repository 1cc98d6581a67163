"""The warm-up position: an open position near the end of the game, on any board.

A new searcher runs every kernel entry point once on it, so that numba compiles
(or loads from its cache) before the first real search is timed; near the end,
the searches solve it at once.
"""

from __future__ import annotations

from ..geometry import STANDARD, Geometry
from ..rules.board import Board
from ..rules.notation import parse_digits

WARM_UP_MOVES = "255235415174342746764567246772"  # 30 stones on 7x6: solved at once, through every path
WARM_UP_EMPTY_CELLS = 12  # other boards: a position this close to the end (see warm_up_position)


def warm_up_position(geometry: Geometry) -> Board:
    """A position near the end of the game, still open, that the searches solve at
    once: on 7x6 :data:`WARM_UP_MOVES`; elsewhere stones dropped in a fixed rotation
    of the columns, each where it neither ends the game nor lets the opponent win
    next, until WARM_UP_EMPTY_CELLS cells are left (or no such move is left)."""
    if geometry == STANDARD:
        return parse_digits(WARM_UP_MOVES)
    pos = Board(geometry=geometry)
    while pos.stones < geometry.cells - WARM_UP_EMPTY_CELLS:
        turn = pos.stones * 3
        for col in (c % geometry.width for c in range(turn, turn + geometry.width)):
            if pos.can_play(col) and not pos.is_winning_move(col):
                child = pos.play(col)
                if not child.is_over() and not child.can_win_now():
                    pos = child
                    break
        else:
            break
    return pos
