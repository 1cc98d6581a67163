"""Positions for tests, made at test time from seeded random games."""

from __future__ import annotations

import random

from c4engine.geometry import Geometry
from c4engine.rules.board import Board


def late_positions(rng: random.Random, count: int, stones: int) -> list[Board]:
    """``count`` positions of random games with ``stones`` stones, the game not over."""
    out: list[Board] = []
    while len(out) < count:
        pos = Board()
        while pos.stones < stones and not pos.is_over():
            pos = pos.play(rng.choice(pos.legal_moves()))
        if not pos.is_over():
            out.append(pos)
    return out


def late_position(rng: random.Random, geometry: Geometry, empty: int) -> Board:
    """A position with ``empty`` cells left, from random moves that never complete a
    line (a game of random moves on a big board ends long before it fills up), so
    that a plain minimax reaches the end of the game."""
    while True:
        pos = Board(geometry=geometry)
        while pos.stones < geometry.cells - empty:
            quiet = [col for col in pos.legal_moves() if not pos.is_winning_move(col)]
            if not quiet:
                break
            pos = pos.play(rng.choice(quiet))
        if pos.stones == geometry.cells - empty:
            return pos
