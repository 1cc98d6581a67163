"""The search threads' plumbing: helper threads, the stop signal, a race's record, the deadline timer."""

from __future__ import annotations

import os
import queue
import sys
import threading
from contextlib import suppress
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


HELPER_NICE = 19  # how much lower a speculating helper's scheduling priority is (see yield_to_main_thread)


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


def yield_to_main_thread() -> None:
    """Give the calling thread the main thread's scheduling priority lowered by
    HELPER_NICE (at most to 19), for good: a thread may lower its priority,
    and only a privileged one raise it again.

    For a helper about to do work that the answer may not need (the exact
    solve's probe beside the main thread's, :class:`~.probes.SharedProbes`).
    Where the process gets fewer cores than it has search threads (a loaded
    machine: with Linux's autogroup scheduling one other busy session leaves a
    2-thread search one core), threads of equal priority split a core: the
    main thread's probe, which the answer waits for, runs at half speed while
    a probe the answer turns out not to need (on 5x7, 6x5, 7x5 and 6x6) costs
    its full price.  Lowered, the helper runs on what the main thread leaves
    idle; on an idle machine, as before.  docs/design.md ("Threads") has the
    figures.  Linux only (there ``setpriority`` on a thread id renices that
    thread alone, elsewhere the whole process); a refusal is ignored."""
    if not sys.platform.startswith("linux"):
        return
    with suppress(OSError):
        lowered = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + HELPER_NICE)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), lowered)


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
