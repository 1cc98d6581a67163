"""The bit tricks of :mod:`c4engine.bits`, compiled by numba for the search kernel.

The same source serves the rules (as plain Python) and the kernel (compiled
here), so the two can never disagree about what a four is.
"""

from __future__ import annotations

import numba

from . import bits

jit = numba.njit(cache=True, nogil=True)

popcount = jit(bits.popcount)
playable_cells = jit(bits.playable_cells)
winning_cells = jit(bits.winning_cells)
column_cells = jit(bits.column_cells)
smear_up = jit(bits.smear_up)
has_four = jit(bits.has_four)
mirror = jit(bits.mirror)
