"""Threat-counting evaluation for positions the search cannot play out.

Connect Four endgames are decided by zugzwang (Allis 1988): once the other
columns are full, the players must fill the threatened column from the bottom,
and who gets the threatened cell depends on its row.  The first player moves
into odd rows (1, 3, 5 counting from the bottom) and the second player into
even rows, so a first-player threat on an odd row and a second-player threat
on an even row are the ones that win by force; the others mostly restrict the
opponent.  The evaluation therefore counts each side's threats (empty cells
that would complete a four) by parity and by whether an opponent threat below
them makes them unreachable, and adds a little for central stones, which take
part in more possible fours.

Weights are data, not code: the kernel receives them as an array, so the
same search can run with other weights (for example the plain centre count
the threat weights are measured against, see ``CENTRE_ONLY``).
"""

from __future__ import annotations

import numpy as np

from ..rules.bits import BOTTOM_MASK
from .jit import column_cells, jit, popcount, smear_up, winning_cells

ODD_ROWS = BOTTOM_MASK * 0b010101   # rows 1, 3, 5: the first player's zugzwang rows
EVEN_ROWS = BOTTOM_MASK * 0b101010  # rows 2, 4, 6: the second player's

# Indices into a weight vector (and into the terms of one side).
GOOD_THREATS, OTHER_THREATS, DEAD_THREATS, STACKED_THREATS, CENTRE = range(5)
TERM_NAMES = ("good-parity threats", "other threats", "dead threats",
              "stacked threat pairs", "centre stones")

# Why these weights: a threat on the right rows wins the zugzwang ending unless
# the opponent builds one of his own, so it counts most (24); a threat on the
# wrong rows still forces the opponent to keep a cell open and often decides a
# middle game tactic (8); one above an opponent threat in the same column will
# usually never be played (2); two threats of one side one above the other win
# as soon as the lower one becomes playable (48, just under a proven win's
# weight in practice).  Centre stones: 1 point per column step towards the
# middle, a tie-breaker among quiet moves.  The README ("Measured figures") has
# these weights against CENTRE_ONLY at equal depth, and the command.
THREAT_WEIGHTS = np.array([24, 8, 2, 48, 1], dtype=np.int64)
CENTRE_ONLY = np.array([0, 0, 0, 0, 1], dtype=np.int64)

CENTRE_WEIGHT_OF_COLUMN = (0, 1, 2, 3, 2, 1, 0)
N_TERMS = 5


@jit
def side_terms(stones: int, other: int, mask: int, is_first: bool) -> tuple[int, int, int, int, int]:
    """The raw counts behind one side's evaluation (see the module docstring)."""
    threats = winning_cells(stones, mask)
    other_threats = winning_cells(other, mask)
    dead_zone = smear_up((other_threats << 1) & ~mask)  # strictly above an opponent threat
    live = threats & ~dead_zone
    good_rows = ODD_ROWS if is_first else EVEN_ROWS
    good = popcount(live & good_rows)
    bad = popcount(live & ~good_rows)
    dead = popcount(threats & dead_zone)
    stacked = popcount(threats & (threats >> 1))
    centre = 0
    for col in range(7):
        centre += CENTRE_WEIGHT_OF_COLUMN[col] * popcount(stones & column_cells(col))
    return good, bad, dead, stacked, centre


@jit
def side_score(stones: int, other: int, mask: int, is_first: bool, weights: np.ndarray) -> int:
    """One side's weighted evaluation."""
    good, bad, dead, stacked, centre = side_terms(stones, other, mask, is_first)
    return (weights[GOOD_THREATS] * good + weights[OTHER_THREATS] * bad
            + weights[DEAD_THREATS] * dead + weights[STACKED_THREATS] * stacked
            + weights[CENTRE] * centre)


@jit
def evaluate(current: int, mask: int, stones_on_board: int, weights: np.ndarray) -> int:
    """Heuristic value from the side to move's view: its score minus the opponent's."""
    other = current ^ mask
    to_move_is_first = stones_on_board % 2 == 0
    return (side_score(current, other, mask, to_move_is_first, weights)
            - side_score(other, current, mask, not to_move_is_first, weights))

