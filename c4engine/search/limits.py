"""What ends a search: its limits, and the time management that sets them on a clock.

A Connect-Four game gives each side at most 21 moves, and the last ones cost
almost nothing because the exact solver finishes them at once; the moves just
after the opening book are the hard ones.  So the budget spreads the clock
over 40% of the moves still to come rather than over all of them, adds
most of the increment, and keeps ``Move Overhead`` aside for the trip through
the pipes.  A fixed ``movetime`` is used mostly, whatever the overhead: never
less than half of it (an overhead of 30 ms must not turn ``movetime 30`` into
no search at all) and never more than it less a small safety margin.  Two
limits come out: a soft one (no new iteration starts after
it) and a hard one (the search is stopped); the hard one never takes more than
half of what is left, so even a run of long searches cannot lose on time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..rules.bits import CELLS

SHARE_OF_MOVES_LEFT = 0.4
INCREMENT_SHARE = 0.8
HARD_FACTOR = 3.0
MAX_SHARE_OF_CLOCK = 0.5
MIN_SHARE_OF_MOVETIME = 0.5
MOVETIME_SAFETY_MS = 2.0


@dataclass(frozen=True)
class Limits:
    """What ends a search; ``None`` means no limit of that kind.  ``soft_ms`` is when
    no new iteration starts, ``hard_ms`` when the search is stopped outright."""

    depth: int | None = None
    nodes: int | None = None
    soft_ms: float | None = None
    hard_ms: float | None = None
    mate: int | None = None

    def __str__(self) -> str:
        """``name=value`` pairs, times rounded to the millisecond (for ``debug on``)."""
        return " ".join(f"{name}={value if value is None else round(value)}"
                        for name, value in vars(self).items())


@dataclass(frozen=True)
class Budget:
    """Thinking time in milliseconds: soft (no new iteration) and hard (stop)."""

    soft_ms: float
    hard_ms: float


def clock_budget(time_left_ms: float, increment_ms: float, moves_to_go: int | None, stones: int,
                 overhead_ms: float) -> Budget:
    """Soft and hard thinking time for the side to move, in milliseconds."""
    own_moves_left = (CELLS - stones + 1) // 2
    horizon = max(2, math.ceil(own_moves_left * SHARE_OF_MOVES_LEFT))
    if moves_to_go:
        horizon = max(1, min(horizon, moves_to_go))
    usable = max(0.0, time_left_ms - overhead_ms)
    soft = usable / horizon + increment_ms * INCREMENT_SHARE
    hard = min(soft * HARD_FACTOR, usable * MAX_SHARE_OF_CLOCK + increment_ms * INCREMENT_SHARE / 2)
    hard = max(1.0, min(hard, usable))
    return Budget(soft_ms=min(soft, hard), hard_ms=hard)


def movetime_budget(movetime_ms: float, overhead_ms: float) -> Budget:
    """A fixed time per move: the movetime less the overhead, but at least half of the
    movetime and at most the movetime less :data:`MOVETIME_SAFETY_MS`.  The GUI asked
    for that much thinking; with a short movetime the overhead would otherwise
    swallow all of it."""
    hard = min(movetime_ms - overhead_ms, movetime_ms - MOVETIME_SAFETY_MS)
    hard = max(hard, movetime_ms * MIN_SHARE_OF_MOVETIME)
    return Budget(soft_ms=hard, hard_ms=hard)
