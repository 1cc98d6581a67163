"""The search's buffer: lazily zeroed pages, their return to the system on a wipe,
faulting them in ahead of a search that wants them all, and huge pages for a
table that a long search fills.

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
HUGE_PAGE_BYTES = 2 << 20  # x86-64's and arm64's transparent huge page
THP_SETTING = "/sys/kernel/mm/transparent_hugepage/enabled"  # Linux: `always [madvise] never`; read at each call
SMAPS = "/proc/self/smaps"  # Linux: each mapping's pages, AnonHugePages among them


def allocate_zeros(words: int) -> np.ndarray:
    """``words`` int64 zeros in a private anonymous mapping.

    The operating system hands out zeroed pages as they are first touched, so
    even an 8 GB table is allocated at once and costs memory only where the
    search writes (the faults, a few microseconds per 4 kB page, are spread
    over the searches that first touch the pages).  4 kB pages unless
    :func:`advise_huge_pages` asks for more.  The mapping is a whole number of
    huge pages long (address space, not memory), which Linux places on a huge
    page's boundary, so that all of it can have them.
    Raises MemoryError when the system refuses the mapping."""
    length = -(-words * ENTRY_BYTES // HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES
    try:
        area = mmap.mmap(-1, length, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError as exc:
        raise MemoryError(f"cannot allocate {words * ENTRY_BYTES >> 20} MB: {exc.strerror}") from None
    import numpy as np  # here, not at import: see the module's docstring

    return np.frombuffer(area, dtype=np.int64, count=words)


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


def huge_page_setting(path: str | None = None) -> str:
    """The system's transparent huge pages: ``always``, ``madvise`` (on request, the
    Debian and Ubuntu default) or ``never``, the word ``path`` brackets; or
    ``unavailable`` where there is no such file (not Linux, or a kernel without them).
    ``path`` stands for :data:`THP_SETTING`, which is read when called (tests
    point it at a file of their own)."""
    try:
        with open(path or THP_SETTING, encoding="ascii") as setting:
            text = setting.read()
    except (OSError, ValueError):
        return "unavailable"
    chosen = text[text.find("[") + 1:text.find("]")] if "[" in text else ""
    return chosen or "unavailable"


def advise_huge_pages(buffer: np.ndarray) -> bool:
    """Ask for 2 MB pages over the whole of ``buffer`` (made by :func:`allocate_zeros`):
    each 2 MB of it then comes as one page when first touched, zeroed, and a long
    search over a large table spends far less of its time on the processor's
    page walks (a TLB entry covers 2 MB instead of 4 kB).  The price: a search
    that touches a few entries of each 2 MB makes all of it resident, and the
    kernel may compact memory to find free 2 MB.  So it is for tables a search
    fills (docs/design.md, "The table's memory").  Whether the advice stands: False
    where the system gives no huge pages (``never``, not Linux) or refuses the call;
    the table then keeps 4 kB pages, as without it."""
    if huge_page_setting() not in ("always", "madvise") or not hasattr(mmap, "MADV_HUGEPAGE"):
        return False
    try:
        _area(buffer).madvise(mmap.MADV_HUGEPAGE)
    except OSError:
        return False
    return True


def resident_bytes(buffer: np.ndarray, smaps_path: str = SMAPS) -> tuple[int, int] | None:
    """Bytes of ``buffer``'s memory resident now, and how many of them in huge pages,
    as the system reports them (``Rss`` and ``AnonHugePages`` of the mappings it
    spans, in ``smaps_path``, which may also hold a neighbouring allocation that
    the system merged into the buffer's mapping); None where the system does not
    say (not Linux)."""
    first = buffer.ctypes.data
    end, inside, totals = first + buffer.nbytes, False, {"Rss:": 0, "AnonHugePages:": 0}
    try:
        with open(smaps_path, encoding="ascii", errors="replace") as smaps:
            for line in smaps:
                fields = line.split()
                if fields and not fields[0].endswith(":"):  # a mapping's first line: its addresses
                    low, high = (int(bound, 16) for bound in fields[0].split("-"))
                    inside = low < end and first < high
                elif inside and len(fields) > 1 and fields[0] in totals:
                    totals[fields[0]] += int(fields[1]) << 10
    except (OSError, ValueError):
        return None
    return totals["Rss:"], totals["AnonHugePages:"]


def page_report(buffer: np.ndarray, asked: bool, advised: bool, smaps_path: str = SMAPS) -> str:
    """What pages ``buffer`` has, read back from the system rather than assumed: for the
    engine's ``info string`` and ``solve``'s summary.  ``asked``: huge pages were
    wanted; ``advised``: :func:`advise_huge_pages` took the request."""
    if not asked:
        return "4 kB pages, huge pages not asked for"
    if not advised:
        return f"4 kB pages, the system gives no huge pages (transparent huge pages {huge_page_setting()})"
    held = resident_bytes(buffer, smaps_path)
    if held is None:
        return "huge pages asked for, the system does not say how many it gave"
    resident, huge = held
    if huge:
        return f"{min(huge, buffer.nbytes) >> 20} MB of it in 2 MB huge pages"
    if not resident:
        return "huge pages asked for, none touched yet"
    return "4 kB pages, huge pages asked for but the system gave none (no free 2 MB blocks)"


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
