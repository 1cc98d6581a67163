"""The search kernel: negamax alpha-beta over bitboards, compiled by numba.

One recursive function serves both jobs of the engine.  With a depth that
reaches the end of the game it is Pascal Pons' exact solver (null windows,
score bounds from the number of stones, never a move that hands the opponent
a four, moves ordered by the threats they create, a transposition table of
bounds); with a smaller depth it is a depth-limited search that calls the
threat evaluation at its leaves.  Both share one table: an entry records the
depth it was searched to, capped at the number of empty cells, so an entry
from an exact search serves any later search and a shallow one never passes
for exact.

Scores (internal): a proven result with Pons score ``s`` (see DESIGN.md) is
``MATE + s`` for a win and ``-MATE + s`` for a loss; a draw is 0; heuristic
values stay strictly between ``-MATE`` and ``MATE``.  Pons scores count the
stones on the board when the game ends, not the distance from the root, so
they need no adjustment when they move up the tree or through the table.

The opening book's 12-stone table (:mod:`c4engine.book`) is probed where the
search reaches 12 stones: its scores are exact, so they end the search there
whatever the depth.  The book stays in its read-only file mapping, shared by
every engine process; the context holds its address and record count (both 0
without a book).

Only the recursion and the solver's driver loop are compiled: the loops over
the root moves live in :mod:`c4engine.search`, in Python.  They cost
microseconds per iteration there, while every compiled function that calls
the recursion costs seconds of compilation at the engine's first start, which
must answer ``isready`` within 15 s.

All state lives in one int64 array owned by the caller (:mod:`c4engine.search`),
``mem``: the context (counters, flags, evaluation weights, per-ply scratch)
and, from ``mem[TT_START]`` on, the transposition table.  Search threads
share one table: each gets its own view of the caller's buffer, starting at
its own context, with ``mem[TT_START]`` measured from there (lazy SMP; an
entry is one int64, which x86-64 reads and writes atomically, so no locks).
A helper thread's ``mem[JITTER_SEED]`` is not 0: it perturbs the move order
near the root so that the threads take different paths.
One array, because numba passes every array as a structure of seven words:
with four arrays each recursive call copied 28 words, and merging them made
the solver about a quarter faster.  ``mem[STOP]`` may be set by another Python
thread at any time; the recursion polls it at every node (the functions run
with ``nogil``) and unwinds at once.
"""

from __future__ import annotations

import numba
import numpy as np

from . import scores
from .bits import BOARD_MASK, CELLS, WIDTH
from .book import NOT_IN_BOOK, SCORE_STONES as BOOK_STONES, book_score
from .evaluation import N_TERMS, evaluate
from .scores import MATE
from .jitbits import column_cells, has_four, jit, playable_cells, popcount, winning_cells

INFINITE = 30_000
NO_MOVE = 7
MAX_PLY = CELLS + 2
COLUMN_ORDER = (3, 2, 4, 1, 5, 0, 6)  # centre first: central columns take part in more fours

# The one array the kernel is given, ``mem``: first the context (counters and
# flags, the book's address and size, where the table lies in ``mem``, the
# thread's jitter seed, the evaluation weights, and for each ply 16 slots of
# scratch holding (column, ordering score) pairs), then the table.
NODES, NODE_LIMIT, STOP, ABORTED, SELDEPTH, GENERATION = range(6)
BOOK_ADDRESS, BOOK_RECORDS, TT_START, TT_SLOTS, JITTER_SEED = range(6, 11)
WEIGHTS = 11
SCRATCH = WEIGHTS + N_TERMS
SCRATCH_PER_PLY = 16
CTX_SIZE = SCRATCH + MAX_PLY * SCRATCH_PER_PLY

# Table entry layout in one int64: the low 32 bits of the key (with the slot
# index, ``key % size`` for a size above 2**17, they identify a 49-bit key),
# the value, the depth, the bound type, the best move and the generation
# (bumping it empties the table without touching memory).
VALUE_SHIFT, DEPTH_SHIFT, FLAG_SHIFT, MOVE_SHIFT, GEN_SHIFT = 32, 48, 54, 56, 59
VALUE_OFFSET = 1 << 15
UPPER, LOWER, EXACT = 1, 2, 3
GENERATIONS = 16
MIN_TABLE_ENTRIES = (1 << 17) + 1
JITTER_PLIES = 4
JITTER_MULTIPLIER = 0x2545F4914F6CDD1D  # odd, below 2**63: a multiplicative hash in int64

# The recursive function is compiled eagerly with one signature: numba's cache
# cannot reload a recursive function typed lazily (it crashes on reload).
NEGAMAX_SIGNATURE = numba.int64(*[numba.int64] * 7, numba.int64[::1])


to_internal = jit(scores.to_internal)
to_pons = jit(scores.to_pons)
win_now = jit(scores.win_now)


