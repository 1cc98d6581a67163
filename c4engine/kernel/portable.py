"""The portable kernel: 7x6's compiled code for a baseline CPU, shipped in the wheel.

numba caches a function under a key of its signature, the machine's target
triple, the CPU's name and features, and its bytecode, in an index stamped with
numba's version and a hash of the source file's content (numba 0.68,
``numba/core/caching.py``): not its path, nor its modification time.  Code
compiled with ``NUMBA_CPU_NAME`` set to a baseline such as ``x86-64-v2`` and no
extra features runs on every CPU that has the baseline's, so the wheel can carry
it, built when the wheel is built (``setup.py``), in ``portable/<tag>`` beside
this file, the tag naming the machine, Python and numba it is for.

A process uses it when it fits (:func:`choose`): the same numba, Python, machine
and kernel sources, a CPU with the baseline's features, and numba's CPU not
chosen already (by ``NUMBA_CPU_NAME``, or by a compilation).  It then copies the shipped
files to a folder of the kernel's cache (numba may add entries, and the package
may be read-only), points numba's cache of the package's kernel files there
(:func:`_locator_class`), and compiles nothing of 7x6's kernel: the first start
loads it.  Where anything does not fit, numba compiles for the host as before;
numba's own key keeps a mismatched entry from ever loading.

The baseline's code searches as fast as code tuned to the host (docs/figures.md,
"Start-up"), so the portable kernel stays in use; ``C4ENGINE_PORTABLE=0`` turns
it off, and numba then compiles for the host.  One numba process has one CPU
setting: a process that uses it compiles its other boards for the baseline too
(docs/design.md, "The portable kernel").
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

from .sources import KERNEL_DIR, PACKAGE_DIR, cache_root, publish, sources_hash

SHIPPED_DIR = KERNEL_DIR / "portable"
CACHED_DIRS = ("kernel", "rules")  # the package's folders whose compiled functions the portable kernel holds
SOURCES_FILE = "SOURCES"  # in a shipped folder: the hash of the kernel's sources it was compiled from
OFF_ENV = "C4ENGINE_PORTABLE"  # "0": never use the portable kernel (the host's code is compiled)
BUILD_ENV = "C4ENGINE_PORTABLE_BUILD"  # a package's kernel folder: compile its portable kernel (the wheel's build)
# Per machine: the baseline CPU the portable code is compiled for, and the features
# a CPU needs to run it (LLVM's names; x86-64-v2 is every x86-64 CPU since 2009).
BASELINES = {
    "x86_64": ("x86-64-v2", frozenset({"cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3"})),
    "aarch64": ("generic", frozenset()),
    "arm64": ("generic", frozenset()),
}

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
    elif os.environ.get(OFF_ENV) != "0" and _fits(shipped_folder()):
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
            and hasattr(caching, "InTreeCacheLocator") and hasattr(caching, "CacheImpl") and "_toplevel_target_context" not in cpu_target.__dict__)


def _seeded(shipped: Path) -> Path:
    """A writable copy of ``shipped`` in the kernel's cache folder, made once."""
    folder = cache_root() / sources_hash() / f"portable-{shipped.name}"
    if not folder.is_dir():
        publish(folder, lambda staging: shutil.copytree(shipped, staging))
    return folder


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
        """The cache of a function of the package's kernel files: ``<root>/<folder>``."""

        def __init__(self, py_func: Any, py_file: str) -> None:
            super().__init__(py_func, py_file)
            assert _chosen is not None
            self._cache_path = str(_chosen / Path(py_file).parent.name)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if _chosen is None or Path(py_file).resolve().parent not in [PACKAGE_DIR / name for name in CACHED_DIRS]:
                return None
            return super().from_function(py_func, py_file)

    return Locator


def warmed_up_7x6() -> None:
    """``c4engine warm-up`` compiled or loaded the whole of 7x6's kernel: a build of the
    portable kernel is stamped with the sources it was compiled from."""
    build = os.environ.get(BUILD_ENV)
    if build:
        (built_folder(Path(build)) / SOURCES_FILE).write_text(sources_hash() + "\n")
