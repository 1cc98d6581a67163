"""Progress lines for long exact solves: the window searched, the nodes, the rate.

A solve of an early position can run for minutes with nothing to show; a
reporter thread reads the searcher's snapshot (:meth:`Searcher.solve_progress`)
every few seconds and hands a line to its caller.  Short solves print nothing:
the first line comes only once a solve has run :data:`FIRST_AFTER_S` seconds.
One thread serves a whole run of solves, so that a solve of a few microseconds
(``c4engine solve`` on Pons' sets) pays no thread start, only two attribute
writes under a lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Protocol

FIRST_AFTER_S = 3.0  # a solve shorter than this prints no progress
EVERY_S = 3.0  # then a line this often
POLL_S = 0.25  # how often the reporter looks at the clock


def progress_line(seconds: float, windows: list[int], nodes: int) -> str:
    """``solving: 6 s, window [0, 1], 51.3 M nodes, 8.6 M nodes/s``: each window is the
    null window ``[s, s + 1]`` of a probe at Pons score ``s`` (is the score above
    ``s``?), one per distinct probe the threads search."""
    shown = " ".join(f"[{score}, {score + 1}]" for score in windows)
    rate = nodes / seconds if seconds > 0 else 0.0
    plural = "s" if len(windows) > 1 else ""
    return f"solving: {seconds:.0f} s, window{plural} {shown}, {nodes / 1e6:.1f} M nodes, {rate / 1e6:.1f} M nodes/s"


class Solving(Protocol):
    """What the reporter reads: a :class:`~c4engine.search.searcher.Searcher`, or
    ``solve``'s searcher made on demand."""

    def solve_progress(self) -> tuple[list[int], int]: ...


class SolveProgress:
    """A reporter thread for a run of solves on one searcher: call :meth:`begin` before
    each solve and :meth:`end` after it; ``emit`` gets a :func:`progress_line` every
    :data:`EVERY_S` seconds of a solve that has run :data:`FIRST_AFTER_S` seconds.
    Used as a context manager, which ends the thread."""

    def __init__(self, searcher: Solving, emit: Callable[[str], None]) -> None:
        self.searcher = searcher
        self.emit = emit
        self._lock = threading.Lock()
        self._began: float | None = None  # the running solve's start, None between solves
        self._next = 0.0
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="solve-progress", daemon=True)

    def __enter__(self) -> SolveProgress:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._closed.set()
        self._thread.join()

    def begin(self) -> None:
        began = time.monotonic()
        with self._lock:
            self._began, self._next = began, began + FIRST_AFTER_S

    def end(self) -> None:
        with self._lock:
            self._began = None

    def _run(self) -> None:
        while not self._closed.wait(POLL_S):
            with self._lock:  # end() waits for a line being printed: none comes after it
                now = time.monotonic()
                if self._began is None or now < self._next:
                    continue
                windows, nodes = self.searcher.solve_progress()
                self.emit(progress_line(now - self._began, windows, nodes))
                self._next += EVERY_S
