"""The search driver: iterative deepening over the kernel, limits, stop, exact solving
and the search threads.

The kernel (:mod:`c4engine.kernel`) does the searching; this module decides
what to search and for how long.  It owns the transposition table and the
kernel's contexts, runs depth 1, 2, ... with the threat evaluation at the
leaves, and after each iteration gives the exact solver a node budget of
three times the work of those iterations: when the end of the game is within
reach, the solver finishes inside that budget and the result is exact (and
the search ends); when it is not, the iterations still get about a quarter
of the time, and the budgets grow geometrically with them.

Threads (lazy SMP with ABDADA's deferral): every search thread runs the same
iteration on the same root over one shared table, each from its own kernel
context; near the root a node defers a child that another thread is
searching (:func:`c4engine.kernel.busy_slot`), so the threads share out the
children of the nodes where every child must be searched and fill the table
with different subtrees.  The first thread whose iteration finishes gives
the answer and stops the others.  An exact solve (:meth:`Searcher.solve`)
instead gives the threads different null windows (:class:`_SharedProbes`).  Exact scores
never depend on the thread count: every table entry is a proven bound.  A
single thread searches exactly as it would with no helpers.

Stopping is cooperative: :class:`StopSignal` writes the kernels' stop flags,
which the running kernels poll at every node (they run without the GIL, so
the thread that fires the signal is never blocked by them).
"""

from __future__ import annotations

import functools
import mmap
import queue
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Callable, Sequence, cast

import numpy as np

from . import kernel
from .bits import CELLS, WIDTH, column_cells, playable_cells, popcount, winning_cells
from .board import Position
from .book import SCORE_STONES, OpeningBook
from .evaluation import N_TERMS, THREAT_WEIGHTS
from .limits import Limits
from .notation import parse_digits
from .options import find_spec
from .scores import is_proven, mate_distance, to_internal, win_now
from .kernel import (
    ABORTED, BOOK_ADDRESS, BOOK_RECORDS, BUSY_SLOTS, BUSY_START, CTX_SIZE, GENERATION, GENERATIONS, INFINITE,
    MIN_TABLE_ENTRIES, NODE_LIMIT, NODES, SELDEPTH, STOP, TT_SLOTS, TT_START, WEIGHTS,
)

