"""Building the service and running its server until SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import ctypes
import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from ..kernel.book import OpeningBook
from ..kernel.built_book import BookFileError, BuiltBook
from ..search.kernel_build import start_kernel_builds_beside
from .app import close_service, create_app
from .books import Books
from .cache import AnswerCache, prepare_cache
from .metrics import Metrics
from .params import Limits
from .recent import RecentAnswers
from .routes import Cache, Service
from .solving import Solver, SolvePool

BACKLOG = 1024
PR_SET_PDEATHSIG = 1  # linux/prctl.h
RECENT_ANSWERS = 32_768  # about 700 bytes each with their positions: some 25 MB at most


class ClientErrorsInOneLine(logging.Filter):
    """aiohttp logs a request its parser refuses (bytes not allowed in a URL, a line
    or a header over the limits) with a traceback, as if the server had failed; it
    is the client's error, already answered with a 400: one line says so."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            record.msg, record.args, record.exc_info = "refused a malformed request: %s", (error.message,), None
        return True


@dataclass(frozen=True)
class Settings:
    """What ``c4engine serve`` was told."""

    host: str
    port: int
    limits: Limits
    threads: int
    hash_mb: int
    cache_path: Path
    cache_bytes: int
    queue_size: int
    cors_origins: tuple[str, ...]
    book_paths: tuple[Path, ...]
    idle_timeout_s: float


def build_service(settings: Settings, tell: Callable[[str], None], cache: Cache | None = None) -> Service:
    """The books, the cache and one solver per worker (each compiled or loaded from
    numba's cache for every served board: the slow part, told as it goes, after
    the books and the cache file have been checked; several new boards compile
    side by side, each but one in a child process).  The cache is ``cache``, else
    the file of ``settings``.  BookFileError for a book that cannot be used,
    sqlite3.Error for a cache file that is no database."""
    built = [BuiltBook.load(path) for path in settings.book_paths]
    for book in built:
        if book.header.geometry not in settings.limits.boards:
            raise BookFileError(f"book {book.path} is for the {book.header.geometry} board, which is not served")
    books = Books(OpeningBook.load_or_empty(tell), built)
    if cache is None:
        cache = AnswerCache(settings.cache_path, settings.cache_bytes)
    compiling = start_kernel_builds_beside(settings.limits.boards, whole=True)
    if compiling:
        tell(f"compiling the kernels of {', '.join(map(str, compiling))} in child processes, beside this one's")
    solvers = []
    for worker in range(settings.threads):
        began = time.perf_counter()
        solvers.append(Solver(settings.limits.boards, settings.hash_mb, books, compiling))
        tell(f"worker {worker + 1}/{settings.threads} ready in {time.perf_counter() - began:.1f} s")
    metrics = Metrics({"queue_depth": ("Solves waiting for a worker.", lambda: pool.queued),
                       "solves_in_flight": ("Solves queued or running.", lambda: pool.in_flight),
                       "cache_rows": ("Answers in the persistent cache.", lambda: cache.rows),
                       "cache_dropped_total": ("Answers not cached: the writer was behind.",
                                               lambda: cache.dropped)})
    pool = SolvePool(solvers, settings.queue_size, metrics.count_solve)
    return Service(settings.limits, books, cache, pool, metrics, settings.cors_origins,
                   RecentAnswers(RECENT_ANSWERS))


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` with SO_REUSEPORT, so that several server
    processes can listen on one port and the kernel shares the connections out."""
    family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(address)
    sock.listen(BACKLOG)
    return sock


async def run_service(settings: Settings, tell: Callable[[str], None],
                      listen: Callable[[], socket.socket] | None = None, name: str = "c4engine serve") -> None:
    """Serve until SIGINT or SIGTERM, then stop the solves and commit the cache.  The
    socket is ``listen()``'s once the service is built, else ``settings``' address."""
    logging.getLogger("aiohttp.server").addFilter(ClientErrorsInOneLine())
    loop = asyncio.get_running_loop()
    service = await loop.run_in_executor(None, build_service, settings, tell)
    runner = web.AppRunner(create_app(service, settings.idle_timeout_s), handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, settings.port, backlog=BACKLOG) if listen is None else \
        web.SockSite(runner, listen())
    stopping = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    try:
        await site.start()
        host, port = runner.addresses[0][:2]
        boards = ", ".join(board.name for board in settings.limits.boards)
        tell(f"{name} on http://{host}:{port}/ (boards {boards}; {settings.threads} worker(s); "
             f"cache {settings.cache_path}); Ctrl-C stops it")
        await stopping.wait()
    finally:
        await runner.cleanup()
        await close_service(service)


def run_processes(settings: Settings, processes: int, tell: Callable[[str], None]) -> None:
    """``--workers N``: this process and N-1 forked ones, each a whole server with its
    own pool and recent answers, on one port (SO_REUSEPORT) and one cache file
    (WAL: readers never wait, writers take turns).  One Python process answers
    cached requests at the rate of one core; N of them use N.  This one binds the
    port first (``--port 0`` picks it for all); each other binds it when its
    service is built, and the kernel sends it connections from then on.  SIGINT or
    SIGTERM here stops them all."""
    prepare_cache(settings.cache_path)
    first = listening_socket(settings.host, settings.port)
    shared = replace(settings, port=first.getsockname()[1])
    children = [pid for number in range(2, processes + 1) if (pid := _fork_server(shared, number, tell))]
    try:
        asyncio.run(run_service(shared, tell, lambda: first))
    finally:
        for pid in children:
            os.kill(pid, signal.SIGTERM)
        for pid in children:
            os.waitpid(pid, 0)


def _fork_server(settings: Settings, number: int, tell: Callable[[str], None]) -> int:
    """The child's pid in the parent; in the child, a server until its parent stops it
    (or dies: the kernel sends it SIGTERM), then the child's end."""
    pid = os.fork()
    if pid:
        return pid
    status = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        asyncio.run(run_service(settings, tell, lambda: listening_socket(settings.host, settings.port),
                                f"c4engine serve process {number}"))
        status = 0
    except Exception as err:  # the parent serves on; this process says why it could not
        tell(f"c4engine serve process {number} stopped: {err}")
    finally:
        os._exit(status)
