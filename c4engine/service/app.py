"""The HTTP side: routes, errors as JSON, CORS, metrics, and the server's limits.

Why aiohttp: the one HTTP library the package already uses (the web board),
asyncio-native, with the request-size limits and the handler cancellation on a
client's disconnect that the service needs, and no ASGI server beside it.

Only the routes below are served (no files, no directory); anything else is a
JSON 404.  Every answer is JSON except ``/metrics``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import Awaitable, Callable
from urllib.parse import unquote_to_bytes

from aiohttp import web
from multidict import MultiDictProxy

from .answer import Analysis, position_document
from .books import Books
from .cache import AnswerCache
from .metrics import Metrics
from .params import BadRequest, Limits, Query, pons_query, position_query
from .recent import RecentAnswers
from .solving import QueueFull, SolvePool

RETRY_AFTER_S = 1
MAX_LINE_BYTES = 1_310_720  # the request line: a 1 MB query string still gets a JSON 400
MAX_FIELD_BYTES = 8190  # one header
MAX_HEADERS = 64
JSON_TYPE = "application/json"
dumps = partial(json.dumps, separators=(",", ":"))
LOG = logging.getLogger("c4engine.service")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Service:
    """Everything a request needs: the limits, the books, the cache, the pool, the
    counters, the origins allowed, and the recent answers."""

    limits: Limits
    books: Books
    cache: AnswerCache
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
        analysis = self.books.analyse(board) or self.cache.get(board)
        if analysis is None:
            analysis = await self.pool.analyse(board, query.movetime_ms)
            if analysis.is_exact:
                self.cache.put(analysis)
        return analysis


SERVICE = web.AppKey("service", Service)


def json_answer(document: object, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(text=dumps(document), status=status, content_type=JSON_TYPE, headers=headers)


def error_answer(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return json_answer({"error": message, "status": status}, status, headers)


def query_of(request: web.Request) -> tuple[MultiDictProxy[str], int]:
    """The decoded query and its length in bytes as sent; BadRequest for bytes that
    are not UTF-8."""
    raw = request.rel_url.raw_query_string
    if "%" in raw:
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeError:  # yarl would have turned the bytes into U+FFFD
            raise BadRequest("the query string is not UTF-8 text, once its %-escapes are decoded") from None
    return request.rel_url.query, len(raw.encode("utf-8", "surrogateescape"))


async def solve(request: web.Request) -> web.Response:
    """Pons' ``/solve``: ``{"pos": ..., "score": [...]}``, exact or not at all."""
    service = request.app[SERVICE]
    query, size = query_of(request)
    checked = pons_query(query, size, service.limits)
    analysis = await service.analyse(checked)
    if not analysis.is_exact:
        return error_answer(503, f"not solved exactly within {checked.movetime_ms} ms; "
                                 "/api/v1/position gives the bounds found", {"Retry-After": str(RETRY_AFTER_S)})
    return json_answer({"pos": query["pos"], "score": analysis.pons_scores()})


async def position(request: web.Request) -> web.Response:
    """The full answer: verdict, score, distance, exactness, source, every move."""
    service = request.app[SERVICE]
    began = time.perf_counter()
    query, size = query_of(request)
    checked = position_query(query, size, service.limits)
    analysis = await service.analyse(checked)
    return json_answer(position_document(analysis, (time.perf_counter() - began) * 1000))


async def health(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    return json_answer({"status": "ok", "boards": [board.name for board in service.limits.boards],
                        "workers": service.pool.workers, "in_flight": service.pool.in_flight,
                        "cache_rows": service.cache.rows})


async def metrics(request: web.Request) -> web.Response:
    return web.Response(body=request.app[SERVICE].metrics.text().encode(),
                        headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


async def preflight(request: web.Request) -> web.Response:
    """A browser's CORS preflight: GET is the only method, no headers beyond the simple ones."""
    return web.Response(status=204, headers={"Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
                                             "Access-Control-Max-Age": "86400"})


def cors_headers(origins: tuple[str, ...], request: web.Request) -> dict[str, str]:
    if "*" in origins:
        return {"Access-Control-Allow-Origin": "*"}
    origin = request.headers.get("Origin")
    if origin is not None and origin in origins:
        return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}
    return {}


def route_name(request: web.Request) -> str:
    info = request.match_info
    return info.route.resource.canonical if info.route.resource is not None else "other"


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refusals as JSON (400 bad input, 404/405, 503 queue full, 500 for a fault of
    the server's own), CORS headers, counts."""
    service = request.app[SERVICE]
    try:
        response = await handler(request)
    except BadRequest as err:
        response = error_answer(400, str(err))
    except QueueFull as err:
        response = error_answer(503, f"busy: {err}; retry later", {"Retry-After": str(RETRY_AFTER_S)})
    except web.HTTPException as err:
        response = error_answer(err.status, f"{err.reason}: {request.method} {request.path[:80]!r}")
    except Exception:  # a fault of the server's, not the client's: logged, answered, and serving goes on
        LOG.exception("error answering %s %s", request.method, request.path[:80])
        response = error_answer(500, "internal error: the server's log says more")
    response.headers.update(cors_headers(service.cors_origins, request))
    service.metrics.count_request(route_name(request), response.status)
    return response


def create_app(service: Service, idle_timeout_s: float) -> web.Application:
    """The application; a connection that has not completed a request within
    ``idle_timeout_s`` of its start or its last answer is closed (idle and
    slow-loris clients alike)."""
    app = web.Application(middlewares=[guard], client_max_size=1024, handler_args={
        "max_line_size": MAX_LINE_BYTES, "max_field_size": MAX_FIELD_BYTES, "max_headers": MAX_HEADERS,
        "keepalive_timeout": idle_timeout_s})
    app[SERVICE] = service
    for path, handler in (("/solve", solve), ("/api/v1/position", position), ("/health", health),
                          ("/metrics", metrics)):
        app.router.add_get(path, handler)
        app.router.add_route("OPTIONS", path, preflight)
    return app


async def close_service(service: Service) -> None:
    """Stop the solves, then commit the cache's queued rows."""
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, service.pool.close)
    await loop.run_in_executor(None, service.cache.close)

