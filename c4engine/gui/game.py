"""The game a page plays: a set-up position, the moves since, and the moves undone.

The server, not the page, holds the game, so that a page cannot put it in a
state the rules forbid and an engine that dies takes nothing with it.  The
rules come from :mod:`c4engine.rules.board` and :mod:`c4engine.rules.notation` (the
bottom layer); nothing here knows of any search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.uci import position_command
from ..geometry import Geometry
from ..position import Position
from ..rules.board import Board
from ..rules.notation import is_digit_string, parse_digits, parse_fen, to_fen, uses_digits

DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


@dataclass
class Game:
    """A game from ``base`` (the start, or a position set from a FEN) through ``moves``;
    ``undone`` holds the moves taken back, the next one to redo last."""

    base: Board = field(default_factory=Board)
    moves: list[int] = field(default_factory=list)
    undone: list[int] = field(default_factory=list)
    from_start: bool = True

    @classmethod
    def on(cls, geometry: Geometry) -> Game:
        """A new game on the empty board of ``geometry``."""
        return cls(Board(geometry=geometry))

    @property
    def geometry(self) -> Geometry:
        return self.base.geometry

    @property
    def position(self) -> Board:
        return self.base.play_all(self.moves)

    def public_position(self) -> Position:
        """The position on the board as the API's :class:`~c4engine.Position`, which
        :func:`c4engine.remote` asks about."""
        shape = (self.geometry.width, self.geometry.height, self.geometry.connect)
        position = Position(*shape) if self.from_start else Position.from_fen(to_fen(self.base), *shape)
        for col in self.moves:
            position = position.play(col + 1)
        return position

    def play(self, col: int) -> None:
        """Play ``col`` (0-based); a new move forgets the moves that were undone."""
        self.position.play(col)  # raises RulesError, and nothing changes
        self.moves.append(col)
        self.undone.clear()

    def undo(self) -> None:
        self.undone.append(self.moves.pop())

    def redo(self) -> None:
        self.moves.append(self.undone.pop())

    def set_up(self, text: str) -> None:
        """Start again, on the same board, from a digit string (moves from the start)
        or a FEN; a text that is neither, or a position the rules refuse, raises
        RulesError and changes nothing."""
        text, geometry = text.strip(), self.geometry
        if text == "" or is_digit_string(text):
            played = parse_digits(text, geometry)
            self.base, self.moves, self.from_start = Board(geometry=geometry), list(played.history), True
        else:
            self.base, self.moves, self.from_start = parse_fen(text, geometry), [], False
        self.undone.clear()

    def digits(self) -> str | None:
        """The game as Pons' digit string, when it started from the empty board and
        the board has at most 9 columns."""
        if not self.from_start or not uses_digits(self.geometry):
            return None
        return "".join(str(col + 1) for col in self.moves)

    def engine_position(self, drops: bool) -> str:
        """The ``position`` command for the engine, written by the public client: moves
        as cutechess drops after ``UCI_Variant`` (``drops``), as digits otherwise."""
        start_fen = None if self.from_start else to_fen(self.base)
        return position_command([col + 1 for col in self.moves], start_fen, drops, self.geometry)[0]

    def result(self) -> str | None:
        """``first`` or ``second`` (the winner), ``draw``, or None while the game goes on."""
        pos = self.position
        if pos.last_mover_won():
            return "second" if pos.side_to_move == 0 else "first"
        return "draw" if pos.is_over() else None

    def describe(self) -> dict[str, Any]:
        """The game as the page shows it: rows top first, 0 empty, 1 first player, 2 second."""
        pos = self.position
        geometry = self.geometry
        return {
            "shape": {"width": geometry.width, "height": geometry.height, "connect": geometry.connect,
                      "name": geometry.name},
            "board": [[pos.cell(col, row) for col in range(pos.geometry.width)]
                      for row in range(pos.geometry.height - 1, -1, -1)],
            "moves": [col + 1 for col in self.moves],
            "first_mover": "first" if self.base.side_to_move == 0 else "second",
            "to_move": "first" if pos.side_to_move == 0 else "second",
            "playable": [col + 1 for col in pos.legal_moves()],
            "result": self.result(),
            "winning_cells": winning_four(pos),
            "digits": self.digits(),
            "fen": to_fen(pos),
            "can_undo": bool(self.moves),
            "can_redo": bool(self.undone),
        }


def winning_four(pos: Board) -> list[list[int]]:
    """The cells ``[column, row]`` (1-based, row 1 at the bottom) of every line of the
    board's row length the last mover has, empty when nobody won."""
    if not pos.last_mover_won():
        return []
    owner = 2 if pos.side_to_move == 0 else 1
    width, height = pos.geometry.width, pos.geometry.height
    cells: set[tuple[int, int]] = set()
    for col in range(width):
        for row in range(height):
            for dc, dr in DIRECTIONS:
                line = [(col + i * dc, row + i * dr) for i in range(pos.geometry.connect)]
                if all(0 <= c < width and 0 <= r < height and pos.cell(c, r) == owner for c, r in line):
                    cells.update(line)
    return [[c + 1, r + 1] for c, r in sorted(cells)]
