"""An n-tuple network evaluation (Thill, Koch & Konen 2012): table look-ups over board cells.

A tuple is a few cells of the board (a random walk over neighbouring cells);
its cells' contents (empty, first player's stone, second player's stone) read
as a number in base 3 index a table of values learned from exactly scored
positions (:mod:`c4engine.training.network`).  The position's value for the
first player is the sum over the tuples of their table entries, each tuple read
once on the board and once on its mirror image with the same table (the game is
symmetric under mirroring); the side to move's value is that or its negation.
The side to move follows from the stone count, so colours, not "mover" and
"opponent", are what the tables see: the zugzwang rules favour the first player
on some rows and the second on others.

The network is one int32 array, a *block*, in this layout, so that the kernel
gets it as an address and a size (like the opening book) through two slots of
the evaluation's weight vector (:mod:`c4engine.kernel.evaluation`).  The fitting
step (:func:`sgd_epoch`, used by :mod:`c4engine.training.network`) lives here
too, so that it is compiled with the look-ups it shares:

* ``block[0]`` rows (twice the tuples: each tuple, then its mirror image),
  ``block[1]`` cells per tuple ``n`` (``TUPLE_LENGTH``), ``block[2]`` the table
  size ``3 ** n``;
* then ``rows * n`` cell bit indices, row by row;
* then one table per tuple (``rows // 2`` tables), in units of
  ``1 / 2 ** FRACTION_BITS`` centipawn, so that a sum of many small entries
  keeps its precision.

Reading every row's cells at every leaf made a node of 7x6's network (300
rows) cost three times one of threat counting.  A search thread keeps a *state*
instead (in its context, ``layout.NETWORK_STATE``): the stones of the last
position it evaluated, each row's index and table entry there and their sum,
and each cell's rows with the cell's weight in their index.  The next leaf, a
few stones away (three on average in ``bench``), moves only the rows of the
cells that differ, each by the change of its cell's contents times its weight,
and the sum by those rows' new entries less their old: integers, so the value
is the full sum's, bit for bit.  The state is made from the block at a search's
first leaf (``begin_search`` marks it unmade), as the empty board's, so no
search sees another network's rows; the exact solver, which never evaluates,
never touches it.  Its layout (int64 words):

* ``S_MADE`` (0: make it first), ``S_TOTAL`` the last position's sum,
  ``S_FIRST`` and ``S_SECOND`` its stones, two words each (the high one unused
  on a board of 64 bits or fewer: :func:`~c4engine.kernel.jit.store_bits`);
* at ``S_STARTS``, where each cell's (row, weight) pairs start, for each bit
  of the board's bitboard (64, or 128 past 64 bits: 8x8's cells reach bit
  70), then their end;
* at ``S_INDEX``, each row's index; then each row's entry; then the pairs, one
  word each: the row, and its cell's weight (``STATES ** place``) shifted by
  ``WEIGHT_SHIFT``.
"""

from __future__ import annotations

import numpy as np

from .book import bytes_at
from .constants import BOARD_WORDS
from .jit import entry, jit, load_bits, low_word, popcount, store_bits

