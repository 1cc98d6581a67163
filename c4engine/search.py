"""The search driver: iterative deepening over the kernel, limits, stop, and exact solving.

The kernel (:mod:`c4engine.kernel`) does the searching; this module decides
what to search and for how long.  It owns the transposition table and the
kernel's context array, runs depth 1, 2, ... with the threat evaluation at the
leaves, and after each iteration gives the exact solver a node budget of
three times the work of those iterations: when the end of the game is within
reach, the solver finishes inside that budget and the result is exact (and
the search ends); when it is not, the iterations still get about a quarter
of the time, and the budgets grow geometrically with them.

Stopping is cooperative: :class:`StopSignal` writes the kernel's stop flag,
which the running kernel polls at every node (it runs without the GIL, so the
thread that fires the signal is never blocked by it).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import kernel
from .bits import CELLS, WIDTH, column_cells, playable_cells, popcount, winning_cells
from .board import Position
from .book import SCORE_STONES, OpeningBook
from .evaluation import N_TERMS, THREAT_WEIGHTS
from .limits import Limits
from .notation import parse_digits
from .scores import is_proven, mate_distance, to_internal, win_now
from .kernel import (
    ABORTED, BOOK_RECORDS, BOOK_START, GENERATION, GENERATIONS, INFINITE, MIN_TABLE_ENTRIES, NODES,
    SELDEPTH, STOP, TT_SLOTS, TT_START, WEIGHTS,
)

UNLIMITED = 1 << 62
EXACT_BUDGET_FACTOR = 3
MIN_EXACT_BUDGET = 20_000
WARM_UP_MOVES = "255235415174342746764567246772"  # 30 stones: solved at once, through every path
DEFAULT_HASH_MB = 64
ENTRY_BYTES = 8


@dataclass(frozen=True)
class Line:
    """One searched move with its score and principal variation (columns, 0-based)."""

    score: int
    pv: tuple[int, ...]


@dataclass(frozen=True)
class Report:
    """What one finished iteration found, for an ``info`` line."""

    depth: int
    seldepth: int
    lines: tuple[Line, ...]
    nodes: int
    elapsed: float
    exact: bool
    hashfull: int

    @property
    def best(self) -> Line:
        return self.lines[0]


@dataclass(frozen=True)
class Result:
    """The move to play (``None`` when the game is over) and the last report behind it."""

    move: int | None
    report: Report | None = None
    nodes: int = 0


class StopSignal:
    """A stop request for one search, safe to fire from any thread before or during it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fired = False
        self._ctx: np.ndarray | None = None

    @property
    def fired(self) -> bool:
        return self._fired

    def fire(self) -> None:
        with self._lock:
            self._fired = True
            if self._ctx is not None:
                self._ctx[STOP] = 1

    def attach(self, ctx: np.ndarray) -> None:
        """Route the signal to a kernel context (its flag takes the signal's state)."""
        with self._lock:
            self._ctx = ctx
            ctx[STOP] = 1 if self._fired else 0

    def detach(self) -> None:
        with self._lock:
            if self._ctx is not None:
                self._ctx[STOP] = 0
            self._ctx = None


