"""The transposition table's entry: packing, the key a position is stored under, probe and store.

An entry is one int64 (layout below and in docs/design.md, "The table entry"),
which x86-64 reads and writes atomically, so that threads share the table
without locks.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .constants import BOARD_WORDS, CELLS, KEY_BITS, WIDTH
from .jit import fold, high_word, jit, low_word, mirror
from .layout import GENERATION, KEEP_DEEPER, TT_SLOTS, TT_START

# Table entry layout in one int64: the low 32 bits of the key (with the slot
# index, ``key % size`` for an odd size above 2**17, they identify a key of up to
# 49 bits by the Chinese remainder theorem), the value (16 bits), the depth
# (DEPTH_BITS: 6 up to 63 cells), the bound type (2), the best move (MOVE_BITS:
# the columns and NO_MOVE) and the generation (4; bumping it empties the table
# without touching memory).  The key is the smaller of the position's and its
# mirror image's (see table_key); the move is then stored mirrored.
#
# A longer key (more than 49 bits: 8x6, 7x7, 8x7, ...) or a move field too wide
# for the word (more than 15 columns) takes two words per entry, as Hyatt's
# lockless table does: the data word (the same fields without the key bits) and
# the full key XORed with it.  A probe accepts an entry only when the two words
# XOR to its key, so a position is never taken for another (the full key is
# compared), and a pair torn by two threads writing at once is refused as a miss.
#
# A key past 64 bits (8x8, 9x7, ...: docs/design.md, "Boards past 64 bits") is
# kept whole the same way: its low word XORed with the data word, and its high
# word in the data word's spare top bits (HIGH_KEY_SHIFT), or, when those are too
# few (10x10, 11x10), in a third word XORed with the data word.  Its slot is the
# key folded to 64 bits (jit.fold) modulo the size.
MOVE_BITS = max(3, WIDTH.bit_length())
NO_MOVE = (1 << MOVE_BITS) - 1
PARTIAL_KEY_BITS = 32
MIN_TABLE_ENTRIES = (1 << 17) + 1
DEPTH_BITS = max(6, CELLS.bit_length())
ONE_WORD = KEY_BITS <= PARTIAL_KEY_BITS + 17 and PARTIAL_KEY_BITS + 22 + DEPTH_BITS + MOVE_BITS <= 64
KEY_FIELD = (1 << PARTIAL_KEY_BITS) - 1 if ONE_WORD else 0
VALUE_SHIFT = PARTIAL_KEY_BITS if ONE_WORD else 0
DEPTH_SHIFT = VALUE_SHIFT + 16
FLAG_SHIFT = DEPTH_SHIFT + DEPTH_BITS
MOVE_SHIFT = FLAG_SHIFT + 2
GEN_SHIFT = MOVE_SHIFT + MOVE_BITS
HIGH_KEY_SHIFT = GEN_SHIFT + 4
HIGH_KEY_BITS = KEY_BITS - 64
HIGH_KEY_FIELD = (1 << max(0, HIGH_KEY_BITS)) - 1
HIGH_KEY_IN_DATA = BOARD_WORDS == 2 and HIGH_KEY_SHIFT + HIGH_KEY_BITS <= 63
ENTRY_WORDS = 1 if ONE_WORD else 3 if BOARD_WORDS == 2 and not HIGH_KEY_IN_DATA else 2
DATA = ENTRY_WORDS - 1  # the data word's place in an entry
# Entries that hold their whole key (more than one word) come in buckets of two
# adjacent entries, either of which may hold a key (docs/design.md, "The table
# entry"); a one-word entry's slot is part of its key, so it has one place only.
WAYS = 1 if ENTRY_WORDS == 1 else 2
VALUE_OFFSET = 1 << 15
UPPER, LOWER, EXACT = 1, 2, 3
GENERATIONS = 16
# In an exact solve (mem[KEEP_DEEPER]), a store leaves another position's entry of
# the same generation that was searched more than this many plies deeper (with that
# many more empty cells), a stand-in for the subtree's size, which c4 keeps in 5 bits
# of its entry.  Not in the depth-limited search: the engine keeps its table from
# one move to the next, and there the deep entries of earlier moves would hold
# their slots (100 ms a move, 600 positions: 5 blunders against 1).
# Measured on one thread with a 16 MB table (docs/design.md, "The table entry"):
# the weak 7x6 solve takes 85.7 M nodes always replacing, 68.7 M with 6; 0
# (depth-preferred) costs the small boards 20-26% more nodes.
KEEP_DEPTH = 6
DEPTH_FIELD = (1 << DEPTH_BITS) - 1  # the depth's bits, shifted down


@jit
def tt_pack(key: int, value: int, depth: int, flag: int, move: int, generation: int) -> int:
    """One table entry as an int64 (see the layout above)."""
    return ((low_word(key) & KEY_FIELD) | ((value + VALUE_OFFSET) << VALUE_SHIFT) | (depth << DEPTH_SHIFT)
            | (flag << FLAG_SHIFT) | (move << MOVE_SHIFT) | (generation << GEN_SHIFT))


@jit
def table_key(current: int, mask: int) -> tuple[int, bool]:
    """The key a position is stored under, and whether it is its mirror image's.

    A position and its mirror image have the same score, so they share one
    entry: the smaller of the two keys.  ``current + mask`` adds column by
    column without a carry between columns (H+1 bits each), so mirroring the key
    mirrors the position.  The key has KEY_BITS bits, which decides the entry's
    size (see the layout above)."""
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
    """Where in ``mem`` the table keeps ``key`` (``mem[TT_SLOTS]`` entries of ENTRY_WORDS):
    its entry's place, or its bucket's first entry's (WAYS)."""
    if WAYS == 1:
        return mem[TT_START] + (fold(key) % mem[TT_SLOTS]) * ENTRY_WORDS
    buckets = mem[TT_SLOTS] // WAYS
    buckets -= 1 - buckets % 2  # odd, as the one-way table's size: a power of 2 would keep only the low columns
    return mem[TT_START] + (fold(key) % buckets) * (WAYS * ENTRY_WORDS)


