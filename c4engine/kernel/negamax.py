"""The recursion: negamax alpha-beta over bitboards, compiled by numba.

One recursive function, :func:`search_node`, serves both jobs of the engine.
With a depth that reaches the end of the game it is an exact solver in the way
of Steininger's ``c4``; with a smaller depth it is a depth-limited search that
calls the threat evaluation at its leaves.  Both share one table: an entry
records the depth it was searched to, capped at the number of empty cells, so
an entry from an exact search serves any later search and a shallow one never
passes for exact.

What keeps the tree small:

* static resolution (:mod:`c4engine.kernel.resolve`): every child is resolved
  before any is searched, so a node also knows it cannot win with its third
  stone;
* enhanced transposition cutoffs: below ``ETC_STONES`` the children's table
  entries may settle the node before any child is searched;
* move order by threat quality (:func:`move_score`);
* a table of bounds under partial keys (:mod:`c4engine.kernel.table`);
* near the root, threads leave a child another thread is searching for last
  (ABDADA's deferral, :func:`busy_slot`).

Scores (internal, docs/design.md "Scores"): a proven result with Pons score
``s`` is ``MATE + s`` for a win and ``-MATE + s`` for a loss; a draw is 0;
heuristic values stay strictly between ``-MATE`` and ``MATE``.  Pons scores
count the stones on the board when the game ends, not the distance from the
root, so they need no adjustment when they move up the tree or through the
table.

The opening book's 12-stone table (:mod:`c4engine.kernel.book`) is probed where
the search reaches 12 stones: its scores are exact, so they end the search there
whatever the depth.

All state lives in one int64 array owned by the caller, ``mem``
(:mod:`c4engine.kernel.layout`).  ``mem[STOP]`` may be set by another Python
thread at any time; the recursion polls it at every node (the functions run
with ``nogil``) and unwinds at once.
"""


from __future__ import annotations

import numba
import numpy as np
from numba.extending import intrinsic

from .addresses import address_in, call_at_address, call_compiled, compiled_address
from .constants import BOARD_MASK, CELLS, COLUMN_ORDER, FULL, WIDTH
from .evaluation import N_WEIGHTS, leaf_value
from .jit import (
    BITS_TYPE,
    ENTRY_OPTIONS,
    INNER_OPTIONS,
    internal,
    column_cells,
    entry,
    fold,
    jit,
    load_bits,
    playable_cells,
    popcount,
    store_bits,
    to_internal,
    winning_cells,
)
from .layout import (
    ABORTED,
    BUSY_SLOTS,
    BUSY_START,
    C_COL,
    C_CURRENT,
    C_FLIPS,
    C_HI,
    C_LO,
    C_MASK,
    C_SCORE,
    C_STONES,
    CHILD_WORDS,
    CTX_SIZE,
    NEGAMAX_ADDRESS,
    NETWORK_STATE,
    ORDER,
    ROOT_FAILS,
    SCRATCH,
    SCRATCH_PER_PLY,
    SEARCH_ADDRESS,
    SELDEPTH,
    WEIGHTS,
    should_abort,
)
from .resolve import UNRESOLVED, resolve
from .table import (
    EXACT,
    LOWER,
    NO_MOVE,
    UPPER,
    entry_depth,
    entry_flag,
    entry_move,
    entry_value,
    stored_move,
    table_key,
    tt_lookup,
    tt_prefetch,
    tt_slot,
    tt_store,
)

# Move-order weights (see move_score), Steininger's scaled to integers and tuned on
# Pons' sets (docs/design.md, "Move order"): threats playable after one more stone,
# useful threats, the table's move, closeness to the centre.
W_NEXT_TURN, W_USEFUL, W_TABLE_MOVE, W_CENTRE = 84, 42, 35, 1
# Children's table entries are probed before the search (enhanced transposition
# cutoffs) only while they have fewer stones than this: nearer the end, a probe costs
# more than the cutoffs it finds.  Steininger's threshold is width * height - 15;
# with the probes' entries prefetched together, probing down to 6 empty cells pays
# (docs/design.md, "Move order").
ETC_STONES = CELLS - 6
DEFER_PLIES = 12  # see busy_slot

