"""The rules of Connect Four on a bitboard: the bottom layer everything else builds on.

A :class:`Board` is immutable; :meth:`Board.play` returns a new one.  That
costs an object per move, which is nothing next to the search (that runs in the
numba kernel on bare integers) and makes positions safe to share between the
protocol thread and the search thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..geometry import STANDARD, Geometry
from .bits import (
    BOARD_MASK, H1, HEIGHT, WIDTH, bottom_cell, column_cells, has_four, playable_cells, popcount,
    top_cell, winning_cells,
)


class RulesError(ValueError):
    """A move or position that the rules do not allow; the message names what is wrong."""


@dataclass(frozen=True)
class Board:
    """Stones of the side to move (``current``), all stones (``mask``), and the moves
    (0-based columns) played since the position was set up, for display and replay."""

    current: int = 0
    mask: int = 0
    history: tuple[int, ...] = field(default=())
    geometry: Geometry = STANDARD  # only 7x6 until the rules take any geometry (issue 18)

    @cached_property
    def stones(self) -> int:
        """Number of stones on the board (cached: the search driver asks often)."""
        return popcount(self.mask)

    @property
    def side_to_move(self) -> int:
        """0 when the first player is to move, 1 for the second player."""
        return self.stones % 2

    @property
    def key(self) -> int:
        """A number that identifies the position uniquely (Pons' ``current + mask``)."""
        return self.current + self.mask

    @property
    def opponent(self) -> int:
        """Stones of the side that just moved."""
        return self.current ^ self.mask

    def first_player_stones(self) -> int:
        """Stones of the first player, whoever is to move."""
        return self.current if self.side_to_move == 0 else self.opponent

    def column_height(self, col: int) -> int:
        """How many stones ``col`` holds."""
        return popcount(self.mask & column_cells(col))

    def can_play(self, col: int) -> bool:
        """Whether ``col`` is on the board and not full (the game being over is not checked)."""
        return 0 <= col < WIDTH and not self.mask & top_cell(col)

    def legal_moves(self) -> list[int]:
        """Columns the side to move may play, left to right; none once the game is over."""
        if self.is_over():
            return []
        return [col for col in range(WIDTH) if self.can_play(col)]

    def is_winning_move(self, col: int) -> bool:
        """Whether playing ``col`` (which must be playable) completes a four."""
        return bool(winning_cells(self.current, self.mask) & playable_cells(self.mask)
                    & column_cells(col))

    def can_win_now(self) -> bool:
        """Whether the side to move has a move that completes a four."""
        return bool(winning_cells(self.current, self.mask) & playable_cells(self.mask))

    def last_mover_won(self) -> bool:
        """Whether the side that just moved has four in a row."""
        return has_four(self.opponent)

    def is_over(self) -> bool:
        """Whether the game has ended, by a four or by a full board."""
        return self.last_mover_won() or self.mask == BOARD_MASK

    def play(self, col: int) -> Board:
        """The position after the side to move drops a stone in ``col`` (0-based)."""
        if not 0 <= col < WIDTH:
            raise RulesError(f"column {col + 1} is not on the board (1-{WIDTH})")
        if self.is_over():
            raise RulesError(f"column {col + 1}: the game is already over")
        if self.mask & top_cell(col):
            raise RulesError(f"column {col + 1} is full")
        new_mask = self.mask | (self.mask + bottom_cell(col))
        return Board(self.current ^ self.mask, new_mask, self.history + (col,))

    def play_all(self, cols: list[int] | tuple[int, ...]) -> Board:
        """The position after ``cols`` are played in turn."""
        pos = self
        for col in cols:
            pos = pos.play(col)
        return pos

    def cell(self, col: int, row: int) -> int:
        """Who holds a cell: 0 empty, 1 first player, 2 second player (row 0 is the bottom)."""
        bit = 1 << (col * H1 + row)
        if not self.mask & bit:
            return 0
        return 1 if self.first_player_stones() & bit else 2


def validate_setup(first: int, second: int) -> None:
    """Refuse stone sets that no game can reach: floating stones, counts out of
    turn, fours for both sides, or a game already over.

    A FEN may describe any stones; the engine only searches positions that are
    still to be played, so a finished game is refused too (a GUI that sends
    one has a bug worth reporting)."""
    mask = first | second
    for col in range(WIDTH):
        column = (mask >> (col * H1)) & ((1 << HEIGHT) - 1)
        if column & (column + 1):
            raise RulesError(f"column {col + 1} has a stone floating above an empty cell")
    n_first, n_second = popcount(first), popcount(second)
    if n_first - n_second not in (0, 1):
        raise RulesError(
            f"impossible stone counts: {n_first} for the first player, {n_second} for the second")
    first_won, second_won = has_four(first), has_four(second)
    if first_won and second_won:
        raise RulesError("both sides have four in a row")
    if first_won or second_won:
        raise RulesError("the game is already over: a side has four in a row")
    if mask == BOARD_MASK:
        raise RulesError("the game is already over: the board is full")


def from_stones(first: int, second: int, first_to_move: bool, geometry: Geometry = STANDARD) -> Board:
    """A position from each player's stones and the side to move, after
    :func:`validate_setup`; the side to move must agree with the counts."""
    validate_setup(first, second)
    if first_to_move != (popcount(first) == popcount(second)):
        expected = "first" if popcount(first) == popcount(second) else "second"
        raise RulesError(f"wrong side to move: with these stones the {expected} player is to move")
    return Board(first if first_to_move else second, first | second)

