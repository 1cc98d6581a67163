"""What the service says about a position: each column's proven score range, and the
two shapes it is written in (Pons' ``/solve`` and the tablebase-like position).

Scores are Pons' (docs/design.md, "Scores"), from the side to move: the score of a
column is the position's score if that column is played.  A column the time cap
left unfinished has a range ``[low, high]`` that the search proved; it is exact
only when both ends meet, and nothing here ever writes a range as one score.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..geometry import Geometry
from ..rules.board import Board
from ..rules.notation import to_fen, uses_digits
from ..rules.scores import mate_distance, to_internal
from ..search.thread import settle_move

FULL_COLUMN = 100  # Pons' /solve value for a column that cannot be played
SCORES_TO_SHARE = 128  # every Pons score fits within +-64: a board has fewer than 128 cells


def lowest_score(stones: int, cells: int) -> int:
    """The lowest Pons score a position with ``stones`` on the board can have."""
    return -((cells - stones) // 2)


def highest_score(stones: int, cells: int) -> int:
    """The highest: a win with the next stone."""
    return (cells + 1 - stones) // 2


@dataclass(frozen=True)
class Bounds:
    """A proven score range for the side to move; ``low == high`` is exact."""

    low: int
    high: int

    @classmethod
    def exact(cls, score: int) -> Bounds:
        """The one exact Bounds of ``score`` (shared: the answers kept in memory hold
        thousands of them)."""
        return _exact(cls, score)

    @property
    def is_exact(self) -> bool:
        return self.low == self.high

    @property
    def verdict(self) -> str:
        """win, draw or loss when the range decides it, else unknown."""
        if self.low > 0:
            return "win"
        if self.high < 0:
            return "loss"
        return "draw" if self.low == self.high == 0 else "unknown"

    def distance(self, stones: int, cells: int) -> int | None:
        """Stones played from now until the game ends with best play by both sides
        (None unless exact): a win or loss counts to the winning stone, a draw to
        the last cell."""
        if not self.is_exact:
            return None
        if self.low == 0:
            return cells - stones
        moves = mate_distance(to_internal(self.low), stones, cells)
        return 2 * moves - 1 if moves > 0 else -2 * moves


def first_look(board: Board) -> tuple[list[Bounds | None], dict[int, Board]]:
    """Every column as the rules alone see it: None when full, exact when the rules
    settle it at once (a win, a move that lets the opponent win, the last cell),
    else the whole range a move can score; and the positions after the unsettled
    moves, by column, for a book or the search to score."""
    columns: list[Bounds | None] = []
    children: dict[int, Board] = {}
    for col in range(board.geometry.width):
        if not board.can_play(col):
            columns.append(None)
            continue
        settled, child = settle_move(board, col)
        if settled is None:
            children[col] = child
            cells = board.geometry.cells
            columns.append(Bounds(-highest_score(child.stones, cells), -lowest_score(child.stones, cells)))
        else:
            columns.append(Bounds.exact(settled))
    return columns, children


@dataclass(frozen=True)
class Analysis:
    """Every column's bounds (None for a full column) of ``board``, and where they
    came from: ``book``, ``cache`` or ``search``."""

    board: Board
    columns: tuple[Bounds | None, ...]
    source: str

    @functools.cached_property
    def is_exact(self) -> bool:
        """Whether every column is exact (kept: asked several times per request)."""
        return all(bounds is None or bounds.is_exact for bounds in self.columns)

    @property
    def best(self) -> Bounds:
        """The position's own range: the best that any column can prove."""
        playable = [bounds for bounds in self.columns if bounds is not None]
        return Bounds(max(b.low for b in playable), max(b.high for b in playable))

    def pons_scores(self) -> list[int]:
        """Pons' ``score`` array (exact only: the caller checks :attr:`is_exact`)."""
        return [FULL_COLUMN if bounds is None else bounds.low for bounds in self.columns]


@functools.lru_cache(maxsize=SCORES_TO_SHARE)
def _exact(cls: type[Bounds], score: int) -> Bounds:
    return cls(score, score)


def moves_text(board: Board) -> str | None:
    """The moves from the empty board as column digits, when digits can name them and
    the position was given by its moves (not by a FEN)."""
    if not uses_digits(board.geometry) or len(board.history) != board.stones:
        return None
    return "".join(str(col + 1) for col in board.history)


def _fields(bounds: Bounds, stones: int, geometry: Geometry) -> dict[str, object]:
    return {"verdict": bounds.verdict, "score": bounds.low if bounds.is_exact else None,
            "distance": bounds.distance(stones, geometry.cells), "exact": bounds.is_exact,
            "bounds": [bounds.low, bounds.high]}


def position_document(analysis: Analysis, elapsed_ms: float) -> dict[str, object]:
    """The ``/api/v1/position`` answer: the position's fields, then every legal column
    with the same fields, best first (a higher proven low end, then a higher high
    end, then the column further left)."""
    board, geometry = analysis.board, analysis.board.geometry
    moves = sorted(((col + 1, bounds) for col, bounds in enumerate(analysis.columns) if bounds is not None),
                   key=lambda item: (-item[1].low, -item[1].high, item[0]))
    return {"board": geometry.name, "pos": moves_text(board), "fen": to_fen(board),
            "stones": board.stones, "side_to_move": board.side_to_move + 1,
            **_fields(analysis.best, board.stones, geometry), "source": analysis.source,
            "time_ms": round(elapsed_ms, 3),
            "moves": [{"column": col, **_fields(bounds, board.stones, geometry)} for col, bounds in moves]}