# The recursion and the root search before it are compiled eagerly, each with one
# signature: numba's cache cannot reload a recursive function typed lazily (it crashes
# on reload), and the drivers call both through the addresses of their machine code
# (:mod:`.addresses`), which exist once they are compiled.
SEARCH_SIGNATURE = numba.int64(BITS_TYPE, BITS_TYPE, *[numba.int64] * 7, numba.int64[::1])
NEGAMAX_SIGNATURE = numba.int64(BITS_TYPE, BITS_TYPE, *[numba.int64] * 5, numba.int64[::1])


@intrinsic
def search_child(typingctx, current, mask, stones, depth, alpha, beta, lo, hi, ply, mem):  # type: ignore[no-untyped-def]
    """:func:`search_node` calling itself: a direct call of the function being compiled.
    Typed by its signature, where numba types a recursive call by typing the whole
    caller again at every call site, seconds of a board's first compilation."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return call_compiled(context, builder, builder.function, SEARCH_SIGNATURE, args)
    return SEARCH_SIGNATURE, codegen


@intrinsic
def search_at(typingctx, address, current, mask, stones, depth, alpha, beta, lo, hi, ply,  # type: ignore[no-untyped-def]
              mem):
    """:func:`search_node` called through the ``address`` of its machine code."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return call_at_address(context, builder, SEARCH_SIGNATURE, args)
    return numba.int64(numba.int64, *SEARCH_SIGNATURE.args), codegen


