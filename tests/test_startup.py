"""What a process pays around its searches: the warm-up loads every compiled function a
solve calls, and the command line does not pay for numba's unused extras nor for the
collector's walk through numba's objects on the way out.

Each check runs in a fresh interpreter: what matters is what a new process loads,
and other tests in this one have loaded the kernel already.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Counts the kernel's compiled functions that load (from numba's cache, or compile)
# during a two-thread solve of the empty board, after the solve command's warm-up.
LOADS_DURING_SOLVE = """
from numba.core.dispatcher import Dispatcher
from c4engine.geometry import Geometry
from c4engine.rules.board import Board
from c4engine.search.searcher import Searcher

geometry = Geometry.parse("5x4")
searcher = Searcher(16, threads=2, geometry=geometry)
searcher.warm_up(searching=False)
loaded = []
compile_for_args = Dispatcher._compile_for_args
def counted(self, *args, **kws):
    loaded.append(self.py_func.__name__)
    return compile_for_args(self, *args, **kws)
Dispatcher._compile_for_args = counted
searcher.clear()
score, _nodes = searcher.solve(Board(geometry=geometry))
print(score, sorted(set(loaded)))
"""

# The solve command, then the modules of numba's extras that it imported, and whether
# the objects were frozen out of the collector before the interpreter's exit.
EXTRAS_IMPORTED = """
import atexit, gc, sys
from c4engine import cli
def imported() -> None:
    print("numba" in sys.modules, sorted(name for name, module in sys.modules.items()
                                         if module is not None and name.split(".")[0] in ("scipy", "cffi")))
    print("frozen", gc.get_freeze_count() > 10_000)
atexit.register(imported)
sys.argv = ["c4engine", "solve", "--board", "5x4"]
cli.main()
"""


def python(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=300)


def test_a_solve_with_helpers_loads_nothing_after_the_warm_up() -> None:
    """The solve's own timing must not include loading functions: two threads solve an
    early position by sharing out windows (SharedProbes), whose entry points the
    warm-up must have loaded too."""
    done = python("-c", LOADS_DURING_SOLVE)
    assert done.returncode == 0, done.stderr
    _score, loaded = done.stdout.split(" ", 1)
    assert loaded.strip() == "[]", f"loaded during the solve: {loaded}"


def test_the_solve_command_never_imports_scipy() -> None:
    """numba imports scipy (if installed) at its first cache load; the command marks it
    absent, so the solve's start-up does not pay for it."""
    done = python("-c", EXTRAS_IMPORTED, stdin="\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2] == "True []"  # the kernel was loaded, and no extra


def test_the_command_leaves_its_objects_out_of_the_last_collections() -> None:
    """The interpreter's collections at exit would walk numba's objects (0.2 s of CPU)."""
    done = python("-c", EXTRAS_IMPORTED, stdin="\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "frozen True"
