"""The search's buffer: lazily zeroed pages, and their return to the system on a wipe.

Light on purpose (the standard library at import, numpy when a buffer is made):
the protocol's option table reads the default table size from here, and the
protocol process and the command line must start without numpy or the kernel.
"""

from __future__ import annotations

import mmap
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import numpy as np

DEFAULT_HASH_MB = 16  # the Hash option's default; protocol.md ("Memory") says why
ENTRY_BYTES = 8
WIPE_BY_WRITING_MB = 256  # a larger table is wiped by handing its pages back (see Searcher.clear)


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
    area = cast(mmap.mmap, cast(memoryview, buffer.base).obj)
    page_start = -(-first * ENTRY_BYTES // mmap.PAGESIZE) * mmap.PAGESIZE
    buffer[first:page_start // ENTRY_BYTES] = 0
    if page_start < len(area):
        area.madvise(mmap.MADV_DONTNEED, page_start, len(area) - page_start)
