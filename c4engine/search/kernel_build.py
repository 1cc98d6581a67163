"""A board's kernel compiled in a child process, and the interpreted tier that answers meanwhile.

Compiling a kernel is mostly Python (numba's typing and lowering), so a thread
compiling beside the interpreted tier (:mod:`.interpreted`) would share one
interpreter lock with it and slow both; a child process compiles on a core of
its own, into the caches this process then loads from (numba's and the kernel
copies', both safe for processes writing at once).  The child runs what the
caller's first search would: a searcher's warm-up, which compiles every entry
point of an exact solve (``c4engine solve``'s kernel), or of the whole kernel
(the API's searcher, which also searches to a depth).  It is a session of its
own, so that it finishes the cache when the process that started it has
answered and exited.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterable

from ..geometry import STANDARD, Geometry
from ..kernel.specialise import is_compiled
from ..rules.board import Board
from .interpreted import interpreted_score
from .searcher import Searcher
from .thread import column_scores, settled_score

WHOLE_KERNEL = "whole"  # the child's second argument when it compiles the whole kernel
# How long the interpreter tries one request before it leaves it to the kernel: a
# position it has not solved by then rarely is before the kernel is ready (a
# thirtieth of its speed), and on a busy machine its core is the child's to take.
INTERPRETED_SECONDS = 1.0


def start_kernel_build(geometry: Geometry, whole: bool = False,
                       standard: bool = False) -> subprocess.Popen[bytes] | None:
    """Start compiling ``geometry``'s exact-solve kernel (``whole``: its whole kernel)
    in a child process; None when it is compiled already, or on 7x6, whose kernel
    every wheel ships compiled (:mod:`c4engine.kernel.portable`): a checkout, or an
    install whose numba is not the wheel's, compiles it in-process, as before the
    tier, unless ``standard`` asks for 7x6's too (the engine's, whose ``readyok``
    must not wait); None too when no child can be started (an embedded
    interpreter, a frozen application, a system out of processes), and the
    caller compiles in-process."""
    return _launch(geometry, whole) if _needs_compiling(geometry, whole, standard) else None


def _needs_compiling(geometry: Geometry, whole: bool, standard: bool = False) -> bool:
    """Whether ``geometry``'s kernel (``whole``: its whole kernel) is for a child to
    compile: not compiled yet, and not 7x6's unless ``standard``."""
    return (standard or geometry != STANDARD) and not is_compiled(geometry, full=whole)


def _launch(geometry: Geometry, whole: bool) -> subprocess.Popen[bytes] | None:
    """The child compiling ``geometry``'s kernel, started; None when none can be."""
    if not _can_run_children():
        return None
    argv = [sys.executable, "-m", __name__, str(geometry), *([WHOLE_KERNEL] if whole else [])]
    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:  # no process to be had: the caller compiles the kernel itself, as without the tier
        return None


def _can_run_children() -> bool:
    """Whether ``sys.executable -m`` runs a Python module: not in an embedded
    interpreter (no ``sys.executable``), nor in a frozen application (PyInstaller
    and the like set ``sys.frozen``), whose executable is the application itself
    and would start it again."""
    return bool(sys.executable) and not getattr(sys, "frozen", False)


def start_kernel_builds_beside(geometries: Iterable[Geometry], whole: bool) -> dict[Geometry, subprocess.Popen[bytes]]:
    """Children compiling the kernels of the boards of ``geometries`` that need it, one
    each, but the first such board, which the caller compiles itself meanwhile:
    on a machine of several cores new boards then compile side by side, not one
    after the other.  The caller waits for a board's child before building its
    searcher, whose kernel then loads from the caches."""
    needing = [geometry for geometry in dict.fromkeys(geometries) if _needs_compiling(geometry, whole)]
    children = {geometry: _launch(geometry, whole) for geometry in needing[1:]}
    return {geometry: child for geometry, child in children.items() if child is not None}


