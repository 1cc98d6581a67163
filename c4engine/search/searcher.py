"""The searcher: the transposition table, the search threads, and the searches run on them.

The kernel (:mod:`c4engine.kernel.negamax`) does the searching; the searcher
owns the transposition table and the kernel's contexts, runs a job on every
search thread at once, and offers the searches: iterative deepening
(:mod:`.iterations` decides what each iteration searches and when to stop), the
exact solve of a position and that of each of its moves.

Threads (lazy SMP with ABDADA's deferral): every search thread runs the same
iteration on the same root over one shared table, each from its own kernel
context; near the root a node defers a child that another thread is
searching (:func:`c4engine.kernel.busy_slot`), so the threads share out the
children of the nodes where every child must be searched and fill the table
with different subtrees.  The first thread whose iteration finishes gives
the answer and stops the others.  An exact solve (:meth:`Searcher.solve`)
instead gives the threads different null windows (:class:`SharedProbes`).  Exact scores
never depend on the thread count: every table entry is a proven bound.  A
single thread searches exactly as it would with no helpers.

Stopping is cooperative: :class:`StopSignal` writes the kernels' stop flags,
which the running kernels poll at every node (they run without the GIL, so
the thread that fires the signal is never blocked by them).
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Callable

import numpy as np

from ..geometry import STANDARD, Geometry
from ..kernel.book import SCORE_STONES, OpeningBook
from ..kernel.built_book import BookFileError, BuiltBook
from ..kernel.evaluation import N_WEIGHTS
from ..kernel.layout import (
    BOOK_ADDRESS,
    BOOK_RECORDS,
    BUILT_ADDRESS,
    BUILT_ENTRIES,
    BUILT_STONES,
    BUILT_WEAK,
    BUSY_SLOTS,
    BUSY_START,
    GENERATION,
    NODES,
    PROBE,
    SELDEPTH,
    STOP,
    TT_SLOTS,
    TT_START,
    WEIGHTS,
)
from ..kernel.specialise import kernel_for
from ..kernel.table import GENERATIONS
from ..rules.board import Board
from .buffer_layout import busy_slots, fitted_entries, table_entries, table_start
from .iterations import Iterations
from .limits import Limits
from .memory import (
    DEFAULT_HASH_MB, WIPE_BY_WRITING_MB, advise_huge_pages, allocate_zeros, fault_in, forget_pages, page_report,
)
from .pool import Helper, Race, StopSignal, close_helpers, deadline_timer
from .probes import SharedProbes
from .report import Report, Result, SolveLimitReached
from .thread import UNLIMITED, SearchThread, column_scores
from .warm_up import warm_up_position
from .weights import default_weights

# Exact attempts without a book need at most this many empty cells: 7x6's just past its
# book's 12 stones, where the attempts' budgets were tuned (29).
EMPTIES_IN_REACH = STANDARD.cells - SCORE_STONES - 1
# Past those 12 stones, a middle game with this many empty cells or fewer is tried too:
# its threats make it far easier to solve than an opening with as many (8x7 positions of
# 16-24 stones from games, 32-40 empty cells, solved in 18-63 ms but one, where a search
# of 0.1 s without the attempts lost them).
MIDDLE_GAME_EMPTIES_IN_REACH = 40


class Searcher:
    """A transposition table, one kernel context per search thread, and the driver.

    The buffer holds the contexts, last thread first, then the table (see
    :mod:`.buffer_layout`), and thread ``i`` gets the view starting at its
    context (see :mod:`c4engine.kernel.layout`).

    Without ``weights`` it evaluates with the board's default evaluation
    (:func:`~c4engine.search.weights.default_weights`).

    One search at a time; :meth:`clear`, :meth:`resize`, :meth:`set_threads`
    and :meth:`set_book` must not overlap a search.  :meth:`resize` and
    :meth:`set_threads` allocate the new buffer before letting the old one go:
    if the allocation fails they raise MemoryError and change nothing.

    The table's pages come as the searches touch them, so that a large table costs
    memory only where it is used; with ``resident`` the part a position's solve
    uses (:meth:`fit_table`) is mapped at once before it
    (:func:`~c4engine.search.memory.fault_in`), for the ``solve`` command, whose
    long searches touch it all anyway and whose timing should not include their
    faults.  With ``huge_pages`` the table asks the system for 2 MB pages
    (:func:`~c4engine.search.memory.advise_huge_pages`), for searches that fill
    it: :meth:`page_report` says what it got.

    With ``solving_only`` it only solves exactly (:meth:`solve`, :meth:`solve_moves`):
    on a board whose kernel is not compiled yet (7x6 included), the kernel then
    leaves the evaluation and the books out and compiles sooner
    (:func:`~c4engine.kernel.specialise.kernel_for`); :meth:`search`,
    :meth:`set_built_book` and a book raise ``RuntimeError``.

    ``two_words`` searches with the kernel of boards past 64 bits, whatever the
    board: the tests compare it with the one-word kernel."""

    def __init__(self, hash_mb: int = DEFAULT_HASH_MB, weights: np.ndarray | None = None,
                 book: OpeningBook | None = None, threads: int = 1, geometry: Geometry = STANDARD,
                 resident: bool = False, solving_only: bool = False,
                 two_words: bool = False, huge_pages: bool = False) -> None:
        self.geometry = geometry
        self.resident = resident
        self.huge_pages = huge_pages
        self.kernel = kernel_for(geometry, full=not solving_only, two_words=two_words)
        self.book = OpeningBook.empty()
        self.built_book: BuiltBook | None = None
        self._take_book(book)
        self.hash_mb = hash_mb
        self.threads: list[SearchThread] = []
        self._helpers: list[Helper] = []  # changed in place: the finalizer below holds it
        weakref.finalize(self, close_helpers, self._helpers)  # a dropped searcher ends them
        self._buffer = np.empty(0, dtype=np.int64)
        self._stop = StopSignal()
        self._probes: SharedProbes | None = None  # the shared solve running, for solve_progress
        self._lay_out(hash_mb, threads, np.asarray(default_weights(geometry) if weights is None else weights,
                                                  dtype=np.int64))

    @property
    def mem(self) -> np.ndarray:
        """The main thread's view: its context, then the table."""
        return self.threads[0].mem

    @property
    def tt(self) -> np.ndarray:
        """The transposition table: the back of the buffer."""
        return self._buffer[table_start(self.kernel, len(self.threads)):]

    def _lay_out(self, hash_mb: int, threads: int, weights: np.ndarray) -> None:
        """A new buffer for ``threads`` contexts and an empty table of ``hash_mb`` MB, then
        the helper threads to go with it.  Nothing changes if the allocation fails."""
        slots, ctx_size = table_entries(self.kernel, hash_mb), self.kernel.layout.CTX_SIZE
        buffer = allocate_zeros(table_start(self.kernel, threads) + slots * self.kernel.table.ENTRY_WORDS)
        advised = self.huge_pages and advise_huge_pages(buffer)
        if advised and not self.resident:  # a table for long searches: all of it in 2 MB pages now
            fault_in(buffer, 0)
        views = [SearchThread(buffer[(threads - 1 - i) * ctx_size:], i, self.kernel) for i in range(threads)]
        for view in views:
            ctx = view.mem
            ctx[BUSY_START], ctx[BUSY_SLOTS] = (view.index + 1) * ctx_size, busy_slots(threads)
            ctx[TT_START], ctx[TT_SLOTS] = (view.index + 1) * ctx_size + busy_slots(threads), slots
            ctx[WEIGHTS:WEIGHTS + N_WEIGHTS] = weights
            self.kernel.negamax.write_addresses(ctx)
        self._buffer, self.threads, self.hash_mb, self.huge_pages_advised = buffer, views, hash_mb, advised
        self._mapped_end = 0  # the end of what fit_table has mapped of a resident table
        while len(self._helpers) > threads - 1:  # a helper holds only its job queue: keep the rest
            self._helpers.pop().close()
        while len(self._helpers) < threads - 1:
            self._helpers.append(Helper(len(self._helpers) + 1))
        self._point_at_book()
        self._attach(StopSignal())

    def _point_at_book(self) -> None:
        built = self.built_book
        for thread in self.threads:
            thread.mem[BOOK_ADDRESS] = self.book.score_address
            thread.mem[BOOK_RECORDS] = self.book.score_records
            thread.mem[BUILT_ADDRESS] = built.address if built else 0
            thread.mem[BUILT_ENTRIES] = built.entries if built else 0
            thread.mem[BUILT_STONES] = built.header.plies if built else -1
            thread.mem[BUILT_WEAK] = int(built.header.weak) if built else 0

    def _weights(self) -> np.ndarray:
        return self.mem[WEIGHTS:WEIGHTS + N_WEIGHTS].copy()

    def resize(self, hash_mb: int) -> None:
        """A new, empty table of ``hash_mb`` MB; MemoryError (and no change) if it cannot
        be had."""
        self._lay_out(hash_mb, len(self.threads), self._weights())

    def set_threads(self, threads: int) -> None:
        """Search with ``threads`` threads from now on; empties the table.  MemoryError
        (and no change) if the new buffer cannot be had."""
        if threads < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        self._lay_out(self.hash_mb, threads, self._weights())

    def set_huge_pages(self, huge_pages: bool) -> None:
        """Whether the table asks for 2 MB pages; a new, empty table either way (pages
        already mapped keep their size).  MemoryError (and no change) if it cannot be had."""
        was, self.huge_pages = self.huge_pages, huge_pages
        try:
            self._lay_out(self.hash_mb, len(self.threads), self._weights())
        except MemoryError:
            self.huge_pages = was
            raise

    def set_book(self, book: OpeningBook) -> None:
        """Search with ``book`` (``OpeningBook.empty()`` for none); empties the table,
        whose entries may hold the other book's scores.  Only the 7x6 four-in-a-row
        game has a book: on another board the searcher keeps none."""
        self._take_book(book)
        self._point_at_book()
        self.clear()

    def set_built_book(self, book: BuiltBook | None) -> None:
        """Search with a book built by ``c4engine book build`` (None for none) besides the
        bitbully one; empties the table.  BookFileError, and no change, for a book
        of another board."""
        if book is not None:
            self._check_full()
        if book is not None and book.header.geometry != self.geometry:
            raise BookFileError(f"book {book.path} is for the {book.header.geometry} board, "
                                f"not {self.geometry}")
        self.built_book = book
        self._point_at_book()
        self.clear()

    def _check_full(self) -> None:
        if not self.kernel.constants.FULL:
            raise RuntimeError("this searcher only solves exactly: made with solving_only")

    def _take_book(self, book: OpeningBook | None) -> None:
        if book is not None and self.geometry.is_standard:
            if book.score_records:
                self._check_full()
            self.book = book

    def clear(self) -> None:
        """Forget everything in the table, and use all of it again (after
        :meth:`fit_table`): a new generation, and every 16th time a real
        wipe.  A table up to WIPE_BY_WRITING_MB is rewritten with zeros (a few ms, and
        the next search finds its pages mapped); a larger one gives its pages back
        to the system, which takes no time and no memory but makes the next
        searches fault the pages in again as they touch them (a resident table
        has them mapped again by :meth:`fit_table`)."""
        generation = (int(self.mem[GENERATION]) + 1) % GENERATIONS
        if generation == 0:
            if self.hash_mb <= WIPE_BY_WRITING_MB:
                self.tt.fill(0)
                self._mapped_end = len(self._buffer)  # written, so mapped
            else:
                forget_pages(self._buffer, table_start(self.kernel, len(self.threads)))
                self._mapped_end = 0
        slots = table_entries(self.kernel, self.hash_mb)
        for thread in self.threads:
            thread.mem[GENERATION], thread.mem[TT_SLOTS] = generation, slots

    def page_report(self) -> str:
        """``table <MB> MB: `` and what pages it has now, read back from the system
        (:func:`~c4engine.search.memory.page_report`)."""
        return f"table {self.hash_mb} MB: {page_report(self._buffer, self.huge_pages, self.huge_pages_advised)}"

    def fit_table(self, pos: Board) -> int:
        """Size the table for an exact solve of ``pos``, which must follow a :meth:`clear`:
        no larger than the positions that can follow ``pos`` can fill
        (:func:`~.buffer_layout.fitted_entries`), so that a late position or a
        small board does not sweep a large table, nor, when resident, fault it all
        in.  A later search on a larger need calls it again; the entries it uses."""
        slots = fitted_entries(self.kernel, self.hash_mb, pos)
        start = table_start(self.kernel, len(self.threads))
        for thread in self.threads:
            thread.mem[TT_SLOTS] = slots
        end = start + slots * self.kernel.table.ENTRY_WORDS
        if self.resident and end > self._mapped_end:  # mapping mapped pages again slows the search after it
            fault_in(self._buffer, max(start, self._mapped_end), end)
            self._mapped_end = end
        return slots

    def set_weights(self, weights: np.ndarray) -> None:
        for thread in self.threads:
            thread.mem[WEIGHTS:WEIGHTS + N_WEIGHTS] = weights

    def hashfull(self) -> int:
        """Per mille of the first thousand slots used in the current generation."""
        words = self.kernel.table.ENTRY_WORDS
        sample = self.tt[words - 1:1000 * words:words]  # the entries' data words
        generation = (sample >> self.kernel.table.GEN_SHIFT) & (GENERATIONS - 1)
        return int(np.count_nonzero((sample != 0) & (generation == self.mem[GENERATION])))

    def solver_may_reach_the_end(self, pos: Board) -> bool:
        """Whether an attempt at solving ``pos`` can succeed: with the book up to its 12
        stones (the solver stops there), or up to a built book's plies, with at most
        ``EMPTIES_IN_REACH`` empty cells in any case (on 7x6, from 13 stones on), and
        with at most ``MIDDLE_GAME_EMPTIES_IN_REACH`` past 12 stones.  With more, a
        solve takes hours, and every attempt would take nodes from the iterations for
        nothing (8x8 from 13 stones on, 48 empty cells, before these rules)."""
        built = self.built_book
        empties = pos.geometry.cells - pos.stones
        return (empties <= EMPTIES_IN_REACH or self.book.has_scores
                or (pos.stones > SCORE_STONES and empties <= MIDDLE_GAME_EMPTIES_IN_REACH)
                or (built is not None and pos.stones <= built.header.plies))

    def book_holds_the_score(self, pos: Board) -> bool:
        """Whether a solve of ``pos`` ends in the 7x6 book's exact scores (up to its 12
        stones), so that the exact score costs no more than the result."""
        return self.book.has_scores and pos.stones <= SCORE_STONES

    def principal_variation(self, pos: Board, first_col: int) -> tuple[int, ...]:
        """The line the table holds from ``pos`` after ``first_col``, that move first."""
        out = np.zeros(pos.geometry.cells, dtype=np.int64)
        length = self.kernel.solve.principal_variation(*self.kernel.bits(pos.current, pos.mask), first_col,
                                                         self.mem, out)
        return tuple(int(col) for col in out[:length])

    def warm_up(self, searching: bool = True) -> None:
        """Run every kernel entry point once on an easy position, so that numba compiles
        (or loads from its cache) before the first real search is timed: those of
        the exact solve (with helper threads, both of its ways: every thread on the
        whole solve, or each on its own windows), and with ``searching`` those of
        the depth-limited search too."""
        pos = warm_up_position(self.geometry)
        if searching:
            self.search(pos, Limits(depth=2))
            self.search(pos, Limits(depth=2), multipv=2)
        self.solve(pos)
        if self._helpers and not pos.can_win_now():
            self.clear()
            self._solve_shared(pos, yielding=False)
        self.clear()

    def race(self, job: Callable[[SearchThread], int], node_budget: int) -> Race:
        """Run ``job`` on every search thread at once, each with its share of
        ``node_budget``; the first to finish without being stopped stops the others.
        One thread runs it directly, with no other thread involved."""
        share = node_budget if node_budget >= UNLIMITED else max(1, node_budget // len(self.threads))
        for thread in self.threads:
            thread.begin(share)
        main = self.threads[0]
        if not self._helpers:
            value = job(main)
            return Race(value, main, not main.aborted(), main.nodes(), int(main.mem[SELDEPTH]))
        return self._parallel_race(job)

    def _parallel_race(self, job: Callable[[SearchThread], int]) -> Race:
        lock = threading.Lock()
        values: dict[int, int] = {}
        winners: list[SearchThread] = []

        def run(thread: SearchThread) -> None:
            values[thread.index] = job(thread)
            with lock:
                if thread.aborted() or winners:
                    return
                winners.append(thread)
            self._stop_all_but(thread)

        self._on_every_thread(run)
        thread = winners[0] if winners else self.threads[0]
        return Race(values[thread.index], thread, bool(winners),
                    sum(t.nodes() for t in self.threads), max(int(t.mem[SELDEPTH]) for t in self.threads))

    def _on_every_thread(self, job: Callable[[SearchThread], None]) -> None:
        """Run ``job`` on every search thread at once (the main thread's in the caller's)
        and wait for all; a job that raises stops the others, and its error is
        raised here.  The stop flags then get the stop signal's state again."""
        errors: list[BaseException] = []

        def run(thread: SearchThread) -> None:
            try:
                job(thread)
            except BaseException as exc:  # re-raised in the caller's thread below
                errors.append(exc)
                self._stop_all_but(thread)

        done = [helper.run(functools.partial(run, thread))
                for helper, thread in zip(self._helpers, self.threads[1:])]
        run(self.threads[0])
        for event in done:
            event.wait()
        self._stop.rearm()
        if errors:
            raise errors[0]

    def _stop_all_but(self, thread: SearchThread) -> None:
        for other in self.threads:
            if other is not thread:
                other.mem[STOP] = 1

    def solve(self, pos: Board, weak: bool = False, stop: StopSignal | None = None,
              node_limit: int = UNLIMITED) -> tuple[int, int]:
        """Pons' exact score of ``pos`` (weak: its sign only) and the nodes it took, on
        every search thread.  With a ``stop`` that fires, the score is meaningless.
        A solve that needs more than ``node_limit`` nodes raises
        :class:`SolveLimitReached` (a grading set's cap on what a position may cost:
        nodes, unlike time, give the same verdict on any machine).

        One thread and no stop take a short path: ``c4engine solve`` calls this for
        positions solved in a few microseconds, where Python's overhead counts."""
        self._check_board(pos)
        solver = self.kernel.solve
        if stop is None and not self._helpers:
            main = self.threads[0]
            self.kernel.layout.begin_search(main.mem, node_limit)
            score = solver.solve(*self.kernel.bits(pos.current, pos.mask), pos.stones, weak, main.mem)
            if node_limit < UNLIMITED and main.aborted():
                raise SolveLimitReached(f"the solve needs more than {node_limit} nodes")
            return int(score), int(main.mem[NODES])
        self._attach(stop or StopSignal())
        try:
            if (self._helpers and node_limit >= UNLIMITED and not weak
                    and pos.stones < solver.WEAK_FIRST_STONES and not pos.can_win_now()):
                return self._solve_shared(pos)
            race = self.race(lambda thread: thread.solve(pos, weak), node_limit)
        finally:
            self._attach(StopSignal())
        if not race.finished and node_limit < UNLIMITED and stop is None:
            raise SolveLimitReached(f"the solve needs more than {node_limit} nodes")
        return race.value, race.nodes

    def _solve_shared(self, pos: Board, yielding: bool = True) -> tuple[int, int]:
        """Solve an early position exactly with the threads probing different windows
        (see :class:`SharedProbes`).  Only early positions: there the first probe,
        at 0, costs most and 1 is a likely second one; later, the solver's far probes
        are cheap and a Python call per probe costs more than it saves.
        A position whose mover wins at once is not given to the kernel.  Without
        ``yielding`` (the warm-up's solve) no helper lowers its priority."""
        probes = self._probes = SharedProbes(pos, self.kernel.solve, yielding)
        try:
            self._on_every_thread(probes.run)
        finally:
            self._probes = None
        return probes.lowest, probes.nodes

    def solve_progress(self) -> tuple[list[int], int]:
        """The null windows the exact solve running now searches (the Pons score of
        each distinct probe, lowest first) and the nodes it has searched so far:
        read from another Python thread while :meth:`solve` runs (the kernel
        releases the GIL), for progress reports.  A snapshot, not a lock-step
        count: the threads go on while it is taken."""
        probes = self._probes
        nodes = sum(thread.nodes() for thread in self.threads)
        if probes is not None:
            with probes.lock:  # its finished probes' nodes, the threads' counters restarting at each probe
                nodes = probes.nodes + sum(thread.nodes() for thread in probes.probing)
        return sorted({int(thread.mem[PROBE]) for thread in self.threads}), nodes

    def solve_moves(self, pos: Board, weak: bool = False,
                    node_limit: int = UNLIMITED) -> tuple[list[int], int]:
        """The exact score, for the mover, of playing each column (weak: its sign), with
        :data:`~.thread.NO_MOVE_SCORE` for a full one, as Pons' solver analyses a position; and
        the nodes it took.  The table is kept from one column to the next.
        :class:`SolveLimitReached` if a column needs more than ``node_limit`` nodes."""
        self._check_board(pos)
        solved = column_scores(pos, weak, lambda child: self.solve(child, weak, node_limit=node_limit))
        assert solved is not None, "the kernel's solve gives up on no position"
        return solved

    def _check_board(self, pos: Board) -> None:
        """Refuse a position of another board than the kernel's: its bits would mean
        other cells.  The same object first: comparing two geometries' fields costs
        more than solving a position near the end (``c4engine solve``)."""
        if pos.geometry is not self.geometry and pos.geometry != self.geometry:
            raise ValueError(f"a position on the {pos.geometry} board given to a searcher for {self.geometry}")

    def _attach(self, stop: StopSignal) -> None:
        """Route ``stop`` to every thread's context; between searches an idle signal is
        attached, so that a race always has one to restore the flags from."""
        self._stop.detach()
        self._stop = stop
        stop.attach([thread.ctx for thread in self.threads])

    def search(self, pos: Board, limits: Limits, on_report: Callable[[Report], None] | None = None,
               stop: StopSignal | None = None, multipv: int = 1, solve_early: bool = True,
               result_first: bool = False) -> Result:
        """Iterative deepening from ``pos`` until a limit, a stop or an exact result;
        ``solve_early`` False keeps the exact solver for when the end of the game is
        within the depth limit (the difficulty levels, which see no further).
        ``result_first``, for a game's move: a proven win or draw ends the search
        without its exact score (see :class:`~c4engine.search.iterations.Iterations`)."""
        self._check_board(pos)
        self._check_full()
        if pos.is_over():
            return Result(None)
        stop = stop or StopSignal()
        self._attach(StopSignal())  # the first iteration is never cut short: see Iterations.run
        timer = deadline_timer(limits.hard_ms, stop)
        try:
            return Iterations(self, pos, limits, on_report or (lambda report: None), stop,
                              multipv, functools.partial(self._attach, stop), solve_early, result_first).run()
        finally:
            if timer is not None:
                timer.cancel()
            self._attach(StopSignal())


def proving_searcher(geometry: Geometry, hash_mb: int) -> Searcher:
    """A searcher that proves positions: on 7x6 with the 12-stone book, through which
    a position of fewer stones is proven in thousands of nodes, not millions."""
    return Searcher(hash_mb, book=OpeningBook.load() if geometry.is_standard else None, geometry=geometry)
