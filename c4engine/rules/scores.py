"""Score conventions, in plain Python so that the rules, the driver and the numba
kernel (which compiles these same functions) share one definition.

Pons' score (docs/design.md, "Scores"), from the side to move: 0 a draw; a side that wins
with its next stone, with ``n`` stones on the board, scores ``(W*H + 1 - n) // 2``
(``cells`` is ``W*H``, passed by the caller: the board's size is no global);
negative for a loss.  Internally a proven result with Pons score ``s`` is
``MATE + s`` for a win and ``-MATE + s`` for a loss, and heuristic values stay
strictly between ``-MATE`` and ``MATE``, so one integer orders proven and
heuristic values together.
"""

from __future__ import annotations

MATE = 10_000


def to_internal(pons_score: int) -> int:
    """A Pons score as an internal score."""
    if pons_score > 0:
        return MATE + pons_score
    if pons_score < 0:
        return -MATE + pons_score
    return 0


def to_pons(score: int) -> int:
    """An internal proven score as a Pons score (heuristic scores come out as 0)."""
    if score >= MATE:
        return score - MATE
    if score <= -MATE:
        return score + MATE
    return 0


def is_proven(score: int) -> bool:
    """Whether an internal score is a proven win or loss."""
    return abs(score) >= MATE


def win_now(stones: int, cells: int) -> int:
    """Pons score of winning with the next stone, ``stones`` being on the board."""
    return (cells + 1 - stones) // 2


def mate_distance(score: int, stones: int, cells: int) -> int:
    """A proven internal score as the protocol's ``mate N``: own moves until the win
    (positive), or the opponent's moves until its win (negative).

    Each own move that the win takes past the next one costs a point of
    :func:`win_now`, so the distance counts back from it; on a board of an odd
    number of cells the first player has one stone more to play than the second,
    which ``win_now`` already counts."""
    pons = to_pons(score)
    if pons > 0:
        return win_now(stones, cells) + 1 - pons
    return -(win_now(stones + 1, cells) + 1 + pons)
