"""The kernel's one array, ``mem``: the context's slots, each ply's scratch, and their sizes.

``mem`` holds first the context (counters and flags, the books' addresses and sizes,
the exact solve's current probe and how many of its root's moves failed low,
whether the search is an exact solve, where the machine code of the recursion
and of the root search lies (:mod:`~c4engine.kernel.addresses`), where the
transposition table and the threads' busy table lie in ``mem`` and their sizes,
the evaluation weights, each ply's scratch, and, but in the exact solver's
kernel, the n-tuple network's state at the leaves, :mod:`~c4engine.kernel.ntuple`),
then the transposition table.  A ply's scratch holds its children that are left to
search, CHILD_WORDS each (the column, its ordering score, the position after
the child's forced moves (two bitboards of one word each, or two each on a board
past 64 bits), how many there were, and that position's proven
bounds), then the search order as indices into them, with room for each child
once more at the end (a child deferred because another thread searches it).
Why one array: see docs/design.md, "The kernel's memory".
"""

from __future__ import annotations

import numpy as np

from .constants import BOARD_WORDS, CELLS, FULL, WIDTH
from .evaluation import N_WEIGHTS
from .jit import entry, jit
from .ntuple import S_MADE, STATE_WORDS

INFINITE = 30_000
MAX_PLY = CELLS + 2

NODES, NODE_LIMIT, STOP, ABORTED, SELDEPTH, GENERATION = range(6)
BOOK_ADDRESS, BOOK_RECORDS, TT_START, TT_SLOTS, BUSY_START, BUSY_SLOTS = range(6, 12)
BUILT_ADDRESS, BUILT_ENTRIES, BUILT_STONES, BUILT_WEAK = range(12, 16)  # our own book (built_book.py)
PROBE = 16  # the Pons score whose null window the exact solve searches now, for progress reports
SEARCH_ADDRESS, NEGAMAX_ADDRESS = 17, 18  # where their machine code lies (kernel.addresses)
ROOT_FAILS = 19  # the moves at ply 0 that failed low in this search (search.probes reads it)
KEEP_DEEPER = 20  # 1 in an exact solve: the table keeps much deeper entries (table.tt_store)
WEIGHTS = 21
SCRATCH = WEIGHTS + N_WEIGHTS
C_COL, C_SCORE, C_CURRENT = range(3)
C_MASK = C_CURRENT + BOARD_WORDS  # a bitboard takes BOARD_WORDS words (jit.load_bits)
C_STONES = C_MASK + BOARD_WORDS
C_FLIPS, C_LO, C_HI = range(C_STONES + 1, C_STONES + 4)
CHILD_WORDS = C_HI + 1
ORDER = WIDTH * CHILD_WORDS
SCRATCH_PER_PLY = ORDER + 2 * WIDTH + 1
NETWORK_STATE = SCRATCH + MAX_PLY * SCRATCH_PER_PLY  # the leaves' n-tuple network state (ntuple.py)
CTX_SIZE = NETWORK_STATE + (STATE_WORDS if FULL else 0)  # the exact solver evaluates nothing


@entry
def begin_search(mem: np.ndarray, node_limit: int) -> None:
    """Reset the counters and flags for a new search, and mark the network state unmade
    (one call from Python instead of numpy writes, which matters when a whole
    solve takes microseconds)."""
    mem[NODES] = 0
    mem[ABORTED] = 0
    mem[SELDEPTH] = 0
    mem[ROOT_FAILS] = 0
    mem[KEEP_DEEPER] = 0
    mem[NODE_LIMIT] = node_limit
    if FULL:
        mem[NETWORK_STATE + S_MADE] = 0


@jit
def should_abort(mem: np.ndarray) -> bool:
    """Count a node and tell whether the search must unwind (stop flag or node limit)."""
    mem[NODES] += 1
    if mem[STOP] != 0 or mem[NODES] >= mem[NODE_LIMIT]:
        mem[ABORTED] = 1
    return mem[ABORTED] != 0
