"""An exact solve shared out between threads: each probes its own null window."""

from __future__ import annotations

import threading
import time
from types import ModuleType

from ..kernel.layout import NODE_LIMIT, ROOT_FAILS, STOP
from ..rules.board import Board
from .pool import yield_to_main_thread
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
    limit (the stop flag belongs to the caller's stop signal).

    Which side: the helper starts at 1, the second probe when the score is
    positive.  A probe that succeeds ends with the first root move that reaches
    its window; one that fails must refute every move, the first often after a
    small part of its work (on 5x7, 0.37 M of the probe's 2.84 M nodes).  So on
    a board of odd width, where the first move tried is the lone centre column,
    once the probe at 0 has refuted a root move (the kernel counts them,
    ``ROOT_FAILS``) the score is most likely 0 or below, the probe at 1 is
    wasted, and the helper moves to -1 (a watcher polls for it every
    ``WATCH_SECONDS``).  On an even width the evidence misleads: 6x7's probe at
    0 refutes both centre columns before it wins with another, and 8x6's refutes
    its first root move only at the end of its work.  There the board's shape
    decides: with an even height too, the second player can answer every move
    in the same column (Allis' follow-up, claimeven) and takes every cell of an
    even row, and every such board solved scores 0 or below (4x4, 4x6, 4x8,
    4x10, 6x4, 8x4: 0 or -1; 6x6 and 8x6: -1), so with the first player to move
    the helper starts at -1; otherwise at 1 (6x7 and 8x5 score 1).  A helper that takes
    a probe of its own yields the processor to the main thread for good
    (:func:`~.pool.yield_to_main_thread`): on a machine short of cores the
    main thread's probe, which the answer needs, keeps its speed; a helper
    that only shares probes (a weak solve's one probe at 0, where two
    threads take fewer nodes than one even on one core) keeps its priority.
    docs/design.md ("Threads") has the figures."""

    WATCH_SECONDS = 0.001

    def __init__(self, pos: Board, solve: ModuleType, yielding: bool = True) -> None:
        """``solve``: the :mod:`c4engine.kernel.solve` of the position's board;
        ``yielding``: whether a helper on a probe of its own yields to the main
        thread (not in a searcher's warm-up, solved at once: its helpers would stay
        lowered for the real solves)."""
        self.pos = pos
        self.solve = solve
        self.lowest, self.highest = (int(bound) for bound in solve.score_range(pos.stones, False))
        self.probing: dict[SearchThread, int] = {}
        self.nodes = 0
        self.lone_centre = pos.geometry.width % 2 == 1  # see the class
        # the score is most likely 0 or below: by the board's shape on an even width,
        # once the probe at 0 has refuted a root move on an odd one (see the class)
        self.leans_low = not self.lone_centre and pos.geometry.height % 2 == 0 and pos.stones % 2 == 0
        self.yielding = yielding
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
            if self.yielding and thread.index > 0 and self.probing and point not in self.probing.values():
                yield_to_main_thread()  # a probe of its own: the answer may not need it
            self.probing[thread] = point
            thread.begin(UNLIMITED)
            if point == 1 and self.lone_centre and self.lowest <= 0 and 0 in self.probing.values():
                threading.Thread(target=self._watch, args=(thread,), daemon=True).start()
            return point

    def _free_point(self) -> int:
        """The solver's next point when no other thread probes inside the range; else
        another thread's point, the threads then sharing out its tree; but next to
        the first probe, at 0, the point 1 above it, or -1 below it when the score
        leans low (see the class).  A point the range has settled
        is never joined: its thread is cancelled but may not have left yet (with
        more threads than cores it waits for one), and there the table answers at
        once and settles nothing, so the joiners would loop on it and keep it
        claimed among themselves.  Nor is 1 once the evidence has turned the helpers from
        it, while the probe at 0 is open: the threads still leaving it would draw
        the others back to it."""
        abandoned = 1 if self.leans_low and 0 in self.probing.values() else None
        open_points = [point for point in self.probing.values()
                       if self.lowest <= point < self.highest and point != abandoned]
        if not open_points:
            return int(self.solve.probe_point(self.lowest, self.highest, self.pos.stones))
        point = max(open_points)
        if point == 0:
            side = -1 if self.leans_low else 1
            if self.lowest <= side < self.highest:
                return side
        return point

    def _watch(self, helper: SearchThread) -> None:
        """While ``helper`` probes at 1 next to the open probe at 0, wait for that probe
        to refute a root move; then cancel the helper, whose next point is -1."""
        while True:
            time.sleep(self.WATCH_SECONDS)
            with self.lock:
                main = next((other for other, point in self.probing.items() if point == 0), None)
                if self.probing.get(helper) != 1 or main is None or self.lowest > 0:
                    return
                if main.mem[ROOT_FAILS]:
                    self.leans_low = True
                    helper.mem[NODE_LIMIT] = 0
                    return

    def _narrow(self, point: int, value: int) -> None:
        """Take a finished probe's result; cancel the probes it made pointless."""
        self.lowest, self.highest = (int(bound) for bound in self.solve.narrowed(self.lowest, self.highest,
                                                                               point, value))
        for other, other_point in self.probing.items():
            if not self.lowest <= other_point < self.highest:
                other.mem[NODE_LIMIT] = 0
