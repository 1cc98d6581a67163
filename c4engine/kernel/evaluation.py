"""Threat-counting evaluation for positions the search cannot play out.

Connect Four endgames are decided by zugzwang (Allis 1988): once the other
columns are full, the players must fill the threatened column from the bottom,
and who gets the threatened cell depends on its row.  On 7x6 the first player
moves into odd rows (1, 3, 5 counting from the bottom) and the second player
into even rows, so a first-player threat on an odd row and a second-player
threat on an even row are the ones that win by force; the others mostly
restrict the opponent.  On any board: when one column is left with ``h``
stones in it, the first player is to move exactly when ``W*H - (H - h)`` is
even, and then takes rows ``h, h + 2, ...``; so the first player's rows
(counted from 0) have the parity of ``(W - 1) * H``.  That is the odd rows
(from 1) when ``H`` is even or ``W`` is odd (7x6, 7x7), and the even rows on
an odd height with an even width (8x7, 6x7), where the roles swap (see
:func:`zugzwang_rows`, docs/design.md "Zugzwang rows").  This is a heuristic's
premise, not a proof, so only the evaluation relies on it.  The
evaluation therefore counts each side's threats (empty cells that would
complete a line) by parity and by whether an opponent threat below them makes
them unreachable, and adds something for stones by their column, central
stones taking part in more possible lines.

Weights are data, not code: the kernel receives them as a vector of
``N_WEIGHTS`` integers, the same layout on every board, so the same search runs
with the hand-written weights (``THREAT_WEIGHTS``), the plain centre count they
are measured against (``CENTRE_ONLY``) or weights learned from exactly scored
positions (``c4engine/data/evaluation-*.json``, see :mod:`c4engine.training.linear`).
The layout: each player's four threat weights (the first player's, then the
second's: the zugzwang rules are not symmetric), a bonus for the first player,
one weight per stone by its column's steps from the edge, then each player's
weight of a live threat by its cell (bit index), which learns what row parity
alone cannot: how much lower threats and central ones are worth.  This linear
model's evaluation is linear in those ``N_LINEAR`` weights: :func:`features`
gives the counts it multiplies, which is what training fits.  Two more slots
can point the evaluation at an n-tuple network instead (:mod:`.ntuple`: its
block's address and size, 0 for none), which then replaces the linear model,
unless a third (``NTUPLE_LINEAR``) says the network carries linear weights of
its own: then the value is the network's plus the linear model's, the tuples
having learned what the threat terms miss (a hybrid network,
:mod:`c4engine.training.network`).  The value is kept within
``HEURISTIC_LIMIT``, well inside the proven scores.
"""

from __future__ import annotations

import numpy as np

from ..geometry import Geometry
from .constants import BOARD_WORDS, GEOMETRY, WIDTH, board_bits
from ..rules.scores import MATE
from .jit import column_cells, entry, jit, popcount, smear_up, winning_cells
from .ntuple import STATE_WORDS, ntuple_evaluate


def odd_rows(geometry: Geometry) -> int:
    """The cells of rows 1, 3, 5, ... counted from the bottom."""
    return geometry.bottom_mask * sum(1 << row for row in range(0, geometry.height, 2))


def zugzwang_rows(geometry: Geometry) -> tuple[int, int]:
    """The first and the second player's zugzwang rows (module docstring): the rows
    each takes in the last column left, whatever its height then."""
    odd = odd_rows(geometry)
    first = odd if (geometry.width - 1) * geometry.height % 2 == 0 else geometry.board_mask ^ odd
    return first, geometry.board_mask ^ first


ODD_ROWS = board_bits(odd_rows(GEOMETRY))
FIRST_PLAYER_ROWS, SECOND_PLAYER_ROWS = (board_bits(rows) for rows in zugzwang_rows(GEOMETRY))

