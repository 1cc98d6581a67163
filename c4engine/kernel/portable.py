"""The portable kernel: compiled code for a baseline CPU, shipped in the wheel.

numba caches a function under a key of its signature, the machine's target
triple, the CPU's name and features, and its bytecode, in an index stamped with
numba's version and a hash of the source file's content (numba 0.68,
``numba/core/caching.py``): not its path, nor its modification time.  Code
compiled with ``NUMBA_CPU_NAME`` set to a baseline such as ``x86-64-v2`` and no
extra features runs on every CPU that has the baseline's, so the wheel can carry
it, built when the wheel is built (``setup.py``), in ``portable/<tag>`` beside
this file, the tag naming the machine, Python and numba it is for: 7x6's whole
kernel and the per-board copies (:mod:`.specialise`) of :data:`SHIPPED_BOARDS`,
the boards with a network, each in a folder named as the package's kernel
folder or the copy's.

A process uses it when it fits (:func:`choose`): the same numba, Python, machine
and kernel sources, a CPU with the baseline's features, and numba's CPU not
chosen already (by ``NUMBA_CPU_NAME``, or by a compilation). It then copies the
shipped files to a folder of the kernel's cache (numba may add entries, and the
package may be read-only), points numba's cache of the package's kernel files
and of the copies there (:func:`_locator_class`), and compiles nothing of the
shipped boards' kernels: their first use loads them. Where anything does not
fit, numba compiles for the host as before; numba's own key keeps a mismatched
entry from ever loading.

The baseline's code searches a few per cent slower than code tuned to the host
(docs/figures.md, "Start-up"). So the engine, started on the portable kernel,
has the host's code of the shipped boards compiled in another process, at the
lowest priority (:func:`tune_in_background`: ``c4engine warm-up --shipped``
without the portable kernel, which stamps it done, :func:`mark_tuned`); the
starts after it load the host's code. One numba process has one code generator,
whose CPU is fixed when it is made, so a process keeps the code it started with,
and compiles its other boards for the baseline too (docs/design.md, "The
portable kernel"). ``C4ENGINE_PORTABLE=0`` turns the portable kernel off (numba
then compiles for the host), ``C4ENGINE_TUNE=0`` the compilation in the
background.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

from .sources import KERNEL_DIR, PACKAGE_DIR, cache_root, publish, sources_hash

SHIPPED_DIR = KERNEL_DIR / "portable"
CACHED_DIRS = ("kernel", "rules")  # the package's folders whose compiled functions the portable kernel holds
SOURCES_FILE = "SOURCES"  # in a shipped folder: the hash of the kernel's sources it was compiled from
OFF_ENV = "C4ENGINE_PORTABLE"  # "0": never use the portable kernel (the host's code is compiled)
TUNE_ENV = "C4ENGINE_TUNE"  # "0": no compilation of the host's code in the background
BUILD_ENV = "C4ENGINE_PORTABLE_BUILD"  # a package's kernel folder: compile its portable kernel (the wheel's build)
# Per machine: the baseline CPU the portable code is compiled for, and the features
# a CPU needs to run it (LLVM's names; x86-64-v2 is every x86-64 CPU since 2009).
BASELINES = {
    "x86_64": ("x86-64-v2", frozenset({"cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3"})),
    "aarch64": ("generic", frozenset()),
    "arm64": ("generic", frozenset()),
}
# The boards whose kernels the wheel carries: 7x6, and those with a network
# (c4engine/data/ntuple-*.npz), which a Kaggle configuration or a page's board
# chooser is likeliest to name.
SHIPPED_BOARDS = ("7x6", "6x7", "7x7", "8x7", "8x8", "9x6")
TUNE_LOCK_SECONDS = 600.0  # a lock older than this was left by a tuner that died

_chosen: Path | None = None  # the folder numba caches the package's kernel in, once the portable kernel is on
_decided = False


def tag() -> str:
    """What a shipped folder is for: machine, Python, numba and baseline CPU."""
    import numba
    machine = platform.machine().lower()
    cpu = BASELINES.get(machine, ("none",))[0]
    return f"{machine}-py{sys.version_info[0]}{sys.version_info[1]}-numba{numba.__version__}-{cpu}"


def active() -> bool:
    """Whether this process runs the portable kernel (or builds it)."""
    return _chosen is not None


def holds(folder_name: str) -> bool:
    """Whether the portable kernel in use holds the compiled functions of the kernel
    folder ``folder_name`` (``kernel``, or a copy's module name)."""
    return _chosen is not None and (_chosen / folder_name).is_dir()


def choose() -> None:
    """Decide, once per process and before numba compiles or loads anything, whether
    the portable kernel is used: see the module docstring.  Called by :mod:`.jit`."""
    global _decided
    if _decided:
        return
    _decided = True
    build = os.environ.get(BUILD_ENV)
    if build:
        _switch_on(built_folder(Path(build)))
    elif os.environ.get(OFF_ENV) != "0" and _fits(shipped_folder()) and not tuned():
        with suppress(OSError):  # no writable cache folder: numba compiles for the host
            _switch_on(_seeded(shipped_folder()))


def shipped_folder() -> Path:
    return built_folder(KERNEL_DIR)


def built_folder(kernel_dir: Path) -> Path:
    """Where a package's kernel folder holds its portable kernel for this process's
    machine, Python and numba."""
    return kernel_dir / SHIPPED_DIR.name / tag()


def _fits(shipped: Path) -> bool:
    """Whether ``shipped`` is code for this numba, Python, machine and sources, that
    this CPU runs, with numba's CPU still to be chosen."""
    try:
        built_from = (shipped / SOURCES_FILE).read_text().strip()
    except OSError:
        return False
    return built_from == sources_hash() and host_runs_baseline() and _numba_cpu_free()


def host_runs_baseline(features: set[str] | None = None) -> bool:
    """Whether this CPU (or one with ``features``, LLVM's names) has the features of
    its machine's baseline; a machine without a baseline has none."""
    baseline = BASELINES.get(platform.machine().lower())
    if baseline is None:
        return False
    if features is None:
        features = _host_features()
    return baseline[1] <= features


def _host_features() -> set[str]:
    import llvmlite.binding as llvm
    return {name for name, present in llvm.get_host_cpu_features().items() if present}


def _numba_cpu_free() -> bool:
    """Neither the user nor a compilation chose numba's CPU already: no
    ``NUMBA_CPU_NAME``, no cache locators of the user's, and no code generator made."""
    from numba.core import caching, config
    from numba.core.registry import cpu_target
    return (config.CPU_NAME is None and config.CPU_FEATURES is None and not config.CACHE_LOCATOR_CLASSES
            and hasattr(caching, "InTreeCacheLocator") and hasattr(caching, "CacheImpl")
            and "_toplevel_target_context" not in cpu_target.__dict__)


def _seeded(shipped: Path) -> Path:
    """A writable copy of ``shipped`` in the kernel's cache folder, made once: its files
    hard links where the two folders share a file system (copying the 900 files
    took a second of a first start; numba writes an entry to a new file that it
    renames over the old, so never into a shared one), else copies."""
    folder = cache_root() / sources_hash() / f"portable-{shipped.name}"
    if not folder.is_dir():
        publish(folder, lambda staging: shutil.copytree(shipped, staging, copy_function=_link_or_copy))
    return folder


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _switch_on(root: Path) -> None:
    """numba's CPU set to the baseline, and the package's kernel files cached in ``root``."""
    global _chosen
    from numba.core import caching, config
    config.CPU_NAME = BASELINES[platform.machine().lower()][0]
    config.CPU_FEATURES = ""
    caching.CacheImpl._locator_classes.insert(0, _locator_class())
    _chosen = root


def _locator_class() -> type:
    """numba's in-tree cache locator, pointed at the portable kernel's folder for the
    package's kernel files (made at the first use: this module imports without numba)."""
    from numba.core.caching import InTreeCacheLocator

    class Locator(InTreeCacheLocator):  # type: ignore[misc]
        """The cache of a function of the package's kernel files or of a board's copy:
        ``<root>/<folder>``."""

        def __init__(self, py_func: Any, py_file: str) -> None:
            super().__init__(py_func, py_file)
            assert _chosen is not None
            self._cache_path = str(_chosen / Path(py_file).parent.name)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if _chosen is None or not _kernel_folder(Path(py_file).resolve().parent):
                return None
            return super().from_function(py_func, py_file)

    return Locator


def _kernel_folder(folder: Path) -> bool:
    """Whether ``folder`` holds the package's compiled files or a board's copy."""
    copies = (cache_root() / sources_hash()).resolve()
    return folder in [PACKAGE_DIR / name for name in CACHED_DIRS] or folder.parent == copies


def warmed_up(every_shipped_board: bool) -> None:
    """``c4engine warm-up`` compiled or loaded the whole kernels of its boards: a
    build of the portable kernel is stamped with the sources it was compiled from;
    a process running the host's code that did it for :data:`SHIPPED_BOARDS` marks
    it done (:func:`mark_tuned`)."""
    build = os.environ.get(BUILD_ENV)
    if build:
        (built_folder(Path(build)) / SOURCES_FILE).write_text(sources_hash() + "\n")
    elif every_shipped_board:
        mark_tuned()


# -- the host's code -------------------------------------------------------------
@functools.cache
def _tuned_stamp() -> Path | None:
    """The file that says the host's code of the shipped boards is in numba's cache:
    in the folder numba caches the kernel's files in (cleared with it), named after
    this CPU and the sources; None where numba has no such folder.  Found before
    the portable kernel's locator would answer for the kernel's files."""
    import llvmlite.binding as llvm
    from numba.core.caching import FunctionCache
    try:
        cache_dir = Path(FunctionCache(choose)._cache_path)
    except (OSError, RuntimeError):  # RuntimeError: numba finds no cache folder
        return None
    return cache_dir / f"c4engine-tuned-{llvm.get_host_cpu_name()}-{sources_hash()}.stamp"


def tuned() -> bool:
    """Whether the host's code of the shipped boards was compiled (:func:`mark_tuned`)."""
    stamp = _tuned_stamp()
    return stamp is not None and stamp.exists()


def mark_tuned() -> None:
    """Say that this process, running the host's code, has compiled or loaded the
    shipped boards' kernels: later starts load it rather than the portable kernel."""
    stamp = _tuned_stamp()
    if active() or stamp is None:
        return
    with suppress(OSError):
        stamp.touch()
    with suppress(OSError):
        _tune_lock().unlink()


def _tune_lock() -> Path:
    return cache_root() / sources_hash() / "tuning.lock"


def tune_in_background() -> subprocess.Popen[bytes] | None:
    """From a process on the portable kernel: compile the host's code of the shipped
    boards in another process, at the lowest priority, unless one is at it (a lock file
    in the kernel's cache folder) or ``C4ENGINE_TUNE=0``; that process, or None."""
    if not active() or os.environ.get(BUILD_ENV) or os.environ.get(TUNE_ENV) == "0" or not _take(_tune_lock()):
        return None
    command = [sys.executable, "-m", "c4engine", "warm-up", "--shipped"]
    nice = shutil.which("nice")
    return subprocess.Popen([nice, "-n", "19", *command] if nice else command, env={**os.environ, OFF_ENV: "0"},
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _take(lock: Path) -> bool:
    """Create ``lock``, or take over one older than TUNE_LOCK_SECONDS."""
    with suppress(OSError):
        if time.time() - lock.stat().st_mtime > TUNE_LOCK_SECONDS:
            lock.unlink()
    try:
        lock.touch(exist_ok=False)
    except OSError:
        return False
    return True