@intrinsic
def negamax_at(typingctx, address, current, mask, stones, depth, alpha, beta, ply, mem):  # type: ignore[no-untyped-def]
    """:func:`negamax` called through the ``address`` of its machine code."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return call_at_address(context, builder, NEGAMAX_SIGNATURE, args)
    return numba.int64(numba.int64, *NEGAMAX_SIGNATURE.args), codegen


@jit
def order_children(mem: np.ndarray, base: int, count: int) -> None:
    """Sort the ``count`` children in the scratch at ``base`` by their ordering score,
    best first (a stable insertion sort of their indices: centre first among equals)."""
    order = base + ORDER
    for i in range(count):
        score = mem[base + i * CHILD_WORDS + C_SCORE]
        pos = i
        while pos > 0 and mem[base + mem[order + pos - 1] * CHILD_WORDS + C_SCORE] < score:
            mem[order + pos] = mem[order + pos - 1]
            pos -= 1
        mem[order + pos] = i


@jit
def move_score(mask: int, move: int, col: int, tt_move: int, threats: int, opponent_threats: int) -> int:
    """How promising a move looks, for the move order (threat quality, after
    Steininger); ``threats`` are the mover's winning cells after the move.

    Only threats that can ever be played count ("useful": not directly above an
    opponent threat, whose cell the opponent would take first); those that become
    playable after one more stone in their column weigh most; the table's move
    gets a bonus and the centre breaks ties."""
    threats &= ~(opponent_threats << 1)
    above_playable = (playable_cells(mask | move) << 1) & BOARD_MASK
    score = (W_NEXT_TURN * popcount(threats & above_playable) + W_USEFUL * popcount(threats)
             + W_CENTRE * min(col, WIDTH - 1 - col))
    if col == tt_move:
        score += W_TABLE_MOVE
    return score


@jit
def busy_slot(mem: np.ndarray, ply: int, key: int) -> int:
    """Where the threads' shared busy table marks the position ``key`` (``current +
    mask``, folded to one word: jit.fold) while a thread searches it, or -1 where
    children are not shared out: with one thread (no table), and from
    ``DEFER_PLIES`` on, where subtrees are too small for a shared write and read
    per node to pay.

    A node defers a child (not its first) that another thread is searching to the
    end of its list (after Weill's ABDADA): where every child must be searched,
    the threads then take different ones.  It replaced a helper's jittered move
    order near the root, which, at the nodes where one move refutes, sent the
    helper into the moves that do not: empty board, weak, 2 threads, 1 GB, 124 M
    nodes in 20.0 s with the jitter, 71 M in 12.0 s with the deferral (one
    thread: 76 M)."""
    if mem[BUSY_SLOTS] == 0 or ply >= DEFER_PLIES:
        return -1
    return mem[BUSY_START] + key % mem[BUSY_SLOTS]


@jit
def window_for(sign: int, alpha: int, beta: int) -> tuple[int, int]:
    """A side's window ``[alpha, beta]`` for a search whose side to move is that side
    (``sign`` 1) or its opponent (``sign`` -1: negated and swapped); the side's value
    is then ``sign`` times the search's.  One call path for both, where a node and
    its child after forced moves may have either side to move."""
    if sign > 0:
        return alpha, beta
    return -beta, -alpha


@jit
def store_child(mem: np.ndarray, child: int, col: int, score: int, current: int, mask: int, stones: int,
                flips: int, lo: int, hi: int) -> None:
    """Write a child into its CHILD_WORDS of a ply's scratch (see layout)."""
    mem[child + C_COL] = col
    mem[child + C_SCORE] = score
    store_bits(mem, child + C_CURRENT, current)
    store_bits(mem, child + C_MASK, mask)
    mem[child + C_STONES] = stones
    mem[child + C_FLIPS] = flips
    mem[child + C_LO] = lo
    mem[child + C_HI] = hi


@jit
def transposition_cutoffs(mem: np.ndarray, base: int, count: int, depth: int, alpha: int,
                          beta: int) -> tuple[int, int, int]:
    """Enhanced transposition cutoffs over the ``count`` children in the scratch at
    ``base``, for a node searched ``depth`` plies within ``[alpha, beta]``: the table
    entry of each child with fewer than ETC_STONES stones (prefetched when the child
    was stored, so that the probes' cache misses overlap) tightens its bounds; a
    child whose lower bound reaches ``alpha`` raises it (the node scores at least
    that), and one whose upper bound cannot raise it is dropped (nothing to search).

    Returns the new alpha, the column that raised it last (NO_MOVE: none did) and
    how many children are left, in their order; at a cutoff (alpha >= beta) it
    stops there."""
    raised_by = NO_MOVE
    kept = 0
    for k in range(count):
        child = base + k * CHILD_WORDS
        stones = mem[child + C_STONES]
        if stones < ETC_STONES:
            key, _ = table_key(load_bits(mem, child + C_CURRENT), load_bits(mem, child + C_MASK))
            entry = tt_lookup(mem, tt_slot(mem, key), key)
            if entry != 0 and entry_depth(entry) >= min(depth - 1, CELLS - stones):
                if entry_flag(entry) != UPPER:
                    mem[child + C_LO] = max(mem[child + C_LO], entry_value(entry))
                if entry_flag(entry) != LOWER:
                    mem[child + C_HI] = min(mem[child + C_HI], entry_value(entry))
                sign = 1 if mem[child + C_FLIPS] % 2 == 1 else -1  # odd flips: the child moves as this node
                low, high = window_for(sign, mem[child + C_LO], mem[child + C_HI])
                if low >= alpha:
                    alpha, raised_by = low, mem[child + C_COL]
                    if alpha >= beta:
                        return alpha, raised_by, kept
                if high <= alpha:
                    continue
        if kept != k:
            for word in range(CHILD_WORDS):
                mem[base + kept * CHILD_WORDS + word] = mem[child + word]
        kept += 1
    return alpha, raised_by, kept


@internal
@numba.njit(SEARCH_SIGNATURE, **INNER_OPTIONS)
def search_node(current: int, mask: int, stones: int, depth: int, alpha: int, beta: int, lo: int,
                hi: int, ply: int, mem: np.ndarray) -> int:
    """Score of a position that :func:`resolve` left unresolved (``lo..hi`` its proven
    bounds), within ``[alpha, beta]``: a value at or below ``alpha`` is an upper
    bound, one at or above ``beta`` a lower bound, one between them exact.
    ``depth`` plies are searched; a depth that reaches the end of the game makes
    the score exact."""
    if should_abort(mem):
        return 0
    if ply > mem[SELDEPTH]:
        mem[SELDEPTH] = ply
    if lo >= beta:
        return lo
    if hi <= alpha:
        return hi
    # ``proven_low``: alpha is a proven lower bound, not only the caller's window
    # (then failing low on every move proves the score equal to it); the same for
    # beta above.  That is how a bound that meets the table's becomes exact.
    proven_low = lo >= alpha
    if proven_low:
        alpha = lo
    proven_high = hi <= beta
    if proven_high:
        beta = hi
    if FULL and depth <= 0:
        value = leaf_value(current, mask, stones, mem[WEIGHTS:WEIGHTS + N_WEIGHTS], mem[NETWORK_STATE:CTX_SIZE])
        return min(max(value, alpha), beta)

    key, mirrored = table_key(current, mask)
    needed = min(depth, CELLS - stones)
    slot = tt_slot(mem, key)
    entry = tt_lookup(mem, slot, key)
    tt_move = NO_MOVE
    if entry != 0:
        tt_move = stored_move(entry_move(entry), mirrored)
        if entry_depth(entry) >= needed:
            value, flag = entry_value(entry), entry_flag(entry)
            if flag == EXACT:
                return min(max(value, alpha), beta)
            if flag == LOWER and value >= alpha:
                alpha = value
                proven_low = True
            elif flag == UPPER and value <= beta:
                beta = value
                proven_high = True
            if alpha >= beta:
                return alpha if flag == LOWER else beta

    base = SCRATCH + ply * SCRATCH_PER_PLY
    best_move = NO_MOVE
    opponent_threats = winning_cells(current ^ mask, mask)
    safe = playable_cells(mask) & ~(opponent_threats >> 1)
    count = numba.int64(0)  # not a literal 0, for which numba would compile transposition_cutoffs twice
    for i in range(WIDTH):
        col = COLUMN_ORDER[i]
        move = safe & column_cells(col)
        if move == 0:
            continue
        threats = winning_cells(current | move, mask | move)  # the mover's, after the move
        value, forced_current, forced_mask, forced_stones, flips, forced_low, forced_high = resolve(
            current ^ mask, mask | move, stones + 1, -beta, -alpha, mem, threats)
        if value != UNRESOLVED:
            value = -value
            if value > alpha:
                alpha = value
                proven_low = True
                best_move = col
                if alpha >= beta:
                    tt_store(mem, slot, key, alpha, needed, EXACT if proven_high else LOWER, col, mirrored)
                    return alpha
            continue
        store_child(mem, base + count * CHILD_WORDS, col, move_score(mask, move, col, tt_move, threats,
                                                                    opponent_threats),
                    forced_current, forced_mask, forced_stones, flips, forced_low, forced_high)
        count += 1
        if forced_stones < ETC_STONES:  # its entry, for transposition_cutoffs below
            forced_key, _ = table_key(forced_current, forced_mask)
            tt_prefetch(mem, tt_slot(mem, forced_key))
    etc_alpha, etc_move, count = transposition_cutoffs(mem, base, count, depth, alpha, beta)
    if etc_move != NO_MOVE:
        alpha, best_move, proven_low = etc_alpha, etc_move, True
        if alpha >= beta:
            tt_store(mem, slot, key, alpha, needed, EXACT if proven_high else LOWER, best_move, mirrored)
            return alpha
    if count == 0:
        return alpha
    # Every move was checked for leaving the opponent lost at once, so no win comes
    # before the side's third stone from now.
    no_quick_win = to_internal((CELLS - 3 - stones) // 2)
    if no_quick_win <= beta:
        beta = no_quick_win
        proven_high = True
        if alpha >= beta:
            return beta

    order_children(mem, base, count)
    if best_move == NO_MOVE:  # an upper bound keeps the first move tried
        best_move = mem[base + mem[base + ORDER] * CHILD_WORDS + C_COL]
    end = count
    k = -1
    while k + 1 < end:
        k += 1
        index = mem[base + ORDER + k]
        child = base + index * CHILD_WORDS
        col = mem[child + C_COL]
        child_current, child_mask = load_bits(mem, child + C_CURRENT), load_bits(mem, child + C_MASK)
        child_stones = mem[child + C_STONES]
        flips, child_low, child_high = mem[child + C_FLIPS], mem[child + C_LO], mem[child + C_HI]
        child_ply = ply + 1 + flips
        child_key = fold(child_current + child_mask)
        busy = busy_slot(mem, ply, child_key)
        if busy >= 0:
            if 0 < k < count and mem[busy] == child_key:  # another thread's: search it last
                mem[base + ORDER + end] = index
                end += 1
                continue
            mem[busy] = child_key
        # After an odd number of forced moves the child's side to move is this node's
        # again (the move and the flips make an even number).  Principal variation
        # search: every move but the first is proved worse with a null window first.
        sign = 1 if flips % 2 == 1 else -1
        child_alpha, child_beta = window_for(sign, alpha, beta if k == 0 else alpha + 1)
        value = sign * search_child(child_current, child_mask, child_stones, depth - 1, child_alpha, child_beta,
                                   child_low, child_high, child_ply, mem)
        if k > 0 and alpha < value < beta and not mem[ABORTED]:
            child_alpha, child_beta = window_for(sign, alpha, beta)
            value = sign * search_child(child_current, child_mask, child_stones, depth - 1, child_alpha,
                                       child_beta, child_low, child_high, child_ply, mem)
        if busy >= 0 and mem[busy] == child_key:
            mem[busy] = 0
        if mem[ABORTED]:
            return 0
        if value >= beta:
            tt_store(mem, slot, key, value, needed, EXACT if proven_high else LOWER, col, mirrored)
            return value
        if ply == 0 and value <= alpha:  # a refuted root move: evidence for the split of probes (search.probes)
            mem[ROOT_FAILS] += 1
        if value > alpha:
            alpha = value
            proven_low = True
            best_move = col
    tt_store(mem, slot, key, alpha, needed, EXACT if proven_low else UPPER, best_move, mirrored)
    return alpha


@numba.njit(NEGAMAX_SIGNATURE, **ENTRY_OPTIONS)
def negamax(current: int, mask: int, stones: int, depth: int, alpha: int, beta: int, ply: int,
            mem: np.ndarray) -> int:
    """Score of a position whose side to move cannot win at once, within ``[alpha, beta]``
    (see :func:`search_node`): forced moves first (:func:`resolve`), then the search,
    called through its address (``mem[SEARCH_ADDRESS]``)."""
    value, current, mask, stones, flips, lo, hi = resolve(current, mask, stones, alpha, beta, mem,
                                                          winning_cells(current ^ mask, mask))
    if value != UNRESOLVED:
        return value
    sign = -1 if flips % 2 == 1 else 1
    alpha, beta = window_for(sign, alpha, beta)
    return sign * search_at(address_in(mem, SEARCH_ADDRESS), current, mask, stones, depth, alpha, beta, lo, hi,
                            ply + flips, mem)


@jit
def call_negamax(current: int, mask: int, stones: int, depth: int, alpha: int, beta: int, ply: int,
                 mem: np.ndarray) -> int:
    """:func:`negamax` as a compiled driver calls it: through its address
    (``mem[NEGAMAX_ADDRESS]``), so that the driver does not emit it again."""
    return negamax_at(address_in(mem, NEGAMAX_ADDRESS), current, mask, stones, depth, alpha, beta, ply, mem)


def write_addresses(ctx: np.ndarray) -> None:
    """Write where the recursion and the root search lie into a kernel context, for
    the drivers that call them (:mod:`.addresses`)."""
    ctx[SEARCH_ADDRESS] = compiled_address(search_node, SEARCH_SIGNATURE)
    ctx[NEGAMAX_ADDRESS] = compiled_address(negamax, NEGAMAX_SIGNATURE)
