"""The value of the empty board from a finished book: minimax over the tree of the
book's first plies, the book's values at its leaves."""

from __future__ import annotations

from ..kernel.built_book import BookFileError, BuiltBook, canonical_key
from ..rules.board import Board
from ..rules.scores import mate_distance, to_internal, win_now


def root_value(book: BuiltBook) -> int:
    """The empty board's Pons score for the first player (a weak book: its sign)."""
    header = book.header
    memo: dict[int, int] = {}

    def value(pos: Board) -> int:
        if pos.can_win_now():
            return 1 if header.weak else win_now(pos.stones, header.geometry.cells)
        key = canonical_key(pos.current, pos.mask, header.geometry)
        if key in memo:
            return memo[key]
        if pos.stones == header.plies:
            stored = book.probe(pos.current, pos.mask)
            if stored is None:
                raise BookFileError(f"book {book.path}: position {pos.history} is missing")
            return stored
        best = max(-value(pos.play(col)) for col in pos.legal_moves())
        memo[key] = best
        return best

    return value(Board(geometry=header.geometry))


def verdict(book: BuiltBook) -> str:
    """``8x7: first player wins, ends on move 53``-style: the board's value in words."""
    score = root_value(book)
    board = book.header.geometry
    if score == 0:
        return f"{board}: draw"
    winner = "first" if score > 0 else "second"
    if book.header.weak:
        return f"{board}: {winner} player wins"
    distance = mate_distance(to_internal(score), 0, board.cells)
    last_move = 2 * distance - 1 if distance > 0 else -2 * distance
    return f"{board}: {winner} player wins, ends on move {last_move}"
