"""Building a book: enumerate its positions into the build's database, solve each one
exactly (here, or in Ray tasks with ``--cluster``), then write the book file.

The positions are handed out in chunks, hardest first: the hint of each is the
node count of a shallow probe (a depth-limited search, made when the
positions are enumerated).  Only this process, the head, writes the
database; a chunk's results are committed together, and a chunk lost with
its worker is solved again (Ray retries the task), its results written once
(:meth:`BuildStore.record`).
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar


from ..geometry import Geometry
from ..kernel.book import SCORE_STONES
from ..kernel.built_book import BookHeader, write_book
from ..referee.cluster import first_done
from ..rules.board import Board
from ..search.limits import Limits
from ..search.searcher import Searcher, proving_searcher
from .positions import book_positions
from .store import BuildStore, Row, StoreError

PROBE_DEPTH = 4  # the shallow search whose node count orders the positions
CHUNK_POSITIONS = 8  # positions per task: a committed batch, and what a lost worker loses
TASK_RETRIES = 10  # times Ray runs a task again after its worker was lost
DATABASE_SUFFIX = ".sqlite"

Result = tuple[int, int, int]  # key, score, nodes
S = TypeVar("S")  # what every task is given
W = TypeVar("W")  # one task's work
R = TypeVar("R")  # one task's result


class ClusterError(RuntimeError):
    """A chunk's task failed on the cluster more often than it is retried."""


@dataclass(frozen=True)
class BuildSpec:
    geometry: Geometry
    plies: int
    weak: bool
    hash_mb: int


def database_path(out: Path) -> Path:
    """Where the build of ``out`` keeps its state: beside it."""
    return out.with_name(out.name + DATABASE_SUFFIX)


@functools.cache
def _searcher(spec: BuildSpec) -> Searcher:
    """One searcher per process (a Ray worker keeps it from task to task).  A book
    of fewer stones than the 12-stone book's is proven through it on 7x6 (in
    thousands of nodes a position, not tens of millions); one of 12 or more is
    solved from scratch, so that the 12-stone book can check it."""
    if spec.plies < SCORE_STONES:
        return proving_searcher(spec.geometry, spec.hash_mb)
    return Searcher(spec.hash_mb, geometry=spec.geometry)


def solve_chunk(spec: BuildSpec, rows: Sequence[Row]) -> list[Result]:
    """Each position's exact score (weak: its sign) and the nodes it took."""
    searcher = _searcher(spec)
    results = []
    for row in rows:
        score, nodes = searcher.solve(Board(row.current, row.mask, geometry=spec.geometry), spec.weak)
        results.append((row.key, score, nodes))
    return results


def probe_nodes(searcher: Searcher, pos: Board) -> int:
    """The nodes of a shallow search: the hint of how hard ``pos`` is to solve."""
    return searcher.search(pos, Limits(depth=PROBE_DEPTH)).nodes


