"""How a verdict reads: PGN comment text, words, and JSON for the review.

Kept apart from :mod:`c4engine.verdicts`, which decides the marks, because the
command line's report, the annotated PGN and the web board each show the same
values, and one place words them.  Values are Pons scores from the mover's side
(docs/design.md, "Scores").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..geometry import STANDARD, Geometry
from .verdicts import GameReview, MoveVerdict, PlayerSummary, Value, mate_of_pons, move_range


def score_text(value: Value, stones: int, geometry: Geometry = STANDARD) -> str:
    """A value in the PGN comments' form, from the mover's side (cutechess'): ``+M7``
    (wins with its 7th stone from the move's on), ``-M12``, ``0.00`` for a draw;
    ``>=`` or ``<=`` before a bound; ``?`` when nothing is proven."""
    def one(score: int) -> str:
        mate = mate_of_pons(score, stones, geometry)
        return "0.00" if mate is None else f"{'+' if mate > 0 else '-'}M{abs(mate)}"
    everything = move_range(stones, geometry)
    if value.exact:
        return one(value.low)
    if value.low > everything.low:
        return ">=" + one(value.low)
    if value.high < everything.high:
        return "<=" + one(value.high)
    return "?"


def score_words(value: Value, stones: int, geometry: Geometry = STANDARD) -> str:
    """A value in words, the sign spelled out: ``wins in 7``, ``draw``, ``loses in 12``,
    ``wins in at most 7``, ``draw or better``; ``unproven`` when nothing is known."""
    def distance(score: int) -> int:
        return abs(mate_of_pons(score, stones, geometry) or 0)
    if value.exact:
        return "draw" if value.low == 0 else (
            f"wins in {distance(value.low)}" if value.low > 0 else f"loses in {distance(value.low)}")
    if value.low > 0:
        return f"wins in at most {distance(value.low)}"
    if value.high < 0:
        return f"loses in at most {distance(value.high)}"
    if value.low == 0:
        return "draw or better"
    if value.high == 0:
        return "draw or worse"
    return "unproven"


def value_dict(value: Value, stones: int, geometry: Geometry = STANDARD) -> dict[str, Any]:
    """A value for JSON: its bounds, the PGN text and the words."""
    return {"low": value.low, "high": value.high, "exact": value.exact,
            "text": score_text(value, stones, geometry), "words": score_words(value, stones, geometry)}


def summary_dict(summary: PlayerSummary) -> dict[str, Any]:
    return {"moves": summary.moves, "kept": summary.kept, "slower": summary.slower,
            "mistakes": summary.mistakes, "blunders": summary.blunders,
            "unproven": summary.unproven, "accuracy": summary.accuracy}


def verdict_dict(verdict: MoveVerdict, geometry: Geometry = STANDARD) -> dict[str, Any]:
    """A move's verdict for JSON (``c4engine review --json``, the web board)."""
    def value(v: Value) -> dict[str, Any]:
        return value_dict(v, verdict.stones, geometry)
    return {"ply": verdict.ply, "player": verdict.player, "column": verdict.column,
            "before": value(verdict.before), "after": value(verdict.after),
            "mark": verdict.mark, "nag": verdict.nag, "best": list(verdict.best),
            "opening": verdict.opening,
            "columns": {str(col): value(v) for col, v in verdict.columns.items()}}


def review_dict(review: GameReview) -> dict[str, Any]:
    """A whole game's review for JSON."""
    return {"white": review.white, "black": review.black, "result": review.result,
            "start_fen": review.start_fen, "board": review.geometry.name,
            "moves": [verdict_dict(v, review.geometry) for v in review.moves],
            "summary": {"first": summary_dict(review.first), "second": summary_dict(review.second)}}


def first_player_scores(verdicts: Sequence[MoveVerdict]) -> list[Value]:
    """The value after each move from the first player's side: the evaluation chart's points."""
    return [v.after if v.player == 1 else v.after.negated() for v in verdicts]