UNLIMITED = 1 << 62
EXACT_BUDGET_FACTOR = 3
MIN_EXACT_BUDGET = 20_000
WARM_UP_MOVES = "255235415174342746764567246772"  # 30 stones: solved at once, through every path
DEFAULT_HASH_MB = cast(int, find_spec("Hash").default)  # protocol.md ("Memory") says why 16 MB
NO_MOVE_SCORE = -1000  # a full column's score in solve_moves, as Pons' solver prints it
ENTRY_BYTES = 8
BUSY_TABLE_SLOTS = 4093  # positions being searched near the root, shared by the threads (kernel.busy_slot)
WIPE_BY_WRITING_MB = 256  # a larger table is wiped by handing its pages back (see Searcher.clear)


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
    """A stop request for one search, safe to fire from any thread before or during it.
    It reaches every search thread's kernel context."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fired = False
        self._ctxs: list[np.ndarray] = []

    @property
    def fired(self) -> bool:
        return self._fired

    def fire(self) -> None:
        with self._lock:
            self._fired = True
            for ctx in self._ctxs:
                ctx[STOP] = 1

    def attach(self, ctxs: Sequence[np.ndarray]) -> None:
        """Route the signal to kernel contexts (their flags take the signal's state)."""
        with self._lock:
            self._ctxs = list(ctxs)
        self.rearm()

    def rearm(self) -> None:
        """Give every context the signal's state again: a race's winner stops the other
        threads through their flags, which must not outlive that race."""
        with self._lock:
            for ctx in self._ctxs:
                ctx[STOP] = 1 if self._fired else 0

    def detach(self) -> None:
        with self._lock:
            for ctx in self._ctxs:
                ctx[STOP] = 0
            self._ctxs = []


def busy_slots(threads: int) -> int:
    """The size of the busy table through which threads share out a node's children
    (see :func:`c4engine.kernel.busy_slot`): none for one thread."""
    return BUSY_TABLE_SLOTS if threads > 1 else 0


def table_start(threads: int) -> int:
    """Where the transposition table begins in the buffer: after the contexts and
    the busy table."""
    return threads * CTX_SIZE + busy_slots(threads)


def table_entries(hash_mb: int) -> int:
    """The number of table slots for a size in MB: odd, so that ``key % size`` mixes
    the columns, and above 2**17 so that 32-bit partial keys stay unique."""
    return max(MIN_TABLE_ENTRIES, (hash_mb * (1 << 20) // ENTRY_BYTES) | 1)


def allocate_zeros(words: int) -> np.ndarray:
    """``words`` int64 zeros in a private anonymous mapping.

    The operating system hands out zeroed pages as they are first touched, so
    even an 8 GB table is allocated at once and costs memory only where the
    search writes (the faults, a few microseconds per 4 kB page, are spread
    over the searches that first touch the pages).  No transparent huge pages: measured here,
    faulting in 2 MB pages (with the kernel compacting memory for them) made
    the first search on a fresh 64 MB table 5x slower, and made nearly all of
    a 1 GB table resident after a search of 8,000 nodes.
    Raises MemoryError when the system refuses the mapping."""
    try:
        area = mmap.mmap(-1, words * ENTRY_BYTES, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError as exc:
        raise MemoryError(f"cannot allocate {words * ENTRY_BYTES >> 20} MB: {exc.strerror}") from None
    return np.frombuffer(area, dtype=np.int64)


def forget_pages(buffer: np.ndarray, first: int) -> None:
    """Zero ``buffer[first:]`` (``buffer`` made by :func:`allocate_zeros`) without writing
    it: its whole pages go back to the system, which maps zeroed ones on the next
    touch; only the partial page at the start is written."""
    area = cast(mmap.mmap, cast(memoryview, buffer.base).obj)
    page_start = -(-first * ENTRY_BYTES // mmap.PAGESIZE) * mmap.PAGESIZE
    buffer[first:page_start // ENTRY_BYTES] = 0
    if page_start < len(area):
        area.madvise(mmap.MADV_DONTNEED, page_start, len(area) - page_start)


@dataclass(frozen=True)
class Race:
    """What a job run on every search thread gave: the value of the thread that
    finished first (of the main thread if none finished), that thread, and the
    work of all of them."""

    value: int
    thread: SearchThread
    finished: bool
    nodes: int
    seldepth: int


class SearchThread:
    """One search thread's kernel context, a view of the searcher's buffer that starts
    at the thread's context and runs on through the shared table, and the root
    searches it runs.  Thread 0 is the main thread (the caller's); the others
    are helpers."""

    def __init__(self, mem: np.ndarray, index: int) -> None:
        self.mem = mem
        self.index = index
        self.scores = np.full(WIDTH, -INFINITE, dtype=np.int64)

    @property
    def ctx(self) -> np.ndarray:
        return self.mem[:CTX_SIZE]

    def begin(self, node_limit: int) -> None:
        """Reset the kernel's counters for a search of at most ``node_limit`` nodes."""
        kernel.begin_search(self.mem, node_limit)

    def aborted(self) -> bool:
        return bool(self.mem[ABORTED])

    def nodes(self) -> int:
        return int(self.mem[NODES])

    def solve(self, pos: Position, weak: bool) -> int:
        """Pons' exact score of ``pos`` (weak: its sign); meaningless if aborted."""
        return int(kernel.solve(pos.current, pos.mask, pos.stones, weak, self.mem))

    def probe(self, pos: Position, middle: int) -> int:
        """The exact solve's null-window search at Pons score ``middle`` (internal value)."""
        return int(kernel.probe(pos.current, pos.mask, pos.stones, middle, self.mem))

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

    def search_root(self, pos: Position, depth: int, every_move: bool, first_col: int) -> int:
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

    def solve_root(self, pos: Position, every_move: bool, first_col: int) -> int:
        """Solve the root exactly; return a best column, or -1 when stopped.  With
        ``every_move`` every move is solved (MultiPV); otherwise the root is solved
        once and the first move, in search order, that reaches its score is found by
        one null-window search per move, which the table makes cheap."""
        self.scores[:] = -INFINITE
        if every_move:
            for col in root_order(pos, first_col):
                value = to_internal(self.solve_move(pos, col))
                if self.aborted():
                    return -1
                self.scores[col] = value
            return int(np.argmax(self.scores))
        target = to_internal(self.solve(pos, False))
        for col in root_order(pos, first_col):
            reaches_target = self.move_value(pos, col, CELLS, target - 1, target) >= target
            if self.aborted():
                return -1
            if reaches_target:
                self.scores[col] = target
                return col
        return -1


class _SharedProbes:
    """An exact (strong) solve split between the search threads: each runs
    null-window probes (:func:`c4engine.kernel.solve`'s), the first two at
    different points, and every result narrows the one range of possible scores.

    The score is known once one probe proves it at least ``s`` and another at
    most ``s``; the costly probes are those two, next to each other, and for
    an early position the first one, at 0, is often one of them.  So while the
    main thread proves one side, a helper works on the other, and what it
    stores in the table makes the main thread's later probe there cheap.  Empty
    board, 2 threads, 1 GB: 135-143 M nodes in 22.6-25.8 s with every probe
    raced on both threads, 105-121 M in 19.4-21.7 s this way.  A probe whose
    answer the range has come to settle is cancelled through its thread's node
    limit (the stop flag belongs to the caller's stop signal)."""

    def __init__(self, pos: Position) -> None:
        self.pos = pos
        self.lowest, self.highest = (int(bound) for bound in kernel.score_range(pos.stones, False))
        self.probing: dict[SearchThread, int] = {}
        self.started = False
        self.nodes = 0
        self.lock = threading.Lock()

    def run(self, thread: SearchThread) -> None:
        """Probe on ``thread`` until the range is one score or the search is stopped."""
        while (point := self._start(thread)) is not None:
            value = thread.probe(self.pos, point)
            with self.lock:
                del self.probing[thread]
                self.nodes += thread.nodes()
                if not thread.aborted():
                    self._narrow(point, value)
            if thread.mem[STOP]:
                return

    def _start(self, thread: SearchThread) -> int | None:
        """Claim the next point for ``thread`` and reset its counters; None when solved."""
        with self.lock:
            if self.lowest >= self.highest:
                return None
            point = self._free_point()
            self.started = True
            self.probing[thread] = point
            thread.begin(UNLIMITED)
            return point

    def _free_point(self) -> int:
        """The solver's next point when no other thread probes inside the range; else
        another thread's point, the threads then sharing out its tree; but next to
        the first probe, at 0, the point 1 above it.  A point the range has settled
        is never joined: its thread is cancelled but may not have left yet (with
        more threads than cores it waits for one), and there the table answers at
        once and settles nothing, so the joiners would loop on it and keep it
        claimed among themselves."""
        open_points = [point for point in self.probing.values() if self.lowest <= point < self.highest]
        if not open_points:
            return int(kernel.probe_point(self.lowest, self.highest, self.pos.stones, not self.started))
        point = max(open_points)
        return 1 if point == 0 and 1 < self.highest else point

    def _narrow(self, point: int, value: int) -> None:
        """Take a finished probe's result; cancel the probes it made pointless."""
        self.lowest, self.highest = (int(bound) for bound in kernel.narrowed(self.lowest, self.highest,
                                                                               point, value))
        for other, other_point in self.probing.items():
            if not self.lowest <= other_point < self.highest:
                other.mem[NODE_LIMIT] = 0


class _Helper:
    """A helper search thread: a daemon that runs the jobs it is handed, one at a time,
    until it is handed None.  Daemon, so that a search still running at exit can
    never hold the process."""

    def __init__(self, index: int) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=f"search-helper-{index}", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()

    def run(self, job: Callable[[], None]) -> threading.Event:
        """Start ``job``; the event is set when it has returned."""
        done = threading.Event()

        def wrapped() -> None:
            try:
                job()
            finally:
                done.set()
        self._jobs.put(wrapped)
        return done

    def close(self) -> None:
        self._jobs.put(None)


def _close_helpers(helpers: list[_Helper]) -> None:
    for helper in helpers:
        helper.close()


class Searcher:
    """A transposition table, one kernel context per search thread, and the driver.

    The buffer holds the contexts, last thread first, then the table:
    ``[ctx of thread n-1 | ... | ctx of thread 0 | busy table | table]``, and
    thread ``i`` gets the view starting at its context (see :mod:`c4engine.kernel`).

    One search at a time; :meth:`clear`, :meth:`resize`, :meth:`set_threads`
    and :meth:`set_book` must not overlap a search.  :meth:`resize` and
    :meth:`set_threads` allocate the new buffer before letting the old one go:
    if the allocation fails they raise MemoryError and change nothing."""

    def __init__(self, hash_mb: int = DEFAULT_HASH_MB, weights: np.ndarray = THREAT_WEIGHTS,
                 book: OpeningBook | None = None, threads: int = 1) -> None:
        self.book = book or OpeningBook.empty()
        self.hash_mb = hash_mb
        self.threads: list[SearchThread] = []
        self._helpers: list[_Helper] = []  # changed in place: the finalizer below holds it
        weakref.finalize(self, _close_helpers, self._helpers)  # a dropped searcher ends them
        self._buffer = np.empty(0, dtype=np.int64)
        self._stop = StopSignal()
        self._lay_out(hash_mb, threads, np.asarray(weights, dtype=np.int64))

    @property
    def mem(self) -> np.ndarray:
        """The main thread's view: its context, then the table."""
        return self.threads[0].mem

    @property
    def tt(self) -> np.ndarray:
        """The transposition table: the back of the buffer."""
        return self._buffer[table_start(len(self.threads)):]

    def _lay_out(self, hash_mb: int, threads: int, weights: np.ndarray) -> None:
        """A new buffer for ``threads`` contexts and an empty table of ``hash_mb`` MB, then
        the helper threads to go with it.  Nothing changes if the allocation fails."""
        slots = table_entries(hash_mb)
        buffer = allocate_zeros(table_start(threads) + slots)
        views = [SearchThread(buffer[(threads - 1 - i) * CTX_SIZE:], i) for i in range(threads)]
        for view in views:
            ctx = view.mem
            ctx[BUSY_START], ctx[BUSY_SLOTS] = (view.index + 1) * CTX_SIZE, busy_slots(threads)
            ctx[TT_START], ctx[TT_SLOTS] = (view.index + 1) * CTX_SIZE + busy_slots(threads), slots
            ctx[WEIGHTS:WEIGHTS + N_TERMS] = weights
        self._buffer, self.threads, self.hash_mb = buffer, views, hash_mb
        while len(self._helpers) > threads - 1:  # a helper holds only its job queue: keep the rest
            self._helpers.pop().close()
        while len(self._helpers) < threads - 1:
            self._helpers.append(_Helper(len(self._helpers) + 1))
        self._point_at_book()
        self._attach(StopSignal())

    def _point_at_book(self) -> None:
        for thread in self.threads:
            thread.mem[BOOK_ADDRESS] = self.book.score_address
            thread.mem[BOOK_RECORDS] = self.book.score_records

    def _weights(self) -> np.ndarray:
        return self.mem[WEIGHTS:WEIGHTS + N_TERMS].copy()

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

    def set_book(self, book: OpeningBook) -> None:
        """Search with ``book`` (``OpeningBook.empty()`` for none); empties the table,
        whose entries may hold the other book's scores."""
        self.book = book
        self._point_at_book()
        self.clear()

    def clear(self) -> None:
        """Forget everything in the table: a new generation, and every 16th time a real
        wipe.  A table up to WIPE_BY_WRITING_MB is rewritten with zeros (a few ms, and
        the next search finds its pages mapped); a larger one gives its pages back
        to the system, which takes no time and no memory but makes the next
        searches fault the pages in again as they touch them."""
        generation = (int(self.mem[GENERATION]) + 1) % GENERATIONS
        if generation == 0:
            if self.hash_mb <= WIPE_BY_WRITING_MB:
                self.tt.fill(0)
            else:
                forget_pages(self._buffer, table_start(len(self.threads)))
        for thread in self.threads:
            thread.mem[GENERATION] = generation

    def set_weights(self, weights: np.ndarray) -> None:
        for thread in self.threads:
            thread.mem[WEIGHTS:WEIGHTS + N_TERMS] = weights

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

    def solve(self, pos: Position, weak: bool = False, stop: StopSignal | None = None) -> tuple[int, int]:
        """Pons' exact score of ``pos`` (weak: its sign only) and the nodes it took, on
        every search thread.  With a ``stop`` that fires, the score is meaningless.

        One thread and no stop take a short path: ``c4engine solve`` calls this for
        positions solved in a few microseconds, where Python's overhead counts."""
        if stop is None and not self._helpers:
            main = self.threads[0]
            kernel.begin_search(main.mem, UNLIMITED)
            return int(kernel.solve(pos.current, pos.mask, pos.stones, weak, main.mem)), int(main.mem[NODES])
        self._attach(stop or StopSignal())
        try:
            if self._helpers and not weak and pos.stones < kernel.WEAK_FIRST_STONES and not pos.can_win_now():
                return self._solve_shared(pos)
            race = self.race(lambda thread: thread.solve(pos, weak), UNLIMITED)
        finally:
            self._attach(StopSignal())
        return race.value, race.nodes

    def _solve_shared(self, pos: Position) -> tuple[int, int]:
        """Solve an early position exactly with the threads probing different windows
        (see :class:`_SharedProbes`).  Only early positions: there the first probe,
        at 0, costs most and 1 is a likely second one; later, the solver's far probes
        are cheap and a Python call per probe cost more than it saved (Test_L2_R2,
        2 threads: 3.1 ms a position against 1.75 ms for one kernel call per thread).
        A position whose mover wins at once is not given to the kernel."""
        probes = _SharedProbes(pos)
        self._on_every_thread(probes.run)
        return probes.lowest, probes.nodes

    def solve_moves(self, pos: Position, weak: bool = False) -> tuple[list[int], int]:
        """The exact score, for the mover, of playing each column (weak: its sign), with
        :data:`NO_MOVE_SCORE` for a full one, as Pons' solver analyses a position; and
        the nodes it took.  The table is kept from one column to the next."""
        values, nodes = [], 0
        for col in range(WIDTH):
            if not pos.can_play(col):
                values.append(NO_MOVE_SCORE)
                continue
            settled, child = settle_move(pos, col)
            if settled is None:
                score, child_nodes = self.solve(child, weak)
                settled, nodes = -score, nodes + child_nodes
            values.append((settled > 0) - (settled < 0) if weak else settled)
        return values, nodes

    def _attach(self, stop: StopSignal) -> None:
        """Route ``stop`` to every thread's context; between searches an idle signal is
        attached, so that a race always has one to restore the flags from."""
        self._stop.detach()
        self._stop = stop
        stop.attach([thread.ctx for thread in self.threads])

    def search(self, pos: Position, limits: Limits, on_report: Callable[[Report], None] | None = None,
               stop: StopSignal | None = None, multipv: int = 1) -> Result:
        """Iterative deepening from ``pos`` until a limit, a stop or an exact result."""
        if pos.is_over():
            return Result(None)
        stop = stop or StopSignal()
        self._attach(stop)
        timer = _deadline_timer(limits.hard_ms, stop)
        try:
            return _Iterations(self, pos, limits, on_report or (lambda report: None), stop,
                               multipv).run()
        finally:
            if timer is not None:
                timer.cancel()
            self._attach(StopSignal())


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
        """One depth-limited iteration; False when it was cut short before a root move
        finished.  Cut short after one, its best finished move stands (the previous
        best is searched first)."""
        every_move, first_col = self.multipv > 1, self.best_col
        race = self.searcher.race(lambda thread: thread.search_root(self.pos, depth, every_move, first_col),
                                  self.node_budget())
        self.heuristic_nodes += race.nodes
        return self.take(race, depth, exact=False)

    def exact_iteration(self, budget: int) -> bool:
        """Solve the root exactly within ``budget`` nodes; False when it did not finish."""
        every_move, first_col = self.multipv > 1, self.best_col
        race = self.searcher.race(lambda thread: thread.solve_root(self.pos, every_move, first_col),
                                  self.node_budget(budget))
        return self.take(race, CELLS - self.pos.stones, exact=True)

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
            (col for col in range(WIDTH) if col != best_col and scores[col] > -INFINITE),
            key=lambda col: -scores[col])
        lines = tuple(Line(int(scores[col]), self.pv(col)) for col in order[:self.multipv])
        self.last = Report(depth=depth, seldepth=max(depth, race.seldepth + 1), lines=lines,
                           nodes=self.nodes, elapsed=self.elapsed_ms() / 1000.0, exact=exact,
                           hashfull=self.searcher.hashfull())
        self.on_report(self.last)

    def pv(self, first_col: int) -> tuple[int, ...]:
        out = np.zeros(CELLS, dtype=np.int64)
        length = kernel.principal_variation(self.pos.current, self.pos.mask, first_col, self.searcher.mem,
                                            out)
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
