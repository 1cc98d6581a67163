"""perft: the move sequences of a given length, which check the move generation
(the protocol's ``perft``).

A module of its own, imported at the first ``perft`` (:meth:`Kernel.perft
<c4engine.kernel.specialise.Kernel.perft>`): a recursive function is compiled
eagerly, with its signature (numba's cache cannot reload one typed lazily), and
a board's first solve need not wait for it.
"""

from __future__ import annotations

import numba

from .constants import BOARD_MASK, WIDTH
from .jit import BITS_TYPE, ENTRY_OPTIONS, column_cells, has_line, playable_cells


@numba.njit(numba.int64(BITS_TYPE, BITS_TYPE, numba.int64), **ENTRY_OPTIONS)
def perft(current: int, mask: int, depth: int) -> int:
    """Move sequences of exactly ``depth`` plies from a position; a finished game has
    no moves, so lines that end earlier count for nothing (as in chess perft)."""
    if depth == 0:
        return 1
    if has_line(current ^ mask) or mask == BOARD_MASK:
        return 0
    total = 0
    possible = playable_cells(mask)
    for col in range(WIDTH):
        move = possible & column_cells(col)
        if move != 0:
            total += perft(current ^ mask, mask | move, depth - 1)
    return total
