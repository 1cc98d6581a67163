"""Where things lie in the searcher's one buffer, and how many table entries it holds.

The buffer is ``[ctx of thread n-1 | ... | ctx of thread 0 | busy table | table]``:
one kernel context per search thread, the busy table through which the threads
share out a node's children, then the transposition table.  Kept apart from
:mod:`.memory`, which only maps zeroed pages and must stay light enough for the
protocol's option table to import; these sizes come from the kernel's table and
layout, which load numpy and numba.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel.table import MIN_TABLE_ENTRIES
from .memory import ENTRY_BYTES

if TYPE_CHECKING:
    from ..kernel.specialise import Kernel

BUSY_TABLE_SLOTS = 4093  # positions being searched near the root, shared by the threads (negamax.busy_slot)


def busy_slots(threads: int) -> int:
    """The size of the busy table through which threads share out a node's children
    (see :func:`c4engine.kernel.busy_slot`): none for one thread."""
    return BUSY_TABLE_SLOTS if threads > 1 else 0


def table_start(kernel: Kernel, threads: int) -> int:
    """Where the transposition table begins in the buffer: after the contexts and
    the busy table."""
    return threads * kernel.layout.CTX_SIZE + busy_slots(threads)


def table_entries(kernel: Kernel, hash_mb: int) -> int:
    """The number of table entries for a size in MB: odd, so that ``key % size`` mixes
    the columns, and above 2**17 so that 32-bit partial keys stay unique."""
    entry_bytes = ENTRY_BYTES * kernel.table.ENTRY_WORDS
    return max(MIN_TABLE_ENTRIES, (hash_mb * (1 << 20) // entry_bytes) | 1)
