"""One ``go`` as the engine process runs it: a worker thread, its stop, its one ``bestmove``.

Kept apart from the command handlers because a search outlives the command that
started it: ``stop``, ``ponderhit`` and ``quit`` reach it from other threads
while it thinks, and whatever happens in the search, exactly one ``bestmove``
line follows.  The server imports this module only once the search is loaded.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from ..rules.board import Board
from ..rules.notation import format_move
from ..search.pool import StopSignal, deadline_timer
from .backend import Backend, bestmove_line
from .go_params import GoParams
from .output import Output

BUILD_POLL_S = 0.05  # how often a waiting go looks whether the search is built


def ends_by_itself(params: GoParams, position: Board, pondering: bool) -> bool:
    """Whether a limit will end a ``go`` with ``params`` on ``position`` without
    ``stop``: a depth, a node count, a movetime, or a clock that runs (not while
    pondering)."""
    if params.infinite or pondering:
        return False
    if params.depth is not None or params.nodes is not None or params.movetime is not None:
        return True
    return params.clock(position.side_to_move == 0)[0] is not None


class SearchJob:
    """One ``go``: a worker thread that searches, then writes the one ``bestmove``.

    Under ``go infinite`` or ``go ponder`` the bestmove waits, even when the
    search ends by itself, until ``stop`` (or ``ponderhit`` for ponder), as UCI
    requires.  ``drops`` and ``debug`` are the server's when the ``go`` was read."""

    def __init__(self, out: Output, backend: Backend, position: Board, params: GoParams,
                 read_at: float, drops: bool, debug: bool) -> None:
        self.out = out
        self.read_at = read_at
        self.backend = backend
        self.position = position
        self.params = params
        self.drops = drops
        self.debug = debug
        self.signal = StopSignal()
        self.pondering = params.ponder
        self.release = threading.Event()
        if not (params.infinite or params.ponder):
            self.release.set()
        self._timer: threading.Timer | None = None
        self.thread = threading.Thread(target=self._run, name="search", daemon=True)

    def stop(self) -> None:
        """Also ends pondering: a ``ponderhit`` after ``stop`` is an error."""
        self.pondering = False
        self.signal.fire()
        self.release.set()

    def bounded(self) -> bool:
        return ends_by_itself(self.params, self.position, self.pondering)

    def ponderhit(self) -> None:
        """The opponent played the move we pondered on: now the clock runs."""
        self.pondering = False
        budget = self.backend.budget(self.position, self.params)
        if budget is not None:
            self._timer = deadline_timer(budget.soft_ms, self.signal)
        if not self.params.infinite:
            self.release.set()

    def _run(self) -> None:
        """Search, then write the bestmove and tell the backend's :class:`Lateness` how
        far past the hard deadline it came (counted, like the deadline, from when the
        search could start)."""
        timed = not (self.params.infinite or self.params.ponder)
        deadline_ms = None
        try:
            spent_ms = (time.perf_counter() - self.read_at) * 1000.0
            limits = self.backend.limits(self.position, self.params, timed, spent_ms)
            if limits.hard_ms is not None:
                deadline_ms = spent_ms + limits.hard_ms
            if self.debug:
                self.out(f"info string debug {limits} late_ms={round(self.backend.lateness.allowance_ms())}")
            result = self.backend.search(self.position, limits, self.signal, self.drops, self.params.on_a_clock)
            line = bestmove_line(self.position, result, self.drops)
        except Exception as exc:  # noqa: BLE001 - a bestmove must follow every go
            self.out.error(f"internal error in the search: {exc!r}")
            line = self._fallback_bestmove()
        self.release.wait()
        if self._timer is not None:
            self._timer.cancel()
        self.out(line)
        self.backend.lateness.record((time.perf_counter() - self.read_at) * 1000.0, deadline_ms)

    def _fallback_bestmove(self) -> str:
        moves = self.position.legal_moves()
        if not moves:
            return "bestmove (none)"
        return f"bestmove {format_move(moves[len(moves) // 2], self.position, self.drops)}"


class WaitingJob:
    """A ``go`` without a time limit read while the search is built in the background
    (a new board's kernel compiling in another process, protocol.md ``isready``).

    It waits for the build on a thread of its own, so that ``stop``, ``position``
    and the other commands are carried out meanwhile (a page that stops its
    analysis must get its ``bestmove`` at once), then starts the search as
    :class:`SearchJob`.  A ``stop``, a ``ponderhit`` (its clock would run before
    the search could) or ``quit`` before the build is done is answered at once
    with the move ``answer_now`` writes."""

    def __init__(self, build: threading.Thread, begin: Callable[[], SearchJob | None],
                 answer_now: Callable[[], None], params: GoParams, position: Board) -> None:
        self.params = params
        self.position = position
        self.pondering = params.ponder
        self._build = build
        self._begin = begin
        self._answer_now = answer_now
        self._given_up = threading.Event()
        self._lock = threading.Lock()  # the search starts, or the answer is given, once
        self._search: SearchJob | None = None
        self.thread = threading.Thread(target=self._run, name="waiting-search", daemon=True)

    def stop(self) -> None:
        with self._lock:
            self.pondering = False
            self._given_up.set()
            if self._search is not None:
                self._search.stop()

    def ponderhit(self) -> None:
        with self._lock:
            if self._search is not None:
                self.pondering = False
                self._search.ponderhit()
                return
        self.stop()

    def bounded(self) -> bool:
        return ends_by_itself(self.params, self.position, self.pondering)

    def _run(self) -> None:
        while self._build.is_alive() and not self._given_up.wait(BUILD_POLL_S):
            pass
        with self._lock:
            if not self._given_up.is_set():
                self._search = self._begin()
        if self._search is None:
            self._answer_now()
            return
        self._search.thread.start()
        self._search.thread.join()
