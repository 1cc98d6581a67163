"""One page's session: its game, its settings, and the engine process that plays and analyses.

A session is an actor: page requests, engine lines and a clock tick arrive on
one queue and are handled one at a time, so the game, the engine's state and
the searches in flight never race.  The engine is driven only through the
protocol (``position``, ``go``, ``stop``, ``setoption``), so any ``cfour``
engine can sit behind the page.  The state is :mod:`.session_state`'s, the
engine's part :mod:`.engine_side`'s, and the requests are handled by
:mod:`.play_requests` and :mod:`.review_requests`, checked by :mod:`.requests`.

A page that sends faster than the session answers (it would have to stop
reading, for the session waits on the page's connection) finds at most
:data:`MAX_WAITING_REQUESTS` requests waiting; the ones past that are refused
unread, and the page is told how many once the session catches up.  When the
page goes, the requests still waiting are dropped and the session and its
engine end after the event in hand, not after a backlog.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..service.client import Remote
from ..rules.board import RulesError
from .play_requests import PlayRequests
from .requests import NOT_A_REQUEST, Quiet, RequestError, read_request
from .review_requests import ReviewRequests

TICK = 0.25
MAX_WAITING_REQUESTS = 64


class Session(PlayRequests, ReviewRequests):
    """The game of one page and the engine behind it."""

    def __init__(self, argv: Sequence[str], send: Callable[[dict[str, Any]], Awaitable[None]],
                 service: Remote | None = None) -> None:
        super().__init__(argv, send, service)
        self.requests: dict[str, Callable[[dict[str, Any]], Awaitable[None] | None]] = {
            "move": self.req_move, "undo": self.req_undo, "redo": self.req_redo, "new": self.req_new,
            "set": self.req_set, "settings": self.req_settings, "hint": self.req_hint,
            "restart": self.req_restart, "review": self.req_review, "goto": self.req_goto,
            "board": self.req_board,
        }

    # -- the actor --------------------------------------------------------
    def submit(self, request: str | bytes) -> None:
        """Queue a page's request (a WebSocket message) for the actor, or refuse it
        unread when :data:`MAX_WAITING_REQUESTS` are waiting already."""
        if self.waiting_requests >= MAX_WAITING_REQUESTS:
            self.refused_requests += 1
            return
        self.waiting_requests += 1
        self.events.put_nowait(("request", request))

    def close(self) -> None:
        """The page is gone: the actor ends after the event in hand, and what was
        still waiting is dropped with the session."""
        self.closed = True
        self.events.put_nowait(("closed",))

    async def run(self) -> None:
        """Handle events until the page goes away; the engine goes with it, however
        the session ends (cancelled while the engine starts included)."""
        try:
            await self.restart_engine()
            await self.push_state()
            while True:
                try:
                    event = await asyncio.wait_for(self.events.get(), TICK)
                except asyncio.TimeoutError:
                    event = ("tick",)
                if self.closed:
                    return
                await self.handle(event)
                await self.check_hang()  # also while lines keep coming without a bestmove
        finally:
            if self.service_task is not None:
                self.service_task.cancel()
            await self.drop_engine()

    async def handle(self, event: tuple[Any, ...]) -> None:
        try:
            if event[0] == "request":
                self.waiting_requests -= 1
                await self.on_request(event[1])
                await self.tell_refused()
            elif event[0] == "line" and self.engine is not None and event[1] == self.engine.serial:
                self.lines_handled, self.line_arrived = self.lines_handled + 1, event[3]
                await self.on_engine_line(event[2])
            elif event[0] == "service":
                await self.on_service_answer(event[1], event[2])
                self.schedule()
        except Exception as exc:  # noqa: BLE001 - a bug must not end the page's session
            traceback.print_exc()
            await self.send({"type": "error", "message": f"internal error in the server: {exc!r}"})

    async def tell_refused(self) -> None:
        if self.refused_requests:
            count, self.refused_requests = self.refused_requests, 0
            await self.send({"type": "error", "message": (
                f"{count} request(s) refused unread: at most {MAX_WAITING_REQUESTS} may wait "
                "for an answer")})

    # -- page requests ----------------------------------------------------
    async def on_request(self, request: str | bytes) -> None:
        op = None
        try:
            message = read_request(request)
            op = message.get("op")
            handler = self.requests.get(op) if isinstance(op, str) else None
            if handler is None:
                raise RequestError(f"unknown request {op!r}" if op else NOT_A_REQUEST)
            outcome = handler(message)
            if outcome is not None:
                await outcome
        except Quiet:
            return
        except (RequestError, RulesError) as err:
            await self.send({"type": "error", "request": op, "message": str(err)})
            return
        self.schedule()
        await self.push_state()

    # -- what the page sees -----------------------------------------------
    async def push_state(self) -> None:
        search = self.pending[0] if self.pending and self.current(self.pending[0]) else None
        await self.send({
            "type": "state", "version": self.version, **self.game.describe(),
            "mode": self.mode, "level": self.level, "movetime": self.movetime, "analysis": self.analysis,
            "hint": self.hint[1] if self.hint and self.hint[0] == self.version else None,
            "hint_pending": self.wanted_search() == "hint",
            "engine_turn": self.engine_to_move(),
            "thinking": search.kind if search else None,
            "last_engine_move": self.last_engine_move,
            "pgn": self.game_pgn(), "plies": len(self.game.moves) + len(self.game.undone),
            "review_serial": self.review.serial if self.review else None,
            "engine": {"status": self.status, "detail": self.detail, "name": self.engine_name},
            "service": self.service.url if self.service else None,
        })
