"""Solving off the event loop: one searcher per worker thread, a bounded queue, one
solve for identical requests in flight, and a stop for a solve nobody waits for.

Threads, not processes: the numba kernel runs without the GIL, so two worker
threads solve on two cores (measured in docs/service.md), while threads share
the books' memory maps, the cache and the in-flight table without copies or
messages, and a solve is stopped by writing its searcher's stop flag.

Each column is first solved weakly (its sign) and then exactly, so that a time
cap that hits still leaves every column it reached with a proven verdict.
"""

from __future__ import annotations

import asyncio
import queue
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..geometry import Geometry
from ..rules.board import Board
from ..search.pool import StopSignal, deadline_timer
from ..search.searcher import Searcher
from .answer import Analysis, Bounds, first_look
from .books import Books


class QueueFull(RuntimeError):
    """Every worker is busy and the queue behind them is full."""


def narrowed(bounds: Bounds, move_score: int, weak: bool) -> Bounds:
    """``bounds`` after a solve gave the move's score (weak: its sign)."""
    if not weak or move_score == 0:
        return Bounds.exact(move_score)
    if move_score > 0:
        return Bounds(max(bounds.low, 1), bounds.high)
    return Bounds(bounds.low, min(bounds.high, -1))


class Solver:
    """One worker's searchers, one per served board, each with one search thread and
    its own transposition table, built and compiled up front; a board whose kernel
    a child process is compiling (``compiling``) is built once the child ends."""

    def __init__(self, boards: Iterable[Geometry], hash_mb: int, books: Books,
                 compiling: Mapping[Geometry, subprocess.Popen[bytes]] | None = None) -> None:
        self.searchers: dict[Geometry, Searcher] = {}
        for geometry in boards:
            child = (compiling or {}).get(geometry)
            if child is not None:
                child.wait()
            searcher = Searcher(hash_mb, book=books.opening if geometry.is_standard else None, geometry=geometry)
            built = books.built.get(geometry)
            if built is not None:
                searcher.set_built_book(built)
            searcher.warm_up(searching=False)
            self.searchers[geometry] = searcher

    def analyse(self, board: Board, stop: StopSignal) -> Analysis:
        """Every column's bounds, as far as the search gets before ``stop`` fires."""
        searcher = self.searchers[board.geometry]
        columns, children = first_look(board)
        for weak in (True, False):
            for col, child in children.items():
                bounds = columns[col]
                assert bounds is not None
                if bounds.is_exact:
                    continue
                score, _nodes = searcher.solve(child, weak, stop)
                if stop.fired:  # the score is meaningless: keep what was proven
                    return Analysis(board, tuple(columns), "search")
                columns[col] = narrowed(bounds, -score, weak)
        return Analysis(board, tuple(columns), "search")


@dataclass
class _Job:
    """A solve in flight, and how many requests wait for it."""

    stop: StopSignal
    future: asyncio.Future[tuple[Analysis, float]]
    waiters: int = field(default=0)


class SolvePool:
    """The worker threads, each holding a :class:`Solver` while it solves, and the
    jobs in flight: at most ``workers + queue_size`` distinct ones."""

    def __init__(self, solvers: list[Solver], queue_size: int, on_solved: Callable[[float], None]) -> None:
        self._free: queue.SimpleQueue[Solver] = queue.SimpleQueue()
        for solver in solvers:
            self._free.put(solver)
        self.workers = len(solvers)
        self.capacity = self.workers + queue_size
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="c4engine-solve")
        self._jobs: dict[tuple[Geometry, int, int], _Job] = {}
        self._on_solved = on_solved  # told each solve's seconds, once however many waited

    @property
    def in_flight(self) -> int:
        return len(self._jobs)

    @property
    def queued(self) -> int:
        """Jobs waiting for a worker."""
        return max(0, len(self._jobs) - self.workers)

    async def analyse(self, board: Board, movetime_ms: int) -> Analysis:
        """The analysis of ``board`` within ``movetime_ms``; a request for a position
        already being solved with the same cap waits for that solve.  Raises :class:`QueueFull` when a new solve has no room; if every
        request waiting for a solve is cancelled (its client left), the solve stops."""
        key = (board.geometry, board.key, movetime_ms)
        job = self._jobs.get(key)
        if job is None:
            if len(self._jobs) >= self.capacity:
                raise QueueFull(f"{len(self._jobs)} solves in flight, the limit")
            job = self._start(key, board, movetime_ms)
        job.waiters += 1
        try:
            analysis, _seconds = await asyncio.shield(job.future)
            return analysis
        except asyncio.CancelledError:
            job.waiters -= 1
            if job.waiters == 0:
                job.stop.fire()
                if self._jobs.get(key) is job:
                    del self._jobs[key]  # a new request starts afresh, not on a stopped solve
            raise

    def _start(self, key: tuple[Geometry, int, int], board: Board, movetime_ms: int) -> _Job:
        stop = StopSignal()
        timer = deadline_timer(movetime_ms, stop)  # from the request, queueing included
        future = asyncio.get_running_loop().run_in_executor(self._executor, self._run, board, stop)
        job = self._jobs[key] = _Job(stop, future)

        def forget(_future: asyncio.Future[tuple[Analysis, float]]) -> None:
            if timer is not None:
                timer.cancel()
            if self._jobs.get(key) is job:
                del self._jobs[key]
            if not _future.cancelled() and _future.exception() is None:
                self._on_solved(_future.result()[1])
        future.add_done_callback(forget)
        return job

    def _run(self, board: Board, stop: StopSignal) -> tuple[Analysis, float]:
        solver = self._free.get()
        began = time.perf_counter()
        try:
            return solver.analyse(board, stop), time.perf_counter() - began
        finally:
            self._free.put(solver)

    def close(self) -> None:
        """Stop every solve in flight and let the workers go."""
        for job in self._jobs.values():
            job.stop.fire()
        self._executor.shutdown(wait=True, cancel_futures=True)
