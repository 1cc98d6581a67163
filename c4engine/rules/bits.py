"""Bit tricks on the Connect-Four bitboard of any size, written once for two runtimes.

The board is Pascal Pons' layout (docs/design.md, "Board layout"): column ``c``
owns bits ``c*(H+1) .. c*(H+1)+H``; the lowest ``H`` are its cells from the
bottom up and the top one is a sentinel that stays empty, so that shifts never
carry a line across two columns.  A position is ``(current, mask)``: the stones
of the side to move and all stones.

Every function takes the board constants it needs (width, height, row length,
masks) as plain integers, never a global: the rules layer passes a
:class:`~c4engine.geometry.Geometry`'s values, and the search kernel compiles
the very same source with numba, passing its geometry's constants, which
numba folds into the machine code (see ``kernel/jit.py``).  Every expression
therefore has to mean the same thing on unbounded Python ints and on wrapping
int64: shifts may run past bit 63 in numba, but every result is masked to the
board's bits before it is used, so the lost high bits never matter.  A shift
by 64 or more is undefined in machine code, so a direction is only looked at
when a line of ``connect`` cells fits in it: then no shift reaches 64 on a
board of at most 64 bits.
"""

from __future__ import annotations


def bottom_cell(col: int, height: int) -> int:
    """The lowest cell of ``col``."""
    return 1 << (col * (height + 1))


def top_cell(col: int, height: int) -> int:
    """The highest playable cell of ``col``."""
    return 1 << (height - 1 + col * (height + 1))


def column_cells(col: int, height: int) -> int:
    """All cells of ``col``."""
    return ((1 << height) - 1) << (col * (height + 1))


def popcount(x: int) -> int:
    """Number of set bits of a board (at most 63, which keeps the top byte exact)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 0xFF


def playable_cells(mask: int, bottom_mask: int, board_mask: int) -> int:
    """The lowest empty cell of every column that is not full."""
    return (mask + bottom_mask) & board_mask


def line_fits(shift: int, width: int, height: int, connect: int) -> bool:
    """Whether a line of ``connect`` cells fits on the board in the direction of
    ``shift`` (1 vertical, H+1 horizontal, H and H+2 the two diagonals)."""
    if shift == 1:
        return connect <= height
    if shift == height + 1:
        return connect <= width
    return connect <= width and connect <= height


def line_starts(stones: int, shift: int, connect: int) -> int:
    """The first (lowest) cell of every line of ``connect`` of ``stones`` in the
    direction of ``shift``: runs of length 1, 2, 4, ... joined by doubling, so
    four in a row takes two steps, as the classic ``pairs`` trick does."""
    run = stones
    length = 1
    while length < connect:
        step = min(length, connect - length)
        run &= run >> (step * shift)
        length += step
    return run


def has_line(stones: int, width: int, height: int, connect: int) -> bool:
    """Whether ``stones`` contain ``connect`` in a row in any direction."""
    for shift in (1, height + 1, height, height + 2):  # vertical, horizontal, two diagonals
        if line_fits(shift, width, height, connect) and line_starts(stones, shift, connect) != 0:
            return True
    return False


def winning_cells(stones: int, mask: int, board_mask: int, width: int, height: int, connect: int) -> int:
    """Empty cells (playable now or later) that would complete a line of ``connect``
    for ``stones``: for each split of the other ``connect - 1`` cells into ``a``
    on one side and ``connect - 1 - a`` on the other.  Four in a row has its own
    branch, the classic formula, which shares the pairs between the splits (the
    general loop costs the kernel a third of its speed there)."""
    cells = 0
    if connect <= height:  # vertical: the cells above an empty cell are empty
        below = stones << 1
        for a in range(2, connect):
            below &= stones << a
        cells = below
    for shift in (height + 1, height, height + 2):  # horizontal and the two diagonals
        if not line_fits(shift, width, height, connect):
            continue
        if connect == 4:
            pairs = (stones << shift) & (stones << (2 * shift))
            cells |= pairs & ((stones << (3 * shift)) | (stones >> shift))
            pairs = (stones >> shift) & (stones >> (2 * shift))
            cells |= pairs & ((stones << shift) | (stones >> (3 * shift)))
            continue
        below = -1  # stones at 1..a steps back (all cells for a = 0)
        for a in range(connect):
            if a > 0:
                below &= stones << (a * shift)
            above = -1  # stones at 1..connect-1-a steps ahead
            for b in range(1, connect - a):
                above &= stones >> (b * shift)
            cells |= below & above
    return cells & (board_mask ^ mask)


def smear_up(cells: int, height: int, board_mask: int) -> int:
    """``cells`` and every cell above each of them in the same column."""
    for _ in range(height - 1):
        cells |= (cells << 1) & board_mask
    return cells


def mirror(stones: int, width: int, height: int) -> int:
    """The board reflected left to right (column ``c`` becomes ``width - 1 - c``)."""
    if width == 1:
        return stones  # and no shift by a whole 64-bit column below
    h1 = height + 1
    out = 0
    for col in range(width):
        out |= ((stones >> (col * h1)) & ((1 << h1) - 1)) << ((width - 1 - col) * h1)
    return out