# One player's threat counts, in this order, at FIRST_THREATS or SECOND_THREATS.
GOOD_THREATS, OTHER_THREATS, DEAD_THREATS, STACKED_THREATS = range(4)
THREAT_NAMES = ("good-parity threats", "other threats", "dead threats", "stacked threat pairs")
N_THREAT_TERMS = len(THREAT_NAMES)
FIRST_THREATS = 0
SECOND_THREATS = FIRST_THREATS + N_THREAT_TERMS
FIRST_PLAYER_BONUS = SECOND_THREATS + N_THREAT_TERMS
COLUMN_STONES = FIRST_PLAYER_BONUS + 1
MAX_EDGE_STEPS = 16  # a board of at most 32 columns (geometry.MAX_WIDTH) has columns 0..15 steps from the edge
FIRST_THREAT_CELLS = COLUMN_STONES + MAX_EDGE_STEPS
BITS = 64  # one weight per bit of the board's word: a live threat's weight by its cell
SECOND_THREAT_CELLS = FIRST_THREAT_CELLS + BITS
# The cells that have a weight: all of them on a board of 64 bits (-1, which costs
# nothing); on a board past 64 bits, the cells of the first 64 bits.
WEIGHED_CELLS = -1 if BOARD_WORDS == 1 else board_bits((1 << BITS) - 1)
N_LINEAR = SECOND_THREAT_CELLS + BITS  # the linear model's weights, which :func:`features` counts
NTUPLE_ADDRESS = N_LINEAR  # an n-tuple network's block (:mod:`.ntuple`), 0 for none
NTUPLE_WORDS = NTUPLE_ADDRESS + 1
NTUPLE_LINEAR = NTUPLE_WORDS + 1  # 1 when the network's value adds the linear model's (a hybrid), else 0
N_WEIGHTS = NTUPLE_LINEAR + 1
HEURISTIC_LIMIT = MATE - 1_000  # heuristic values stay well inside the proven ones

EDGE_STEPS_OF_COLUMN = tuple(min(col, WIDTH - 1 - col) for col in range(WIDTH))
EDGE_STEPS = max(EDGE_STEPS_OF_COLUMN) + 1  # how many column weights this board uses


def weight_vector(first_threats: tuple[int, ...], second_threats: tuple[int, ...], first_bonus: int,
                  column_stones: tuple[int, ...]) -> np.ndarray:
    """The kernel's weight vector from its parts (``column_stones`` by steps from the
    edge, padded with zeros; no weights by threat cell)."""
    weights = np.zeros(N_WEIGHTS, dtype=np.int64)
    weights[FIRST_THREATS:FIRST_THREATS + N_THREAT_TERMS] = first_threats
    weights[SECOND_THREATS:SECOND_THREATS + N_THREAT_TERMS] = second_threats
    weights[FIRST_PLAYER_BONUS] = first_bonus
    weights[COLUMN_STONES:COLUMN_STONES + len(column_stones)] = column_stones
    return weights


# Why these weights: a threat on the right rows wins the zugzwang ending unless
# the opponent builds one of his own, so it counts most (24); a threat on the
# wrong rows still forces the opponent to keep a cell open and often decides a
# middle game tactic (8); one above an opponent threat in the same column will
# usually never be played (2); two threats of one side one above the other win
# as soon as the lower one becomes playable (48, just under a proven win's
# weight in practice).  Both players alike, no first player bonus.  Stones: 1
# point per column step towards the middle, a tie-breaker among quiet moves.
# docs/guides/evaluation.md ("Threats against the centre count") has these weights against CENTRE_ONLY at
# equal depth, and the command.
HAND_THREATS = (24, 8, 2, 48)
EDGE_STEP_WEIGHTS = tuple(range(MAX_EDGE_STEPS))
THREAT_WEIGHTS = weight_vector(HAND_THREATS, HAND_THREATS, 0, EDGE_STEP_WEIGHTS)
CENTRE_ONLY = weight_vector((0,) * N_THREAT_TERMS, (0,) * N_THREAT_TERMS, 0, EDGE_STEP_WEIGHTS)


@entry
def threat_cells(stones: int, other: int, mask: int) -> tuple[int, int, int]:
    """One side's threats, the live ones among them, and the cells strictly above an
    opponent threat (where a threat is dead)."""
    threats = winning_cells(stones, mask)
    dead_zone = smear_up((winning_cells(other, mask) << 1) & ~mask)
    return threats, threats & ~dead_zone, dead_zone


@entry
def side_terms(stones: int, other: int, mask: int, is_first: bool) -> tuple[int, int, int, int]:
    """One side's threat counts (see the module docstring)."""
    threats, live, dead_zone = threat_cells(stones, other, mask)
    return threat_counts(threats, live, dead_zone, is_first)


@jit
def threat_counts(threats: int, live: int, dead_zone: int, is_first: bool) -> tuple[int, int, int, int]:
    """Good-parity, other, dead threats and stacked pairs, from :func:`threat_cells`."""
    good_rows = FIRST_PLAYER_ROWS if is_first else SECOND_PLAYER_ROWS
    good = popcount(live & good_rows)
    bad = popcount(live & ~good_rows)
    dead = popcount(threats & dead_zone)
    stacked = popcount(threats & (threats >> 1))
    return good, bad, dead, stacked


