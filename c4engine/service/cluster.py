"""``c4engine serve --cluster ADDRESS``: the service as Ray Serve replicas.

Ray (``pip install 'c4engine[cluster]'``, Serve included) is imported here only,
and this module only when ``--cluster`` is given, as :mod:`c4engine.referee.cluster`
is for matches, whose connection to the cluster it shares.  Three parts:

- :class:`CacheKeeper`, one actor on the machine where the command runs, owns
  the SQLite file (an :class:`~.cache.AnswerCache`, its one writer thread
  included): every replica reads and writes the cache through it, so that
  SQLite is only ever opened by one process on one machine, as WAL requires;
- :class:`SolverReplica`, the Serve deployment that solves: each replica is a
  whole :class:`~.routes.Service` (books, recent answers, a pool of worker
  threads) built by :func:`~.run.build_service` with :class:`KeptCache` as
  its cache, answering through :func:`~.routes.respond` like the local server;
- :class:`Front`, the ingress behind Ray Serve's HTTP proxy, which hands each
  request to a solver replica and asks again when the replica it went to was
  lost (every route is a GET, so asking twice is safe): a client sees an
  answer from a live replica, or a 503 with ``Retry-After`` once
  :data:`FRONT_ATTEMPTS` replicas failed it.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ..referee.cluster import connected
from ..rules.board import Board
from .answer import Analysis
from .cache import AnswerCache
from .routes import RETRY_AFTER_S, Reply, error_reply, respond
from .run import Settings, build_service

APP_NAME = "c4engine"
FRONT_ATTEMPTS = 8  # replicas a request may be handed to before it is answered 503
FRONT_PAUSE_S = 0.5  # between two attempts: Serve notices a lost replica within a second or two
KEEPER_THREADS = 8  # reads of the cache at once in the keeper (SQLite readers do not block in WAL)


class CacheKeeper:
    """The cache file's one owner on the cluster (the body of an actor)."""

    def __init__(self, path: str, max_bytes: int) -> None:
        self.cache = AnswerCache(path, max_bytes)

    def get(self, board: Board) -> tuple[Analysis | None, int]:
        """The kept answer of ``board``, if any, and the rows kept."""
        return self.cache.get(board), self.cache.rows

    def put(self, analysis: Analysis) -> None:
        self.cache.put(analysis)

    def close(self) -> int:
        """Commit what is queued; the rows kept."""
        self.cache.close()
        return self.cache.rows


class KeptCache:
    """A replica's view of the :class:`CacheKeeper`: a read is a call awaited off the
    event loop's work, a write is sent and not waited for (the cache only saves
    work).  ``rows`` is the count the keeper gave with its last answer."""

    def __init__(self, keeper: Any) -> None:
        self.keeper = keeper
        self.rows = 0
        self.dropped = 0

    async def lookup(self, board: Board) -> Analysis | None:
        analysis, self.rows = await self.keeper.get.remote(board)
        return analysis

    def put(self, analysis: Analysis) -> None:
        self.keeper.put.remote(analysis)

    def close(self) -> None:
        """Nothing of the replica's own: the keeper commits when the command stops."""


class SolverReplica:
    """A whole service on one replica (the body of the ``Solver`` deployment)."""

    def __init__(self, settings: Settings, keeper: Any) -> None:
        self.service = build_service(settings, lambda _line: None, KeptCache(keeper))

    async def reply(self, method: str, path: str, raw_query: str, origin: str | None) -> Reply:
        return await respond(self.service, method, path, raw_query, origin)


class Front:
    """The ingress (the body of the ``Front`` deployment): HTTP in, a solver replica's
    :class:`Reply` out, asked again of another replica when one is lost."""

    def __init__(self, solver: Any) -> None:
        self.solver = solver

    async def __call__(self, request: Any) -> Any:
        from ray.exceptions import RayActorError
        from starlette.responses import Response

        try:
            raw_query = request.scope["query_string"].decode("utf-8")
        except UnicodeDecodeError:
            reply = error_reply(400, "the query string is not UTF-8 text")
        else:
            reply = await self._asked(RayActorError, request.method, request.url.path, raw_query,
                                      request.headers.get("origin"))
        return Response(reply.body, reply.status, headers=reply.headers, media_type=reply.content_type)

    async def _asked(self, lost: type[Exception], *request: Any) -> Reply:
        for _attempt in range(FRONT_ATTEMPTS):
            try:
                return await self.solver.reply.remote(*request)
            except lost:
                await asyncio.sleep(FRONT_PAUSE_S)
        return error_reply(503, f"no solver replica answered in {FRONT_ATTEMPTS} attempts; retry later",
                           {"Retry-After": str(RETRY_AFTER_S)})


def start_keeper(ray: ModuleType, settings: Settings) -> Any:
    """The :class:`CacheKeeper` on this machine's node, where ``--cache`` names a file;
    restarted by Ray if its process is lost (SQLite rolls back a cut transaction)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    keeper = ray.remote(CacheKeeper).options(num_cpus=0, max_concurrency=KEEPER_THREADS, max_restarts=-1,
                                             max_task_retries=-1, scheduling_strategy=here)
    handle = keeper.remote(str(settings.cache_path), settings.cache_bytes)
    ray.get(handle.get.remote(Board(geometry=settings.limits.default_board)))  # the file opened, or fails here
    return handle


def deploy(serve: ModuleType, settings: Settings, keeper: Any, replicas: int) -> None:
    """Ray Serve's proxy on ``settings.host:port`` (the head's), the solver replicas,
    one CPU per worker thread, and the front."""
    serve.start(http_options={"host": settings.host, "port": settings.port}, proxy_location="HeadOnly")
    solver = serve.deployment(SolverReplica, name="Solver", num_replicas=replicas,
                              ray_actor_options={"num_cpus": settings.threads},
                              max_ongoing_requests=settings.threads + settings.queue_size + 64)
    front = serve.deployment(Front, name="Front", ray_actor_options={"num_cpus": 0},
                             max_ongoing_requests=10_000)
    serve.run(front.bind(solver.bind(settings, keeper)),
              name=APP_NAME, route_prefix="/")


def run_cluster_service(settings: Settings, address: str, replicas: int, tell: Callable[[str], None]) -> None:
    """Serve on the Ray cluster at ``address`` until SIGINT or SIGTERM; then the
    application is deleted and the cache committed."""
    with connected(address) as ray:
        from ray import serve

        stopping = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):  # after ray.init, whose own SIGTERM handler aborts
            signal.signal(signum, lambda _signum, _frame: stopping.set())
        keeper = start_keeper(ray, settings)
        began = time.perf_counter()
        try:
            deploy(serve, settings, keeper, replicas)
            tell(f"{replicas} solver replica(s) ready in {time.perf_counter() - began:.1f} s")
            tell(f"c4engine serve on http://{settings.host}:{settings.port}/ (Ray Serve at {address}; "
                 f"{replicas} replica(s) of {settings.threads} worker(s); cache {settings.cache_path}); "
                 "Ctrl-C stops it")
            while not stopping.wait(1.0):
                pass
        finally:
            serve.delete(APP_NAME)
            serve.shutdown()
            tell(f"cache committed: {ray.get(keeper.close.remote())} answers kept")
