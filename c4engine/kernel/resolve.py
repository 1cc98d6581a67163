"""Static resolution: what a position's threats settle before it costs a node.

Forced moves are played in a loop; a side facing two wins (or a win above the
one it must block) has lost; a side that cannot make a line any more scores at
most 0; no win or loss can come sooner than the next moves allow; and when the
side to move has an even number of empty cells left, the other side's
follow-up strategy (Allis' claimeven, generalised) bounds its score from above
(:func:`follow_up_bound`).

Which rule holds where: every rule holds on every board and every row length
(they only use what a line of ``CONNECT`` cells is, and the follow-up only
that the cells left pair up, see :func:`follow_up_bound`).  The book answers on
7x6 with four in a row only.
"""

from __future__ import annotations

import numpy as np

from ..rules.scores import MATE
from .book import NOT_IN_BOOK, book_score
from .book import SCORE_STONES as BOOK_STONES
from .built_book import built_book_value
from .constants import BOARD_MASK, BOTTOM_MASK, CELLS, CONNECT, FULL, GEOMETRY, H1, HAS_BOOK, HEIGHT, board_bits
from .evaluation import odd_rows
from .jit import (
    has_line,
    jit,
    line_fits,
    line_starts,
    playable_cells,
    smear_up,
    to_internal,
    winning_cells,
)
from .layout import BOOK_ADDRESS, BOOK_RECORDS, BUILT_ADDRESS, BUILT_ENTRIES, BUILT_STONES, BUILT_WEAK, INFINITE

UNRESOLVED = 1 << 20  # what resolve() returns for a position it cannot settle (no score reaches it)
NO_BOUND = INFINITE  # what follow_up_bound() returns when it proves nothing
# The rows the follower claims (see follow_up_bound): the top row and every second
# row below it; on an even height the even rows (Allis' claimeven), on an odd
# height the odd ones.
FOLLOW_UP_ROWS = board_bits(odd_rows(GEOMETRY) if HEIGHT % 2 else GEOMETRY.board_mask ^ odd_rows(GEOMETRY))


