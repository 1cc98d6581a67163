"""A game under review on the web board: which position the engine scores next, and the verdicts so far.

The page's engine runs the searches :class:`~c4engine.reviewer.verdicts.GameJudge`
asks for, as ``c4engine review`` does (each position's value, every column of
a position whose move was not kept); this class only says which comes next,
collects each search's ``info`` lines and hands them to the judge, so the
page's marks are the command line's.  It knows no asyncio and no engine: the
session sends the commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.uci import position_command
from ..engine.info import InfoDict, add_info
from ..referee.pgn import write_game
from ..reviewer.games import GameInput, game_review, judge_of
from ..reviewer.report import annotated
from ..reviewer.verdict_text import first_player_scores, review_dict
from ..reviewer.verdicts import GameJudge, Search, win_now

MOVETIME_MS = 3000  # the cap per search; c4engine needs well under a second for most


@dataclass
class PageReview:
    """The review of ``item`` under way (``serial`` tells it from earlier ones)."""

    serial: int
    item: GameInput
    judge: GameJudge = field(init=False)
    lines: dict[int, InfoDict] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.judge = judge_of(self.item)

    @property
    def done(self) -> bool:
        return self.judge.done

    @property
    def columns(self) -> list[int]:
        """The game's moves, columns 1-W."""
        return [move.col + 1 for move in self.item.game.moves]

    def next_search(self) -> Search:
        """The search the review waits for (the review is not done)."""
        search = self.judge.next_search()
        assert search is not None, "a review that is done searches nothing"
        return search

    def multipv(self) -> int:
        """``MultiPV`` for the next search."""
        return self.next_search().lines(self.item.geometry)

    def position_command(self, drops: bool) -> str:
        """``position`` for the next search."""
        game = self.item.game
        return position_command(self.columns[:self.next_search().played], game.start_fen, drops,
                                self.item.geometry)[0]

    def add_line(self, line: str) -> None:
        """An ``info`` line of the search in flight."""
        add_info(self.lines, line, self.judge.boards[self.next_search().played])

    def finish_search(self) -> None:
        """The search in flight has ended: hand its lines to the judge."""
        self.judge.take(self.lines.values())
        self.lines = {}

    def describe(self) -> dict[str, Any]:
        """The review for the page: the verdicts so far (as ``c4engine review --json``
        gives them), the chart's points, and the annotated PGN once done."""
        review = game_review(self.item, self.judge)
        scores = first_player_scores(review.moves)
        return {**review_dict(review), "serial": self.serial, "columns": self.columns,
                "total": len(self.item.game.moves), "done": self.done,
                "scale": win_now(0, self.item.geometry.cells),
                "chart": [{"low": v.low, "high": v.high} for v in scores],
                "pgn": write_game(annotated(self.item.game, review)) if self.done else None}
