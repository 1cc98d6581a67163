"""Exact verdicts on the moves of a game: where per-column scores become marks.

The one module that judges moves, for ``c4engine review``, ``c4engine.review()``
and the web board alike.  It is pure: it reads what an engine said about every
column of a position (``info`` lines of a ``MultiPV`` search over all columns,
as :mod:`c4engine.engine` parses them) and knows no search, so the web board,
which talks the protocol only, uses it as the command line does.

Values are Pons scores from the mover's side (docs/design.md, "Scores") for
the board's :class:`~c4engine.geometry.Geometry`.  An engine whose time ran
out may give only a bound (``mate N lowerbound``) or a heuristic ``cp``; such a
column's value is the range of scores it may still have, never a guess shown as
exact, and a move's mark is given only where every score in those ranges
agrees on it.

A move is judged against the position's best column:

- ``kept``: as good as the best (the result, and a win's or loss's distance);
- ``slower``: the same result, but a win that takes longer or a loss that comes sooner;
- ``mistake``: a win thrown to a draw, or a draw to a loss;
- ``blunder``: a win thrown to a loss.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .geometry import STANDARD, Geometry
from .rules.board import Board
from .rules.scores import mate_distance, to_internal, win_now

if TYPE_CHECKING:
    from .engine.info import InfoDict

MARKS = ("kept", "slower", "mistake", "blunder")
NAGS = {"slower": "?!", "mistake": "?", "blunder": "??"}  # PGN's suffix annotations
NAG_MARKS = {nag: mark for mark, nag in NAGS.items()}


@dataclass(frozen=True)
class Value:
    """The Pons scores a move (or a position) may have: ``low`` to ``high``,
    both included; equal when the value is exact."""

    low: int
    high: int

    @property
    def exact(self) -> bool:
        return self.low == self.high

    def negated(self) -> Value:
        """The same value from the other side."""
        return Value(-self.high, -self.low)

    def meet(self, other: Value) -> Value:
        """What two true statements about one value say together (``other``
        alone if they contradict, as an engine that changed its mind would)."""
        low, high = max(self.low, other.low), min(self.high, other.high)
        return Value(low, high) if low <= high else other


def move_range(stones: int, geometry: Geometry) -> Value:
    """Every score a move may have, ``stones`` being on the board before it: from
    losing to the opponent's next stone to winning with this one."""
    return Value(-win_now(stones + 1, geometry.cells), win_now(stones, geometry.cells))


def pons_of_mate(mate: int, stones: int, geometry: Geometry = STANDARD) -> int:
    """The protocol's ``mate N`` (the mover wins with its N-th own stone from now;
    negative: the opponent with its |N|-th) as a Pons score, ``stones`` on the board."""
    if mate > 0:
        return win_now(stones + 2 * (mate - 1), geometry.cells)
    return -win_now(stones + 2 * -mate - 1, geometry.cells)


def mate_of_pons(score: int, stones: int, geometry: Geometry = STANDARD) -> int | None:
    """The inverse of :func:`pons_of_mate`; None for a draw."""
    if score == 0:
        return None
    return mate_distance(to_internal(score), stones, geometry.cells)


def value_of_line(info: InfoDict, stones: int, geometry: Geometry = STANDARD) -> Value:
    """What one ``info`` line proves about its move, ``stones`` being on the board:
    ``mate N`` an exact score, ``mate N lowerbound``/``upperbound`` a bound, ``cp 0``
    searched to the end of the game a draw, any other ``cp`` nothing."""
    everything = move_range(stones, geometry)
    score = info.get("score")
    if score is None:
        return everything
    if score.kind == "cp":
        reached_the_end = info.get("depth", 0) >= geometry.cells - stones
        exact = score.value == 0 and reached_the_end and not (info.get("lowerbound") or info.get("upperbound"))
        return Value(0, 0) if exact else everything
    pons = pons_of_mate(score.value, stones, geometry)
    if info.get("lowerbound"):
        return everything.meet(Value(pons, everything.high))
    if info.get("upperbound"):
        return everything.meet(Value(everything.low, pons))
    return everything.meet(Value(pons, pons))


def column_values(lines: Iterable[InfoDict], board: Board,
                  geometry: Geometry = STANDARD) -> dict[int, Value]:
    """Each legal column's (0-based) value for the mover of ``board``, from a search's
    ``info`` lines: every line about a column (its PV's first move, columns 1-W)
    narrows that column's value; a column no line named may have any score."""
    everything = move_range(board.stones, geometry)
    values = {col: everything for col in board.legal_moves()}
    for info in lines:
        pv = info.get("pv") or []
        if pv and pv[0] - 1 in values:
            col = pv[0] - 1
            values[col] = values[col].meet(value_of_line(info, board.stones, geometry))
    return values