class Progress:
    """A one-line progress bar on ``stream``: done, rate, time left, and a ``note``
    (what else the work has found so far) its owner may set."""

    def __init__(self, total: int, done: int, stream: IO[str], unit: str = "positions") -> None:
        self.total, self.done, self.stream, self.unit = total, done, stream, unit
        self.started, self.at_start, self.shown = time.monotonic(), done, 0.0
        self.note = ""

    def advance(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if now - self.shown >= 0.2 or self.done == self.total:
            self.shown = now
            self.stream.write("\r" + self.line(now))
            self.stream.flush()

    def line(self, now: float) -> str:
        rate = (self.done - self.at_start) / max(now - self.started, 1e-9)
        left = (self.total - self.done) / rate if rate > 0 else float("inf")
        share = self.done / self.total if self.total else 1.0
        bar = "#" * int(share * 20)
        note = f", {self.note}" if self.note else ""
        return (f"[{bar:<20}] {self.done}/{self.total} {self.unit}, {rate:.1f}/s, "
                f"{_duration(left)} left{note} ")

    def close(self) -> None:
        """The last count (one the rate limit held back), then the line ends."""
        self.stream.write("\r" + self.line(time.monotonic()) + "\n")
        self.stream.flush()


def _duration(seconds: float) -> str:
    if seconds == float("inf"):
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def enumerate_into(store: BuildStore, spec: BuildSpec) -> None:
    """The build's positions, with their hints, into ``store`` (one transaction)."""
    prober = _searcher(spec)
    positions = book_positions(spec.geometry, spec.plies)
    rows = ((key, pos.current, pos.mask, probe_nodes(prober, pos)) for key, pos in positions.items())
    store.save_positions(spec.geometry, spec.plies, spec.weak, rows)


def chunks(rows: Sequence[Row], size: int = CHUNK_POSITIONS) -> list[list[Row]]:
    return [list(rows[at:at + size]) for at in range(0, len(rows), size)]


def solve_here(spec: BuildSpec, work: list[list[Row]]) -> Iterator[list[Result]]:
    for chunk in work:
        yield solve_chunk(spec, chunk)


def solve_on_ray(ray: object, spec: BuildSpec, work: list[list[Row]]) -> Iterator[list[Result]]:
    """The chunks' results as Ray tasks finish them, hardest handed out first."""
    return tasks_on_ray(ray, solve_chunk, spec, work)


def tasks_on_ray(ray: object, function: Callable[[S, W], R], spec: S, work: Iterable[W]) -> Iterator[R]:
    """``function(spec, item)`` for each item of ``work``, in Ray tasks, yielded as they
    finish (a task whose worker is lost runs again, up to ``TASK_RETRIES`` times);
    at most two tasks per CPU of the cluster wait at once, handed out in order."""
    task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(function)  # type: ignore[attr-defined]
    window = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[attr-defined]
    queue, running = iter(work), []
    for item in queue:
        running.append(task.remote(spec, item))
        if len(running) >= window:
            break
    while running:
        done, running = first_done(ray, running)  # type: ignore[arg-type]
        try:
            results = ray.get(done[0])  # type: ignore[attr-defined]
        except ray.exceptions.RayError as err:  # type: ignore[attr-defined]
            raise ClusterError(f"a task failed {TASK_RETRIES + 1} times on the cluster ({task_failure(err)}); "
                               "the results so far are kept") from None
        yield results
        for item in queue:
            running.append(task.remote(spec, item))
            break


def task_failure(err: BaseException) -> str:
    """What failed in a Ray task: the exception the task raised (Ray's ``cause``) and
    its message, or the Ray error's name (a worker lost, say)."""
    cause = getattr(err, "cause", None)
    return f"{type(cause).__name__}: {cause}" if isinstance(cause, BaseException) else type(err).__name__


Solver = Callable[[BuildSpec, list[list[Row]]], Iterator[list[Result]]]


def build(spec: BuildSpec, out: Path, resume: bool, solver: Solver = solve_here,
          stream: IO[str] | None = None) -> BookHeader:
    """Build (or with ``resume`` go on building) the book ``out``; its header.  The
    progress goes to ``stream`` (standard error by default)."""
    stream = stream or sys.stderr
    db_path = database_path(out)
    if db_path.exists() and not resume:
        raise StoreError(f"{db_path} holds a build already: --resume to go on with it, or remove it")
    store = BuildStore(db_path, spec.geometry)
    try:
        store.check_build(spec.geometry, spec.plies, spec.weak)
        if not store.enumerated:
            stream.write(f"enumerating {spec.geometry} positions at {spec.plies} plies...\n")
            enumerate_into(store, spec)
        total, done = store.counts()
        progress = Progress(total, done, stream)
        try:
            for results in solver(spec, chunks(store.to_do())):
                progress.advance(store.record(results))
        finally:
            progress.close()
        return write_from(store, spec, out)
    finally:
        store.close()


def write_from(store: BuildStore, spec: BuildSpec, out: Path) -> BookHeader:
    """The finished book, from the database, into ``out``."""
    solved = store.solved()
    if any(score is None for _, score in solved):
        raise StoreError(f"{store.path}: unsolved positions are left")
    header = BookHeader(spec.geometry, spec.plies, spec.weak, len(solved))
    write_book(out, header, [(key, int(score)) for key, score in solved])
    return header
