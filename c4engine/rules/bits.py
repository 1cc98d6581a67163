"""Bit tricks on the Connect-Four bitboard, written once for two runtimes.

The board is Pascal Pons' layout: column ``c`` owns bits ``7*c .. 7*c+6``;
bits ``7*c .. 7*c+5`` are its six cells from the bottom up and bit ``7*c+6``
is a sentinel that stays empty, so that shifts never carry a four across
two columns.  A position is ``(current, mask)``: the stones of the side to
move and all stones.

These functions are plain Python on purpose: the rules layer calls them as
they are, and the search kernel compiles the very same source with numba
(see ``jitbits``).  Every expression therefore has to mean the same thing on
unbounded Python ints and on wrapping int64: shifts may run past bit 63 in
numba, but every result is masked to the 49 board bits before it is used, so
the lost high bits never matter.
"""

from __future__ import annotations

WIDTH = 7
HEIGHT = 6
H1 = HEIGHT + 1
CELLS = WIDTH * HEIGHT

BOTTOM_MASK = 0x0000_0408_1020_4081  # bit 0 of every column
BOARD_MASK = BOTTOM_MASK * ((1 << HEIGHT) - 1)


def bottom_cell(col: int) -> int:
    """The lowest cell of ``col``."""
    return 1 << (col * H1)


def top_cell(col: int) -> int:
    """The highest playable cell of ``col``."""
    return 1 << (HEIGHT - 1 + col * H1)


def column_cells(col: int) -> int:
    """All six cells of ``col``."""
    return ((1 << HEIGHT) - 1) << (col * H1)


def popcount(x: int) -> int:
    """Number of set bits of a board (at most 49, which keeps the top byte exact)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 0xFF


def playable_cells(mask: int) -> int:
    """The lowest empty cell of every column that is not full."""
    return (mask + BOTTOM_MASK) & BOARD_MASK


def has_four(stones: int) -> bool:
    """Whether ``stones`` contain four in a row in any direction."""
    for shift in (1, H1, HEIGHT, H1 + 1):  # vertical, horizontal, two diagonals
        pairs = stones & (stones >> shift)
        if pairs & (pairs >> (2 * shift)):
            return True
    return False


def winning_cells(stones: int, mask: int) -> int:
    """Empty cells (playable now or later) that would complete a four for ``stones``."""
    # vertical: three stones right below
    r = (stones << 1) & (stones << 2) & (stones << 3)
    for shift in (H1, HEIGHT, H1 + 1):  # horizontal and the two diagonals
        p = (stones << shift) & (stones << (2 * shift))
        r |= p & (stones << (3 * shift))
        r |= p & (stones >> shift)
        p = (stones >> shift) & (stones >> (2 * shift))
        r |= p & (stones << shift)
        r |= p & (stones >> (3 * shift))
    return r & (BOARD_MASK ^ mask)


def smear_up(cells: int) -> int:
    """``cells`` and every cell above each of them in the same column."""
    for _ in range(HEIGHT - 1):
        cells |= (cells << 1) & BOARD_MASK
    return cells


def mirror(stones: int) -> int:
    """The board reflected left to right (column ``c`` becomes ``6 - c``)."""
    out = 0
    for col in range(WIDTH):
        out |= ((stones >> (col * H1)) & ((1 << H1) - 1)) << ((WIDTH - 1 - col) * H1)
    return out
