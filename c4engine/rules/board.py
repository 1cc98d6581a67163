"""The rules of Connect Four on a bitboard: the bottom layer everything else builds on.

A :class:`Board` carries its :class:`~c4engine.geometry.Geometry` (the standard
7x6 four-in-a-row board unless told otherwise) and is immutable; :meth:`Board.play` returns a new one.  That
costs an object per move, which is nothing next to the search (that runs in the
numba kernel on bare integers) and makes positions safe to share between the
protocol thread and the search thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..geometry import STANDARD, Geometry
from .bits import (
    bottom_cell,
    column_cells,
    has_line,
    playable_cells,
    top_cell,
    winning_cells,
)


def completes_line(stones: int, geometry: Geometry) -> bool:
    """Whether ``stones`` hold a line of the board's row length."""
    return has_line(stones, geometry.width, geometry.height, geometry.connect)


NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def in_a_row(connect: int) -> str:
    """``four in a row`` (the protocol's wording since 7x6), ``12 in a row`` past nine."""
    count = NUMBER_WORDS[connect] if connect < len(NUMBER_WORDS) else str(connect)
    return f"{count} in a row"


class RulesError(ValueError):
    """A move or position that the rules do not allow; the message names what is wrong."""


@dataclass(frozen=True)
class Board:
    """Stones of the side to move (``current``), all stones (``mask``), the moves
    (0-based columns) played since the position was set up, for display and replay,
    and the board's shape.  ``Board(geometry=Geometry.parse("8x7"))`` is the empty
    8x7 board."""

    current: int = 0
    mask: int = 0
    history: tuple[int, ...] = field(default=())
    geometry: Geometry = STANDARD

    @cached_property
    def stones(self) -> int:
        """Number of stones on the board (cached: the search driver asks often)."""
        return self.mask.bit_count()

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
        return (self.mask & column_cells(col, self.geometry.height)).bit_count()

    def can_play(self, col: int) -> bool:
        """Whether ``col`` is on the board and not full (the game being over is not checked)."""
        return 0 <= col < self.geometry.width and not self.mask & top_cell(col, self.geometry.height)

    def legal_moves(self) -> list[int]:
        """Columns the side to move may play, left to right; none once the game is over."""
        if self.is_over():
            return []
        return [col for col in range(self.geometry.width) if self.can_play(col)]

    def winning_cells(self, stones: int) -> int:
        """Empty cells (playable now or later) that would complete a line for ``stones``."""
        g = self.geometry
        return winning_cells(stones, self.mask, g.board_mask, g.width, g.height, g.connect)

    def playable_cells(self) -> int:
        """The lowest empty cell of every column that is not full."""
        return playable_cells(self.mask, self.geometry.bottom_mask, self.geometry.board_mask)

    def is_winning_move(self, col: int) -> bool:
        """Whether playing ``col`` (which must be playable) completes a line."""
        return bool(self.winning_cells(self.current) & self.playable_cells()
                    & column_cells(col, self.geometry.height))

    def can_win_now(self) -> bool:
        """Whether the side to move has a move that completes a line."""
        return bool(self.winning_cells(self.current) & self.playable_cells())

    def last_mover_won(self) -> bool:
        """Whether the side that just moved has a line of the board's row length."""
        return completes_line(self.opponent, self.geometry)

    def is_over(self) -> bool:
        """Whether the game has ended, by a line or by a full board."""
        return self.last_mover_won() or self.mask == self.geometry.board_mask

    def play(self, col: int) -> Board:
        """The position after the side to move drops a stone in ``col`` (0-based)."""
        height = self.geometry.height
        if not 0 <= col < self.geometry.width:
            raise RulesError(f"column {col + 1} is not on the board (1-{self.geometry.width})")
        if self.is_over():
            raise RulesError(f"column {col + 1}: the game is already over")
        if self.mask & top_cell(col, height):
            raise RulesError(f"column {col + 1} is full")
        new_mask = self.mask | (self.mask + bottom_cell(col, height))
        return Board(self.current ^ self.mask, new_mask, self.history + (col,), self.geometry)

    def play_all(self, cols: list[int] | tuple[int, ...]) -> Board:
        """The position after ``cols`` are played in turn."""
        pos = self
        for col in cols:
            pos = pos.play(col)
        return pos

    def cell(self, col: int, row: int) -> int:
        """Who holds a cell: 0 empty, 1 first player, 2 second player (row 0 is the bottom)."""
        bit = 1 << (col * self.geometry.h1 + row)
        if not self.mask & bit:
            return 0
        return 1 if self.first_player_stones() & bit else 2


def validate_setup(first: int, second: int, geometry: Geometry = STANDARD) -> None:
    """Refuse stone sets that no game can reach: floating stones, counts out of
    turn, fours for both sides, or a game already over.

    A FEN may describe any stones; the engine only searches positions that are
    still to be played, so a finished game is refused too (a GUI that sends
    one has a bug worth reporting)."""
    mask = first | second
    if mask & ~geometry.board_mask:
        raise RulesError(f"stones outside the {geometry} board")
    for col in range(geometry.width):
        column = (mask >> (col * geometry.h1)) & ((1 << geometry.height) - 1)
        if column & (column + 1):
            raise RulesError(f"column {col + 1} has a stone floating above an empty cell")
    n_first, n_second = first.bit_count(), second.bit_count()
    if n_first - n_second not in (0, 1):
        raise RulesError(
            f"impossible stone counts: {n_first} for the first player, {n_second} for the second")
    first_won, second_won = completes_line(first, geometry), completes_line(second, geometry)
    if first_won and second_won:
        raise RulesError(f"both sides have {in_a_row(geometry.connect)}")
    if first_won or second_won:
        raise RulesError(f"the game is already over: a side has {in_a_row(geometry.connect)}")
    if mask == geometry.board_mask:
        raise RulesError("the game is already over: the board is full")


def from_stones(first: int, second: int, first_to_move: bool, geometry: Geometry = STANDARD) -> Board:
    """A position from each player's stones and the side to move, after
    :func:`validate_setup`; the side to move must agree with the counts."""
    validate_setup(first, second, geometry)
    if first_to_move != (first.bit_count() == second.bit_count()):
        expected = "first" if first.bit_count() == second.bit_count() else "second"
        raise RulesError(f"wrong side to move: with these stones the {expected} player is to move")
    return Board(first if first_to_move else second, first | second, geometry=geometry)

