"""Difficulty levels: how a weaker engine chooses its move, honestly.

A person cannot beat perfect play, so the engine can play worse on request
(the UCI options ``Skill Level`` and ``UCI_LimitStrength`` / ``UCI_Elo``).  It
does so the way a weaker player does, not by sprinkling in random moves:

- it looks less far ahead (a depth cap that grows with the level), and knows
  nothing beyond: no opening book, and no exact solve until the end of the
  game is within its depth.  Tried between iterations, as at full strength,
  the solver and the book made levels 10 to 19 as strong as level 20 at 50 ms
  a move, since most positions past the book are solved in that time;
- every root move is searched and scored (as ``MultiPV`` does), and the move
  is drawn with a probability that grows with its score, ``exp(value / T)``,
  at a temperature ``T`` that shrinks geometrically with the level.

At level 0 the temperature is high enough that a win with the next stone is
missed about six times in ten (measured at 2d240a6: 182 of 300 positions with
exactly one such win), and seeing one ply only, it lets the opponent win at
once in 176 of 300 positions where it need not (a random mover would in
222); from level 10 on, the choice only wavers between moves whose heuristic
values are a few points apart.
Level 20 (and ``UCI_LimitStrength false`` with it) is full strength: the
search runs exactly as without levels.

The ``UCI_Elo`` scale is anchored on measurement (docs/guides/playing.md,
"Difficulty levels"): a uniformly random mover is 0, and :data:`ELO_AT_LEVEL` holds the
Elo each fifth level measured with ``c4engine match`` against the random
mover and against full strength.  An Elo between two measured levels is
played at the level found by linear interpolation.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..rules.scores import is_proven, to_pons
from .limits import Limits
from .report import Result

FULL_STRENGTH = 20
TOP_TEMPERATURE = 100.0  # value units (about cp) at level 0
TEMPERATURE_RATIO = 0.75  # per level
HEURISTIC_CAP = 90  # heuristic values are kept below every proven result
PROVEN_VALUE = 100  # a proven win is worth this plus its Pons score (faster is better)

# Measured (docs/guides/playing.md, "Difficulty levels": 200 games per pairing at 50 ms a move);
# a random mover is 0.
ELO_AT_LEVEL = ((0, 228), (5, 728), (10, 1035), (15, 1156), (20, 1298))
MIN_ELO, MAX_ELO = ELO_AT_LEVEL[0][1], ELO_AT_LEVEL[-1][1]


@dataclass(frozen=True)
class Strength:
    """A playing strength below full: a level in [0, 20), fractional when it comes
    from ``UCI_Elo``."""

    level: float

    @property
    def depth_cap(self) -> int:
        """The deepest heuristic iteration: 1 ply at level 0, 10 at level 19."""
        return 1 + round(self.level / 2)

    @property
    def temperature(self) -> float:
        return TOP_TEMPERATURE * TEMPERATURE_RATIO ** self.level

    def cap(self, limits: Limits) -> Limits:
        """The search limits with this strength's depth cap applied."""
        depth = self.depth_cap if limits.depth is None else min(limits.depth, self.depth_cap)
        return replace(limits, depth=depth)

    def choose(self, scores: Sequence[int], rng: random.Random) -> int:
        """The index of the chosen move among moves with these internal scores."""
        values = [move_value(score) for score in scores]
        best = max(values)
        weights = [math.exp((value - best) / self.temperature) for value in values]
        return rng.choices(range(len(scores)), weights)[0]

    def weakened(self, result: Result, rng: random.Random) -> Result:
        """``result`` (of a search of every root move, capped by :meth:`cap`) with its
        move chosen among the scored root moves by :meth:`choose`; the chosen line
        goes first, so that the engine's ``bestmove`` ponders on its reply."""
        if result.report is None:
            return result
        lines = result.report.lines
        chosen = self.choose([line.score for line in lines], rng)
        ordered = (lines[chosen],) + lines[:chosen] + lines[chosen + 1:]
        return replace(result, move=lines[chosen].pv[0], report=replace(result.report, lines=ordered))


def move_value(score: int) -> float:
    """An internal score on the level's scale: heuristic values capped, so that a
    big heuristic edge never outweighs a proven result; a proven win worth
    ``PROVEN_VALUE`` plus its Pons score (quicker wins and slower losses are
    better)."""
    if is_proven(score):
        pons = to_pons(score)
        return (PROVEN_VALUE if pons > 0 else -PROVEN_VALUE) + pons
    return max(-HEURISTIC_CAP, min(HEURISTIC_CAP, score))


def level_for_elo(elo: int) -> float:
    """The (fractional) level that plays at ``elo``, by interpolating the measured table."""
    for (low_level, low_elo), (high_level, high_elo) in zip(ELO_AT_LEVEL, ELO_AT_LEVEL[1:]):
        if elo <= high_elo:
            share = max(0.0, (elo - low_elo) / (high_elo - low_elo))
            return low_level + share * (high_level - low_level)
    return float(FULL_STRENGTH)
