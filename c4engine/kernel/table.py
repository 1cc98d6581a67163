"""The transposition table's entry: packing, the key a position is stored under, probe and store.

An entry is one int64 (layout below and in docs/design.md, "The table entry"),
which x86-64 reads and writes atomically, so that threads share the table
without locks.
"""

from __future__ import annotations

import numpy as np

from ..rules.bits import WIDTH
from .jit import jit, mirror
from .layout import GENERATION, TT_SLOTS, TT_START

NO_MOVE = 7

# Table entry layout in one int64: the low 32 bits of the key (with the slot
# index, ``key % size`` for an odd size above 2**17, they identify a 49-bit key
# by the Chinese remainder theorem), the value, the depth, the bound type, the
# best move and the generation (bumping it empties the table without touching
# memory).  The key is the smaller of the position's and its mirror image's
# (see table_key); the move is then stored mirrored.
VALUE_SHIFT, DEPTH_SHIFT, FLAG_SHIFT, MOVE_SHIFT, GEN_SHIFT = 32, 48, 54, 56, 59
VALUE_OFFSET = 1 << 15
UPPER, LOWER, EXACT = 1, 2, 3
GENERATIONS = 16
MIN_TABLE_ENTRIES = (1 << 17) + 1


@jit
def tt_pack(key: int, value: int, depth: int, flag: int, move: int, generation: int) -> int:
    """One table entry as an int64 (see the layout above)."""
    return ((key & 0xFFFFFFFF) | ((value + VALUE_OFFSET) << VALUE_SHIFT) | (depth << DEPTH_SHIFT)
            | (flag << FLAG_SHIFT) | (move << MOVE_SHIFT) | (generation << GEN_SHIFT))


@jit
def table_key(current: int, mask: int) -> tuple[int, bool]:
    """The key a position is stored under, and whether it is its mirror image's.

    A position and its mirror image have the same score, so they share one
    entry: the smaller of the two keys.  ``current + mask`` adds column by
    column without a carry between columns (7 bits each), so mirroring the key
    mirrors the position.  The key stays a 49-bit number, which is all the
    partial-key argument of the layout needs."""
    key = current + mask
    mirrored = mirror(key)
    if mirrored < key:
        return mirrored, True
    return key, False


@jit
def stored_move(col: int, mirrored: bool) -> int:
    """A column as the entry of a mirrored key stores it, and back (the map is its own
    inverse); NO_MOVE stays NO_MOVE."""
    return WIDTH - 1 - col if mirrored and col < WIDTH else col


@jit
def tt_slot(mem: np.ndarray, key: int) -> int:
    """Where in ``mem`` the table keeps ``key``."""
    return mem[TT_START] + key % mem[TT_SLOTS]


@jit
def tt_lookup(mem: np.ndarray, slot: int, key: int) -> int:
    """The entry stored for ``key`` (at ``tt_slot(mem, key)``) in the current generation,
    or 0.  The caller passes the slot so that a node divides once, for its probe and
    its store."""
    entry = mem[slot]
    if entry == 0 or (entry & 0xFFFFFFFF) != (key & 0xFFFFFFFF):
        return 0
    if (entry >> GEN_SHIFT) & (GENERATIONS - 1) != mem[GENERATION]:
        return 0
    return entry


@jit
def tt_store(mem: np.ndarray, slot: int, key: int, value: int, depth: int, flag: int, col: int,
             mirrored: bool) -> None:
    """Store a node's result at its ``slot`` (see tt_lookup), in the current generation,
    with its best column as the entry of a mirrored key keeps it."""
    mem[slot] = tt_pack(key, value, depth, flag, stored_move(col, mirrored), mem[GENERATION])


@jit
def entry_value(entry: int) -> int:
    return ((entry >> VALUE_SHIFT) & 0xFFFF) - VALUE_OFFSET


@jit
def entry_depth(entry: int) -> int:
    return (entry >> DEPTH_SHIFT) & 63


@jit
def entry_flag(entry: int) -> int:
    return (entry >> FLAG_SHIFT) & 3


@jit
def entry_move(entry: int) -> int:
    return (entry >> MOVE_SHIFT) & 7
