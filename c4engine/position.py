"""The public position: columns 1-7, a cutechess FEN, a text board, immutable and hashable.

It wraps the rules' internal :class:`c4engine.board.Board` (0-based
columns, bitboards) and the notation module, so that the internal ones may
change without breaking programs written against this one.  Every refusal,
whatever the type of the value refused (the rule of :mod:`c4engine.arguments`),
is a :class:`IllegalMoveError` carrying the message the engine's protocol
gives for the same input, so a program and a protocol log read alike.
"""

from __future__ import annotations

import operator
from contextlib import contextmanager
from typing import Iterable, Iterator

from .arguments import is_whole_number
from .geometry import STANDARD
from .rules import board
from .rules.notation import parse_digits, parse_fen, play_moves, render, to_fen


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


def _column(column: object) -> int:
    """``column`` as a public column 1-7, or IllegalMoveError with the protocol's message."""
    if not is_whole_number(column):
        raise IllegalMoveError(f"move {column!r}: expected an int column 1-{STANDARD.width}")
    number = operator.index(column)  # type: ignore[arg-type]
    if not 1 <= number <= STANDARD.width:
        raise IllegalMoveError(f"move '{number}': column out of range (1-{STANDARD.width})")
    return int(number)


class Position:
    """A Connect-Four position: the stones, the side to move and the moves that led here.

    Columns are numbered 1-7 from the left, as in the digit notation (``"4453"``).
    A position never changes: :meth:`play` returns a new one.  Two positions are
    equal (and hash alike) when the same stones are on the board, whatever the
    move order that reached them, so positions work as keys of a dict of
    transpositions.
    """

    __slots__ = ("_board", "_start_fen")

    def __init__(self) -> None:
        """The empty board, the first player to move."""
        self._board = board.Board()
        self._start_fen: str | None = None

    @classmethod
    def _wrap(cls, inner: board.Board, start_fen: str | None) -> Position:
        pos = cls.__new__(cls)
        pos._board = inner
        pos._start_fen = start_fen
        return pos

    @classmethod
    def from_moves(cls, moves: str | Iterable[int]) -> Position:
        """The position after ``moves`` from the empty board: a digit string such as
        ``"4453"`` (Pons' notation) or a sequence of columns such as ``(4, 4, 5, 3)``.

        Refused with :class:`IllegalMoveError`: anything else (None included), a
        column off the board or full, and a move after the game is over."""
        if isinstance(moves, str):
            with _as_illegal_move():
                return cls._wrap(parse_digits(moves), None)
        try:
            columns = iter(moves)
        except TypeError:
            raise IllegalMoveError(
                f"moves {moves!r}: expected a digit string or a sequence of columns") from None
        pos = cls()
        for column in columns:
            pos = pos.play(column)
        return pos

    @classmethod
    def from_fen(cls, fen: str) -> Position:
        """The position a cutechess / Fairy-Stockfish ``cfour`` FEN describes.

        Refused with :class:`IllegalMoveError`: what is not a string (None
        included), a malformed FEN, floating stones,
        stone counts no game can reach, the wrong side to move, or a game that is
        already over (the engine only takes positions still to be played)."""
        if not isinstance(fen, str):
            raise IllegalMoveError(f"FEN {fen!r}: expected a string")
        with _as_illegal_move():
            inner = parse_fen(fen)
        return cls._wrap(inner, to_fen(inner))

    def play(self, column: int) -> Position:
        """The position after the side to move drops a stone in ``column`` (1-7).

        Raises :class:`IllegalMoveError` for a column off the board, a full
        column or a game that is already over."""
        number = _column(column)
        with _as_illegal_move():
            return self._wrap(play_moves(self._board, [str(number)]), self._start_fen)

    def legal_moves(self) -> list[int]:
        """The columns (1-7) the side to move may play, left to right; none once the
        game is over."""
        return [col + 1 for col in self._board.legal_moves()]

    def is_over(self) -> bool:
        """Whether the game has ended, by four in a row or by a full board."""
        return self._board.is_over()

    def winner(self) -> int | None:
        """1 or 2, the player who made four in a row; None while the game goes on
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
        """The columns (1-7) played since the start position (the empty board, or
        the FEN this position was created from)."""
        return tuple(col + 1 for col in self._board.history)

    @property
    def start_fen(self) -> str | None:
        """The FEN this position's moves start from (written out in full, as
        :meth:`fen` writes it), or None when they start from the empty board."""
        return self._start_fen

    def fen(self) -> str:
        """The cutechess ``cfour`` FEN of this position, stones in hand included."""
        return to_fen(self._board)

    def __str__(self) -> str:
        """The board as text, top row first: ``X`` first player, ``O`` second,
        ``.`` empty, then the column numbers."""
        return render(self._board)

    def __repr__(self) -> str:
        digits = "".join(str(col) for col in self.moves)
        if self._start_fen is None:
            return f"<Position moves={digits!r}>"
        return f"<Position start_fen={self._start_fen!r} moves={digits!r}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return self._board.key == other._board.key

    def __hash__(self) -> int:
        return hash(self._board.key)
