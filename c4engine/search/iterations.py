"""Iterative deepening: what one search runs, depth after depth, and when it ends.

The searcher (:mod:`.searcher`) owns the table and the threads; this is the
policy it runs them by.  Depth 1, 2, ... with the threat evaluation at the
leaves, and after each iteration the exact solver gets a node budget of three
times the work of those iterations: when the end of the game is within reach,
the solver finishes inside that budget and the result is exact (and the search
ends); when it is not, the iterations still get about a quarter of the time,
and the budgets grow geometrically with them.  A game's move (``result_first``)
with one line asks the solver for the game's result only, which is cheaper: a
proven win or draw ends the search, a proven loss goes on to the exact score.
Within the 7x6 book's reach the exact solve follows depth 1 whatever the limits,
as depth 1 itself does: it costs a few dozen nodes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from ..kernel.layout import INFINITE
from ..rules.board import Board
from ..rules.scores import is_proven, mate_distance
from .limits import Limits
from .pool import Race, StopSignal
from .report import Line, Report, Result
from .thread import UNLIMITED, SearchThread

EXACT_BUDGET_FACTOR = 3
# The first attempt's budget: a few milliseconds.  At 20,000 nodes (about 40 ms on a
# fresh table) the first attempt took all of a 30 ms move, and a move was played
# from depth 1 whenever it did not finish.
MIN_EXACT_BUDGET = 2_000


class SearcherLike(Protocol):
    """What iterative deepening needs of :class:`c4engine.search.searcher.Searcher`."""

    def race(self, job: Callable[[SearchThread], int], node_budget: int) -> Race: ...

    def hashfull(self) -> int: ...

    def solver_may_reach_the_end(self, pos: Board) -> bool: ...

    def book_holds_the_score(self, pos: Board) -> bool: ...

    def principal_variation(self, pos: Board, first_col: int) -> tuple[int, ...]: ...


@dataclass
class Iterations:
    """The state of one iterative-deepening run."""

    searcher: SearcherLike
    pos: Board
    limits: Limits
    on_report: Callable[[Report], None]
    stop: StopSignal
    multipv: int
    arm: Callable[[], None]  # routes ``stop`` to the kernels, once the first iteration is done
    solve_early: bool = True  # exact attempts before the end of the game is within the depth
    result_first: bool = False  # a game's move: attempts prove the result before the score
    started: float = field(default_factory=time.perf_counter)
    nodes: int = 0
    heuristic_nodes: int = 0
    last: Report | None = None
    settled: bool = False  # the last report's move keeps the root's proven result
    proven_lost: bool = False

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0

    def node_budget(self, cap: int = UNLIMITED) -> int:
        left = UNLIMITED if self.limits.nodes is None else max(1, self.limits.nodes - self.nodes)
        return min(left, cap)

    def run(self) -> Result:
        """Depth 1, 2, ... until a limit, a stop or an exact result.  Depth 1 always
        finishes, whatever the limits (as in Stockfish): it costs a node per column,
        and a move cut short before it has no value to stand on (a first root move's
        bound is no score of the position).  Without ``solve_early`` the solver runs
        only as the iteration that reaches the end of the game."""
        remaining = self.pos.geometry.cells - self.pos.stones
        max_depth = remaining if self.limits.depth is None else max(1, min(self.limits.depth, remaining))
        for depth in range(1, max_depth + 1):
            if depth == remaining:
                finished = self.exact_iteration(UNLIMITED)
            else:
                finished = self.heuristic_iteration(depth)
                if depth == 1:
                    self.solve_in_the_book()
                    self.arm()
                if finished and self.solve_early and self.searcher.solver_may_reach_the_end(self.pos) \
                        and not self.done():
                    finished = self.attempt(self.exact_budget()) or not self.limit_reached()
            if not finished or self.done():
                break
        return Result(self.best_move(), self.last, self.nodes)

    def solve_in_the_book(self) -> None:
        """Within the 7x6 book's 12 stones, solve the root after depth 1 and before
        ``stop`` is armed, as depth 1 is: the book's exact scores make it a few dozen
        nodes (40 from one stone, at most ``MIN_EXACT_BUDGET``).  Asked only within
        the time left, it came after a 1 or 10 ms move's soft limit, and such moves
        gave up results the book held (after 2, 6, 22 and 4376)."""
        if self.solve_early and self.searcher.book_holds_the_score(self.pos):
            self.exact_iteration(MIN_EXACT_BUDGET)

    def exact_budget(self) -> int:
        """Nodes for the next attempt at solving the root: three times the heuristic
        iterations' work so far.  Solving is what makes a move safe and ends the
        search, so it gets most of the time; tying the budget to the heuristic work
        (not to all work) lets the iterations still deepen, since their move is
        played when no attempt succeeds.  A failed attempt is not lost either: the
        exact bounds it proved stay in the table for the next one."""
        return max(EXACT_BUDGET_FACTOR * self.heuristic_nodes, MIN_EXACT_BUDGET)

    @property
    def best_col(self) -> int:
        """The last finished iteration's best column (its best line's first move), -1
        before one finished: the next iteration searches it first."""
        return -1 if self.last is None else self.last.best.pv[0]

    def best_move(self) -> int:
        """The last finished iteration's move, else any legal move that does not lose at once."""
        if self.last is not None:
            return self.best_col
        moves = self.pos.legal_moves()
        winning = [col for col in moves if self.pos.is_winning_move(col)]
        if winning:
            return winning[0]
        safe = [col for col in moves if not self.pos.play(col).can_win_now()]
        return min(safe or moves, key=lambda col: abs(col - self.pos.geometry.width // 2))

    def limit_reached(self) -> bool:
        if self.stop.fired:
            return True
        if self.limits.nodes is not None and self.nodes >= self.limits.nodes:
            return True
        return self.limits.soft_ms is not None and self.elapsed_ms() >= self.limits.soft_ms

    def done(self) -> bool:
        """Whether to start no further iteration."""
        if self.settled or (self.last is not None and self.last.exact):
            return True
        if self.last is not None and self.limits.mate is not None and is_proven(self.last.best.score):
            distance = mate_distance(self.last.best.score, self.pos.stones, self.pos.geometry.cells)
            if 0 < distance <= self.limits.mate:
                return True
        return self.limit_reached()

    def heuristic_iteration(self, depth: int) -> bool:
        """One depth-limited iteration; False when it was cut short before a root move
        finished.  Cut short after one, its best finished move stands (the previous
        best is searched first)."""
        every_move, first_col = self.multipv > 1, self.best_col
        race = self.searcher.race(lambda thread: thread.search_root(self.pos, depth, every_move, first_col),
                                  self.node_budget())
        self.heuristic_nodes += race.nodes
        return self.take(race, depth, exact=False)

    def attempt(self, budget: int) -> bool:
        """One attempt at proving the root within ``budget`` nodes; False when it did not
        finish: of its result alone when that is all the search needs, else of its
        exact score."""
        if self.wants_result_only():
            return self.result_iteration(budget)
        return self.exact_iteration(budget)

    def wants_result_only(self) -> bool:
        """A game's move needs only to keep a win or a draw.  MultiPV and ``go mate`` ask
        for scores and distances, a root proven lost needs its exact score to resist
        longest, and within the book the exact score costs no more."""
        return (self.result_first and not self.proven_lost and self.multipv == 1 and self.limits.mate is None
                and not self.searcher.book_holds_the_score(self.pos))

    def result_iteration(self, budget: int) -> bool:
        """Prove the root's result (win, draw or loss) within ``budget`` nodes; False when
        it did not finish.  A draw costs what its exact score does, a win from two
        thirds down to a twelfth of it (8x7 middle games), so the proofs come moves
        earlier.  A win or a draw ends the search with a move that keeps it."""
        race = self.searcher.race(lambda thread: thread.keep_root_result(self.pos, self.best_col, self.node_budget()),
                                  self.node_budget(budget))
        if self.take(race, self.pos.geometry.cells - self.pos.stones, exact=False):
            self.settled = True
            return True
        self.proven_lost = race.finished
        return race.finished

    def exact_iteration(self, budget: int) -> bool:
        """Solve the root exactly within ``budget`` nodes; False when it did not finish."""
        every_move, first_col = self.multipv > 1, self.best_col
        race = self.searcher.race(lambda thread: thread.solve_root(self.pos, every_move, first_col, self.node_budget()),
                                  self.node_budget(budget))
        return self.take(race, self.pos.geometry.cells - self.pos.stones, exact=True)

    def take(self, race: Race, depth: int, exact: bool) -> bool:
        """Count an iteration's work and publish its result, if it has one."""
        self.nodes += race.nodes
        if race.value < 0:
            return False
        self.publish(race, depth, exact)
        return True

    def publish(self, race: Race, depth: int, exact: bool) -> None:
        """Turn a finished race's best column and root scores (its thread's, until that
        thread's next search) into a report, remember it and hand it on."""
        best_col, scores = race.value, race.thread.scores
        order = [best_col] + sorted(
            (col for col in range(self.pos.geometry.width) if col != best_col and scores[col] > -INFINITE),
            key=lambda col: -scores[col])
        pv = self.searcher.principal_variation
        lines = tuple(Line(int(scores[col]), pv(self.pos, col)) for col in order[:self.multipv])
        self.last = Report(depth=depth, seldepth=max(depth, race.seldepth + 1), lines=lines,
                           nodes=self.nodes, elapsed=self.elapsed_ms() / 1000.0, exact=exact,
                           hashfull=self.searcher.hashfull())
        self.on_report(self.last)
