#!/usr/bin/env python3
"""A uniformly random mover: the zero of the ``UCI_Elo`` scale (see
docs/guides/playing.md, "Difficulty levels").  It plays any column that is not full, each with the same
chance, and knows nothing of fours (the referee ends the games)."""

from __future__ import annotations

import random

from simple_engine import (  # run as a script: its folder is on the path
    HEIGHT,
    WIDTH,
    SimpleEngine,
)


class RandomEngine(SimpleEngine):
    def choose(self) -> int:
        return random.choice([col for col in range(WIDTH) if self.heights[col] < HEIGHT])


if __name__ == "__main__":
    RandomEngine().run()
