"""The search threads' plumbing: helper threads, the stop signal, a race's record, the deadline timer."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..kernel.layout import STOP
from .thread import SearchThread


class StopSignal:
    """A stop request for one search, safe to fire from any thread before or during it.
    It reaches every search thread's kernel context."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fired = False
        self._ctxs: list[np.ndarray] = []

    @property
    def fired(self) -> bool:
        return self._fired

    def fire(self) -> None:
        with self._lock:
            self._fired = True
            for ctx in self._ctxs:
                ctx[STOP] = 1

    def attach(self, ctxs: Sequence[np.ndarray]) -> None:
        """Route the signal to kernel contexts (their flags take the signal's state)."""
        with self._lock:
            self._ctxs = list(ctxs)
        self.rearm()

    def rearm(self) -> None:
        """Give every context the signal's state again: a race's winner stops the other
        threads through their flags, which must not outlive that race."""
        with self._lock:
            for ctx in self._ctxs:
                ctx[STOP] = 1 if self._fired else 0

    def detach(self) -> None:
        with self._lock:
            for ctx in self._ctxs:
                ctx[STOP] = 0
            self._ctxs = []


@dataclass(frozen=True)
class Race:
    """What a job run on every search thread gave: the value of the thread that
    finished first (of the main thread if none finished), that thread, and the
    work of all of them."""

    value: int
    thread: SearchThread
    finished: bool
    nodes: int
    seldepth: int


class Helper:
    """A helper search thread: a daemon that runs the jobs it is handed, one at a time,
    until it is handed None.  Daemon, so that a search still running at exit can
    never hold the process."""

    def __init__(self, index: int) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=f"search-helper-{index}", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()

    def run(self, job: Callable[[], None]) -> threading.Event:
        """Start ``job``; the event is set when it has returned."""
        done = threading.Event()

        def wrapped() -> None:
            try:
                job()
            finally:
                done.set()
        self._jobs.put(wrapped)
        return done

    def close(self) -> None:
        self._jobs.put(None)


def close_helpers(helpers: list[Helper]) -> None:
    for helper in helpers:
        helper.close()


def deadline_timer(after_ms: float | None, stop: StopSignal) -> threading.Timer | None:
    """A timer that fires ``stop`` ``after_ms`` from now, none for None: a search's hard
    deadline, a ponder search's time once the ponder move was played (numba has no
    clock)."""
    if after_ms is None:
        return None
    timer = threading.Timer(max(0.0, after_ms) / 1000.0, stop.fire)
    timer.daemon = True
    timer.start()
    return timer
