"""An exact solve shared out between threads: each probes its own null window."""

from __future__ import annotations

import threading
from types import ModuleType

from ..kernel.layout import NODE_LIMIT, STOP
from ..rules.board import Board
from .thread import UNLIMITED, SearchThread


class SharedProbes:
    """An exact (strong) solve split between the search threads: each runs
    null-window probes (:func:`c4engine.kernel.solve`'s), the first two at
    different points, and every result narrows the one range of possible scores.

    The score is known once one probe proves it at least ``s`` and another at
    most ``s``; the costly probes are those two, next to each other, and for
    an early position the first one, at 0, is often one of them.  So while the
    main thread proves one side, a helper works on the other, and what it
    stores in the table makes the main thread's later probe there cheap, which
    beats racing every probe on every thread.  A probe whose
    answer the range has come to settle is cancelled through its thread's node
    limit (the stop flag belongs to the caller's stop signal)."""

    def __init__(self, pos: Board, solve: ModuleType) -> None:
        """``solve``: the :mod:`c4engine.kernel.solve` of the position's board."""
        self.pos = pos
        self.solve = solve
        self.lowest, self.highest = (int(bound) for bound in solve.score_range(pos.stones, False))
        self.probing: dict[SearchThread, int] = {}
        self.nodes = 0
        self.lock = threading.Lock()

    def run(self, thread: SearchThread) -> None:
        """Probe on ``thread`` until the range is one score or the search is stopped."""
        while (point := self._start(thread)) is not None:
            value = thread.probe(self.pos, point)
            with self.lock:
                del self.probing[thread]
                self.nodes += thread.nodes()
                if not thread.aborted():
                    self._narrow(point, value)
            if thread.mem[STOP]:
                return

    def _start(self, thread: SearchThread) -> int | None:
        """Claim the next point for ``thread`` and reset its counters; None when solved."""
        with self.lock:
            if self.lowest >= self.highest:
                return None
            point = self._free_point()
            self.probing[thread] = point
            thread.begin(UNLIMITED)
            return point

    def _free_point(self) -> int:
        """The solver's next point when no other thread probes inside the range; else
        another thread's point, the threads then sharing out its tree; but next to
        the first probe, at 0, the point 1 above it.  A point the range has settled
        is never joined: its thread is cancelled but may not have left yet (with
        more threads than cores it waits for one), and there the table answers at
        once and settles nothing, so the joiners would loop on it and keep it
        claimed among themselves."""
        open_points = [point for point in self.probing.values() if self.lowest <= point < self.highest]
        if not open_points:
            return int(self.solve.probe_point(self.lowest, self.highest, self.pos.stones))
        point = max(open_points)
        return 1 if point == 0 and 1 < self.highest else point

    def _narrow(self, point: int, value: int) -> None:
        """Take a finished probe's result; cancel the probes it made pointless."""
        self.lowest, self.highest = (int(bound) for bound in self.solve.narrowed(self.lowest, self.highest,
                                                                               point, value))
        for other, other_point in self.probing.items():
            if not self.lowest <= other_point < self.highest:
                other.mem[NODE_LIMIT] = 0
