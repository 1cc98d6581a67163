"""The search's buffer: lazily zeroed pages, their return to the system on a wipe, and
faulting them in ahead of a search that wants them all.

Light on purpose (the standard library at import, numpy when a buffer is made):
the protocol's option table reads the default table size from here, and the
protocol process and the command line must start without numpy or the kernel.
"""

from __future__ import annotations

import mmap
import os
import sys
from contextlib import suppress
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import numpy as np

DEFAULT_HASH_MB = 16  # the Hash option's default; protocol.md ("Memory") says why
ENTRY_BYTES = 8
WIPE_BY_WRITING_MB = 256  # a larger table is wiped by handing its pages back (see Searcher.clear)
MADV_POPULATE_WRITE = 23  # Linux 5.14 on (Python's mmap names it from 3.14 only)


def allocate_zeros(words: int) -> np.ndarray:
    """``words`` int64 zeros in a private anonymous mapping.

    The operating system hands out zeroed pages as they are first touched, so
    even an 8 GB table is allocated at once and costs memory only where the
    search writes (the faults, a few microseconds per 4 kB page, are spread
    over the searches that first touch the pages).  No transparent huge pages:
    faulting in 2 MB pages (with the kernel compacting memory for them) slows the
    first search on a fresh table several times over, and makes nearly all of a
    large table resident after a short search.
    Raises MemoryError when the system refuses the mapping."""
    try:
        area = mmap.mmap(-1, words * ENTRY_BYTES, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError as exc:
        raise MemoryError(f"cannot allocate {words * ENTRY_BYTES >> 20} MB: {exc.strerror}") from None
    import numpy as np  # here, not at import: see the module's docstring

    return np.frombuffer(area, dtype=np.int64)


def forget_pages(buffer: np.ndarray, first: int) -> None:
    """Zero ``buffer[first:]`` (``buffer`` made by :func:`allocate_zeros`) without writing
    it: its whole pages go back to the system, which maps zeroed ones on the next
    touch; only the partial page at the start is written."""
    area, page_start = _area(buffer), _page_start(first)
    buffer[first:page_start // ENTRY_BYTES] = 0
    if page_start < len(area):
        area.madvise(mmap.MADV_DONTNEED, page_start, len(area) - page_start)


def fault_in(buffer: np.ndarray, first: int, end: int | None = None) -> None:
    """Map every page of ``buffer[first:end]`` now, zeroed and writable, in one system
    call (``buffer`` made by :func:`allocate_zeros`; pages already mapped keep their data).

    For a search that will touch most of a table: faulted in one by one, as the
    search first reads then writes each, the pages cost more system time (1.9 us
    a page here, against 1.3 us), and that inside the search's timing.  Where the
    system has no such call (before Linux 5.14, other systems), or the pages would
    take more than half the free memory (a large ``--hash`` must not push the
    machine into swapping), they stay lazy."""
    area, page_start = _area(buffer), _page_start(first)
    length = min(len(area), (len(buffer) if end is None else end) * ENTRY_BYTES) - page_start
    if sys.platform.startswith("linux") and 0 < length <= free_memory() // 2:
        with suppress(OSError):
            area.madvise(MADV_POPULATE_WRITE, page_start, length)


def free_memory() -> int:
    """Bytes of physical memory free now (0 where the system does not say)."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 0


def _area(buffer: np.ndarray) -> mmap.mmap:
    return cast(mmap.mmap, cast(memoryview, buffer.base).obj)


def _page_start(word: int) -> int:
    """The byte offset of the first page boundary at or after ``word``."""
    return -(-word * ENTRY_BYTES // mmap.PAGESIZE) * mmap.PAGESIZE
