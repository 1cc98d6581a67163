"""The web board's server: the bundled page, and the WebSocket each page talks over.

Why aiohttp: one well-kept asyncio library that has the HTTP server, the
WebSocket and static files built in, so the whole web board needs one
dependency and no ASGI server beside it (Starlette would need uvicorn too).

Anyone on the machine can reach a server on 127.0.0.1, and any web page the
user visits can make their browser try, so every request must name this
server in its ``Host`` header (against DNS rebinding) and a WebSocket is
only accepted from a page this server served (its ``Origin``).  Each
WebSocket gets its own :class:`~c4engine.gui.session.Session` and engine
process; closing the page, or stopping the server, ends them.  Started with
a service (``--service``), every session asks it for the page's analysis.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from aiohttp import WSCloseCode, WSMsgType, web

from ..service.client import Remote
from .session import Session

STATIC = Path(__file__).parent / "static"
LOCAL_NAMES = ("127.0.0.1", "localhost")
SESSIONS = web.AppKey("sessions", set[web.WebSocketResponse])
ENGINE_ARGV = web.AppKey("engine_argv", list[str])
SERVICE = web.AppKey("service", Remote | None)  # None: the analysis is the engine's


def own_port(request: web.Request) -> int:
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    return int(sockname[1]) if sockname else -1


def host_allowed(request: web.Request) -> bool:
    """Whether the request was addressed to this server by a local name."""
    return request.host in {f"{name}:{own_port(request)}" for name in LOCAL_NAMES}


def origin_allowed(request: web.Request) -> bool:
    """Whether a WebSocket comes from a page this server served."""
    return host_allowed(request) and request.headers.get("Origin") == f"http://{request.host}"


@web.middleware
async def local_only(request: web.Request, handler):  # type: ignore[no-untyped-def]
    if not host_allowed(request):
        return web.Response(status=403, text="c4engine gui answers only to 127.0.0.1 and localhost")
    return await handler(request)


async def index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html")


async def websocket(request: web.Request) -> web.StreamResponse:
    """One page's connection: its requests go to a session, the session's messages back."""
    if not origin_allowed(request):
        return web.Response(status=403, text="WebSocket refused: it must come from this server's own page")
    ws = web.WebSocketResponse(heartbeat=30.0)
    await ws.prepare(request)
    argv: list[str] = request.app[ENGINE_ARGV]
    session = Session(argv, ws.send_json, request.app[SERVICE])
    runner = asyncio.create_task(session.run())
    request.app[SESSIONS].add(ws)
    try:
        async for message in ws:
            if message.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                session.submit(message.data)
    finally:
        request.app[SESSIONS].discard(ws)
        session.close()
        await runner
    return ws


async def close_pages(app: web.Application) -> None:
    """On shutdown: close every page's WebSocket, which ends its session and engine."""
    pages: set[web.WebSocketResponse] = app[SESSIONS]
    for ws in list(pages):
        await ws.close(code=WSCloseCode.GOING_AWAY, message=b"server stopped")


def create_app(engine_argv: Sequence[str], service: Remote | None = None) -> web.Application:
    """The web board; with ``service``, each page's analysis is asked of that server."""
    app = web.Application(middlewares=[local_only])
    app[SESSIONS] = set()
    app[ENGINE_ARGV] = list(engine_argv)
    app[SERVICE] = service
    app.router.add_get("/", index)
    app.router.add_get("/ws", websocket)
    app.router.add_static("/static/", STATIC)
    app.on_shutdown.append(close_pages)
    return app
