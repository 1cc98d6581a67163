"""c4engine as a PettingZoo ``connect_four_v3`` player: ``C4Policy``.

Public names: :class:`C4Policy` (c4engine at a strength, called with what the
AEC loop's ``env.last()`` gives: the observation's planes and its action mask, or
the observation dict itself) and :func:`play_game` (one game of the AEC loop
between policies, each agent's total reward back).

The observation's plane 0 holds the stones of the agent to move, plane 1 its
opponent's, row 0 the top row, as ``connect_four_v3`` writes them; the policy
reads the position from them alone (the side to move from the stone counts),
so it keeps nothing between moves and plays any board the planes describe
(``connect`` in a row, 4 unless told).  Neither needs PettingZoo itself: they
take what its loop hands them (``pip install 'c4engine[pettingzoo]'`` installs
PettingZoo with the pygame its ``connect_four_v3`` imports).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..api import FULL_STRENGTH
from ..position import IllegalMoveError
from .planes import position_of_planes
from .player import EnginePlayer, Policy


class C4Policy:
    """``policy(observation, action_mask) -> action``: c4engine's column (0-based) for the
    agent to move, at a strength: perfect by default, a ``level`` 0-19 (the
    engine's ``Skill Level``), ``time`` seconds or about ``nodes`` nodes a move; ``seed``
    seeds its random draws (see :class:`c4engine.integrations.player.EnginePlayer`).

    ``observation`` is the ``H x W x 2`` planes, or the whole observation dict
    (``{"observation": ..., "action_mask": ...}``) with no ``action_mask``
    beside it.  Raises :class:`c4engine.IllegalMoveError` (a ``ValueError``) for
    planes that are no position still to be played (wrong shape, counts no game
    reaches, a finished game) or a mask that forbids the engine's move (an
    observation of an agent whose turn it is not has an all-zero mask)."""

    def __init__(self, connect: int = 4, level: int = FULL_STRENGTH, time: float | None = None,
                 nodes: int | None = None, seed: int | None = None) -> None:
        self.connect = connect
        self.player = EnginePlayer(level, time, nodes, seed)

    def __call__(self, observation: Any, action_mask: Any = None) -> int:
        if isinstance(observation, Mapping) and action_mask is None:
            observation, action_mask = observation["observation"], observation["action_mask"]
        action = self.player.act(position_of_planes(observation, self.connect))
        if action_mask is not None and not np.asarray(action_mask)[action]:
            raise IllegalMoveError(f"the action mask forbids column {action}, the engine's move: "
                                   "is it this agent's turn?")
        return action


def play_game(env: Any, policies: Mapping[str, Policy], seed: int | None = None) -> dict[str, float]:
    """Play one game of the AEC ``env`` (``pettingzoo.make("aec", "classic/connect_four-v3")``,
    or ``connect_four_v3.env()``), each agent's move
    from ``policies[agent](observation, action_mask)``; each agent's total reward.

    This is PettingZoo's own loop (``agent_iter``, ``last``, ``step``, with None
    for an agent whose game is over), so any AEC environment of the same shape
    works.  ``seed`` goes to ``env.reset``."""
    env.reset(seed=seed)
    totals = {agent: 0.0 for agent in env.agents}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _info = env.last()
        totals[agent] += float(reward)
        if termination or truncation:
            env.step(None)
        else:
            env.step(int(policies[agent](observation["observation"], observation["action_mask"])))
    return totals
