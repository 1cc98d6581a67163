"""The positions a book holds: reachable at N plies, not over, the mover unable to win
with its next stone, a position and its mirror image once."""

from __future__ import annotations

from ..geometry import Geometry
from ..kernel.built_book import canonical_key
from ..rules.board import Board


class BookRequestError(ValueError):
    """A book that cannot be built: a ply count out of range for the board."""


def check_plies(geometry: Geometry, plies: int) -> None:
    if not 0 <= plies < geometry.cells:
        raise BookRequestError(f"plies must be from 0 to {geometry.cells - 1} on {geometry}, not {plies}")


def book_positions(geometry: Geometry, plies: int) -> dict[int, Board]:
    """The book's positions by key (:func:`canonical_key`), one of each mirror pair."""
    check_plies(geometry, plies)
    level = {canonical_key(0, 0, geometry): Board(geometry=geometry)}
    for _ in range(plies):
        following: dict[int, Board] = {}
        for pos in level.values():
            for col in pos.legal_moves():
                if pos.is_winning_move(col):
                    continue  # that game is over
                child = pos.play(col)
                following.setdefault(canonical_key(child.current, child.mask, geometry), child)
        level = following
    return {key: pos for key, pos in level.items() if not pos.can_win_now()}
