"""One search thread: its view of the shared buffer, and its root search and root solve."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..kernel.layout import INFINITE
from ..kernel.specialise import Kernel
from ..rules.bits import column_cells
from ..rules.board import Board
from ..rules.scores import to_internal, win_now

UNLIMITED = 1 << 62
NO_MOVE_SCORE = -1000  # a full column's score in column_scores, as Pons' solver prints it


class SearchThread:
    """One search thread's kernel context, a view of the searcher's buffer that starts
    at the thread's context and runs on through the shared table, and the root
    searches it runs.  Thread 0 is the main thread (the caller's); the others
    are helpers."""

    def __init__(self, mem: np.ndarray, index: int, kernel: Kernel) -> None:
        self.mem = mem
        self.index = index
        self.kernel = kernel
        self.scores = np.full(kernel.geometry.width, -INFINITE, dtype=np.int64)

    @property
    def ctx(self) -> np.ndarray:
        return self.mem[:self.kernel.layout.CTX_SIZE]

    def begin(self, node_limit: int) -> None:
        """Reset the kernel's counters for a search of at most ``node_limit`` nodes."""
        self.kernel.layout.begin_search(self.mem, node_limit)

    def aborted(self) -> bool:
        return bool(self.mem[self.kernel.layout.ABORTED])

    def nodes(self) -> int:
        return int(self.mem[self.kernel.layout.NODES])

    def solve(self, pos: Board, weak: bool) -> int:
        """Pons' exact score of ``pos`` (weak: its sign); meaningless if aborted."""
        return int(self.kernel.solve.solve(*self.kernel.bits(pos.current, pos.mask), pos.stones, weak, self.mem))

    def table_move(self, pos: Board) -> int:
        """The column the table holds for ``pos`` at a lower bound or an exact score (the
        move that reached it), else -1."""
        col = int(self.kernel.solve.table_move(*self.kernel.bits(pos.current, pos.mask), self.mem))
        return col if col < pos.geometry.width else -1

    def probe(self, pos: Board, middle: int) -> int:
        """The exact solve's null-window search at Pons score ``middle`` (internal value)."""
        return int(self.kernel.solve.probe(*self.kernel.bits(pos.current, pos.mask), pos.stones, middle, self.mem))

    def move_value(self, pos: Board, col: int, depth: int, alpha: int, beta: int) -> int:
        """Internal score, for the mover, of playing ``col`` searched ``depth`` plies deep,
        within ``[alpha, beta]``."""
        settled, child = settle_move(pos, col)
        if settled is not None:
            return to_internal(settled)
        return -int(self.kernel.negamax.negamax(*self.kernel.bits(child.current, child.mask), child.stones, depth - 1,
                                                -beta, -alpha, 1, self.mem))

    def solve_move(self, pos: Board, col: int) -> int:
        """Pons score, for the mover, of playing ``col``."""
        settled, child = settle_move(pos, col)
        if settled is not None:
            return settled
        return -int(self.kernel.solve.solve(*self.kernel.bits(child.current, child.mask), child.stones, False,
                                            self.mem))

    def search_root(self, pos: Board, depth: int, every_move: bool, first_col: int) -> int:
        """Search the root's moves to ``depth``; return the best column, or -1 when
        stopped before one finished.  ``scores[col]`` gets each finished move's score:
        exact for every move with ``every_move`` (MultiPV), else exact for the best
        and a bound for the others (principal variation search at the root)."""
        self.scores[:] = -INFINITE
        alpha, best_col = -INFINITE, -1
        for i, col in enumerate(root_order(pos, first_col)):
            if every_move or i == 0:
                value = self.move_value(pos, col, depth, -INFINITE, INFINITE)
            else:
                value = self.move_value(pos, col, depth, alpha, alpha + 1)
                if value > alpha and not self.aborted():
                    value = self.move_value(pos, col, depth, alpha, INFINITE)
            if self.aborted():
                break
            self.scores[col] = value
            if value > alpha:
                alpha, best_col = value, col
        return best_col

    def solve_root(self, pos: Board, every_move: bool, first_col: int, find_nodes: int = UNLIMITED) -> int:
        """Solve the root exactly; return a best column, or -1 when stopped.  With
        ``every_move`` every move is solved (MultiPV); otherwise the root is solved
        once and the first move, in search order, that reaches its score is found by
        one null-window search per move, which the table makes cheap, within
        ``find_nodes`` (see :meth:`allow_nodes`)."""
        self.scores[:] = -INFINITE
        if every_move:
            for col in root_order(pos, first_col):
                value = to_internal(self.solve_move(pos, col))
                if self.aborted():
                    return -1
                self.scores[col] = value
            return int(np.argmax(self.scores))
        target = to_internal(self.solve(pos, False))
        if self.aborted():
            return -1
        return self.first_move_reaching(pos, target, first_col, find_nodes)

    def keep_root_result(self, pos: Board, first_col: int, find_nodes: int = UNLIMITED) -> int:
        """A move that keeps the root's result when a weak solve proves it a win or a
        draw (its score is then the least win, or 0), found within ``find_nodes``
        (see :meth:`allow_nodes`); -1 when the root is lost (not stopped) or when
        stopped."""
        self.scores[:] = -INFINITE
        target = to_internal(self.solve(pos, True))
        if target < 0 or self.aborted():
            return -1
        return self.first_move_reaching(pos, target, first_col, find_nodes)

    def allow_nodes(self, node_limit: int) -> None:
        """Let this search run to ``node_limit`` nodes (counted from its start) if its own
        limit is lower.  Once the root is solved, the search for a move that reaches
        its score is what the solve was for, and it costs little (see
        :meth:`first_move_reaching`); cut off by the attempt's budget, it was lost with
        the proof's place in the table, which the next iterations overwrite."""
        layout = self.kernel.layout
        self.mem[layout.NODE_LIMIT] = max(int(self.mem[layout.NODE_LIMIT]), node_limit)

    def first_move_reaching(self, pos: Board, target: int, first_col: int, find_nodes: int) -> int:
        """The first move, in search order, whose exact value is at least ``target``
        (internal), by one null-window search each, within ``find_nodes`` (see
        :meth:`allow_nodes`); -1 when stopped.  Called after the root was solved: the
        move that solve left in the table reached its last lower bound, so it goes
        first, ahead of ``first_col``.  Its search finds the solve's proof in the
        table, where each move that falls short needs a proof of its own (on 8x7
        middle games, up to twenty times the solve's nodes)."""
        self.allow_nodes(find_nodes)
        stored = self.table_move(pos)
        for col in root_order(pos, first_col if stored < 0 else stored):
            reaches_target = self.move_value(pos, col, pos.geometry.cells, target - 1, target) >= target
            if self.aborted():
                return -1
            if reaches_target:
                self.scores[col] = target
                return col
        return -1


def settled_score(pos: Board, weak: bool) -> int | None:
    """The score of ``pos`` when the rules settle it at once, as the kernel's solve gives
    it without a node (its mover wins now: Pons' score of that win, weak 1), else None."""
    if not pos.can_win_now():
        return None
    return 1 if weak else win_now(pos.stones, pos.geometry.cells)


def settle_move(pos: Board, col: int) -> tuple[int | None, Board]:
    """The Pons score of playing ``col`` when the rules settle it at once (a win, a move
    that lets the opponent win at once, the last cell), else None; and the position
    after it.  The kernel must never be given those positions: it assumes the side
    to move cannot win at once."""
    if pos.is_winning_move(col):
        return win_now(pos.stones, pos.geometry.cells), pos
    child = pos.play(col)
    if child.can_win_now():
        return -win_now(child.stones, child.geometry.cells), child
    if child.is_over():
        return 0, child
    return None, child


def column_scores(pos: Board, weak: bool,
                  solve: Callable[[Board], tuple[int, int] | None]) -> tuple[list[int], int] | None:
    """The exact score, for the mover, of playing each column (weak: its sign), with
    :data:`NO_MOVE_SCORE` for a full one, as Pons' solver analyses a position; and
    the nodes ``solve`` took on the positions the rules do not settle.  None as
    soon as ``solve`` gives None (a solver that gave up)."""
    values, nodes = [], 0
    for col in range(pos.geometry.width):
        if not pos.can_play(col):
            values.append(NO_MOVE_SCORE)
            continue
        settled, child = settle_move(pos, col)
        if settled is None:
            solved = solve(child)
            if solved is None:
                return None
            settled, nodes = -solved[0], nodes + solved[1]
        values.append((settled > 0) - (settled < 0) if weak else settled)
    return values, nodes


def root_order(pos: Board, first_col: int) -> list[int]:
    """The root's moves in search order: a move that wins at once (so that no limit,
    however small, can miss it), the previous best, then by the winning cells each
    gives the mover (as the kernel orders inner nodes), centre first."""
    def key(col: int) -> tuple[bool, bool, int, int]:
        cell = pos.playable_cells() & column_cells(col, pos.geometry.height)
        return (not pos.is_winning_move(col), col != first_col,
                -pos.winning_cells(pos.current | cell).bit_count(), abs(col - pos.geometry.width // 2))
    return sorted(pos.legal_moves(), key=key)
