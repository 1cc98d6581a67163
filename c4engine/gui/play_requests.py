"""The page's requests for playing: moves, undo and redo, a new game or board, a set-up
position, the settings, a hint, and an engine restart."""

from __future__ import annotations

from typing import Any

from .engine_side import EngineSide
from .game import Game
from .requests import LEVELS, MAX_TEXT, MODES, MOVETIMES, RequestError, read_board, whole_number


class PlayRequests(EngineSide):
    """The play requests' handlers, each named ``req_`` and the request's ``op``."""

    def req_move(self, message: dict[str, Any]) -> None:
        column = whole_number(message, "column", range(1, self.game.geometry.width + 1))
        if self.game.result() is not None:
            raise RequestError("the game is over: undo, or start a new game")
        if self.engine_to_move():
            raise RequestError("it is the engine's turn: wait for its move")
        self.game.play(column - 1)
        self.position_changed()

    def req_undo(self, message: dict[str, Any]) -> None:
        """Take back moves until it is a person's turn again (one move with two humans)."""
        if not self.game.moves:
            raise RequestError("there is no move to undo")
        while self.game.moves:
            by_person = not self.engine_moves(len(self.game.moves) - 1)
            self.game.undo()
            if by_person:
                break
        self.position_changed()

    def req_redo(self, message: dict[str, Any]) -> None:
        """Replay an undone move, and the engine's answer that followed it."""
        if not self.game.undone:
            raise RequestError("there is no move to redo")
        self.game.redo()
        while self.game.undone and self.engine_to_move():
            self.game.redo()
        self.position_changed()

    def req_new(self, message: dict[str, Any]) -> None:
        self.game = Game.on(self.game.geometry)
        self.position_changed()

    async def req_board(self, message: dict[str, Any]) -> None:
        """A new game on the board ``message["board"]`` names (``8x7``, ``9x6k5``);
        RequestError naming the limit for one the engine cannot play."""
        await self.switch_board(read_board(message.get("board")))
        self.position_changed()

    def req_set(self, message: dict[str, Any]) -> None:
        text = message.get("text")
        if not isinstance(text, str) or len(text) > MAX_TEXT:
            raise RequestError(f"a position is a digit string or a FEN of at most {MAX_TEXT} characters")
        self.game.set_up(text)
        self.position_changed()

    def req_settings(self, message: dict[str, Any]) -> None:
        """Change any of mode, level, movetime and analysis; all are checked before any is set."""
        mode = message.get("mode", self.mode)
        if mode not in MODES:
            raise RequestError(f"mode must be one of {', '.join(MODES)}")
        level = whole_number(message, "level", LEVELS, self.level)
        movetime = whole_number(message, "movetime", MOVETIMES, self.movetime)
        analysis = message.get("analysis", self.analysis)
        if not isinstance(analysis, bool):
            raise RequestError("analysis must be true or false")
        self.mode, self.level, self.movetime, self.analysis = mode, level, movetime, analysis

    def req_hint(self, message: dict[str, Any]) -> None:
        if self.game.result() is not None:
            raise RequestError("the game is over: there is nothing to hint")
        if self.status != "ready":
            raise RequestError(f"the engine is not ready ({self.status}): restart it first")
        self.hint_wanted = self.version

    async def req_restart(self, message: dict[str, Any]) -> None:
        await self.restart_engine()
