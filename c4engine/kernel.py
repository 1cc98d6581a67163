"""The search kernel: negamax alpha-beta over bitboards, compiled by numba.

One recursive function serves both jobs of the engine.  With a depth that
reaches the end of the game it is an exact solver in the way of Steininger's
``c4``; with a smaller depth it is a depth-limited search that calls the threat
evaluation at its leaves.  Both share one table: an entry records the depth it
was searched to, capped at the number of empty cells, so an entry from an
exact search serves any later search and a shallow one never passes for exact.

What keeps the tree small (each measured on its own, see the commit log;
empty board: 2,067 M nodes weak and 3,463 M strong before, 78 M and 134 M after):

* static resolution (:func:`resolve`): before a position costs a node, forced
  moves are played in a loop, a side facing two wins (or a win above the one
  it must block) has lost, a side that cannot make four any more scores at
  most 0, no win or loss can come sooner than the next moves allow, and at the
  first player's turn the second player's claimeven strategy bounds the score
  from above (:func:`even_rows_bound`).  Every child is resolved this way
  before any is searched, so a node also knows it cannot win with its third
  stone;
* enhanced transposition cutoffs: below ``ETC_STONES`` the children's table
  entries may settle the node before any child is searched;
* move order by threat quality (:func:`move_score`);
* a table of bounds under partial keys, one entry for a position and its
  mirror image, and a bound that meets a proven one is stored as exact;
* the driver (:func:`solve`) narrows the score with null windows.

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
Near the root the threads also share a small busy table, ``mem[BUSY_START]``
on, through which they share out a node's children (see :func:`busy_slot`).
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
from .bits import BOARD_MASK, BOTTOM_MASK, CELLS, H1, HEIGHT, WIDTH
from .book import NOT_IN_BOOK, SCORE_STONES as BOOK_STONES, book_score
from .evaluation import EVEN_ROWS, N_TERMS, evaluate
from .scores import MATE
from .jitbits import column_cells, has_four, jit, mirror, playable_cells, popcount, smear_up, winning_cells

INFINITE = 30_000
UNRESOLVED = 1 << 20  # what resolve() returns for a position it cannot settle (no score reaches it)
NO_MOVE = 7
MAX_PLY = CELLS + 2
COLUMN_ORDER = (3, 2, 4, 1, 5, 0, 6)  # centre first: central columns take part in more fours

# The one array the kernel is given, ``mem``: first the context (counters and
# flags, the book's address and size, where the table lies in ``mem``, the
# threads' busy table lies and its size, the
# evaluation weights, and each ply's scratch), then the transposition table.  A
# ply's scratch holds its children that are left to search, CHILD_WORDS each
# (the column, its ordering score, the position after the child's forced moves,
# how many there were, and that position's proven bounds), then the search
# order as indices into them, with room for each child once more at the end
# (a child deferred because another thread searches it, see search_node).
NODES, NODE_LIMIT, STOP, ABORTED, SELDEPTH, GENERATION = range(6)
BOOK_ADDRESS, BOOK_RECORDS, TT_START, TT_SLOTS, BUSY_START, BUSY_SLOTS = range(6, 12)
WEIGHTS = 12
SCRATCH = WEIGHTS + N_TERMS
C_COL, C_SCORE, C_CURRENT, C_MASK, C_STONES, C_FLIPS, C_LO, C_HI = range(8)
CHILD_WORDS = 8
ORDER = WIDTH * CHILD_WORDS
SCRATCH_PER_PLY = ORDER + 2 * WIDTH + 1
CTX_SIZE = SCRATCH + MAX_PLY * SCRATCH_PER_PLY

# Move-order weights (see move_score).  Steininger's are 1.2 for threats playable
# after one more stone, 0.5 after two, 0.3 for any useful threat, 0.5 for the
# table's move and 0.1 per seventh of a column from the edge; times 70 in
# integers: 84, 35, 21, 35, 1.  Tuned here on Test_L2_R2[:100] (strong) and
# 4453 + 3344 (weak), mean nodes: his 12409 / 2.05 M; threats after two stones
# at 0 and useful threats at 42 (as below): 11999 / 1.83 M.  Around that point
# the counts are flat (next-turn 56 or 126, useful 63, centre 5: all within
# 0.2 %); the table's move at 70: 12087 / 1.94 M; at 1000 (always first):
# 12930 / 2.05 M with his weights.
W_NEXT_TURN, W_USEFUL, W_TABLE_MOVE, W_CENTRE = 84, 42, 35, 1
NO_BOUND = INFINITE  # what even_rows_bound() returns when it proves nothing
# Children's table entries are probed before the search (enhanced transposition
# cutoffs) only while they have fewer stones than this: deeper, a probe costs more
# than the cutoffs it finds (Steininger's threshold, width * height - 15).
ETC_STONES = CELLS - 15
WEAK_FIRST_STONES = 6  # see solve()

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
DEFER_PLIES = 12  # see busy_slot

# The recursive function is compiled eagerly with one signature: numba's cache
# cannot reload a recursive function typed lazily (it crashes on reload).
NEGAMAX_SIGNATURE = numba.int64(*[numba.int64] * 7, numba.int64[::1])
SEARCH_SIGNATURE = numba.int64(*[numba.int64] * 9, numba.int64[::1])


to_internal = jit(scores.to_internal)
to_pons = jit(scores.to_pons)
win_now = jit(scores.win_now)


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


@jit
def can_make_four(stones: int, mask: int) -> bool:
    """Whether ``stones`` could still complete a four if they got every empty cell."""
    return has_four(stones | (BOARD_MASK & ~mask))


@jit
def loss_now(stones: int) -> int:
    """Internal score of a side that loses to the opponent's next stone, ``stones`` on the board."""
    return -(MATE + (CELLS - stones) // 2)


@jit
def columns_of(cells: int) -> int:
    """The bottom cell of every column that holds one of ``cells``."""
    for _ in range(HEIGHT - 1):
        cells |= cells >> 1
    return cells & BOTTOM_MASK


@jit
def bound_from_four(line: int, mine: int, empty: int) -> int:
    """The bound a four of the second player's gives (see even_rows_bound), or NO_BOUND
    when one of the first player's fours in ``mine`` can be completed first."""
    open_cells = line & empty
    tops = open_cells & ~(open_cells >> 1)
    passed_first = smear_up((tops << 1) & BOARD_MASK)
    columns = columns_of(open_cells)
    while columns != 0:
        column = columns & -columns
        columns ^= column
        if has_four(mine & ~(passed_first & column * ((1 << HEIGHT) - 1))):
            return NO_BOUND
    highest_row = 0
    for row in range(HEIGHT):
        if tops & (BOTTOM_MASK << row):
            highest_row = row
    return to_internal(-((HEIGHT + 1 - highest_row) // 2))


@jit
def even_rows_bound(current: int, mask: int) -> int:
    """An upper bound on the score of the first player to move, from the second
    player's follow-up strategy (Allis' claimeven), or NO_BOUND.

    With every column filled to an even height, the second player can answer each
    move in the same column, and so gets every even-row cell that is not playable
    now.  Columns filled to an odd height come in pairs: a move into one of them
    is answered in another, so giving the first player every playable cell (and
    every odd-row cell) only flatters him.  If the second player then owns a
    four F, he wins by it unless the first player completes one of his own first.
    The first player's four P comes too late when, in every column where F still
    has an empty cell, P needs a cell above F's highest one there: the column
    passes F's cell first.  So if some F beats every P, the first player loses,
    at the latest when F's last cell is filled, which leaves the cells above it
    empty.  If neither side owns a four, the first player scores at most a draw."""
    empty = BOARD_MASK & ~mask
    theirs = (current ^ mask) | (EVEN_ROWS & empty & ~playable_cells(mask))
    mine = BOARD_MASK & ~theirs
    if not has_four(theirs):
        return NO_BOUND if has_four(mine) else 0
    bound = NO_BOUND
    for shift in (1, H1, HEIGHT, H1 + 1):  # vertical, horizontal, the two diagonals
        pairs = theirs & (theirs >> shift)
        starts = pairs & (pairs >> (2 * shift))  # the first cell of each four
        while starts != 0:
            start = starts & -starts
            starts ^= start
            line = start * (1 + (1 << shift) + (1 << (2 * shift)) + (1 << (3 * shift)))
            bound = min(bound, bound_from_four(line, mine, empty))
    return bound


@jit
def forced_cells(current: int, mask: int, opponent_threats: int = -1) -> tuple[int, int]:
    """For the side to move: the opponent's immediate wins (cells it must block) and
    the playable cells that are not right below an opponent threat (moves that do
    not hand the opponent a four).  ``opponent_threats`` may be given when the
    caller has them (-1: compute them)."""
    if opponent_threats == -1:
        opponent_threats = winning_cells(current ^ mask, mask)
    possible = playable_cells(mask)
    return opponent_threats & possible, possible & ~(opponent_threats >> 1)


@jit
def forced_move(opponent_wins: int, safe: int) -> int:
    """The one move a side must play (see forced_cells), or 0 when it has a choice."""
    if opponent_wins != 0:
        return opponent_wins
    if safe & (safe - 1) == 0:
        return safe
    return 0


@jit
def resolve(current: int, mask: int, stones: int, alpha: int, beta: int, mem: np.ndarray,
            opponent_threats: int = -1) -> tuple[int, int, int, int, int, int, int]:
    """Settle a position (whose side to move cannot win at once) without searching it.

    Forced moves (the block of the opponent's only immediate threat, or the only
    move that does not stand below an opponent threat) are played in a loop, with
    no node, no recursion and no table work.  At every step: a side that cannot
    stop the opponent's next stone (two immediate threats, a threat right above
    the one it must block, or every move under a threat) has lost; no win comes
    before the side's second stone from now and no loss before the opponent's
    second; a side that can no longer make four scores at most a draw; the
    12-stone book answers exactly.  When those bounds cut ``[alpha, beta]`` (of
    the given position), the position is settled.

    Returns ``(value, current, mask, stones, flips, lo, hi)``: ``value`` for the
    given position's side to move, or UNRESOLVED; then the position reached
    after the forced moves, how many were played, and its proven bounds
    ``lo <= score <= hi`` from its own side's view."""
    flips = 0
    sign = 1
    while True:
        opponent_wins, safe = forced_cells(current, mask, opponent_threats)
        opponent_threats = -1  # given, if at all, for the first position only
        if safe == 0 or (opponent_wins != 0 and (opponent_wins & (opponent_wins - 1) != 0
                                                 or opponent_wins & safe == 0)):
            return sign * loss_now(stones), current, mask, stones, flips, 0, 0
        if stones >= CELLS - 2:
            return 0, current, mask, stones, flips, 0, 0
        if stones == BOOK_STONES and mem[BOOK_RECORDS] > 0:
            book = book_score(mem[BOOK_ADDRESS], mem[BOOK_RECORDS], current, mask)
            if book != NOT_IN_BOOK:
                return sign * to_internal(book), current, mask, stones, flips, 0, 0
        lo = to_internal(-((CELLS - 2 - stones) // 2))
        hi = to_internal((CELLS - 1 - stones) // 2)
        if not can_make_four(current, mask):
            hi = 0
        if lo >= beta:
            return sign * lo, current, mask, stones, flips, 0, 0
        if hi <= alpha:
            return sign * hi, current, mask, stones, flips, 0, 0
        forced = forced_move(opponent_wins, safe)
        if forced == 0:
            if stones % 2 == 0:  # the first player to move: the second may claim the even rows
                hi = min(hi, even_rows_bound(current, mask))
                if hi <= alpha:
                    return sign * hi, current, mask, stones, flips, 0, 0
            return UNRESOLVED, current, mask, stones, flips, lo, hi
        current, mask = current ^ mask, mask | forced
        stones += 1
        alpha, beta = -beta, -alpha
        flips += 1
        sign = -sign


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
    mask``) while a thread searches it, or -1 where children are not shared out:
    with one thread (no table), and from ``DEFER_PLIES`` on, where subtrees are
    too small for a shared write and read per node to pay.

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


@numba.njit(SEARCH_SIGNATURE, cache=True, nogil=True)
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
    if depth <= 0:
        value = evaluate(current, mask, stones, mem[WEIGHTS:WEIGHTS + N_TERMS])
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
    count = 0
    for i in range(WIDTH):
        col = COLUMN_ORDER[i]
        move = safe & column_cells(col)
        if move == 0:
            continue
        threats = winning_cells(current | move, mask | move)  # the mover's, after the move
        value, f_current, f_mask, f_stones, flips, f_lo, f_hi = resolve(
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
        if f_stones < ETC_STONES:
            # Enhanced transposition cutoff: the table may already bound this child.
            f_key, _ = table_key(f_current, f_mask)
            f_entry = tt_lookup(mem, tt_slot(mem, f_key), f_key)
            if f_entry != 0 and entry_depth(f_entry) >= min(depth - 1, CELLS - f_stones):
                f_value, f_flag = entry_value(f_entry), entry_flag(f_entry)
                if f_flag != UPPER:
                    f_lo = max(f_lo, f_value)
                if f_flag != LOWER:
                    f_hi = min(f_hi, f_value)
                low, high = (f_lo, f_hi) if flips % 2 == 1 else (-f_hi, -f_lo)
                if low >= alpha:  # this node scores at least what this child does
                    alpha = low
                    proven_low = True
                    best_move = col
                    if alpha >= beta:
                        tt_store(mem, slot, key, alpha, needed, EXACT if proven_high else LOWER, col,
                                 mirrored)
                        return alpha
                if high <= alpha:  # the child cannot raise alpha: nothing to search
                    continue
        child = base + count * CHILD_WORDS
        mem[child + C_COL] = col
        mem[child + C_SCORE] = move_score(mask, move, col, tt_move, threats, opponent_threats)
        mem[child + C_CURRENT] = f_current
        mem[child + C_MASK] = f_mask
        mem[child + C_STONES] = f_stones
        mem[child + C_FLIPS] = flips
        mem[child + C_LO] = f_lo
        mem[child + C_HI] = f_hi
        count += 1
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
        c_current, c_mask, c_stones = mem[child + C_CURRENT], mem[child + C_MASK], mem[child + C_STONES]
        flips, c_lo, c_hi = mem[child + C_FLIPS], mem[child + C_LO], mem[child + C_HI]
        c_ply = ply + 1 + flips
        c_key = c_current + c_mask
        busy = busy_slot(mem, ply, c_key)
        if busy >= 0:
            if 0 < k < count and mem[busy] == c_key:  # another thread's: search it last
                mem[base + ORDER + end] = index
                end += 1
                continue
            mem[busy] = c_key
        # After an odd number of forced moves the child's side to move is this node's
        # again (the move and the flips make an even number).  Principal variation
        # search: every move but the first is proved worse with a null window first.
        sign = 1 if flips % 2 == 1 else -1
        c_alpha, c_beta = window_for(sign, alpha, beta if k == 0 else alpha + 1)
        value = sign * search_node(c_current, c_mask, c_stones, depth - 1, c_alpha, c_beta, c_lo, c_hi, c_ply,
                                   mem)
        if k > 0 and alpha < value < beta and not mem[ABORTED]:
            c_alpha, c_beta = window_for(sign, alpha, beta)
            value = sign * search_node(c_current, c_mask, c_stones, depth - 1, c_alpha, c_beta, c_lo, c_hi,
                                       c_ply, mem)
        if busy >= 0 and mem[busy] == c_key:
            mem[busy] = 0
        if mem[ABORTED]:
            return 0
        if value >= beta:
            tt_store(mem, slot, key, value, needed, EXACT if proven_high else LOWER, col, mirrored)
            return value
        if value > alpha:
            alpha = value
            proven_low = True
            best_move = col
    tt_store(mem, slot, key, alpha, needed, EXACT if proven_low else UPPER, best_move, mirrored)
    return alpha


@numba.njit(NEGAMAX_SIGNATURE, cache=True, nogil=True)
def negamax(current: int, mask: int, stones: int, depth: int, alpha: int, beta: int, ply: int,
            mem: np.ndarray) -> int:
    """Score of a position whose side to move cannot win at once, within ``[alpha, beta]``
    (see :func:`search_node`): forced moves first (:func:`resolve`), then the search."""
    value, current, mask, stones, flips, lo, hi = resolve(current, mask, stones, alpha, beta, mem)
    if value != UNRESOLVED:
        return value
    sign = -1 if flips % 2 == 1 else 1
    alpha, beta = window_for(sign, alpha, beta)
    return sign * search_node(current, mask, stones, depth, alpha, beta, lo, hi, ply + flips, mem)


@jit
def immediate_win(current: int, mask: int) -> int:
    """The cells where the side to move wins at once."""
    return winning_cells(current, mask) & playable_cells(mask)


@jit
def half(x: int) -> int:
    """``x / 2`` rounded toward zero, as C does it in Pons' driver."""
    return -((-x) // 2) if x < 0 else x // 2


@jit
def score_range(stones: int, weak: bool) -> tuple[int, int]:
    """The lowest and highest score a position with ``stones`` on the board can have
    (weak: clamped to -1..1, the sign)."""
    lowest = -((CELLS - stones) // 2)
    highest = (CELLS + 1 - stones) // 2
    if weak:
        return max(lowest, -1), min(highest, 1)
    return lowest, highest


@jit
def probe_point(lowest: int, highest: int, stones: int, first: bool) -> int:
    """Where to probe ``lowest..highest`` next (see :func:`solve`): halfway, moved halfway
    towards the extreme on its side, where a search fails fast; 0 for the first probe
    of an early position."""
    middle = lowest + half(highest - lowest)
    if first and stones < WEAK_FIRST_STONES:
        return 0
    if middle <= 0 and half(lowest) < middle:
        return half(lowest)
    if middle >= 0 and half(highest) > middle:
        return half(highest)
    return middle


@jit
def narrowed(lowest: int, highest: int, middle: int, value: int) -> tuple[int, int]:
    """``lowest..highest`` after a null-window probe at ``middle`` returned the internal
    ``value``, itself a bound that may narrow the range by more than the window did
    (clamped: a weak solve's range is narrower than the scores)."""
    probe = to_internal(middle)
    if value <= probe:
        return lowest, max(min(middle, to_pons(value)), lowest)
    return min(max(middle + 1, to_pons(value)), highest), highest


@jit
def probe(current: int, mask: int, stones: int, middle: int, mem: np.ndarray) -> int:
    """The null-window search at Pons score ``middle``: its internal value, above
    ``to_internal(middle)`` when the score is higher."""
    window = to_internal(middle)
    return negamax(current, mask, stones, CELLS, window, window + 1, 0, mem)


@jit
def solve(current: int, mask: int, stones: int, weak: bool,
          mem: np.ndarray) -> int:
    """Exact Pons score of a position that is not over (weak: only its sign), by
    null-window searches that narrow ``[lowest, highest]`` (Pons' driver: it probes
    halfway to the extremes first, where a search fails fast).  Every search's
    result is itself a bound on the score (see :func:`search_node`), which may
    narrow the range by more than the window did.

    Early positions (fewer than WEAK_FIRST_STONES) are probed at 0 first, as a
    weak solve, and narrowed from there: no four can come early, their scores lie
    near 0, and then Pons' far probes are wasted (4444: 34.4M -> 27.3M nodes);
    later, a probe at 0 costs up to four times Pons' order (Test_L1_R1).  The
    result is meaningless if ``mem[ABORTED]`` is set afterwards."""
    if immediate_win(current, mask):
        return 1 if weak else win_now(stones)
    lowest, highest = score_range(stones, weak)
    first = True
    while lowest < highest and not mem[ABORTED]:
        middle = probe_point(lowest, highest, stones, first)
        first = False
        value = probe(current, mask, stones, middle, mem)
        lowest, highest = narrowed(lowest, highest, middle, value)
    return lowest


@jit
def column_of(cell: int) -> int:
    """The column of a one-cell board."""
    for col in range(WIDTH):
        if cell & column_cells(col):
            return col
    return NO_MOVE


@jit
def principal_variation(current: int, mask: int, first_col: int, mem: np.ndarray,
                        out: np.ndarray) -> int:
    """Follow the table's best moves from the root after ``first_col``; write the
    columns into ``out`` and return how many.  Where the table has no move (the
    search plays forced moves without storing them), a win at once or the forced
    move is played.  It stops at an upper bound (every move failed low there, so
    the stored move is only the first one tried, not a best one), at a position
    with a choice and no entry, at an illegal move or at the end of the game."""
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
        key, mirrored = table_key(current, mask)
        entry = tt_lookup(mem, tt_slot(mem, key), key)
        wins = immediate_win(current, mask)
        if entry != 0 and entry_flag(entry) != UPPER:
            col = stored_move(entry_move(entry), mirrored)
        elif wins:
            col = column_of(wins & -wins)
        else:
            col = column_of(forced_move(*forced_cells(current, mask)))
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
