"""The engine as the adapters' player: ``EnginePlayer``, c4engine at a strength, whose
random choices come from its own seeded generator.

Public names: :class:`EnginePlayer` (``act(position)``, ``act_with_policy(position)``,
``seed(seed)``, ``perfect``) and :data:`Policy`, the type of a PettingZoo-shaped
policy.  Actions are 0-based columns, as every library here counts them.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from ..api import FULL_STRENGTH, analyse, best_move
from ..arguments import seconds, whole_number, whole_number_from_to
from ..position import Position

Policy = Callable[[np.ndarray, np.ndarray], int]
"""``policy(observation, action_mask) -> action``: the observation an ``H x W x 2``
array (plane 0 the mover's stones, plane 1 the opponent's, row 0 at the top), the
mask one 0/1 per column, the action a 0-based column."""


class EnginePlayer:
    """c4engine choosing moves: perfect (the default), at a ``level`` 0-19 (as the
    engine's ``Skill Level``), or within ``time`` seconds or about ``nodes`` nodes a move.

    Perfect play reads every column's exact score (:func:`c4engine.analyse`) and
    draws uniformly among the best-scored ones: the fastest wins, the slowest
    losses, and every drawing move of a draw, so that games vary while no move
    gives anything away.  Its policy is that uniform distribution.  A level draws
    its move as the engine's ``Skill Level`` does; a time or node limit plays the
    search's choice (which keeps every result the search proves in time).  Under
    a level or a limit the policy puts all its weight on the move played (the
    engine scores moves exactly only when it plays perfectly).

    Draws come from a ``random.Random`` seeded with ``seed``, so a seeded player
    repeats its games against the same moves, except under a time limit, whose
    search depends on the machine's speed.  Perfect play on a board bigger than
    7x6 may take minutes early in a game (the opening book covers 7x6 only): give
    it a ``time`` there.  Raises ``ValueError`` naming a setting out of range."""

    def __init__(self, level: int = FULL_STRENGTH, time: float | None = None, nodes: int | None = None,
                 seed: int | None = None) -> None:
        self.level = whole_number_from_to(level, "level", 0, FULL_STRENGTH)
        self.time = None if time is None else seconds(time, "time")
        self.nodes = None if nodes is None else whole_number(nodes, "nodes", 1)
        self._rng = random.Random(seed)

    @property
    def perfect(self) -> bool:
        """Whether the player plays perfectly: full strength and no limit."""
        return self.level == FULL_STRENGTH and self.time is None and self.nodes is None

    def seed(self, seed: int | None) -> None:
        """Draw from a generator seeded with ``seed`` from now on (None: from the system)."""
        self._rng.seed(seed)

    def act(self, position: Position) -> int:
        """The 0-based column played in ``position`` (a game still going on)."""
        return self.act_with_policy(position)[1]

    def act_with_policy(self, position: Position) -> tuple[dict[int, float], int]:
        """The policy (0-based column to probability) and the column drawn from it."""
        if self.perfect:
            scores = analyse(position)
            best = max(score for score in scores.values() if score is not None)
            actions = [column - 1 for column, score in scores.items() if score == best]
            return {action: 1.0 / len(actions) for action in actions}, self._rng.choice(actions)
        action = best_move(position, time=self.time, nodes=self.nodes, level=self.level, rng=self._rng) - 1
        return {action: 1.0}, action
