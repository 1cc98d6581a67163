"""Positions for tests, made at test time from seeded random games."""

from __future__ import annotations

import random

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
