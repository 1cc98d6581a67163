"""The bit tricks of :mod:`c4engine.rules.bits`, compiled by numba for the search kernel.

The same source serves the rules (as plain Python) and the kernel (compiled
here), so the two can never disagree about what a line is.  The rules pass a
board's constants as arguments; the kernel's copies (:func:`bound`) take this
kernel's (:mod:`c4engine.kernel.constants`) as their defaults, which numba takes
as compile-time constants:
LLVM inlines the small functions and folds the constants, so the loops over
directions and row lengths unroll into the code a fixed-size kernel would have.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

from ..rules import bits, scores
from .constants import BOARD_MASK, BOARD_WORDS, BOTTOM_MASK, CELLS, COLUMN_MASK, CONNECT, H1, HEIGHT, WIDTH
from .int128 import high_word, int128, join_words, low_word
from .int128 import popcount as popcount_int128
from .portable import choose as choose_portable_kernel
from .typing_memo import remember_typing

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


if __package__ == "c4engine.kernel":  # the copies for other boards are keyed on their sources' hash
    _drop_stale_cache()  # before any function below is compiled or loaded
choose_portable_kernel()  # before numba's first compilation fixes its CPU
remember_typing()
# A compiled function called from Python needs a wrapper that converts its arguments,
# compiled and optimised with it: a fifth of a board's compilation.  Only the entry
# points (``entry``) get one, on every board (7x6 too: its first start is the
# engine's); the others (``jit``) are called from compiled code only, and from
# Python they raise (:class:`Internal`).  No function is taken as a C callback, so
# none gets that wrapper.
ENTRY_OPTIONS = {"cache": True, "nogil": True, "no_cfunc_wrapper": True}
INNER_OPTIONS = {**ENTRY_OPTIONS, "no_cpython_wrapper": True}


class Internal(CPUDispatcher):
    """A kernel function compiled without a Python wrapper: called from Python it
    raises TypeError, where numba would jump to the wrapper it never made.  Tests
    call one from a compiled function."""

    def __call__(self, *args: Any, **kws: Any) -> Any:
        raise TypeError(f"{self.py_func.__qualname__} is internal to the kernel: call it from compiled code "
                        "(an entry point, or numba.njit in a test)")


def internal(dispatcher: Any) -> Any:
    """``dispatcher``, compiled with INNER_OPTIONS, as an :class:`Internal`."""
    dispatcher.__class__ = Internal
    return dispatcher


def jit(function: Callable[..., Any]) -> Any:
    """``function`` compiled as an internal kernel function (see INNER_OPTIONS)."""
    return internal(numba.njit(**INNER_OPTIONS)(function))


entry = numba.njit(**ENTRY_OPTIONS)

to_internal = jit(scores.to_internal)
to_pons = jit(scores.to_pons)


def bound(function: Callable[..., Any], *constants: Any, **compiled: Any) -> Any:
    """``function`` of bits.py or scores.py compiled with its last parameters taking this
    kernel's ``constants`` when a call leaves them out, as the kernel's calls do:
    numba types a left-out argument as its value, a literal, and lowers it as a
    constant, which one compiled function does where a wrapper passing the
    constants would be a second one to compile.  ``compiled`` names the compiled
    functions of bits.py that ``function`` calls: numba calls only compiled
    functions, so the copy it compiles finds them under their names (the rules go
    on calling the plain ones)."""
    namespace = {**function.__globals__, **compiled}
    clone = types.FunctionType(function.__code__, namespace, function.__name__, constants)
    clone.__qualname__, clone.__module__ = function.__qualname__, function.__module__
    return jit(clone)


playable_cells = bound(bits.playable_cells, BOTTOM_MASK, BOARD_MASK)
smear_up = bound(bits.smear_up, HEIGHT, BOARD_MASK)
line_fits = bound(bits.line_fits, WIDTH, HEIGHT, CONNECT)
line_starts = bound(bits.line_starts, CONNECT)
has_line = bound(bits.has_line, WIDTH, HEIGHT, CONNECT, line_fits=line_fits, line_starts=line_starts)
winning_cells = bound(bits.winning_cells, BOARD_MASK, WIDTH, HEIGHT, CONNECT, line_fits=line_fits)
mirror = bound(bits.mirror, WIDTH, HEIGHT)
win_now = bound(scores.win_now, CELLS)

# A bitboard's numba type, and how it sits in the kernel's int64 array: one word,
# or two on a board past 64 bits (docs/design.md, "Boards past 64 bits").  On a board
# of 64 bits these compile to what the kernel had before them (the array access
# itself, the key itself).
BITS_TYPE = numba.int64 if BOARD_WORDS == 1 else int128
if BOARD_WORDS == 1:
    popcount = jit(bits.popcount)
    column_cells = bound(bits.column_cells, HEIGHT)

    @jit
    def load_bits(mem: np.ndarray, at: int) -> int:
        return mem[at]

    @jit
    def store_bits(mem: np.ndarray, at: int, value: int) -> None:
        mem[at] = value

    @jit
    def fold(key: int) -> int:
        """A key as one int64, for the slot of the table and the busy table: the key."""
        return key
else:
    popcount = popcount_int128

    @jit
    def load_bits(mem: np.ndarray, at: int) -> int:
        return join_words(mem[at], mem[at + 1])

    @jit
    def store_bits(mem: np.ndarray, at: int, value: int) -> None:
        mem[at] = low_word(value)
        mem[at + 1] = high_word(value)

    @jit
    def fold(key: int) -> int:
        """A key as one int64, for the slot of the table and the busy table: its low word
        with its high one mixed in (Fibonacci hashing's multiplier); the table checks
        the whole key."""
        return low_word(key) ^ (high_word(key) * -7046029254386353131)

    @jit
    def column_cells(col: int) -> int:
        return COLUMN_MASK << (col * H1)
