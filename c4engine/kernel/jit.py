"""The bit tricks of :mod:`c4engine.rules.bits`, compiled by numba for the search kernel.

The same source serves the rules (as plain Python) and the kernel (compiled
here), so the two can never disagree about what a four is.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

import numba
from numba.core.caching import FunctionCache

from ..rules import bits, scores

PACKAGE = Path(__file__).resolve().parent.parent


def jitted_sources() -> list[Path]:
    """The files whose functions numba compiles, each also into the kernel: every
    module of the kernel, and the rules' bit tricks and scores."""
    rules = PACKAGE / "rules"
    return [*sorted((PACKAGE / "kernel").glob("*.py")), rules / "bits.py", rules / "scores.py"]


def drop_stale_entries(cache_dirs: Sequence[Path], sources: Sequence[Path]) -> None:
    """Delete the cache entries of ``sources`` older than the newest of them.

    numba keys a cached function on its own file only (a documented limit of its
    cache): a kernel cached before an edit to a file whose functions it compiles
    in (book.py, evaluation.py, bits.py) would go on running the old code, and
    tests and measurements with it.  An entry is an index ``<module>.<name>...nbi``
    and its data files ``...<n>.nbc``, in the cache folder of its source's folder;
    an installed package's files all predate its cache, so only an edit costs a
    compilation."""
    newest = max(source.stat().st_mtime for source in sources)
    modules = {source.stem for source in sources}
    for cache_dir in cache_dirs:
        _drop_older_entries(cache_dir, modules, newest)


def _drop_older_entries(cache_dir: Path, modules: set[str], newest: float) -> None:
    """Delete the entries of ``modules`` in ``cache_dir`` written before ``newest``."""
    for index in cache_dir.glob("*.nbi"):
        if index.name.split(".")[0] in modules and _older(index, newest):
            stem = index.name.removesuffix(".nbi")
            for entry in [index, *cache_dir.glob(f"{stem}.*.nbc")]:
                with suppress(OSError):  # gone (another process got there first) or not ours
                    entry.unlink()


def _older(path: Path, mtime: float) -> bool:
    """Whether ``path`` was last written before ``mtime``; not when it has just
    been deleted by another process starting at the same time."""
    try:
        return path.stat().st_mtime < mtime
    except OSError:
        return False


def _drop_stale_cache() -> None:
    """:func:`drop_stale_entries` for this package, in the folder numba's own locator
    chooses (beside the sources, or the user's cache when they are read-only); a
    cache it cannot read or change is left to numba."""
    with suppress(OSError, RuntimeError):  # RuntimeError: numba finds no cache folder
        cache_dirs = [Path(FunctionCache(function)._cache_path) for function in (_drop_stale_cache, bits.popcount)]
        drop_stale_entries(cache_dirs, jitted_sources())


_drop_stale_cache()  # before any function below is compiled or loaded
jit = numba.njit(cache=True, nogil=True)

popcount = jit(bits.popcount)
playable_cells = jit(bits.playable_cells)
winning_cells = jit(bits.winning_cells)
column_cells = jit(bits.column_cells)
smear_up = jit(bits.smear_up)
has_four = jit(bits.has_four)
mirror = jit(bits.mirror)
to_internal = jit(scores.to_internal)
to_pons = jit(scores.to_pons)
win_now = jit(scores.win_now)
