"""The public position: columns 1-W, a cutechess FEN, a text board, immutable and hashable.

Any board the engine plays: ``Position(width=8, height=7)``, or
``Position(width=9, height=6, connect=5)`` for five in a row; the default is the
standard 7x6 board, four in a row.  It wraps the rules' internal
:class:`c4engine.rules.board.Board` (0-based columns, bitboards) and the notation
module, so that the internal ones may change without breaking programs written
against this one.  Every refusal,
whatever the type of the value refused (the rule of :mod:`c4engine.arguments`),
is a :class:`IllegalMoveError` carrying the message the engine's protocol
gives for the same input, so a program and a protocol log read alike.
"""

from __future__ import annotations

import operator
from contextlib import contextmanager
from typing import Iterable, Iterator

from .arguments import is_whole_number
from .geometry import STANDARD, Geometry, GeometryError
from .rules import board
from .rules.notation import check_writable, parse_digits, parse_fen, render, to_fen


class IllegalMoveError(board.RulesError):
    """A move, a move list or a FEN that the rules do not allow; the message says why.

    The one exception type of the public API for bad positions and moves.  It is
    a ``ValueError`` (like python-chess' ``IllegalMoveError``), so ``except
    ValueError`` catches it too."""


@contextmanager
def _as_illegal_move() -> Iterator[None]:
    """Turn the rules' RulesError into the public IllegalMoveError, same message."""
    try:
        yield
    except IllegalMoveError:
        raise
    except board.RulesError as err:
        raise IllegalMoveError(str(err)) from None


def board_shape(width: object, height: object, connect: object) -> Geometry:
    """The board ``width`` x ``height``, ``connect`` in a row, or IllegalMoveError naming
    the value or the limit it breaks (:class:`c4engine.geometry.Geometry` has the limits:
    width x (height + 1) at most 128, row length 3 to the longer side, and at most 26
    columns, one FEN file letter each)."""
    for name, value in (("width", width), ("height", height), ("connect", connect)):
        if not is_whole_number(value):
            raise IllegalMoveError(f"board {name} {value!r}: expected a whole number")
    try:
        geometry = Geometry(operator.index(width), operator.index(height),  # type: ignore[arg-type]
                            operator.index(connect))  # type: ignore[arg-type]
        check_writable(geometry)
    except GeometryError as err:
        raise IllegalMoveError(str(err)) from None
    return geometry


def _column(column: object, width: int) -> int:
    """``column`` as a public column 1-W, or IllegalMoveError with the protocol's message."""
    if not is_whole_number(column):
        raise IllegalMoveError(f"move {column!r}: expected an int column 1-{width}")
    number = operator.index(column)  # type: ignore[arg-type]
    if not 1 <= number <= width:
        raise IllegalMoveError(f"move '{number}': column out of range (1-{width})")
    return int(number)


