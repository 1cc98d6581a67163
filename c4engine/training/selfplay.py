"""Self-play TD(lambda) for an n-tuple network (Thill, Koch & Konen 2012, 2014), compiled.

Where the solver no longer reaches (8x7, 9x6: a labelled game costs seconds),
the network learns from its own games instead, as Thill's agents did: each
move is the one whose *afterstate* (the board after it) the network values
best for the mover, one ply deep, with a share ``epsilon`` of random moves;
a win ends the game at once and is worth +1 or -1 exactly.  The value of an
afterstate for the first player is ``tanh`` of the tuples' sum (the same
tuples, each read on the board and its mirror image, as the engine's network,
:mod:`c4engine.kernel.ntuple`).  At the end of each game every afterstate's
entries move towards its lambda-return (the offline lambda-return algorithm,
Sutton & Barto 12.1): ``G_t = (1 - lambda) V(s_{t+1}) + lambda G_{t+1}``,
ending in the game's result.  A random move is no evidence of what its
afterstate's predecessor is worth, so the afterstate before it is not moved
and the return is cut there (Thill's rule).

The games need no search and no solver, so they cost microseconds, and they do
not change with the search's version: only this file and the seed make them.
The board is an array of cells (the kernel's bit indices: column times
``height + 1`` plus row), any size up to 64 such cells, read at run time.
A hybrid's threat terms are the board kernel's own (``linear_score``), passed
in as a compiled function, so the functions that take it are compiled in each
process (a second or two): numba's cache would record that board kernel's
module, which another process has not imported.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from ..kernel.ntuple import STATES, TUPLE_LENGTH
from .linear import CP_PER_LOGIT

FIRST, SECOND = 1, 2  # a cell's contents as a tuple reads them
CP_PER_UNIT = 2 * CP_PER_LOGIT  # a unit of the sum is two logits of the ordinal model (tanh(v) = 2 sigmoid(2v) - 1)
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))  # (column step, row step) of a line


def cell_pairs(cells: np.ndarray, slots: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each of ``slots`` cells, the rows that read it and its weight in their index
    (``STATES ** place``): ``starts`` (each cell's pairs are ``starts[c]:starts[c + 1]``),
    ``rows`` and ``weights``."""
    place = np.arange(cells.size) % TUPLE_LENGTH
    order = np.argsort(cells, kind="stable")
    starts = np.searchsorted(cells[order], np.arange(slots + 1)).astype(np.int64)
    rows = (order // TUPLE_LENGTH).astype(np.int64)
    weights = (STATES ** (TUPLE_LENGTH - 1 - place[order])).astype(np.int64)
    return starts, rows, weights


@numba.njit(cache=True, nogil=True)
def makes_line(board: np.ndarray, col: int, row: int, player: int, width: int, height: int, connect: int) -> bool:
    """Whether ``player``'s stone at (``col``, ``row``) completes a line of ``connect``."""
    h1 = height + 1
    for step_col, step_row in DIRECTIONS:
        run = 1
        for sign in (1, -1):
            c, r = col + sign * step_col, row + sign * step_row
            while 0 <= c < width and 0 <= r < height and board[c * h1 + r] == player:
                run += 1
                c, r = c + sign * step_col, r + sign * step_row
        if run >= connect:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def moved_sum(tables: np.ndarray, index: np.ndarray, starts: np.ndarray, rows: np.ndarray, weights: np.ndarray,
              cell: int, player: int) -> float:
    """The change of the tuples' sum if ``player``'s stone filled the empty ``cell``."""
    change = 0.0
    for pair in range(starts[cell], starts[cell + 1]):
        row = rows[pair]
        table = tables[row >> 1]
        change += table[index[row] + player * weights[pair]] - table[index[row]]
    return change


@numba.njit(nogil=True)
def play_games(tables: np.ndarray, pairs: tuple[np.ndarray, np.ndarray, np.ndarray], shape: tuple[int, int, int],
               games: int, seed: int, step: float, lam: float, epsilon: float, opening: int, samples: np.ndarray,
               linear: Any, weights: np.ndarray, hybrid: bool) -> None:
    """``games`` self-play games on a board of ``shape`` (width, height, connect), the
    tables learning after each with ``step`` per entry (none at 0; see the module docstring), each
    playing its first ``opening`` moves and a share ``epsilon`` of the others at
    random; ``pairs`` are :func:`cell_pairs`.  ``samples[g]`` is game ``g``'s value of
    one afterstate drawn at random before its end, for the first player in units of
    the sum, and its result (+1, 0, -1): what the draw margin is fitted to.  Seeded
    by ``seed`` alone.  A ``hybrid``'s value adds the board kernel's ``linear`` score
    with ``weights`` (the threat terms, in centipawns: ``CP_PER_UNIT`` a unit of the
    sum), held fixed (compiled for each board: ``linear`` is the board's own)."""
    np.random.seed(seed)
    cells = shape[0] * shape[1]
    history = np.zeros((cells, 2 * tables.shape[0]), dtype=np.int64)
    sums = np.zeros(cells)
    greedy = np.zeros(cells, dtype=np.bool_)
    for game in range(games):
        plies, result = play_game(tables, pairs, shape, epsilon, opening, linear, weights, hybrid, history, sums,
                                  greedy)
        samples[game, 0], samples[game, 1] = sums[np.random.randint(plies - 1)], result
        if step > 0:
            learn(tables, history, np.tanh(sums), greedy, plies, result, step, lam)


@numba.njit(nogil=True)
def play_game(tables: np.ndarray, pairs: tuple[np.ndarray, np.ndarray, np.ndarray], shape: tuple[int, int, int],
              epsilon: float, opening: int, linear: Any, weights: np.ndarray, hybrid: bool, history: np.ndarray,
              sums: np.ndarray, greedy: np.ndarray) -> tuple[int, float]:
    """One game: each afterstate's rows' indices into ``history``, its sum into ``sums``,
    and whether its move was the greedy one into ``greedy``; its number of moves and
    its result for the first player."""
    width, height, connect = shape
    starts, rows, pair_weights = pairs
    board = np.zeros(width * (height + 1), dtype=np.int8)
    heights = np.zeros(width, dtype=np.int64)
    index = np.zeros(history.shape[1], dtype=np.int64)
    current, mask, total = 0, 0, 0.0
    for row in range(index.size):
        total += tables[row >> 1, 0]
    for ply in range(width * height):
        player = FIRST if ply % 2 == 0 else SECOND
        greedy[ply] = not (ply < opening or np.random.random() < epsilon)
        if greedy[ply]:
            col = best_column(tables, pairs, board, heights, index, total, current, mask, ply, shape, linear,
                              weights, hybrid)
        else:
            col = random_column(heights, height, width)
        wins = makes_line(board, col, heights[col], player, width, height, connect)
        cell = col * (height + 1) + heights[col]
        total += moved_sum(tables, index, starts, rows, pair_weights, cell, player)
        for pair in range(starts[cell], starts[cell + 1]):
            index[rows[pair]] += player * pair_weights[pair]
        current, mask = current ^ mask, mask | (1 << cell)
        board[cell] = player
        heights[col] += 1
        history[ply] = index
        sums[ply] = total + (linear_part(linear, weights, current, mask, ply + 1) if hybrid else 0.0)
        if wins:
            return ply + 1, 1.0 if player == FIRST else -1.0
    return width * height, 0.0


@numba.njit(nogil=True)
def best_column(tables: np.ndarray, pairs: tuple[np.ndarray, np.ndarray, np.ndarray], board: np.ndarray,
                heights: np.ndarray, index: np.ndarray, total: float, current: int, mask: int, ply: int,
                shape: tuple[int, int, int], linear: Any, weights: np.ndarray, hybrid: bool) -> int:
    """A winning column if there is one, else the column whose afterstate the mover
    values most (ties broken at random)."""
    width, height, connect = shape
    starts, rows, pair_weights = pairs
    player = FIRST if ply % 2 == 0 else SECOND
    sign = 1.0 if player == FIRST else -1.0
    col, best, ties = -1, -np.inf, 0
    for c in range(width):
        if heights[c] == height:
            continue
        if makes_line(board, c, heights[c], player, width, height, connect):
            return c
        cell = c * (height + 1) + heights[c]
        value = total + moved_sum(tables, index, starts, rows, pair_weights, cell, player)
        if hybrid:
            value += linear_part(linear, weights, current ^ mask, mask | (1 << cell), ply + 1)
        value *= sign
        if value > best:
            col, best, ties = c, value, 1
        elif value == best:
            ties += 1
            if np.random.randint(ties) == 0:
                col = c
    return col


@numba.njit(nogil=True)
def linear_part(linear: Any, weights: np.ndarray, current: int, mask: int, stones: int) -> float:
    """The linear score of the position (``current`` to move) for the first player, in units of the sum."""
    score = linear(current, mask, stones, weights)
    return (score if stones % 2 == 0 else -score) / CP_PER_UNIT


@numba.njit(cache=True, nogil=True)
def random_column(heights: np.ndarray, height: int, width: int) -> int:
    """A random column that is not full (there is one: the game goes on)."""
    while True:
        col = np.random.randint(width)
        if heights[col] < height:
            return col


@numba.njit(cache=True, nogil=True)
def learn(tables: np.ndarray, history: np.ndarray, values: np.ndarray, greedy: np.ndarray, plies: int,
          result: float, step: float, lam: float) -> None:
    """Move each afterstate's entries towards its lambda-return, last first; the last
    afterstate is the game's end, whose value is its result."""
    n_rows = history.shape[1]
    target = result
    for ply in range(plies - 2, -1, -1):
        following = result if ply + 1 == plies - 1 else values[ply + 1]
        if not greedy[ply + 1]:
            target = values[ply]
            continue
        target = (1.0 - lam) * following + lam * target
        value = values[ply]
        change = step * (target - value) * (1.0 - value * value)
        for row in range(n_rows):
            tables[row >> 1, history[ply, row]] += change
