"""A ``go``'s thinking time, from its parameters, the position and the options.

Numba-free, so that the engine knows a ``go``'s deadline before its search is
loaded (:mod:`.server` answers it from the quick tier if the search would come
too late) as well as after (:mod:`.backend`)."""

from __future__ import annotations

from ..rules.board import Board
from ..search.limits import Budget, clock_budget, movetime_budget
from .go_params import GoParams


def go_budget(pos: Board, params: GoParams, move_overhead_ms: float, late_ms: float = 0.0) -> Budget | None:
    """Thinking time from ``movetime`` (which wins over a clock) or the side to move's
    clock, if any; ``late_ms`` is the :class:`~c4engine.search.limits.Lateness`
    allowance."""
    if params.movetime is not None:
        return movetime_budget(params.movetime, late_ms)
    time_left, increment = params.clock(pos.side_to_move == 0)
    if time_left is None:
        return None
    return clock_budget(time_left, increment, params.movestogo, pos.stones, move_overhead_ms + late_ms,
                        pos.geometry.cells)
