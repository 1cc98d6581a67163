"""The quick tier: a move chosen by the rules alone, for a ``go`` the kernel is not ready for.

The engine's first start loads its compiled kernel (about a second) or, on a
board new to the installation, compiles it (seconds); a timed ``go`` read before
then must still be answered within its time.  This move takes microseconds and
no numba: a win if there is one, else a move that leaves the opponent no win
next (which blocks a threat), the most central of them.
"""

from __future__ import annotations

from ..rules.board import Board


def quick_move(pos: Board) -> int:
    """The rules' move for ``pos``, whose game must not be over (module docstring)."""
    moves = pos.legal_moves()
    winning = [col for col in moves if pos.is_winning_move(col)]
    if winning:
        return winning[0]
    safe = [col for col in moves if not pos.play(col).can_win_now()]
    return min(safe or moves, key=pos.geometry.off_centre)
