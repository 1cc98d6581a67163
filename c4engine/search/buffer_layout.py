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
    from ..rules.board import Board

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


def positions_after(pos: Board) -> int:
    """How many positions can follow ``pos`` (itself included), at most: each column
    with ``f`` empty cells gets one of ``2**(f+1) - 1`` stone patterns (none, one
    stone of either colour, ...), whatever the others get.  A search from ``pos``
    stores no more entries than that."""
    geometry = pos.geometry
    count = 1
    for col in range(geometry.width):
        count *= (1 << (geometry.height - pos.column_height(col) + 1)) - 1
    return count


def fitted_entries(kernel: Kernel, hash_mb: int, pos: Board) -> int:
    """The table entries a solve of ``pos`` uses: twice the positions that can follow
    it (so that few collide), odd and at least the table's minimum, at most the
    table of ``hash_mb`` MB."""
    return min(table_entries(kernel, hash_mb), max(MIN_TABLE_ENTRIES, (2 * positions_after(pos)) | 1))