def table_entries(hash_mb: int) -> int:
    """The number of table slots for a size in MB: odd, so that ``key % size`` mixes
    the columns, and above 2**17 so that 32-bit partial keys stay unique."""
    return max(MIN_TABLE_ENTRIES, (hash_mb * (1 << 20) // ENTRY_BYTES) | 1)


class Searcher:
    """A transposition table, a kernel context and the driver that uses them.

    One search at a time; :meth:`clear` and :meth:`resize` must not overlap a search."""

    def __init__(self, hash_mb: int = DEFAULT_HASH_MB, weights: np.ndarray = THREAT_WEIGHTS,
                 book: OpeningBook | None = None) -> None:
        self.book = book or OpeningBook.empty()
        self.mem = np.empty(0, dtype=np.int64)
        self.hash_mb = hash_mb
        self._lay_out(weights)

    @property
    def ctx(self) -> np.ndarray:
        """The kernel's counters, flags, weights and scratch: the front of ``mem``."""
        return self.mem[:kernel.CTX_SIZE]

    @property
    def tt(self) -> np.ndarray:
        """The transposition table: the back of ``mem``."""
        return self.mem[self.mem[TT_START]:]

    def _lay_out(self, weights: np.ndarray) -> None:
        """Build ``mem`` (see :mod:`c4engine.kernel`): the context, the book's records,
        then an empty table, every page touched now so that the search never pays for
        page faults.  The new array is built before the old one is dropped, so that
        a MemoryError leaves the searcher as it was."""
        records, slots = self.book.table12, table_entries(self.hash_mb)
        mem = np.empty(kernel.CTX_SIZE + records.size + slots, dtype=np.int64)
        mem[:kernel.CTX_SIZE] = 0
        mem[kernel.CTX_SIZE:kernel.CTX_SIZE + records.size] = records
        mem[kernel.CTX_SIZE + records.size:] = 0
        mem[BOOK_START], mem[BOOK_RECORDS] = kernel.CTX_SIZE, records.size
        mem[TT_START], mem[TT_SLOTS] = kernel.CTX_SIZE + records.size, slots
        mem[WEIGHTS:WEIGHTS + N_TERMS] = weights
        self.mem = mem

    def resize(self, hash_mb: int) -> None:
        """A new, empty table of ``hash_mb`` MB; on MemoryError the old one stays."""
        old = self.hash_mb
        self.hash_mb = hash_mb
        try:
            self._lay_out(self.ctx[WEIGHTS:WEIGHTS + N_TERMS].copy())
        except MemoryError:
            self.hash_mb = old
            raise

    def set_book(self, book: OpeningBook) -> None:
        """Search with ``book`` (``OpeningBook.empty()`` for none); empties the table."""
        self.book = book
        self._lay_out(self.ctx[WEIGHTS:WEIGHTS + N_TERMS].copy())

    def clear(self) -> None:
        """Forget everything in the table: a new generation, a real wipe every 16th time."""
        generation = (self.mem[GENERATION] + 1) % GENERATIONS
        if generation == 0:
            self.tt.fill(0)
        self.mem[GENERATION] = generation

    def set_weights(self, weights: np.ndarray) -> None:
        self.mem[WEIGHTS:WEIGHTS + N_TERMS] = weights

    def hashfull(self) -> int:
        """Per mille of the first thousand slots used in the current generation."""
        sample = self.tt[:1000]
        generation = (sample >> kernel.GEN_SHIFT) & (GENERATIONS - 1)
        return int(np.count_nonzero((sample != 0) & (generation == self.mem[GENERATION])))

    def warm_up(self) -> None:
        """Run every kernel entry point once on an easy position, so that numba compiles
        (or loads from its cache) before the first real search is timed."""
        pos = parse_digits(WARM_UP_MOVES)
        self.search(pos, Limits(depth=2))
        self.search(pos, Limits(depth=2), multipv=2)
        self.solve(pos)
        self.clear()

    def begin(self, node_limit: int) -> None:
        """Reset the kernel's counters for a search of at most ``node_limit`` nodes."""
        kernel.begin_search(self.mem, node_limit)

    def solve(self, pos: Position, weak: bool = False) -> tuple[int, int]:
        """Pons' exact score of ``pos`` (weak: its sign only) and the nodes it took."""
        self.begin(UNLIMITED)
        score = kernel.solve(pos.current, pos.mask, pos.stones, weak, self.mem)
        return int(score), int(self.mem[NODES])

    def aborted(self) -> bool:
        return bool(self.mem[ABORTED])

    def move_value(self, pos: Position, col: int, depth: int, alpha: int, beta: int) -> int:
        """Internal score, for the mover, of playing ``col`` searched ``depth`` plies deep,
        within ``[alpha, beta]``."""
        settled, child = settle_move(pos, col)
        if settled is not None:
            return to_internal(settled)
        return -int(kernel.negamax(child.current, child.mask, child.stones, depth - 1, -beta, -alpha, 1,
                                   self.mem))

    def solve_move(self, pos: Position, col: int) -> int:
        """Pons score, for the mover, of playing ``col``."""
        settled, child = settle_move(pos, col)
        if settled is not None:
            return settled
        return -int(kernel.solve(child.current, child.mask, child.stones, False, self.mem))

    def search_root(self, pos: Position, depth: int, every_move: bool, first_col: int,
                    scores: np.ndarray) -> int:
        """Search the root's moves to ``depth``; return the best column, or -1 when
        stopped before one finished.  ``scores[col]`` gets each finished move's score:
        exact for every move with ``every_move`` (MultiPV), else exact for the best
        and a bound for the others (principal variation search at the root)."""
        scores[:] = -INFINITE
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
            scores[col] = value
            if value > alpha:
                alpha, best_col = value, col
        return best_col

    def solve_root(self, pos: Position, every_move: bool, first_col: int, scores: np.ndarray) -> int:
        """Solve the root exactly; return a best column, or -1 when stopped.  With
        ``every_move`` every move is solved (MultiPV); otherwise the root is solved
        once and the first move, in search order, that reaches its score is found by
        one null-window search per move, which the table makes cheap."""
        scores[:] = -INFINITE
        if every_move:
            for col in root_order(pos, first_col):
                value = to_internal(self.solve_move(pos, col))
                if self.aborted():
                    return -1
                scores[col] = value
            return int(np.argmax(scores))
        target = to_internal(int(kernel.solve(pos.current, pos.mask, pos.stones, False, self.mem)))
        for col in root_order(pos, first_col):
            reaches_target = self.move_value(pos, col, CELLS, target - 1, target) >= target
            if self.aborted():
                return -1
            if reaches_target:
                scores[col] = target
                return col
        return -1

    def search(self, pos: Position, limits: Limits, on_report: Callable[[Report], None] | None = None,
               stop: StopSignal | None = None, multipv: int = 1) -> Result:
        """Iterative deepening from ``pos`` until a limit, a stop or an exact result."""
        if pos.is_over():
            return Result(None)
        stop = stop or StopSignal()
        stop.attach(self.ctx)
        timer = _deadline_timer(limits.hard_ms, stop)
        try:
            return _Iterations(self, pos, limits, on_report or (lambda report: None), stop,
                               multipv).run()
        finally:
            if timer is not None:
                timer.cancel()
            stop.detach()


def _deadline_timer(hard_ms: float | None, stop: StopSignal) -> threading.Timer | None:
    """A timer that fires ``stop`` at the hard deadline (numba has no clock)."""
    if hard_ms is None:
        return None
    timer = threading.Timer(max(0.0, hard_ms) / 1000.0, stop.fire)
    timer.daemon = True
    timer.start()
    return timer


@dataclass
class _Iterations:
    """The state of one iterative-deepening run."""

    searcher: Searcher
    pos: Position
    limits: Limits
    on_report: Callable[[Report], None]
    stop: StopSignal
    multipv: int
    started: float = field(default_factory=time.perf_counter)
    nodes: int = 0
    heuristic_nodes: int = 0
    last: Report | None = None
    best_col: int = -1
    scores: np.ndarray = field(default_factory=lambda: np.full(WIDTH, -INFINITE, dtype=np.int64))

    @property
    def mem(self) -> np.ndarray:
        return self.searcher.mem

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0

    def node_budget(self, cap: int = UNLIMITED) -> int:
        left = UNLIMITED if self.limits.nodes is None else max(1, self.limits.nodes - self.nodes)
        return min(left, cap)

    def run(self) -> Result:
        remaining = CELLS - self.pos.stones
        max_depth = remaining if self.limits.depth is None else max(1, min(self.limits.depth, remaining))
        for depth in range(1, max_depth + 1):
            if depth == remaining:
                finished = self.exact_iteration(UNLIMITED)
            else:
                finished = self.heuristic_iteration(depth)
                if finished and self.solver_may_reach_the_end() and not self.done():
                    finished = self.exact_iteration(self.exact_budget()) or not self.limit_reached()
            if not finished or self.done():
                break
        return Result(self.best_move(), self.last, self.nodes)

    def solver_may_reach_the_end(self) -> bool:
        """Whether an attempt at solving can succeed: with the book up to its 12 stones
        (the solver stops there), and from 13 stones on in any case.  Below that,
        without a book, a solve takes hours and every attempt would be wasted."""
        return self.pos.stones > SCORE_STONES or self.searcher.book.has_scores

    def exact_budget(self) -> int:
        """Nodes for the next attempt at solving the root: three times the heuristic
        iterations' work so far.  Solving is what makes a move safe and ends the
        search, so it gets most of the time; tying the budget to the heuristic work
        (not to all work) lets the iterations still deepen, since their move is
        played when no attempt succeeds.  A failed attempt is not lost either: the
        exact bounds it proved stay in the table for the next one."""
        return max(EXACT_BUDGET_FACTOR * self.heuristic_nodes, MIN_EXACT_BUDGET)

    def best_move(self) -> int:
        """The last finished iteration's move, else any legal move that does not lose at once."""
        if self.last is not None:
            return self.last.best.pv[0]
        moves = self.pos.legal_moves()
        winning = [col for col in moves if self.pos.is_winning_move(col)]
        if winning:
            return winning[0]
        safe = [col for col in moves if not self.pos.play(col).can_win_now()]
        return min(safe or moves, key=lambda col: abs(col - WIDTH // 2))

    def limit_reached(self) -> bool:
        if self.stop.fired:
            return True
        if self.limits.nodes is not None and self.nodes >= self.limits.nodes:
            return True
        return self.limits.soft_ms is not None and self.elapsed_ms() >= self.limits.soft_ms

    def done(self) -> bool:
        """Whether to start no further iteration."""
        if self.last is not None and self.last.exact:
            return True
        if self.last is not None and self.limits.mate is not None and is_proven(self.last.best.score):
            distance = mate_distance(self.last.best.score, self.pos.stones)
            if 0 < distance <= self.limits.mate:
                return True
        return self.limit_reached()

    def heuristic_iteration(self, depth: int) -> bool:
        """One depth-limited iteration; False when it was cut short."""
        self.searcher.begin(self.node_budget())
        col = self.searcher.search_root(self.pos, depth, self.multipv > 1, self.best_col, self.scores)
        self.nodes += int(self.mem[NODES])
        self.heuristic_nodes += int(self.mem[NODES])
        if col < 0:
            return False
        self.best_col = col
        self.publish(depth, exact=False)
        return True

    def exact_iteration(self, budget: int) -> bool:
        """Solve the root exactly within ``budget`` nodes; False when it did not finish."""
        self.searcher.begin(self.node_budget(budget))
        col = self.searcher.solve_root(self.pos, self.multipv > 1, self.best_col, self.scores)
        self.nodes += int(self.mem[NODES])
        if col < 0:
            return False
        self.best_col = col
        self.publish(CELLS - self.pos.stones, exact=True)
        return True

    def publish(self, depth: int, exact: bool) -> None:
        """Turn the root scores into a report, remember it and hand it on."""
        order = [self.best_col] + sorted(
            (col for col in range(WIDTH) if col != self.best_col and self.scores[col] > -INFINITE),
            key=lambda col: -self.scores[col])
        lines = tuple(Line(int(self.scores[col]), self.pv(col)) for col in order[:self.multipv])
        self.last = Report(depth=depth, seldepth=max(depth, int(self.mem[SELDEPTH]) + 1), lines=lines,
                           nodes=self.nodes, elapsed=self.elapsed_ms() / 1000.0, exact=exact,
                           hashfull=self.searcher.hashfull())
        self.on_report(self.last)

    def pv(self, first_col: int) -> tuple[int, ...]:
        out = np.zeros(CELLS, dtype=np.int64)
        length = kernel.principal_variation(self.pos.current, self.pos.mask, first_col, self.mem, out)
        return tuple(int(col) for col in out[:length])


def settle_move(pos: Position, col: int) -> tuple[int | None, Position]:
    """The Pons score of playing ``col`` when the rules settle it at once (a win, a move
    that lets the opponent win at once, the last cell), else None; and the position
    after it.  The kernel must never be given those positions: it assumes the side
    to move cannot win at once."""
    if pos.is_winning_move(col):
        return win_now(pos.stones), pos
    child = pos.play(col)
    if child.can_win_now():
        return -win_now(child.stones), child
    if child.is_over():
        return 0, child
    return None, child


def root_order(pos: Position, first_col: int) -> list[int]:
    """The root's moves in search order: a move that wins at once (so that no limit,
    however small, can miss it), the previous best, then by the winning cells each
    gives the mover (as the kernel orders inner nodes), centre first."""
    def key(col: int) -> tuple[bool, bool, int, int]:
        cell = playable_cells(pos.mask) & column_cells(col)
        return (not pos.is_winning_move(col), col != first_col,
                -popcount(winning_cells(pos.current | cell, pos.mask)), abs(col - WIDTH // 2))
    return sorted(pos.legal_moves(), key=key)
