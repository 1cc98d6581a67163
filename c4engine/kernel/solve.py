"""The exact solver's driver and the principal variation.

:func:`solve` narrows a position's score with null-window probes of the
recursion (:mod:`c4engine.kernel.negamax`), which it calls through
:func:`~c4engine.kernel.negamax.call_negamax`; the loops over the root's moves live
in the search driver, in Python.
"""

from __future__ import annotations

import numpy as np

from .constants import CELLS, WIDTH
from .jit import (
    column_cells,
    entry,
    jit,
    playable_cells,
    to_internal,
    to_pons,
    win_now,
    winning_cells,
)
from .layout import ABORTED, KEEP_DEEPER, PROBE
from .negamax import call_negamax
from .resolve import forced_cells, forced_move
from .table import (
    NO_MOVE,
    UPPER,
    entry_flag,
    entry_move,
    stored_move,
    table_key,
    tt_lookup,
    tt_slot,
)

# Positions with fewer stones are early (see solve()): more than 36 empty cells, as
# 7x6's first 6 stones leave, where the rule was tuned; never fewer than 6 stones,
# so the boards smaller than 7x6 keep it (docs/design.md, "Move order").
WEAK_FIRST_STONES = max(6, CELLS - 36)


@jit
def immediate_win(current: int, mask: int) -> int:
    """The cells where the side to move wins at once."""
    return winning_cells(current, mask) & playable_cells(mask)


@jit
def half(x: int) -> int:
    """``x / 2`` rounded toward zero, as C does it in Pons' driver."""
    return -((-x) // 2) if x < 0 else x // 2


@entry
def score_range(stones: int, weak: bool) -> tuple[int, int]:
    """The lowest and highest score a position with ``stones`` on the board can have
    (weak: clamped to -1..1, the sign)."""
    lowest = -((CELLS - stones) // 2)
    highest = (CELLS + 1 - stones) // 2
    if weak:
        return max(lowest, -1), min(highest, 1)
    return lowest, highest


@entry
def probe_point(lowest: int, highest: int, stones: int) -> int:
    """Where to probe ``lowest..highest`` next (see :func:`solve`): for an early position,
    0 while the range holds both signs, then the next score out from 0 on the
    range's side; later, halfway, moved halfway towards the extreme on its side,
    where a search fails fast."""
    if stones < WEAK_FIRST_STONES:
        if lowest <= 0 < highest:
            return 0
        return highest - 1 if highest <= 0 else lowest
    middle = lowest + half(highest - lowest)
    if middle <= 0 and half(lowest) < middle:
        return half(lowest)
    if middle >= 0 and half(highest) > middle:
        return half(highest)
    return middle


@entry
def narrowed(lowest: int, highest: int, middle: int, value: int) -> tuple[int, int]:
    """``lowest..highest`` after a null-window probe at ``middle`` returned the internal
    ``value``, itself a bound that may narrow the range by more than the window did
    (clamped: a weak solve's range is narrower than the scores)."""
    probe = to_internal(middle)
    if value <= probe:
        return lowest, max(min(middle, to_pons(value)), lowest)
    return min(max(middle + 1, to_pons(value)), highest), highest


@entry
def probe(current: int, mask: int, stones: int, middle: int, mem: np.ndarray) -> int:
    """The null-window search at Pons score ``middle``: its internal value, above
    ``to_internal(middle)`` when the score is higher.  ``mem[PROBE]`` says which
    probe runs (as in :func:`solve`), for progress reports."""
    mem[PROBE] = middle
    mem[KEEP_DEEPER] = 1
    window = to_internal(middle)
    return call_negamax(current, mask, stones, CELLS, window, window + 1, 0, mem)


@entry
def solve(current: int, mask: int, stones: int, weak: bool,
          mem: np.ndarray) -> int:
    """Exact Pons score of a position that is not over (weak: only its sign), by
    null-window searches that narrow ``[lowest, highest]`` (Pons' driver: it probes
    halfway to the extremes first, where a search fails fast).  Every search's
    result is itself a bound on the score (see :func:`search_node`), which may
    narrow the range by more than the window did.

    Early positions (fewer than WEAK_FIRST_STONES: 6 on 7x6, 12 on 8x6, 13 on
    7x7) are probed at 0 first, as a
    weak solve, then one score further out at a time: no four can come early,
    their scores lie near 0, and then Pons' far probes are wasted (each probe
    towards the score costs more than the one before, and the last, next to the
    score, most); later, a probe at 0 costs more than Pons' order.  The
    probe being searched is in ``mem[PROBE]``, for progress reports.  The
    result is meaningless if ``mem[ABORTED]`` is set afterwards."""
    if immediate_win(current, mask):
        return 1 if weak else win_now(stones)
    lowest, highest = score_range(stones, weak)
    while lowest < highest and not mem[ABORTED]:
        middle = probe_point(lowest, highest, stones)
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


@entry
def table_move(current: int, mask: int, mem: np.ndarray) -> int:
    """The move the table holds for a position whose entry is a lower bound or exact:
    the move that reached that bound.  NO_MOVE without an entry, or at an upper bound
    (every move failed low there, and the stored move is only the first one tried)."""
    key, mirrored = table_key(current, mask)
    entry = tt_lookup(mem, tt_slot(mem, key), key)
    if entry == 0 or entry_flag(entry) == UPPER:
        return NO_MOVE
    return stored_move(entry_move(entry), mirrored)


@entry
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
        wins = immediate_win(current, mask)
        stored = table_move(current, mask, mem)
        if stored != NO_MOVE:
            col = stored
        elif wins:
            col = column_of(wins & -wins)
        else:
            col = column_of(forced_move(*forced_cells(current, mask, winning_cells(current ^ mask, mask))))
    return length