class Position:
    """A Connect-Four position: the board, the stones, the side to move and the moves
    that led here.

    ``Position()`` is the empty standard board (7 columns, 6 rows, four in a row);
    ``Position(width=8, height=7)`` an empty 8x7 one, ``Position(width=9, height=6,
    connect=5)`` five in a row on 9x6.  Columns are numbered 1-W from the left, as in
    the digit notation (``"4453"``; digits name at most 9 columns).
    A position never changes: :meth:`play` returns a new one.  Two positions are
    equal (and hash alike) when the same stones are on the board, whatever the
    move order that reached them, so positions work as keys of a dict of
    transpositions.
    """

    __slots__ = ("_board", "_start_fen")

    def __init__(self, width: int = STANDARD.width, height: int = STANDARD.height,
                 connect: int = STANDARD.connect) -> None:
        """The empty board of that shape, the first player to move.  Refused with
        :class:`IllegalMoveError` naming the limit: a board whose bitboard passes 128
        bits (width x (height + 1) > 128), more than 26 columns, or a row length
        outside 3 to the longer side."""
        self._board = board.Board(geometry=board_shape(width, height, connect))
        self._start_fen: str | None = None

    @classmethod
    def _wrap(cls, inner: board.Board, start_fen: str | None) -> Position:
        pos = cls.__new__(cls)
        pos._board = inner
        pos._start_fen = start_fen
        return pos

    @classmethod
    def from_moves(cls, moves: str | Iterable[int], width: int = STANDARD.width,
                   height: int = STANDARD.height, connect: int = STANDARD.connect) -> Position:
        """The position after ``moves`` from the empty board of that shape (as for
        ``Position()``): a digit string such as ``"4453"`` (Pons' notation, up to 9
        columns) or a sequence of columns such as ``(4, 4, 5, 3)``.

        Refused with :class:`IllegalMoveError`: anything else (None included), a
        board the engine cannot play, a column off the board or full, and a move
        after the game is over."""
        empty = cls(width, height, connect)
        if isinstance(moves, str):
            with _as_illegal_move():
                return cls._wrap(parse_digits(moves, empty._board.geometry), None)
        try:
            columns = iter(moves)
        except TypeError:
            raise IllegalMoveError(
                f"moves {moves!r}: expected a digit string or a sequence of columns") from None
        pos = empty
        for column in columns:
            pos = pos.play(column)
        return pos

    @classmethod
    def from_fen(cls, fen: str, width: int = STANDARD.width, height: int = STANDARD.height,
                 connect: int = STANDARD.connect) -> Position:
        """The position a cutechess / Fairy-Stockfish FEN describes on the board of that
        shape (as for ``Position()``; ``cfour``'s 7x6 unless told otherwise).

        Refused with :class:`IllegalMoveError`: what is not a string (None
        included), a board the engine cannot play, a malformed FEN or one of
        another size, floating stones,
        stone counts no game can reach, the wrong side to move, or a game that is
        already over (the engine only takes positions still to be played)."""
        geometry = board_shape(width, height, connect)
        if not isinstance(fen, str):
            raise IllegalMoveError(f"FEN {fen!r}: expected a string")
        with _as_illegal_move():
            inner = parse_fen(fen, geometry)
        return cls._wrap(inner, to_fen(inner))

    def play(self, column: int) -> Position:
        """The position after the side to move drops a stone in ``column`` (1-W).

        Raises :class:`IllegalMoveError` for a column off the board, a full
        column or a game that is already over."""
        number = _column(column, self.width)
        try:
            inner = self._board.play(number - 1)
        except board.RulesError as err:  # the protocol's wording, as play_moves writes it
            raise IllegalMoveError(f"move '{number}': {err}") from None
        return self._wrap(inner, self._start_fen)

    def legal_moves(self) -> list[int]:
        """The columns (1-W) the side to move may play, left to right; none once the
        game is over."""
        return [col + 1 for col in self._board.legal_moves()]

    def is_over(self) -> bool:
        """Whether the game has ended, by a line of ``connect`` stones or by a full board."""
        return self._board.is_over()

    def winner(self) -> int | None:
        """1 or 2, the player who made a line of ``connect`` stones; None while the game goes on
        and for a draw."""
        if not self._board.last_mover_won():
            return None
        return 2 if self._board.side_to_move == 0 else 1

    @property
    def side_to_move(self) -> int:
        """The player to move: 1 (the first player, who moves on an empty board) or 2.
        After the game is over, the player who would have moved next."""
        return self._board.side_to_move + 1

    @property
    def moves(self) -> tuple[int, ...]:
        """The columns (1-W) played since the start position (the empty board, or
        the FEN this position was created from)."""
        return tuple(col + 1 for col in self._board.history)

    @property
    def width(self) -> int:
        """Columns of the board."""
        return self._board.geometry.width

    @property
    def height(self) -> int:
        """Rows of the board."""
        return self._board.geometry.height

    @property
    def connect(self) -> int:
        """Stones in a row that win."""
        return self._board.geometry.connect

    @property
    def board(self) -> str:
        """The board as ``--board`` spells it: ``7x6``, ``8x7``, ``9x6k5`` (five in a row)."""
        return self._board.geometry.name

    @property
    def start_fen(self) -> str | None:
        """The FEN this position's moves start from (written out in full, as
        :meth:`fen` writes it), or None when they start from the empty board."""
        return self._start_fen

    def fen(self) -> str:
        """The cutechess / Fairy-Stockfish FEN of this position, stones in hand included."""
        return to_fen(self._board)

    def __str__(self) -> str:
        """The board as text, top row first: ``X`` first player, ``O`` second,
        ``.`` empty, then the column numbers."""
        return render(self._board)

    def __repr__(self) -> str:
        moves = "".join(str(col) for col in self.moves) if self.width <= 9 else self.moves
        board_field = "" if self._board.geometry == STANDARD else f"board={self.board!r} "
        if self._start_fen is None:
            return f"<Position {board_field}moves={moves!r}>"
        return f"<Position {board_field}start_fen={self._start_fen!r} moves={moves!r}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return (self._board.geometry, self._board.key) == (other._board.geometry, other._board.key)

    def __hash__(self) -> int:
        return hash((self._board.geometry, self._board.key))
