"""A board's exact-solve kernel compiled in a child process, for the interpreted tier's time.

Compiling a kernel is mostly Python (numba's typing and lowering), so a thread
compiling beside the interpreted tier (:mod:`.interpreted`) would share one
interpreter lock with it and slow both; a child process compiles on a core of
its own, into the caches this process then loads from (numba's and the kernel
copies', both safe for processes writing at once).  The child runs what
``solve``'s first search would: a searcher's warm-up, which compiles every
entry point an exact solve calls.  It is a session of its own, so that it
finishes the cache when the command that started it has answered and exited.
"""

from __future__ import annotations

import subprocess
import sys

from ..geometry import STANDARD, Geometry
from ..kernel.specialise import is_compiled
from .searcher import Searcher


def start_kernel_build(geometry: Geometry) -> subprocess.Popen[bytes] | None:
    """Start compiling ``geometry``'s exact-solve kernel in a child process; None when
    it is compiled already, or on 7x6, whose kernel every wheel ships compiled
    (:mod:`c4engine.kernel.portable`): a checkout compiles it in-process, as before
    the tier."""
    if geometry == STANDARD or is_compiled(geometry, full=False):
        return None
    return subprocess.Popen([sys.executable, "-m", __name__, str(geometry)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def build(geometry: Geometry) -> None:
    """Compile (or load) ``geometry``'s exact-solve kernel, as ``solve`` uses it."""
    Searcher(1, geometry=geometry, solving_only=True).warm_up(searching=False)


if __name__ == "__main__":
    build(Geometry.parse(sys.argv[1]))
