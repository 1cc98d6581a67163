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
"""

from __future__ import annotations

import numpy as np

from .book import bytes_at
from .jit import entry, jit, low_word

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
        index = STATES * index + low_word((first >> cell) & 1) + 2 * low_word((second >> cell) & 1)
    return index


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
def ntuple_evaluate(address: int, words: int, current: int, mask: int, stones: int) -> int:
    """The side to move's value in centipawns of the block of ``words`` int32 at ``address``."""
    first, second, first_to_move = sides(current, mask, stones)
    value = block_value(bytes_at(address, 4 * words).view(np.int32), first, second) >> FRACTION_BITS
    return value if first_to_move else -value


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