@entry
def cell_score(live: int, is_first: bool, weights: np.ndarray) -> int:
    """The weights of one side's live threats by their cells."""
    at = FIRST_THREAT_CELLS if is_first else SECOND_THREAT_CELLS
    score = 0
    live &= WEIGHED_CELLS
    while live:
        cell = live & -live
        score += weights[at + popcount(cell - 1)]
        live ^= cell
    return score


@entry
def side_score(stones: int, other: int, mask: int, is_first: bool, weights: np.ndarray) -> int:
    """One side's weighted evaluation: its threats, its stones, and the first player's bonus."""
    threats, live, dead_zone = threat_cells(stones, other, mask)
    good, bad, dead, stacked = threat_counts(threats, live, dead_zone, is_first)
    at = FIRST_THREATS if is_first else SECOND_THREATS
    score = (weights[at + GOOD_THREATS] * good + weights[at + OTHER_THREATS] * bad
             + weights[at + DEAD_THREATS] * dead + weights[at + STACKED_THREATS] * stacked)
    if is_first:
        score += weights[FIRST_PLAYER_BONUS]
    for col in range(WIDTH):
        score += weights[COLUMN_STONES + EDGE_STEPS_OF_COLUMN[col]] * popcount(stones & column_cells(col))
    return score + cell_score(live, is_first, weights)


@entry
def linear_score(current: int, mask: int, stones_on_board: int, weights: np.ndarray) -> int:
    """The linear model's value from the side to move's view: its score minus the opponent's."""
    other = current ^ mask
    to_move_is_first = stones_on_board % 2 == 0
    return (side_score(current, other, mask, to_move_is_first, weights)
            - side_score(other, current, mask, not to_move_is_first, weights))


@entry
def evaluate(current: int, mask: int, stones_on_board: int, weights: np.ndarray) -> int:
    """:func:`leaf_value` of one position, with a network state of its own."""
    return leaf_value(current, mask, stones_on_board, weights, np.zeros(STATE_WORDS, dtype=np.int64))


@jit
def leaf_value(current: int, mask: int, stones_on_board: int, weights: np.ndarray, state: np.ndarray) -> int:
    """Heuristic value from the side to move's view: the n-tuple network's when the
    weights name one (plus the linear model's for a hybrid), else the linear model's.
    The search's leaves share one network ``state`` (:mod:`.ntuple`), each moving it
    from the last one's position."""
    if weights[NTUPLE_ADDRESS] == 0:
        return linear_score(current, mask, stones_on_board, weights)
    value = ntuple_evaluate(weights[NTUPLE_ADDRESS], weights[NTUPLE_WORDS], current, mask, stones_on_board, state)
    if weights[NTUPLE_LINEAR] != 0:
        value += linear_score(current, mask, stones_on_board, weights)
    return min(max(value, -HEURISTIC_LIMIT), HEURISTIC_LIMIT)


@entry
def features(current: int, mask: int, stones_on_board: int, out: np.ndarray) -> None:
    """The counts the linear model weighs, into ``out`` (N_LINEAR): without an n-tuple
    network ``evaluate`` is ``out @ weights[:N_LINEAR]``.  The mover's counts add, the opponent's subtract."""
    out[:] = 0
    other = current ^ mask
    to_move_is_first = stones_on_board % 2 == 0
    for side in range(2):
        stones, opponent = (current, other) if side == 0 else (other, current)
        is_first = to_move_is_first if side == 0 else not to_move_is_first
        sign = 1 if side == 0 else -1
        at = FIRST_THREATS if is_first else SECOND_THREATS
        good, bad, dead, stacked = side_terms(stones, opponent, mask, is_first)
        out[at + GOOD_THREATS] += sign * good
        out[at + OTHER_THREATS] += sign * bad
        out[at + DEAD_THREATS] += sign * dead
        out[at + STACKED_THREATS] += sign * stacked
        if is_first:
            out[FIRST_PLAYER_BONUS] += sign
        for col in range(WIDTH):
            out[COLUMN_STONES + EDGE_STEPS_OF_COLUMN[col]] += sign * popcount(stones & column_cells(col))
        live = threat_cells(stones, opponent, mask)[1] & WEIGHED_CELLS
        cells_at = FIRST_THREAT_CELLS if is_first else SECOND_THREAT_CELLS
        while live:
            cell = live & -live
            out[cells_at + popcount(cell - 1)] += sign
            live ^= cell