@jit
def tt_pack(key: int, value: int, depth: int, flag: int, move: int, generation: int) -> int:
    """One table entry as an int64 (see the layout above)."""
    return ((key & 0xFFFFFFFF) | ((value + VALUE_OFFSET) << VALUE_SHIFT) | (depth << DEPTH_SHIFT)
            | (flag << FLAG_SHIFT) | (move << MOVE_SHIFT) | (generation << GEN_SHIFT))


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


@jit
def non_losing_moves(current: int, mask: int) -> int:
    """Playable cells that do not let the opponent win at once (Pons' "anticipate
    losing moves"): a forced block if there is exactly one opponent threat to
    block, nothing if there are two, and never the cell right below an
    opponent's winning cell."""
    possible = playable_cells(mask)
    opponent_wins = winning_cells(current ^ mask, mask)
    forced = possible & opponent_wins
    if forced != 0:
        if forced & (forced - 1) != 0:
            return 0
        possible = forced
    return possible & ~(opponent_wins >> 1)


@jit
def jitter(mem: np.ndarray, ply: int, col: int) -> int:
    """A helper thread's private bonus, 0 to 3, for ``col`` at ``ply``: near the root
    each lazy-SMP thread thus tries the moves in its own order and fills the
    shared table with other subtrees than the main thread.  Always 0 for the
    main thread (seed 0), so one thread searches as if there were no others."""
    seed = mem[JITTER_SEED]
    if seed == 0 or ply >= JITTER_PLIES:
        return 0
    return (((seed * JITTER_MULTIPLIER + ply * WIDTH + col) * JITTER_MULTIPLIER) >> 59) & 3


@jit
def order_moves(current: int, mask: int, moves: int, tt_move: int, mem: np.ndarray, ply: int) -> int:
    """Write the moves of bitmask ``moves`` into the scratch of ``ply`` best first and return
    how many.  The table's move comes first, then moves by how many winning
    cells they give the mover (Pons' MoveSorter), centre first among equals."""
    base = SCRATCH + ply * SCRATCH_PER_PLY
    count = 0
    for i in range(WIDTH):
        col = COLUMN_ORDER[i]
        move = moves & column_cells(col)
        if move == 0:
            continue
        score = popcount(winning_cells(current | move, mask)) + jitter(mem, ply, col)
        if col == tt_move:
            score = 1000
        pos = count
        while pos > 0 and mem[base + 2 * pos - 1] < score:
            mem[base + 2 * pos] = mem[base + 2 * pos - 2]
            mem[base + 2 * pos + 1] = mem[base + 2 * pos - 1]
            pos -= 1
        mem[base + 2 * pos] = col
        mem[base + 2 * pos + 1] = score
        count += 1
    return count


@jit
def begin_search(mem: np.ndarray, node_limit: int) -> None:
    """Reset the counters and flags for a new search (one call from Python instead of
    four numpy writes, which matters when a whole solve takes microseconds)."""
    mem[NODES] = 0
    mem[ABORTED] = 0
    mem[SELDEPTH] = 0
    mem[NODE_LIMIT] = node_limit


@jit
def should_abort(mem: np.ndarray) -> bool:
    """Count a node and tell whether the search must unwind (stop flag or node limit)."""
    mem[NODES] += 1
    if mem[STOP] != 0 or mem[NODES] >= mem[NODE_LIMIT]:
        mem[ABORTED] = 1
    return mem[ABORTED] != 0