ROWS, LENGTH, TABLE_SIZE = range(3)
HEADER = 3
FRACTION_BITS = 8
STATES = 3  # empty, first player's stone, second player's stone
TUPLE_LENGTH = 8  # cells per tuple: a constant, so that the loop over them unrolls (twice as fast)
CELL_BITS = 64 * BOARD_WORDS  # a tuple's cells are bits of the board's bitboard, one word or two
MAX_ROWS = 1024  # rows a search thread's state has room for: 512 tuples (7x6's network has 150)
MAX_TUPLES = MAX_ROWS // 2
S_MADE, S_TOTAL, S_FIRST, S_SECOND = 0, 1, 2, 4
S_STARTS = S_SECOND + 2
S_INDEX = -(-(S_STARTS + CELL_BITS + 1) // 8) * 8  # past the starts, so that the state is whole cache lines
WEIGHT_SHIFT = 32
ROW_BITS = (1 << WEIGHT_SHIFT) - 1
STATE_WORDS = S_INDEX + MAX_ROWS * (2 + TUPLE_LENGTH)


@jit
def tuple_index(cells: np.ndarray, at: int, first: int, second: int) -> int:
    """The table index of the tuple whose cells are ``cells[at:at + TUPLE_LENGTH]``."""
    index = 0
    for k in range(TUPLE_LENGTH):
        index = STATES * index + cell_state(cells[at + k], first, second)
    return index


@jit
def cell_state(cell: int, first: int, second: int) -> int:
    """A cell's contents as a tuple reads them: 0 empty, 1 the first player's, 2 the second's."""
    return low_word((first >> cell) & 1) + 2 * low_word((second >> cell) & 1)


@entry
def block_value(block: np.ndarray, first: int, second: int) -> int:
    """The first player's value in the block's units: the sum of the tuples' entries."""
    rows, size = block[ROWS], block[TABLE_SIZE]
    tables = HEADER + rows * TUPLE_LENGTH
    total = 0
    for row in range(rows):
        total += block[tables + (row >> 1) * size + tuple_index(block, HEADER + row * TUPLE_LENGTH, first, second)]
    return total


@entry
def sides(current: int, mask: int, stones: int) -> tuple[int, int, bool]:
    """The first player's stones, the second's, and whether the first is to move."""
    first_to_move = stones % 2 == 0
    first = current if first_to_move else current ^ mask
    return first, first ^ mask, first_to_move


@jit
def ntuple_evaluate(address: int, words: int, current: int, mask: int, stones: int, state: np.ndarray) -> int:
    """The side to move's value in centipawns of the block of ``words`` int32 at ``address``,
    :func:`block_value`'s, from ``state`` moved to this position."""
    first, second, first_to_move = sides(current, mask, stones)
    value = state_value(bytes_at(address, 4 * words).view(np.int32), first, second, state) >> FRACTION_BITS
    return value if first_to_move else -value


@jit
def state_value(block: np.ndarray, first: int, second: int, state: np.ndarray) -> int:
    """:func:`block_value` of the position with stones ``first`` and ``second``: the
    rows of the cells that differ from the state's position moved, and the state
    left at this position (made first if it is not, see the module docstring)."""
    if state[S_MADE] == 0:
        make_state(block, state)
    rows, size = block[ROWS], block[TABLE_SIZE]
    tables, entries, pairs = HEADER + rows * TUPLE_LENGTH, S_INDEX + rows, S_INDEX + 2 * rows
    old_first, old_second, total = load_bits(state, S_FIRST), load_bits(state, S_SECOND), state[S_TOTAL]
    changed = (first ^ old_first) | (second ^ old_second)
    while changed != 0:
        cell = popcount((changed & -changed) - 1)
        change = cell_state(cell, first, second) - cell_state(cell, old_first, old_second)
        for pair in range(pairs + state[S_STARTS + cell], pairs + state[S_STARTS + cell + 1]):
            row = state[pair] & ROW_BITS
            index = state[S_INDEX + row] + change * (state[pair] >> WEIGHT_SHIFT)
            entry = block[tables + (row >> 1) * size + index]
            total += entry - state[entries + row]
            state[S_INDEX + row], state[entries + row] = index, entry
        changed &= changed - 1
    store_bits(state, S_FIRST, first)
    store_bits(state, S_SECOND, second)
    state[S_TOTAL] = total
    return total


@jit
def make_state(block: np.ndarray, state: np.ndarray) -> None:
    """The state of the empty board: every index 0, every row's entry (and their sum)
    its table's first, and each cell's pairs (a counting sort of the block's cells)."""
    rows, size = block[ROWS], block[TABLE_SIZE]
    cells, entries, pairs = rows * TUPLE_LENGTH, S_INDEX + rows, S_INDEX + 2 * rows
    state[S_STARTS:S_INDEX] = 0
    for k in range(cells):
        state[S_STARTS + block[HEADER + k] + 1] += 1
    for cell in range(CELL_BITS):  # each cell's end, then each cell's start as its pairs are placed
        state[S_STARTS + cell + 1] += state[S_STARTS + cell]
    for k in range(cells - 1, -1, -1):
        end = S_STARTS + block[HEADER + k] + 1
        state[end] -= 1
        state[pairs + state[end]] = k // TUPLE_LENGTH + (STATES ** (TUPLE_LENGTH - 1 - k % TUPLE_LENGTH) << WEIGHT_SHIFT)
    for cell in range(CELL_BITS):
        state[S_STARTS + cell] = state[S_STARTS + cell + 1]
    state[S_STARTS + CELL_BITS] = cells
    total = 0
    for row in range(rows):
        state[S_INDEX + row] = 0
        state[entries + row] = block[HEADER + cells + (row >> 1) * size]
        total += state[entries + row]
    state[S_FIRST:S_STARTS] = 0
    state[S_MADE], state[S_TOTAL] = 1, total


@jit
def sigmoid(x: float) -> float:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@entry
def network_values(cells: np.ndarray, tables: np.ndarray, current: np.ndarray, mask: np.ndarray,
                   stones: np.ndarray) -> np.ndarray:
    """The side to move's value of each position, with float ``tables`` (logits) and the
    block's ``cells``: what training fits."""
    rows = cells.size // TUPLE_LENGTH
    out = np.empty(current.size)
    for i in range(current.size):
        first, second, first_to_move = sides(current[i], mask[i], stones[i])
        v = 0.0
        for row in range(rows):
            v += tables[row >> 1, tuple_index(cells, row * TUPLE_LENGTH, first, second)]
        out[i] = v if first_to_move else -v
    return out


@entry
def sgd_epoch(cells: np.ndarray, tables: np.ndarray, current: np.ndarray, mask: np.ndarray,
              stones: np.ndarray, result: np.ndarray, order: np.ndarray, rate: float, margin: float,
              decay: float, features: np.ndarray, linear: np.ndarray) -> float:
    """One pass in ``order``; each step moves the entries the position reads down the
    gradient of its log-loss (plus ``decay`` times the entries, an L2 penalty).  A
    hybrid's value adds ``features[i] @ linear`` (the linear model's counts from the
    side to move's view, and its weights in logits), a fixed offset: fitting those
    weights jointly with the tables scored no better on the 7x7 held-out set; no
    columns, no linear part.
    Returns the gradient of the mean log-loss with respect to the margin."""
    rows = cells.size // TUPLE_LENGTH
    index = np.empty(rows, dtype=np.int64)
    margin_gradient = 0.0
    for i in order:
        first, second, first_to_move = sides(current[i], mask[i], stones[i])
        v = 0.0
        for row in range(rows):
            index[row] = tuple_index(cells, row * TUPLE_LENGTH, first, second)
            v += tables[row >> 1, index[row]]
        e = v if first_to_move else -v
        for f in range(linear.size):
            e += features[i, f] * linear[f]
        s_win, s_loss = sigmoid(e - margin), sigmoid(-e - margin)
        if result[i] > 0:
            g_e, g_m = -(1 - s_win), 1 - s_win
        elif result[i] < 0:
            g_e, g_m = 1 - s_loss, 1 - s_loss
        else:
            p_draw = max(1.0 - s_win - s_loss, 1e-12)
            d_win, d_loss = s_win * (1 - s_win), s_loss * (1 - s_loss)
            g_e, g_m = (d_win - d_loss) / p_draw, -(d_win + d_loss) / p_draw
        margin_gradient += g_m
        g_v = g_e if first_to_move else -g_e
        for row in range(rows):
            t, k = row >> 1, index[row]
            tables[t, k] -= rate * (g_v + decay * tables[t, k])
    return margin_gradient / max(order.size, 1)


def block_address(block: np.ndarray) -> int:
    """Where a contiguous int32 block's words lie (it must outlive every search using it)."""
    if block.dtype != np.int32 or not block.flags.c_contiguous:
        raise ValueError("an n-tuple block is a contiguous int32 array")
    return int(block.ctypes.data)

