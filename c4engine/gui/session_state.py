"""What one page's session holds: its game, its settings, its engine and the searches in flight.

The session is one object built from parts, each in a module of its own:
this state, the engine side (:mod:`.engine_side`), the page's requests
(:mod:`.play_requests`, :mod:`.review_requests`) and the actor that runs them
(:mod:`.session`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..geometry import STANDARD
from ..service.client import Remote
from .game import Game
from .process import EngineProcess
from .review import PageReview


@dataclass
class Search:
    """One ``go`` in flight: what it is for, the game version it searches, and when
    its engine counts as hung if no ``bestmove`` has come."""

    kind: str  # move, hint, analysis, review
    version: int
    started: float
    deadline: float | None
    stopping: bool = False


class SessionState:
    """The state of one page's session, and what every part of it asks of the
    state: whose move it is, and which version of the game is on the board."""

    def __init__(self, argv: Sequence[str], send: Callable[[dict[str, Any]], Awaitable[None]],
                 service: Remote | None = None) -> None:
        self.argv = list(argv)
        self.service = service  # where the analysis comes from, when not from the engine
        self.service_asked: int | None = None  # the version of the game last asked of it
        self.service_task: asyncio.Task[None] | None = None
        self._send = send
        self.events: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self.waiting_requests = 0  # of the events, the page's requests
        self.refused_requests = 0  # since the page was last told
        self.closed = False
        self.game = Game()
        self.version = 0
        self.engine_board = STANDARD  # the board the engine was told in its handshake
        self.mode, self.level, self.movetime, self.analysis = "first", 20, 1000, False
        self.hint_wanted: int | None = None
        self.hint: tuple[int, int] | None = None  # (version, column 1-7)
        self.last_engine_move: dict[str, Any] | None = None
        self.engine: EngineProcess | None = None
        self.status, self.detail, self.engine_name = "starting", "", ""
        self.engine_options: dict[str, str] = {}
        self.sent_options: dict[str, str] = {}
        self.drops = False
        self.pending: deque[Search] = deque()
        self.handshake_deadline = 0.0
        self.review: PageReview | None = None
        self.reviews_started = 0
        self.lines_handled, self.line_arrived = 0, 0.0  # of the engine's lines; when the last came

    async def send(self, message: dict[str, Any]) -> None:
        try:
            await self._send(message)
        except (ConnectionError, RuntimeError):
            pass  # the page is gone; the "closed" event ends the session

    async def push_state(self) -> None:
        """Send the page the whole state (:class:`~c4engine.gui.session.Session` writes it)."""
        raise NotImplementedError

    def position_changed(self) -> None:
        """A new version of the game: searches of the old one are void."""
        self.version += 1
        self.last_engine_move = None

    def engine_moves(self, ply: int) -> bool:
        """Whether the engine makes the move at ``ply`` (0 = the set-up position's first)."""
        side = (self.game.base.side_to_move + ply) % 2
        return self.mode == ("first", "second")[1 - side]

    def engine_to_move(self) -> bool:
        return self.game.result() is None and self.engine_moves(len(self.game.moves))
