"""The service's routes without an HTTP server: a request's method, path, raw query
and ``Origin`` in, a :class:`Reply` out.

Both servers answer through :func:`respond`: the aiohttp one of ``c4engine serve``
and the Ray Serve replicas of ``c4engine serve --cluster``, so that they serve
the same routes with the same JSON and the same errors.  Every answer is JSON
except ``/metrics``; any path but the four routes is a JSON 404.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol
from urllib.parse import unquote_to_bytes

from multidict import MultiDictProxy
from yarl import URL

from ..rules.board import Board
from .answer import Analysis, position_document
from .books import Books
from .metrics import Metrics
from .params import BadRequest, Limits, Query, pons_query, position_query
from .recent import RecentAnswers
from .solving import QueueFull, SolvePool

RETRY_AFTER_S = 1
JSON_TYPE = "application/json"
METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
METHODS = ("GET", "HEAD", "OPTIONS")
MAX_BODY_BYTES = 1024  # a request's body, which no route reads: a small one is ignored, a larger refused
dumps = partial(json.dumps, separators=(",", ":"))
LOG = logging.getLogger("c4engine.service")


class Cache(Protocol):
    """Where exact answers are kept: the SQLite file itself (:class:`~.cache.AnswerCache`)
    or, on a cluster, the one actor that owns it."""

    @property
    def rows(self) -> int: ...

    @property
    def dropped(self) -> int: ...

    async def lookup(self, board: Board) -> Analysis | None: ...

    def put(self, analysis: Analysis) -> None: ...

    def close(self) -> None: ...


@dataclass
class Service:
    """Everything a request needs: the limits, the books, the cache, the pool, the
    counters, the origins allowed, and the recent answers."""

    limits: Limits
    books: Books
    cache: Cache
    pool: SolvePool
    metrics: Metrics
    cors_origins: tuple[str, ...]
    recent: RecentAnswers

    async def analyse(self, query: Query) -> Analysis:
        """The answer of the same query made recently, else :meth:`answer`; an exact
        answer is kept for the next one."""
        analysis = self.recent.get(query.position_key)
        if analysis is None:
            analysis = await self.answer(query)
            if analysis.is_exact:
                self.recent.put(query.position_key, analysis)
        self.metrics.count_answer(analysis.source, analysis.is_exact)
        return analysis

    async def answer(self, query: Query) -> Analysis:
        """The books, then the cache, then a solve, whose exact answer is cached."""
        board = query.board()
        analysis = self.books.analyse(board) or await self.cache.lookup(board)
        if analysis is None:
            analysis = await self.pool.analyse(board, query.movetime_ms)
            if analysis.is_exact:
                self.cache.put(analysis)
        return analysis


@dataclass(frozen=True)
class Reply:
    """An answer ready to be written by either server."""

    status: int
    body: bytes
    content_type: str = JSON_TYPE
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(document: object, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, dumps(document).encode(), JSON_TYPE, headers or {})


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return json_reply({"error": message, "status": status}, status, headers)


def decoded_query(raw: str) -> tuple[MultiDictProxy[str], int]:
    """The query string as sent, decoded, and its length in bytes; BadRequest for
    bytes that are not UTF-8."""
    if "%" in raw:
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeError:  # yarl would have turned the bytes into U+FFFD
            raise BadRequest("the query string is not UTF-8 text, once its %-escapes are decoded") from None
    return URL.build(query_string=raw, encoded=True).query, len(raw.encode("utf-8", "surrogateescape"))


async def solve(service: Service, query: Mapping[str, str], size: int) -> Reply:
    """Pons' ``/solve``: ``{"pos": ..., "score": [...]}``, exact or not at all."""
    checked = pons_query(query, size, service.limits)
    analysis = await service.analyse(checked)
    if not analysis.is_exact:
        return error_reply(503, f"not solved exactly within {checked.movetime_ms} ms; "
                                "/api/v1/position gives the bounds found", {"Retry-After": str(RETRY_AFTER_S)})
    return json_reply({"pos": query["pos"], "score": analysis.pons_scores()})


async def position(service: Service, query: Mapping[str, str], size: int) -> Reply:
    """The full answer: verdict, score, distance, exactness, source, every move."""
    began = time.perf_counter()
    checked = position_query(query, size, service.limits)
    analysis = await service.analyse(checked)
    return json_reply(position_document(analysis, (time.perf_counter() - began) * 1000))


async def health(service: Service, _query: Mapping[str, str], _size: int) -> Reply:
    return json_reply({"status": "ok", "boards": [board.name for board in service.limits.boards],
                       "workers": service.pool.workers, "in_flight": service.pool.in_flight,
                       "cache_rows": service.cache.rows})


async def metrics(service: Service, _query: Mapping[str, str], _size: int) -> Reply:
    return Reply(200, service.metrics.text().encode(), METRICS_TYPE)


Route = Callable[[Service, Mapping[str, str], int], Awaitable[Reply]]
ROUTES: dict[str, Route] = {"/solve": solve, "/api/v1/position": position, "/health": health,
                            "/metrics": metrics}


def preflight() -> Reply:
    """A browser's CORS preflight: GET is the only method, no headers beyond the simple ones."""
    return Reply(204, b"", JSON_TYPE, {"Access-Control-Allow-Methods": ", ".join(METHODS),
                                       "Access-Control-Max-Age": "86400"})


def cors_headers(origins: tuple[str, ...], origin: str | None) -> dict[str, str]:
    if "*" in origins:
        return {"Access-Control-Allow-Origin": "*"}
    if origin is not None and origin in origins:
        return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}
    return {}


async def routed(service: Service, method: str, path: str, raw_query: str, body_bytes: int) -> Reply:
    """The route's reply; refusals as JSON (400 bad input, 404/405, 413 a body over
    :data:`MAX_BODY_BYTES`, 503 queue full, 500 for a fault of the server's own,
    logged, and serving goes on)."""
    route = ROUTES.get(path)
    if route is None:
        return error_reply(404, f"Not Found: {method} {path[:80]!r}")
    if method not in METHODS:
        return error_reply(405, f"Method Not Allowed: {method} {path[:80]!r}", {"Allow": ", ".join(METHODS)})
    if body_bytes > MAX_BODY_BYTES:
        return error_reply(413, f"a request body over {MAX_BODY_BYTES} bytes: the routes take none")
    if method == "OPTIONS":
        return preflight()
    try:
        return await route(service, *decoded_query(raw_query))
    except BadRequest as err:
        return error_reply(400, str(err))
    except QueueFull as err:
        return error_reply(503, f"busy: {err}; retry later", {"Retry-After": str(RETRY_AFTER_S)})
    except Exception:
        LOG.exception("error answering %s %s", method, path[:80])
        return error_reply(500, "internal error: the server's log says more")


async def respond(service: Service, method: str, path: str, raw_query: str, origin: str | None,
                  body_bytes: int = 0) -> Reply:
    """What the service answers to a request, CORS headers included, counted;
    ``body_bytes`` is the size of its body, read up to one byte past the limit."""
    reply = await routed(service, method, path, raw_query, body_bytes)
    reply.headers.update(cors_headers(service.cors_origins, origin))
    service.metrics.count_request(path if path in ROUTES else "other", reply.status)
    return reply