@numba.njit(NEGAMAX_SIGNATURE, cache=True, nogil=True)
def negamax(current: int, mask: int, stones: int, depth: int, alpha: int, beta: int, ply: int,
            mem: np.ndarray) -> int:
    """Score of a position whose side to move cannot win at once, within ``[alpha, beta]``
    (fail-hard on the low side).  ``depth`` plies are searched; a depth that
    reaches the end of the game makes the score exact."""
    if should_abort(mem):
        return 0
    if ply > mem[SELDEPTH]:
        mem[SELDEPTH] = ply
    moves = non_losing_moves(current, mask)
    if moves == 0:
        return -(MATE + (CELLS - stones) // 2)
    if stones >= CELLS - 2:
        return 0
    lowest = to_internal(-((CELLS - 2 - stones) // 2))
    if alpha < lowest:
        alpha = lowest
        if alpha >= beta:
            return alpha
    highest = to_internal((CELLS - 1 - stones) // 2)
    if beta > highest:
        beta = highest
        if alpha >= beta:
            return beta
    if stones == BOOK_STONES:
        book = book_score(mem[BOOK_ADDRESS], mem[BOOK_RECORDS], current, mask)
        if book != NOT_IN_BOOK:
            return min(max(to_internal(book), alpha), beta)
    if depth <= 0:
        value = evaluate(current, mask, stones, mem[WEIGHTS:WEIGHTS + N_TERMS])
        return min(max(value, alpha), beta)

    key = current + mask
    needed = min(depth, CELLS - stones)
    slot = tt_slot(mem, key)
    entry = tt_lookup(mem, slot, key)
    tt_move = NO_MOVE
    if entry != 0:
        tt_move = entry_move(entry)
        if entry_depth(entry) >= needed:
            value, flag = entry_value(entry), entry_flag(entry)
            if flag == EXACT:
                return min(max(value, alpha), beta)
            if flag == LOWER and value > alpha:
                alpha = value
            elif flag == UPPER and value < beta:
                beta = value
            if alpha >= beta:
                return alpha if flag == LOWER else beta

    child_depth = depth if moves & (moves - 1) == 0 else depth - 1  # a forced move costs no depth
    count = order_moves(current, mask, moves, tt_move, mem, ply)
    base = SCRATCH + ply * SCRATCH_PER_PLY
    original_alpha = alpha
    best_move = mem[base]
    for i in range(count):
        col = mem[base + 2 * i]
        child_mask = mask | (moves & column_cells(col))
        child = current ^ mask
        if i == 0:
            value = -negamax(child, child_mask, stones + 1, child_depth, -beta, -alpha, ply + 1,
                             mem)
        else:  # principal variation search: prove the move worse with a null window first
            value = -negamax(child, child_mask, stones + 1, child_depth, -alpha - 1, -alpha, ply + 1,
                             mem)
            if alpha < value < beta and not mem[ABORTED]:
                value = -negamax(child, child_mask, stones + 1, child_depth, -beta, -alpha, ply + 1,
                                 mem)
        if mem[ABORTED]:
            return 0
        if value >= beta:
            mem[slot] = tt_pack(key, value, needed, LOWER, col, mem[GENERATION])
            return value
        if value > alpha:
            alpha = value
            best_move = col
    flag = EXACT if alpha > original_alpha else UPPER
    mem[slot] = tt_pack(key, alpha, needed, flag, best_move, mem[GENERATION])
    return alpha


@jit
def immediate_win(current: int, mask: int) -> int:
    """The cells where the side to move wins at once."""
    return winning_cells(current, mask) & playable_cells(mask)


@jit
def half(x: int) -> int:
    """``x / 2`` rounded toward zero, as C does it in Pons' driver."""
    return -((-x) // 2) if x < 0 else x // 2


@jit
def solve(current: int, mask: int, stones: int, weak: bool,
          mem: np.ndarray) -> int:
    """Exact Pons score of a position that is not over (weak: only its sign), by
    null-window searches that narrow ``[lowest, highest]`` (Pons' driver).  The
    result is meaningless if ``mem[ABORTED]`` is set afterwards."""
    if immediate_win(current, mask):
        return 1 if weak else win_now(stones)
    lowest = -((CELLS - stones) // 2)
    highest = (CELLS + 1 - stones) // 2
    if weak:
        lowest, highest = max(lowest, -1), min(highest, 1)
    while lowest < highest and not mem[ABORTED]:
        middle = lowest + half(highest - lowest)
        if middle <= 0 and half(lowest) < middle:
            middle = half(lowest)
        elif middle >= 0 and half(highest) > middle:
            middle = half(highest)
        probe = to_internal(middle)
        value = negamax(current, mask, stones, CELLS, probe, probe + 1, 0,
                        mem)
        if value <= probe:
            highest = middle
        else:
            lowest = middle + 1
    return lowest


@jit
def principal_variation(current: int, mask: int, first_col: int, mem: np.ndarray,
                        out: np.ndarray) -> int:
    """Follow the table's best moves from the root after ``first_col``; write the
    columns into ``out`` and return how many.  It stops at a missing entry, at an
    upper bound (every move failed low there, so the stored move is only the
    first one tried, not a best one), at an illegal move or at the end of the
    game."""
    length = 0
    col = first_col
    while length < out.shape[0] and col >= 0 and col < WIDTH:
        move = playable_cells(mask) & column_cells(col)
        if move == 0:
            break
        out[length] = col
        length += 1
        if immediate_win(current, mask) & move:
            break
        current, mask = current ^ mask, mask | move
        entry = tt_lookup(mem, tt_slot(mem, current + mask), current + mask)
        col = entry_move(entry) if entry != 0 and entry_flag(entry) != UPPER else NO_MOVE
    return length


@numba.njit(numba.int64(numba.int64, numba.int64, numba.int64), cache=True, nogil=True)
def perft(current: int, mask: int, depth: int) -> int:
    """Move sequences of exactly ``depth`` plies from a position; a finished game has
    no moves, so lines that end earlier count for nothing (as in chess perft)."""
    if depth == 0:
        return 1
    if has_four(current ^ mask) or mask == BOARD_MASK:
        return 0
    total = 0
    possible = playable_cells(mask)
    for col in range(WIDTH):
        move = possible & column_cells(col)
        if move != 0:
            total += perft(current ^ mask, mask | move, depth - 1)
    return total
