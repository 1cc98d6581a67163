"""Exact verdicts on the moves of a game: where engine scores become marks.

The one module that judges moves, for ``c4engine review``, ``c4engine.review()``
and the web board alike.  It is pure: it reads what an engine said about a
position (``info`` lines, as :mod:`c4engine.engine` parses them) and knows no
search, so the web board, which talks the protocol only, uses it as the command
line does.  :class:`GameJudge` says which searches a game needs: each position's
value from a single-line search, and every column's (a ``MultiPV`` search over
all columns) only where the move played was not proven as good as the best.

Values are Pons scores from the mover's side (docs/design.md, "Scores") for
the board's :class:`~c4engine.geometry.Geometry`.  An engine whose time ran
out may give only a bound (``mate N lowerbound``) or a heuristic ``cp``; such a
value is the range of scores it may still have, never a guess shown as exact,
and a move's mark is given only where every score in those ranges agrees on it.

A move is judged against the position's best column:

- ``kept``: as good as the best (the result, and a win's or loss's distance);
- ``slower``: the same result, but a win that takes longer or a loss that comes sooner;
- ``mistake``: a win thrown to a draw, or a draw to a loss;
- ``blunder``: a win thrown to a loss.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..geometry import STANDARD, Geometry
from ..rules.board import Board
from ..rules.scores import mate_distance, to_internal, win_now

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


def position_value(lines: Iterable[InfoDict], board: Board, geometry: Geometry = STANDARD) -> Value:
    """The value of ``board`` for its mover from a search's ``info`` lines about its
    best move (``multipv 1``).  An exact score is the solved position's; a lower
    bound holds for the position, which is worth at least any of its moves; an
    upper bound is not taken: a search cut short reports the best move it finished,
    whose bound says nothing of the moves it did not reach."""
    value = move_range(board.stones, geometry)
    for info in lines:
        if info.get("multipv", 1) == 1 and not info.get("upperbound"):
            value = value.meet(value_of_line(info, board.stones, geometry))
    return value


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
    :data:`MARKS`, or None when the time cap left it unproven.  ``columns``
    holds the value of every legal column (1-W keys) where every column was
    searched (a move not proven kept), else the move's alone; ``best`` the
    columns proven best among them (for a kept move, the move itself).
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


def judge(board: Board, col: int, before: Value, after: Value, ply: int,
          every_column: Mapping[int, Value] | None = None, opening: bool = False) -> MoveVerdict:
    """The verdict on playing ``col`` (0-based) in ``board``, the position's value
    being ``before`` and the move's ``after``; ``every_column``, each legal column's
    value (:func:`column_values`) where the position was searched so, narrows both
    and names the best columns."""
    if every_column:
        before, after = before.meet(best_value(every_column)), after.meet(every_column[col])
        columns = {**every_column, col: after}
        best = best_columns(columns)
    else:
        columns = {col: after}
        best = (col,) if after.low >= before.high else ()
    marks = possible_marks(before, after)
    return MoveVerdict(
        ply=ply, player=1 if board.side_to_move == 0 else 2, column=col + 1, stones=board.stones,
        before=before, after=after, mark=marks.pop() if len(marks) == 1 else None,
        best=tuple(c + 1 for c in best),
        columns={c + 1: v for c, v in sorted(columns.items())}, opening=opening)


@dataclass(frozen=True)
class Search:
    """A search a review needs: the position after the game's first ``played``
    moves, for its value (``MultiPV 1``) or for every column's (``every_column``)."""

    played: int
    every_column: bool

    def lines(self, geometry: Geometry = STANDARD) -> int:
        """The ``MultiPV`` it takes."""
        return geometry.width if self.every_column else 1


class GameJudge:
    """Judges a game's moves in order, from as few engine searches as it can.

    Each position is searched once for its value alone (a single-line search,
    far cheaper than scoring every column, and each reusing the table the
    previous ones filled).  A move's value is then the next position's, negated
    (or the rules' verdict on a move that ends the game); where that proves the
    move as good as the best, it is judged ``kept`` from those two values, and
    only otherwise is every column of the position scored, for the best columns
    and the mark.  The caller runs :meth:`next_search` with an engine and hands
    its ``info`` lines to :meth:`take`."""

    def __init__(self, start: Board, moves: Sequence[int], openings: Sequence[bool],
                 geometry: Geometry = STANDARD) -> None:
        self.moves, self.openings, self.geometry = list(moves), list(openings), geometry
        self.boards = [start]
        for col in self.moves:
            self.boards.append(self.boards[-1].play(col))
        self.values: dict[int, Value] = {}  # by the number of moves played
        self.verdicts: list[MoveVerdict] = []
        if self.moves and self.boards[-1].is_over():
            last = len(self.moves) - 1
            won = self.boards[-1].last_mover_won()
            lost = -win_now(self.boards[last].stones, geometry.cells) if won else 0
            self.values[len(self.moves)] = Value(lost, lost)

    @property
    def done(self) -> bool:
        return len(self.verdicts) == len(self.moves)

    def next_search(self) -> Search | None:
        """The search the next verdict waits for; None when every move is judged."""
        ply = len(self.verdicts)
        if self.done:
            return None
        unknown = [played for played in (ply, ply + 1) if played not in self.values]
        return Search(unknown[0], False) if unknown else Search(ply, True)

    def take(self, lines: Iterable[InfoDict]) -> list[MoveVerdict]:
        """The ``info`` lines of the search :meth:`next_search` asked for; the verdicts
        they complete (none, one, or more where moves are proven kept)."""
        search = self.next_search()
        if search is None:
            raise ValueError("every move of the game is judged already")
        judged = len(self.verdicts)
        board = self.boards[search.played]
        if search.every_column:
            self._judge(column_values(lines, board, self.geometry))
        else:
            self.values[search.played] = position_value(lines, board, self.geometry)
        while self._proven_kept():
            self._judge(None)
        return self.verdicts[judged:]

    def _before_after(self) -> tuple[Value, Value] | None:
        """The next move's position value and its own, once both are searched."""
        ply = len(self.verdicts)
        if ply in self.values and ply + 1 in self.values:
            return self.values[ply], self.values[ply + 1].negated()
        return None

    def _proven_kept(self) -> bool:
        before_after = None if self.done else self._before_after()
        return before_after is not None and before_after[1].low >= before_after[0].high

    def _judge(self, every_column: Mapping[int, Value] | None) -> MoveVerdict:
        ply = len(self.verdicts)
        before_after = self._before_after()
        assert before_after is not None, "a move is judged once both values are searched"
        verdict = judge(self.boards[ply], self.moves[ply], *before_after, ply + 1, every_column,
                        opening=self.openings[ply])
        self.verdicts.append(verdict)
        return verdict


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