class InterpretedTier:
    """One board's exact solves before its kernel is ready: the first call starts the
    child compiling the kernel (unless it is compiled), and every call, while
    that child runs, solves by the interpreter, giving up once it has ended or
    after :data:`INTERPRETED_SECONDS`.
    A caller asks this first, and its searcher when it says None, after
    :meth:`wait_for_kernel` (docs/design.md, "The interpreted tier").
    ``standard``: 7x6's kernel too is for a child to compile
    (:func:`start_kernel_build`)."""

    def __init__(self, geometry: Geometry, whole: bool = False, standard: bool = False) -> None:
        self.geometry = geometry
        self.whole = whole
        self.standard = standard
        self._build: subprocess.Popen[bytes] | None = None
        self._build_checked = False

    @property
    def started(self) -> bool:
        """Whether a child was started to compile the kernel."""
        return self._build is not None

    def solve(self, pos: Board, weak: bool) -> tuple[int, int] | None:
        """``pos``'s exact score (weak: its sign) and the nodes it took, as the
        searcher's :meth:`~.searcher.Searcher.solve` gives them; None when the
        kernel is ready first, or the position needs more than
        :data:`INTERPRETED_SECONDS`."""
        return self._solve(pos, weak, time.monotonic() + INTERPRETED_SECONDS)

    def solve_moves(self, pos: Board, weak: bool,
                    seconds: float = INTERPRETED_SECONDS) -> tuple[list[int], int] | None:
        """Every column's exact score, as :meth:`~.searcher.Searcher.solve_moves` gives
        them (:data:`~.thread.NO_MOVE_SCORE` for a full one), and the nodes;
        None when the kernel is ready first, or the columns together need more
        than ``seconds``."""
        deadline = time.monotonic() + seconds
        return column_scores(pos, weak, lambda child: self._solve(child, weak, deadline))

    def best_move(self, pos: Board, seconds: float) -> tuple[int, int] | None:
        """The column of ``pos`` with the best exact score, the most central among
        equals, and that score; None as :meth:`solve_moves` within ``seconds``.
        ``pos`` must have a legal move."""
        solved = self.solve_moves(pos, weak=False, seconds=seconds)
        if solved is None:
            return None
        scores, geometry = solved[0], pos.geometry
        column = max(range(geometry.width), key=lambda col: (scores[col], -geometry.off_centre(col)))
        return column, scores[column]

    def compiling(self) -> bool:
        """Whether a child compiles the kernel now; the first call starts it, unless
        the kernel is compiled or no child can be had."""
        return self._running_build() is not None

    def _solve(self, pos: Board, weak: bool, deadline: float) -> tuple[int, int] | None:
        build = self._running_build()
        if build is None:
            return None
        settled = settled_score(pos, weak)
        if settled is not None:
            return settled, 0
        return interpreted_score(pos, weak, keep_going=lambda: build.poll() is None and time.monotonic() < deadline)

    def wait_for_kernel(self) -> None:
        """Wait for the child compiling the kernel, if one was started: the kernel then
        loads from the caches it filled (or, should the child have failed, compiles
        in this process as it would have without the tier)."""
        if self._build is not None:
            self._build.wait()

    def _running_build(self) -> subprocess.Popen[bytes] | None:
        """The child compiling the kernel, while it runs; started at the first call."""
        if not self._build_checked:
            self._build_checked = True
            self._build = start_kernel_build(self.geometry, self.whole, self.standard)
        if self._build is not None and self._build.poll() is None:
            return self._build
        return None


def build(geometry: Geometry, whole: bool) -> None:
    """Compile (or load) ``geometry``'s exact-solve kernel, as ``solve`` uses it, or
    its whole kernel, as the API's searcher does."""
    Searcher(1, geometry=geometry, solving_only=not whole).warm_up(searching=whole)


if __name__ == "__main__":
    build(Geometry.parse(sys.argv[1]), whole=sys.argv[2:] == [WHOLE_KERNEL])
