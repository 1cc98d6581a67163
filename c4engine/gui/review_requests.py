"""The page's requests for review: a game reviewed (the one on the board, or one of a
PGN), stepping through it, and the game as PGN."""

from __future__ import annotations

import asyncio
from typing import Any

from ..referee.pgn import write_game
from ..reviewer.games import GameInput, InputProblem, unnamed_game
from ..rules.notation import to_fen
from .engine_side import EngineSide
from .game import Game
from .requests import Quiet, RequestError, game_entry, read_pgn, whole_number
from .review import PageReview


class ReviewRequests(EngineSide):
    """The handlers of the review requests, and the game the page shows as PGN."""

    async def req_review(self, message: dict[str, Any]) -> None:
        """Review the game on the board (``played``) or a game of ``pgn`` (``game``: its
        number; without one, a PGN of several games gets their list to pick from).
        The board then shows the game from its start, two people to move, so that
        stepping through it never makes the engine play."""
        if message.get("played"):
            item = self.played_game()
        else:
            items = await asyncio.to_thread(read_pgn, message.get("pgn"))  # seconds for a large PGN
            number = message.get("game")
            if number is None and len(items) > 1:
                await self.send({"type": "review_games", "games": [game_entry(i) for i in items]})
                raise Quiet
            chosen = items[0] if number is None else next(
                (i for i in items if i.number == number), None)
            if chosen is None:
                raise RequestError(f"there is no game {number!r} in that PGN")
            if isinstance(chosen, InputProblem):
                raise RequestError(f"cannot review {chosen}")
            item = chosen
        await self.switch_board(item.geometry)
        self.reviews_started += 1
        self.review = PageReview(self.reviews_started, item)
        game = item.game
        self.game = Game(game.start_position(), [], [m.col for m in reversed(game.moves)], game.start_fen is None)
        self.mode = "humans"
        self.position_changed()

    def played_game(self) -> GameInput:
        """The game on the board, with the moves undone after it, as a review input."""
        moves = self.game.moves + list(reversed(self.game.undone))
        start_fen = None if self.game.from_start else to_fen(self.game.base)
        return unnamed_game(self.game.base, moves, start_fen)

    def req_goto(self, message: dict[str, Any]) -> None:
        """Show the game after ``ply`` of its moves, played or undone, or ``step`` (-1 or
        1) moves from the one shown, staying at either end: steps are counted here, in
        the order they came, so that keys pressed faster than the page hears back are
        all taken.  Two people only: else stepping back could hand the engine a move."""
        if self.mode != "humans":
            raise RequestError("stepping through a game needs the mode 'two people'")
        plies = len(self.game.moves) + len(self.game.undone)
        if "step" in message:
            step = whole_number(message, "step", range(-1, 2))
            ply = min(max(len(self.game.moves) + step, 0), plies)
        else:
            ply = whole_number(message, "ply", range(0, plies + 1))
        while len(self.game.moves) > ply:
            self.game.undo()
        while len(self.game.moves) < ply:
            self.game.redo()
        self.position_changed()

    def game_pgn(self) -> str:
        """The game on the board as PGN, all its moves (undone ones too); annotated
        when it is the game under review and the review is done."""
        item = self.played_game()
        review = self.review
        if review is not None and review.done and review.columns == [m.col + 1 for m in item.game.moves] \
                and review.item.game.start_fen == item.game.start_fen:
            return str(review.describe()["pgn"])
        return write_game(item.game)
