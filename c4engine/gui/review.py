"""A game under review on the web board: which position the engine scores next, and the verdicts so far.

The page's engine scores every column of each position with a ``MultiPV``
search over all columns, as ``c4engine review`` does; this class only keeps
the count, collects each search's ``info`` lines and hands them to
:mod:`c4engine.verdicts`, so the page's marks are the command line's.  It
knows no asyncio and no engine: the session sends the commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.client import position_command
from ..engine.info import InfoDict, add_info
from ..referee.pgn import write_game
from ..reviewer import GameInput, annotated, is_opening
from ..verdicts import (
    GameReview,
    MoveVerdict,
    column_values,
    first_player_scores,
    judge,
    review_dict,
    win_now,
)

MOVETIME_MS = 3000  # the cap per position; c4engine needs well under a second for most


@dataclass
class PageReview:
    """The review of ``item`` under way (``serial`` tells it from earlier ones)."""

    serial: int
    item: GameInput
    verdicts: list[MoveVerdict] = field(default_factory=list)
    lines: dict[int, InfoDict] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return len(self.verdicts) == len(self.item.game.moves)

    @property
    def columns(self) -> list[int]:
        """The game's moves, columns 1-W."""
        return [move.col + 1 for move in self.item.game.moves]

    def position_command(self, drops: bool) -> str:
        """``position`` for the next position to score."""
        game = self.item.game
        return position_command(self.columns[:len(self.verdicts)], game.start_fen, drops)[0]

    def add_line(self, line: str) -> None:
        """An ``info`` line of the search in flight."""
        add_info(self.lines, line)

    def finish_position(self) -> MoveVerdict:
        """The search of the next position has ended: judge its move."""
        game = self.item.game
        board = game.start_position().play_all([m.col for m in game.moves[:len(self.verdicts)]])
        move = game.moves[len(self.verdicts)]
        values = column_values(self.lines.values(), board, self.item.geometry)
        verdict = judge(board, move.col, values, len(self.verdicts) + 1, opening=is_opening(move))
        self.verdicts.append(verdict)
        self.lines = {}
        return verdict

    def as_review(self) -> GameReview:
        game = self.item.game
        return GameReview(tuple(self.verdicts), game.white, game.black, game.result, game.start_fen,
                          self.item.geometry)

    def describe(self) -> dict[str, Any]:
        """The review for the page: the verdicts so far (as ``c4engine review --json``
        gives them), the chart's points, and the annotated PGN once done."""
        review = self.as_review()
        scores = first_player_scores(self.verdicts)
        return {**review_dict(review), "serial": self.serial, "columns": self.columns,
                "total": len(self.item.game.moves), "done": self.done,
                "scale": win_now(0, self.item.geometry.cells),
                "chart": [{"low": v.low, "high": v.high} for v in scores],
                "pgn": write_game(annotated(self.item.game, review)) if self.done else None}