@intrinsic
def _prefetch(typingctx, array, index):  # type: ignore[no-untyped-def]
    """Ask the processor to bring ``array[index]``'s cache line in (LLVM's prefetch:
    a read, kept in every cache level); no fault, no result."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        address = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(8).as_pointer())
        flag = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [address.type, flag, flag, flag]), "llvm.prefetch.p0")
        builder.call(function, [address, flag(0), flag(3), flag(1)])
        return context.get_dummy_value()
    return types.void(array, types.int64), codegen


@jit
def tt_prefetch(mem: np.ndarray, slot: int) -> None:
    """Start loading the entry (or bucket) at ``slot`` (see tt_slot), for a lookup a little later."""
    _prefetch(mem, slot + DATA)
    if WAYS > 1:
        _prefetch(mem, slot + WAYS * ENTRY_WORDS - 1)


@jit
def tt_lookup(mem: np.ndarray, slot: int, key: int) -> int:
    """The entry stored for ``key`` (at ``tt_slot(mem, key)``, in either entry of its
    bucket) in the current generation, or 0.  The caller passes the slot so that a
    node divides once, for its probe and its store."""
    entry = entry_at(mem, slot, key)
    if WAYS > 1 and entry == 0:
        entry = entry_at(mem, slot + ENTRY_WORDS, key)
    return entry


@jit
def entry_at(mem: np.ndarray, slot: int, key: int) -> int:
    """The entry at ``slot`` if it holds ``key`` in the current generation, else 0."""
    if ENTRY_WORDS == 1:
        entry = mem[slot]
        if entry == 0 or (entry & KEY_FIELD) != (key & KEY_FIELD):
            return 0
    elif BOARD_WORDS == 1:
        entry = mem[slot + 1]
        if entry == 0 or mem[slot] ^ entry != key:
            return 0
    else:
        entry = mem[slot + DATA]
        if entry == 0 or mem[slot] ^ entry != low_word(key) or stored_high_key(mem, slot, entry) != high_word(key):
            return 0
    if (entry >> GEN_SHIFT) & (GENERATIONS - 1) != mem[GENERATION]:
        return 0
    return entry


@jit
def tt_store(mem: np.ndarray, slot: int, key: int, value: int, depth: int, flag: int, col: int,
             mirrored: bool) -> None:
    """Store a node's result at its ``slot`` (see tt_lookup), in the current generation,
    with its best column as the entry of a mirrored key keeps it; unless, in an
    exact solve, the entry it would replace is another position's of this
    generation searched more than KEEP_DEPTH plies deeper, which cost more to find.
    A bucket (see replaced_way) always stores: it keeps the deeper entry anyway."""
    if WAYS > 1:
        slot = replaced_way(mem, slot, key)
    old = mem[slot + DATA]
    if (WAYS == 1 and mem[KEEP_DEEPER] and current_depth(mem, old) > depth + KEEP_DEPTH
            and entry_at(mem, slot, key) == 0):
        return
    entry = tt_pack(key, value, depth, flag, stored_move(col, mirrored), mem[GENERATION])
    if ENTRY_WORDS == 1:
        mem[slot] = entry
    elif BOARD_WORDS == 1:
        mem[slot] = key ^ entry
        mem[slot + 1] = entry
    elif HIGH_KEY_IN_DATA:
        entry |= high_word(key) << HIGH_KEY_SHIFT
        mem[slot] = low_word(key) ^ entry
        mem[slot + 1] = entry
    else:
        mem[slot] = low_word(key) ^ entry
        mem[slot + 1] = high_word(key) ^ entry
        mem[slot + 2] = entry


@jit
def current_depth(mem: np.ndarray, data: int) -> int:
    """The depth of an entry whose data word is ``data``; -1 for an empty slot or an
    entry of another generation, which a store may take at no loss."""
    if data == 0 or (data >> GEN_SHIFT) & (GENERATIONS - 1) != mem[GENERATION]:
        return -1
    return entry_depth(data)


@jit
def replaced_way(mem: np.ndarray, slot: int, key: int) -> int:
    """The entry of the bucket at ``slot`` that a store of ``key`` writes: the one that
    holds ``key``, else in an exact solve the shallower one (the deeper cost more
    nodes to find), else the first (the depth-limited search replaces always, as
    with one way: see KEEP_DEPTH)."""
    second = slot + ENTRY_WORDS
    if entry_at(mem, second, key) != 0:
        return second
    if entry_at(mem, slot, key) != 0 or not mem[KEEP_DEEPER]:
        return slot
    if current_depth(mem, mem[second + DATA]) < current_depth(mem, mem[slot + DATA]):
        return second
    return slot


@jit
def stored_high_key(mem: np.ndarray, slot: int, entry: int) -> int:
    """The high word of the key an entry of a board past 64 bits holds (``entry`` its
    data word): in the data word's top bits, or in the word XORed with it."""
    if HIGH_KEY_IN_DATA:
        return (entry >> HIGH_KEY_SHIFT) & HIGH_KEY_FIELD
    return mem[slot + 1] ^ entry


@jit
def entry_value(entry: int) -> int:
    return ((entry >> VALUE_SHIFT) & 0xFFFF) - VALUE_OFFSET


@jit
def entry_depth(entry: int) -> int:
    return (entry >> DEPTH_SHIFT) & DEPTH_FIELD


@jit
def entry_flag(entry: int) -> int:
    return (entry >> FLAG_SHIFT) & 3


@jit
def entry_move(entry: int) -> int:
    return (entry >> MOVE_SHIFT) & NO_MOVE
