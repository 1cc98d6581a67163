"""The books, read before the cache and the search: the 7x6 database's exact 12-stone
scores and the exact (not ``--weak``) books that ``c4engine book build`` wrote.

A position is answered from a book when each of its columns is either settled by
the rules at once (a win, a move that lets the opponent win, the last cell) or
leads to a position a book scores, and at least one column needed a book.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..geometry import Geometry
from ..kernel.book import SCORE_STONES, OpeningBook
from ..kernel.built_book import BuiltBook
from ..rules.board import Board
from .answer import Analysis, Bounds, first_look


class Books:
    """The opening database (7x6 only) and the built books, one per board at most."""

    def __init__(self, opening: OpeningBook, built: Iterable[BuiltBook] = ()) -> None:
        self.opening = opening
        self.built: dict[Geometry, BuiltBook] = {book.header.geometry: book for book in built
                                                 if not book.header.weak}

    def score(self, board: Board) -> int | None:
        """A book's exact Pons score of ``board`` for its side to move, or None."""
        if board.geometry.is_standard and board.stones == SCORE_STONES and self.opening.has_scores:
            return self.opening.probe(board.current, board.mask)
        built = self.built.get(board.geometry)
        if built is not None and board.stones == built.header.plies:
            return built.probe(board.current, board.mask)
        return None

    def covers(self, board: Board) -> bool:
        """Whether the books can score the positions after ``board``'s moves."""
        after = board.stones + 1
        built = self.built.get(board.geometry)
        return ((board.geometry.is_standard and after == SCORE_STONES and self.opening.has_scores)
                or (built is not None and after == built.header.plies))

    def analyse(self, board: Board) -> Analysis | None:
        """Every column of ``board`` from the rules and the books, or None."""
        if not self.covers(board):
            return None
        columns, children = first_look(board)
        for col, child in children.items():
            score = self.score(child)
            if score is None:
                return None
            columns[col] = Bounds.exact(-score)
        return Analysis(board, tuple(columns), "book") if children else None
