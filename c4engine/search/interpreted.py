"""The interpreted tier: an exact solve in plain Python, for a board whose kernel is not compiled yet.

A board new to the installation compiles its kernel for seconds (numba types and
lowers some sixty functions, most of it in Python) before its first node.  Many
positions a user first asks about need few nodes: a win the mover forces in two
moves, a position a few moves from the end.  This tier solves such a position
at once, with the rules' own bit tricks run by the interpreter (over a
hundred thousand nodes a second, a thirtieth of the kernel's speed), while the
kernel compiles in another process (:mod:`.kernel_build`); once the kernel is
ready it gives up, and the kernel solves the position.

The algorithm is the kernel's exact solve in its simplest form (Pons'): negamax
over null windows, narrowed from both ends, on a position whose mover cannot win
at once; a mover with no move that keeps the opponent from winning next loses;
the moves that win most cells later are tried first, centre first among equals;
a table of upper bounds.  Its scores are Pons' and the kernel's; its node count
is its own.
"""

from __future__ import annotations

from typing import Callable

from ..rules.bits import column_cells, playable_cells, winning_cells
from ..rules.board import Board
from ..rules.scores import win_now


class GivenUp(Exception):
    """The solve was told to stop before it finished."""


class InterpretedSolve:
    """One exact solve of one position, asking ``keep_going`` every ``CHECK_NODES``
    nodes whether to go on."""

    CHECK_NODES = 1024

    def __init__(self, pos: Board, keep_going: Callable[[], bool]) -> None:
        g = pos.geometry
        self.shape = (g.board_mask, g.width, g.height, g.connect)
        self.bottom, self.cells = g.bottom_mask, g.cells
        centre_first = sorted(range(g.width), key=g.off_centre)
        self.columns = [column_cells(col, g.height) for col in centre_first]
        self.upper_bounds: dict[int, int] = {}
        self.keep_going, self.nodes = keep_going, 0

    def score(self, pos: Board, weak: bool) -> int:
        """``pos``'s exact score (weak: its sign); ``pos``'s mover must not be able to
        win at once.  Raises :class:`GivenUp` once ``keep_going`` says to stop."""
        stones = pos.stones
        lowest, highest = (-1, 1) if weak else (-win_now(stones + 1, self.cells), win_now(stones, self.cells))
        while lowest < highest:
            point = lowest + (highest - lowest) // 2
            if point <= 0 and int(lowest / 2) < point:
                point = int(lowest / 2)
            elif point >= 0 and int(highest / 2) > point:
                point = int(highest / 2)
            value = self._negamax(pos.current, pos.mask, stones, point, point + 1)
            if value <= point:
                highest = value
            else:
                lowest = value
        return (lowest > 0) - (lowest < 0) if weak else lowest

    def _negamax(self, current: int, mask: int, stones: int, alpha: int, beta: int) -> int:
        """The score within [alpha, beta] of a position whose mover cannot win at once."""
        self.nodes += 1
        if not self.nodes % self.CHECK_NODES and not self.keep_going():
            raise GivenUp
        board_mask, width, height, connect = self.shape
        possible = playable_cells(mask, self.bottom, board_mask)
        threats = winning_cells(current ^ mask, mask, board_mask, width, height, connect)
        forced = possible & threats
        if forced & (forced - 1):
            return -win_now(stones + 1, self.cells)  # two cells to block: the opponent wins next
        candidates = (forced or possible) & ~(threats >> 1)  # never under an opponent's cell
        if not candidates:
            return -win_now(stones + 1, self.cells)
        if stones >= self.cells - 2:
            return 0
        alpha = max(alpha, -win_now(stones + 3, self.cells))  # it cannot lose sooner
        if alpha >= beta:
            return alpha
        beta = min(beta, win_now(stones + 2, self.cells), self.upper_bounds.get(current + mask, beta))
        if alpha >= beta:
            return beta
        for cell in self._ordered(current, mask, candidates):
            value = -self._negamax(current ^ mask, mask | cell, stones + 1, -beta, -alpha)
            if value >= beta:
                return value
            alpha = max(alpha, value)
        self.upper_bounds[current + mask] = alpha
        return alpha

    def _ordered(self, current: int, mask: int, candidates: int) -> list[int]:
        """The candidate cells, those that give the mover most winning cells first
        (centre first among equals: the sort keeps the columns' order)."""
        board_mask, width, height, connect = self.shape
        cells = [column & candidates for column in self.columns if column & candidates]
        return sorted(cells, key=lambda cell: -winning_cells(
            current | cell, mask | cell, board_mask, width, height, connect).bit_count())


def interpreted_score(pos: Board, weak: bool, keep_going: Callable[[], bool]) -> tuple[int, int] | None:
    """``pos``'s exact score and the nodes it took, or None once ``keep_going`` (asked
    every :attr:`InterpretedSolve.CHECK_NODES` nodes) says to stop; ``pos``'s mover
    must not be able to win at once (the rules settle that)."""
    solve = InterpretedSolve(pos, keep_going)
    try:
        return solve.score(pos, weak), solve.nodes
    except GivenUp:
        return None