@jit
def can_make_line(stones: int, mask: int) -> bool:
    """Whether ``stones`` could still complete a line if they got every empty cell."""
    return has_line(stones | (BOARD_MASK & ~mask))


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
def bound_from_line(line: int, mine: int, empty: int) -> int:
    """The bound a line of the follower's gives (see follow_up_bound), or NO_BOUND
    when one of the mover's lines in ``mine`` can be completed first."""
    open_cells = line & empty
    tops = open_cells & ~(open_cells >> 1)
    passed_first = smear_up((tops << 1) & BOARD_MASK)
    columns = columns_of(open_cells)
    while columns != 0:
        column = columns & -columns
        columns ^= column
        if has_line(mine & ~(passed_first & column * ((1 << HEIGHT) - 1))):
            return NO_BOUND
    highest_row = 0
    for row in range(HEIGHT):
        if tops & (BOTTOM_MASK << row):
            highest_row = row
    return to_internal(-((HEIGHT + 1 - highest_row) // 2))


@jit
def follow_up_bound(current: int, mask: int) -> int:
    """An upper bound on the score of the side to move, which must have an even
    number of empty cells left, from the other side's follow-up strategy (Allis'
    claimeven, generalised to any height), or NO_BOUND.

    The other side, the follower, answers each move in the same column where it
    can.  A column with an even number of empty cells pairs them from its
    lowest one up, and the follower gets the upper cell of each pair.  Columns
    with an odd number come in pairs (the cells left are even in all): a move
    into one of them is answered in another, after which both hold an even
    number, so giving the mover every playable cell only flatters him.  Either
    way the follower gets every empty cell that is not playable now and lies on
    the top row or an even number of rows below it (FOLLOW_UP_ROWS: on 7x6 the
    even rows, claimeven; on an odd height the odd rows).  If the follower then
    owns a four F, he wins by it unless the mover completes one of his own
    first.  The mover's four P comes too late when, in every column where F
    still has an empty cell, P needs a cell above F's highest one there: the
    column passes F's cell first.  So if some F beats every P, the mover loses,
    at the latest when F's last cell is filled, which leaves the cells above it
    empty.  If neither side owns a four, the mover scores at most a draw."""
    empty = BOARD_MASK & ~mask
    theirs = (current ^ mask) | (FOLLOW_UP_ROWS & empty & ~playable_cells(mask))
    mine = BOARD_MASK & ~theirs
    if not has_line(theirs):
        return NO_BOUND if has_line(mine) else 0
    bound = NO_BOUND
    for shift in (1, H1, HEIGHT, H1 + 1):  # vertical, horizontal, the two diagonals
        if not line_fits(shift):
            continue
        starts = line_starts(theirs, shift)  # the first cell of each line
        while starts != 0:
            start = starts & -starts
            starts ^= start
            line = start  # not a literal 0, for which numba would compile bound_from_line twice
            for i in range(1, CONNECT):
                line |= start << (i * shift)
            bound = min(bound, bound_from_line(line, mine, empty))
    return bound


@jit
def forced_cells(current: int, mask: int, opponent_threats: int = -1) -> tuple[int, int]:
    """For the side to move: the opponent's immediate wins (cells it must block) and
    the playable cells that are not right below an opponent threat (moves that do
    not hand the opponent a four).  ``opponent_threats`` may be given when the
    caller has them (-1: compute them).  The kernel always gives them: a literal -1
    would have numba compile this function and its callers a second time, for
    that constant."""
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
    second; a side that can no longer make a line scores at most a draw; the
    12-stone book answers exactly, and so does a book built by ``c4engine book build``
    at its plies (a weak one bounds the score).  When those bounds cut ``[alpha, beta]`` (of
    the given position), the position is settled.

    Returns ``(value, current, mask, stones, flips, lo, hi)``: ``value`` for the
    given position's side to move, or UNRESOLVED; then the position reached
    after the forced moves, how many were played, and its proven bounds
    ``lo <= score <= hi`` from its own side's view."""
    flips = 0
    sign = 1
    while True:
        opponent_wins, safe = forced_cells(current, mask, opponent_threats)
        if safe == 0 or (opponent_wins != 0 and (opponent_wins & (opponent_wins - 1) != 0
                                                 or opponent_wins & safe == 0)):
            return sign * loss_now(stones), current, mask, stones, flips, 0, 0
        if stones >= CELLS - 2:
            return 0, current, mask, stones, flips, 0, 0
        if HAS_BOOK and stones == BOOK_STONES and mem[BOOK_RECORDS] > 0:
            book = book_score(mem[BOOK_ADDRESS], mem[BOOK_RECORDS], current, mask)
            if book != NOT_IN_BOOK:
                return sign * to_internal(book), current, mask, stones, flips, 0, 0
        lo = to_internal(-((CELLS - 2 - stones) // 2))
        hi = to_internal((CELLS - 1 - stones) // 2)
        if not can_make_line(current, mask):
            hi = 0
        if FULL and stones == mem[BUILT_STONES] and mem[BUILT_ENTRIES] > 0:
            built = built_book_value(mem[BUILT_ADDRESS], mem[BUILT_ENTRIES], current, mask)
            if built != NOT_IN_BOOK and (built == 0 or mem[BUILT_WEAK] == 0):
                return sign * to_internal(built), current, mask, stones, flips, 0, 0
            if built != NOT_IN_BOOK:  # a weak book's win or loss: a bound
                lo, hi = (max(lo, MATE + 1), hi) if built > 0 else (lo, min(hi, -MATE - 1))  # to_internal(+-1)
        if lo >= beta:
            return sign * lo, current, mask, stones, flips, 0, 0
        if hi <= alpha:
            return sign * hi, current, mask, stones, flips, 0, 0
        forced = forced_move(opponent_wins, safe)
        if forced == 0:
            if (CELLS - stones) % 2 == 0:  # the cells left pair up: the opponent may follow up
                hi = min(hi, follow_up_bound(current, mask))
                if hi <= alpha:
                    return sign * hi, current, mask, stones, flips, 0, 0
            return UNRESOLVED, current, mask, stones, flips, lo, hi
        current, mask = current ^ mask, mask | forced
        opponent_threats = winning_cells(current ^ mask, mask)  # computed here: see forced_cells
        stones += 1
        alpha, beta = -beta, -alpha
        flips += 1
        sign = -sign