def best_value(values: Mapping[int, Value]) -> Value:
    """The position's value: that of its best column (the best of each bound)."""
    return Value(max(v.low for v in values.values()), max(v.high for v in values.values()))


def best_columns(values: Mapping[int, Value]) -> tuple[int, ...]:
    """The columns (0-based) proven best: none of the others can be better."""
    return tuple(col for col, value in sorted(values.items())
                 if all(value.low >= other.high for c, other in values.items() if c != col))


def mark(before: int, after: int) -> str:
    """The mark of a move from exact scores: the position's value ``before`` and the
    move's ``after``, both from the mover's side."""
    if after >= before:
        return "kept"
    if (after > 0) == (before > 0) and (after < 0) == (before < 0):
        return "slower"
    return "blunder" if before > 0 and after < 0 else "mistake"


def possible_marks(before: Value, after: Value) -> set[str]:
    """Every mark the move may deserve, the scores lying somewhere in their ranges
    (a move is never better than the position's best)."""
    return {mark(b, a) for b in range(before.low, before.high + 1)
            for a in range(after.low, min(after.high, b) + 1)}


@dataclass(frozen=True)
class MoveVerdict:
    """One move judged.

    ``ply`` counts the game's moves from 1, ``player`` is 1 (first) or 2
    (second), ``column`` 1-W.  ``before`` is the position's value and
    ``after`` the move's, both Pons scores from the mover's side with
    ``stones`` on the board before the move.  ``mark`` is one of
    :data:`MARKS`, or None when the time cap left it unproven; ``best`` the
    columns proven best; ``columns`` every legal column's value (1-W keys).
    ``opening`` is set for a move the referee's opening imposed (``{book}``
    in its PGN): judged, but not counted in the players' summaries."""

    ply: int
    player: int
    column: int
    stones: int
    before: Value
    after: Value
    mark: str | None
    best: tuple[int, ...]
    columns: dict[int, Value] = field(compare=False)
    opening: bool = False

    @property
    def nag(self) -> str:
        """The PGN annotation: ``?!``, ``?``, ``??``, or nothing."""
        return NAGS.get(self.mark or "", "")


def judge(board: Board, col: int, values: Mapping[int, Value], ply: int,
          opening: bool = False) -> MoveVerdict:
    """The verdict on playing ``col`` (0-based) in ``board``, given every legal
    column's value there (:func:`column_values`)."""
    before, after = best_value(values), values[col]
    marks = possible_marks(before, after)
    first_mover = board.side_to_move == 0
    return MoveVerdict(
        ply=ply, player=1 if first_mover else 2, column=col + 1, stones=board.stones,
        before=before, after=after, mark=marks.pop() if len(marks) == 1 else None,
        best=tuple(c + 1 for c in best_columns(values)),
        columns={c + 1: v for c, v in sorted(values.items())}, opening=opening)


@dataclass(frozen=True)
class PlayerSummary:
    """One player's moves by mark; ``unproven`` ones the time cap left without a mark."""

    moves: int = 0
    kept: int = 0
    slower: int = 0
    mistakes: int = 0
    blunders: int = 0
    unproven: int = 0

    @property
    def accuracy(self) -> float | None:
        """The share of result-keeping moves (kept or slower) among those with a
        proven mark; None when no move has one."""
        judged = self.moves - self.unproven
        return (self.kept + self.slower) / judged if judged else None

    def __add__(self, other: PlayerSummary) -> PlayerSummary:
        return PlayerSummary(*(a + b for a, b in zip(self.counts(), other.counts())))

    def counts(self) -> tuple[int, ...]:
        return (self.moves, self.kept, self.slower, self.mistakes, self.blunders, self.unproven)


def summarize(verdicts: Iterable[MoveVerdict], player: int) -> PlayerSummary:
    """``player``'s (1 or 2) moves counted by mark, openings left out."""
    own = [v for v in verdicts if v.player == player and not v.opening]
    marks = [v.mark for v in own]
    return PlayerSummary(moves=len(own), kept=marks.count("kept"), slower=marks.count("slower"),
                         mistakes=marks.count("mistake"), blunders=marks.count("blunder"),
                         unproven=marks.count(None))


@dataclass(frozen=True)
class GameReview:
    """A game judged move by move, with each player's summary.

    ``white`` and ``black`` are the first and second player's names as the
    PGN gives them (``?`` when unknown); ``start_fen`` the set-up position, if
    the game did not start from the empty board."""

    moves: tuple[MoveVerdict, ...]
    white: str = "?"
    black: str = "?"
    result: str = "*"
    start_fen: str | None = None
    geometry: Geometry = STANDARD

    @property
    def first(self) -> PlayerSummary:
        return summarize(self.moves, 1)

    @property
    def second(self) -> PlayerSummary:
        return summarize(self.moves, 2)


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
