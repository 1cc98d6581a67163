"""The aiohttp server of ``c4engine serve``: every request handed to
:func:`~.routes.respond`, and the server's own limits.

Why aiohttp: the one HTTP library the package already uses (the web board),
asyncio-native, with the request-size limits and the handler cancellation on a
client's disconnect that the service needs, and no ASGI server beside it.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from .routes import MAX_BODY_BYTES, Service, respond

MAX_LINE_BYTES = 1_310_720  # the request line: a 1 MB query string still gets a JSON 400
MAX_FIELD_BYTES = 8190  # one header
MAX_HEADERS = 64
SERVICE = web.AppKey("service", Service)


async def handle(request: web.Request) -> web.Response:
    reply = await respond(request.app[SERVICE], request.method, request.path, request.rel_url.raw_query_string,
                          request.headers.get("Origin"), await body_bytes(request))
    return web.Response(body=reply.body, status=reply.status, headers={"Content-Type": reply.content_type,
                                                                       **reply.headers})


async def body_bytes(request: web.Request) -> int:
    """The size of the request's body, read no further than one byte past
    :data:`~.routes.MAX_BODY_BYTES` (aiohttp's ``client_max_size``)."""
    if not request.body_exists:
        return 0
    try:
        return len(await request.read())
    except web.HTTPRequestEntityTooLarge:
        return MAX_BODY_BYTES + 1


def create_app(service: Service, idle_timeout_s: float) -> web.Application:
    """The application; a connection that has not completed a request within
    ``idle_timeout_s`` of its start or its last answer is closed (idle and
    slow-loris clients alike)."""
    app = web.Application(client_max_size=MAX_BODY_BYTES, handler_args={
        "max_line_size": MAX_LINE_BYTES, "max_field_size": MAX_FIELD_BYTES, "max_headers": MAX_HEADERS,
        "keepalive_timeout": idle_timeout_s})
    app[SERVICE] = service
    app.router.add_route("*", "/{path:.*}", handle)
    return app


async def close_service(service: Service) -> None:
    """Stop the solves, then commit the cache's queued rows."""
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, service.pool.close)
    await loop.run_in_executor(None, service.cache.close)
