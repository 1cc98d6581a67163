"""Building the service and running its server until SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from aiohttp import web

from ..kernel.book import OpeningBook
from ..kernel.built_book import BuiltBook
from .app import Service, close_service, create_app
from .books import Books
from .cache import AnswerCache
from .metrics import Metrics
from .params import Limits
from .solving import Solver, SolvePool

BACKLOG = 1024


def build_service(limits: Limits, threads: int, hash_mb: int, cache_path: Path, cache_bytes: int,
                  queue_size: int, cors_origins: tuple[str, ...], book_paths: Sequence[Path],
                  tell: Callable[[str], None]) -> Service:
    """The books, the cache and one solver per worker (each compiled or loaded from
    numba's cache for every served board: the slow part, told as it goes)."""
    books = Books(OpeningBook.load_or_empty(tell), [BuiltBook.load(path) for path in book_paths])
    solvers = []
    for worker in range(threads):
        began = time.perf_counter()
        solvers.append(Solver(limits.boards, hash_mb, books))
        tell(f"worker {worker + 1}/{threads} ready in {time.perf_counter() - began:.1f} s")
    cache = AnswerCache(cache_path, cache_bytes)
    pool = SolvePool(solvers, queue_size)
    metrics = Metrics({"queue_depth": ("Solves waiting for a worker.", lambda: pool.queued),
                       "solves_in_flight": ("Solves queued or running.", lambda: pool.in_flight),
                       "cache_rows": ("Answers in the persistent cache.", lambda: cache.rows),
                       "cache_dropped_total": ("Answers not cached: the writer was behind.",
                                               lambda: cache.dropped)})
    return Service(limits, books, cache, pool, metrics, cors_origins)


async def run_service(host: str, port: int, limits: Limits, threads: int, hash_mb: int, cache_path: Path,
                      cache_bytes: int, queue_size: int, cors_origins: tuple[str, ...],
                      book_paths: Sequence[Path], tell: Callable[[str], None]) -> None:
    loop = asyncio.get_running_loop()
    service = await loop.run_in_executor(None, build_service, limits, threads, hash_mb, cache_path, cache_bytes,
                                         queue_size, cors_origins, book_paths, tell)
    runner = web.AppRunner(create_app(service), handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=BACKLOG)
    stopping = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    try:
        await site.start()
        bound = site._server.sockets[0].getsockname() if site._server else (host, port)  # type: ignore[union-attr]
        tell(f"c4engine serve on http://{bound[0]}:{bound[1]}/ (boards {', '.join(b.name for b in limits.boards)}; "
             f"{threads} worker(s); cache {cache_path}); Ctrl-C stops it")
        await stopping.wait()
    finally:
        await runner.cleanup()
        await close_service(service)
