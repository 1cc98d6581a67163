"""What ends a search: its limits, and the time management that sets them on a clock.

A Connect-Four game gives each side at most 21 moves, and the last ones cost
almost nothing because the exact solver finishes them at once; the moves just
after the opening book are the hard ones.  So the budget spreads the clock
over 40% of the moves still to come rather than over all of them, adds
most of the increment, and keeps ``Move Overhead`` aside for the trip through
the pipes.  A fixed ``movetime`` is spent as Stockfish spends it: the search
stops when the movetime is up, less only the few milliseconds the answer needs
to leave the process (``Move Overhead`` is for clocks).  Two limits come out: a
soft one (no new iteration starts after it) and a hard one (the search is
stopped); the hard one never takes more than half of what is left, so even a
run of long searches cannot lose on time.  Both count from the moment the
``go`` was read.

On a loaded machine the answer comes later than the deadline: the timer thread
that stops the search, and the search thread that unwinds, wait for a processor
(measured with one CPU burner beside the engine: the timer woke 14-36 ms late).
No fixed margin fits every machine, so the engine measures it: :class:`Lateness`
keeps how far past its hard deadline each recent search answered, and the next
budgets stop earlier by twice the most of them, on a movetime as on a clock:
what the engine cannot see (the ``go`` waiting in the pipe to be read, the
GUI's thread waking to read the answer) waits for the same processors.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace

from ..geometry import STANDARD

SHARE_OF_MOVES_LEFT = 0.4
INCREMENT_SHARE = 0.8
HARD_FACTOR = 3.0
MAX_SHARE_OF_CLOCK = 0.5
MOVETIME_MARGIN_MS = 10.0
LATENESS_WINDOW = 32  # the searches whose lateness the next budget allows for
LATENESS_FACTOR = 2.0  # the go's trip in and the answer's trip out wait as long again


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

    def after(self, spent_ms: float) -> Limits:
        """These limits once ``spent_ms`` of their time has gone (between reading the
        ``go`` and starting the search), never below zero."""
        def left(ms: float | None) -> float | None:
            return None if ms is None else max(0.0, ms - spent_ms)
        return replace(self, soft_ms=left(self.soft_ms), hard_ms=left(self.hard_ms))


@dataclass(frozen=True)
class Budget:
    """Thinking time in milliseconds: soft (no new iteration) and hard (stop)."""

    soft_ms: float
    hard_ms: float


class Lateness:
    """How late the recent searches answered, past their hard deadline: the most of
    the last :data:`LATENESS_WINDOW` that ran into it (a search that ended sooner
    says nothing about the machine).  The most, not a mean: one answer too late
    loses the game.  It fades as soon as searches answer on time again."""

    def __init__(self) -> None:
        self._recent: deque[float] = deque(maxlen=LATENESS_WINDOW)

    def record(self, answered_ms: float, hard_ms: float | None) -> None:
        """A search answered ``answered_ms`` after its ``go`` was read, its hard deadline
        ``hard_ms`` after it (None: no deadline, nothing learned)."""
        if hard_ms is not None and answered_ms >= hard_ms:
            self._recent.append(answered_ms - hard_ms)

    def allowance_ms(self) -> float:
        """What the next budget keeps aside for it: :data:`LATENESS_FACTOR` times the most."""
        return LATENESS_FACTOR * max(self._recent, default=0.0)


def clock_budget(time_left_ms: float, increment_ms: float, moves_to_go: int | None, stones: int,
                 overhead_ms: float, cells: int = STANDARD.cells) -> Budget:
    """Soft and hard thinking time for the side to move, in milliseconds, with
    ``stones`` of the board's ``cells`` filled; ``overhead_ms`` is ``Move Overhead``
    and the :class:`Lateness` allowance together."""
    own_moves_left = (cells - stones + 1) // 2
    horizon = max(2, math.ceil(own_moves_left * SHARE_OF_MOVES_LEFT))
    if moves_to_go:
        horizon = max(1, min(horizon, moves_to_go))
    usable = max(0.0, time_left_ms - overhead_ms)
    soft = usable / horizon + increment_ms * INCREMENT_SHARE
    hard = min(soft * HARD_FACTOR, usable * MAX_SHARE_OF_CLOCK + increment_ms * INCREMENT_SHARE / 2)
    hard = max(1.0, min(hard, usable))
    return Budget(soft_ms=min(soft, hard), hard_ms=hard)


def movetime_budget(movetime_ms: float, late_ms: float = 0.0) -> Budget:
    """A fixed time per move: all of it but :data:`MOVETIME_MARGIN_MS`, the time the
    answer takes to leave the process once the search is stopped (the timer waking,
    the search unwinding, the line written), and ``late_ms``, the :class:`Lateness`
    allowance, so that the GUI reads ``bestmove`` within the movetime.  ``Move
    Overhead`` does not come off it, as in Stockfish."""
    hard = max(0.0, movetime_ms - MOVETIME_MARGIN_MS - late_ms)
    return Budget(soft_ms=hard, hard_ms=hard)
