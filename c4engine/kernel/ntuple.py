"""An n-tuple network evaluation (Thill, Koch & Konen 2012): table look-ups over board cells.

A tuple is a few cells of the board (a random walk over neighbouring cells);
its cells' contents (empty, first player's stone, second player's stone) read
as a number in base 3 index a table of values learned from exactly scored
positions (:mod:`c4engine.ntuple_training`).  The position's value for the
first player is the sum over the tuples of their table entries, each tuple read
once on the board and once on its mirror image with the same table (the game is
symmetric under mirroring); the side to move's value is that or its negation.
The side to move follows from the stone count, so colours, not "mover" and
"opponent", are what the tables see: the zugzwang rules favour the first player
on some rows and the second on others.

The network is one int32 array, a *block*, in this layout, so that the kernel
gets it as an address and a size (like the opening book) through two slots of
the evaluation's weight vector (:mod:`c4engine.kernel.evaluation`):

* ``block[0]`` rows (twice the tuples: each tuple, then its mirror image),
  ``block[1]`` cells per tuple ``n`` (``TUPLE_LENGTH``), ``block[2]`` the table
  size ``3 ** n``;
* then ``rows * n`` cell bit indices, row by row;
* then one table per tuple (``rows // 2`` tables), in units of
  ``1 / 2 ** FRACTION_BITS`` centipawn, so that a sum of many small entries
  keeps its precision.
"""

from __future__ import annotations

import numpy as np

from .book import bytes_at
from .jit import jit

ROWS, LENGTH, TABLE_SIZE = range(3)
HEADER = 3
FRACTION_BITS = 8
STATES = 3  # empty, first player's stone, second player's stone
TUPLE_LENGTH = 8  # cells per tuple: a constant, so that the loop over them unrolls (twice as fast)


@jit
def tuple_index(cells: np.ndarray, at: int, first: int, second: int) -> int:
    """The table index of the tuple whose cells are ``cells[at:at + TUPLE_LENGTH]``."""
    index = 0
    for k in range(TUPLE_LENGTH):
        cell = cells[at + k]
        index = STATES * index + ((first >> cell) & 1) + 2 * ((second >> cell) & 1)
    return index


@jit
def block_value(block: np.ndarray, first: int, second: int) -> int:
    """The first player's value in the block's units: the sum of the tuples' entries."""
    rows, size = block[ROWS], block[TABLE_SIZE]
    tables = HEADER + rows * TUPLE_LENGTH
    total = 0
    for row in range(rows):
        total += block[tables + (row >> 1) * size + tuple_index(block, HEADER + row * TUPLE_LENGTH, first, second)]
    return total


@jit
def ntuple_evaluate(address: int, words: int, current: int, mask: int, stones: int) -> int:
    """The side to move's value in centipawns of the block of ``words`` int32 at ``address``."""
    block = bytes_at(address, 4 * words).view(np.int32)
    first_to_move = stones % 2 == 0
    first = current if first_to_move else current ^ mask
    value = block_value(block, first, first ^ mask) >> FRACTION_BITS
    return value if first_to_move else -value


def block_address(block: np.ndarray) -> int:
    """Where a contiguous int32 block's words lie (it must outlive every search using it)."""
    if block.dtype != np.int32 or not block.flags.c_contiguous:
        raise ValueError("an n-tuple block is a contiguous int32 array")
    return int(block.ctypes.data)

