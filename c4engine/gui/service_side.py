"""The session's analysis asked of a solving server (``c4engine gui --service URL``).

With a service, the page's analysis of the position on the board is the
server's answer through :func:`c4engine.remote`, in place of the engine's
``go infinite``: :meth:`ServiceSide.ask_service` is called from the session's
schedule after every event, like the engine's searches, and asks once per
version of the game, one request at a time.  The answer is sent to the page
as the ``info`` messages the engine's analysis makes (one per column, best
first, exact), so the page draws it the same way.  The request runs in a
thread (the client is the standard library's, which blocks); its answer comes
back as an event on the session's queue, and an answer for a position no
longer on the board is dropped.  A server that is down, refuses, or answers
what is not a solver's answer (:func:`c4engine.remote` checks its shape) is
reported to the page as an error; the game, the engine and the next
positions' requests go on.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..position import IllegalMoveError
from ..service.client import Remote, RemoteError
from ..reviewer.verdicts import mate_of_pons
from .session_state import SessionState


class ServiceSide(SessionState):
    """Asks the service for the analysis of the position on the board."""

    def service_wanted(self) -> bool:
        return (self.service is not None and self.analysis and self.game.result() is None
                and self.service_asked != self.version and self.service_task is None)

    def ask_service(self) -> None:
        """Start the request for this version of the game, when one is wanted.  Analysis
        switched off forgets what was asked: switched on again, the page has it anew."""
        if not self.analysis:
            self.service_asked = None
        if not self.service_wanted():
            return
        assert self.service is not None
        self.service_asked = self.version
        self.service_task = asyncio.create_task(
            self.service_answer(self.service, self.version, self.game.public_position()))

    async def service_answer(self, service: Remote, version: int, position: Any) -> None:
        """Ask, and put the answer (or what went wrong) on the session's queue, whatever
        ends the request: its event clears the task, and without it no later
        position would ever be asked."""
        answer: dict[int, int | None] | str = "the request ended without an answer"
        try:
            answer = await asyncio.to_thread(service.analyse, position)
        except (RemoteError, IllegalMoveError) as err:
            answer = str(err)
        finally:
            self.events.put_nowait(("service", version, answer))

    async def on_service_answer(self, version: int, answer: dict[int, int | None] | str) -> None:
        """Send the page the answer, if its position is still on the board."""
        self.service_task = None
        if version != self.version or not self.analysis:
            return
        if isinstance(answer, str):
            await self.send({"type": "error", "message": f"analysis service: {answer}"})
            return
        for message in self.service_infos(answer):
            await self.send(message)

    def service_infos(self, scores: dict[int, int | None]) -> list[dict[str, Any]]:
        """The answer as the engine's analysis ``info`` messages: one per playable
        column, best first, its exact score as ``mate N`` or, for a draw, ``cp 0``
        searched to the end of the game."""
        position = self.game.position
        stones, geometry = position.stones, self.game.geometry
        depth = geometry.cells - stones
        ranked = sorted((col for col, score in scores.items() if score is not None),
                        key=lambda col: -(scores[col] or 0))
        infos = []
        for rank, col in enumerate(ranked, start=1):
            mate = mate_of_pons(scores[col] or 0, stones, geometry)
            score = {"kind": "cp", "value": 0, "bound": None} if mate is None else \
                {"kind": "mate", "value": mate, "bound": None}
            infos.append({"type": "info", "kind": "analysis", "version": self.version, "source": "service",
                          "depth": depth, "multipv": rank, "score": score, "pv": [col]})
        return infos
