"""A Gymnasium environment for training against c4engine: ``ConnectFourEnv``,
registered as ``c4engine/ConnectFour-v0``.

Public names: :class:`ConnectFourEnv` and :data:`ENV_ID`.  Importing this module
imports Gymnasium (``pip install 'c4engine[gymnasium]'``) and registers the
environment, so ``gymnasium.make("c4engine/ConnectFour-v0", level=5)`` works after
``import c4engine.integrations.gymnasium``, and
``gymnasium.make("c4engine.integrations.gymnasium:c4engine/ConnectFour-v0")``
without it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..api import FULL_STRENGTH
from ..position import Position, board_shape
from . import import_library
from .planes import action_mask_of, planes_of
from .player import EnginePlayer, Policy

gymnasium = import_library("gymnasium", "gymnasium")

ENV_ID = "c4engine/ConnectFour-v0"
SEED_BITS = 63


class ConnectFourEnv(gymnasium.Env):
    """Connect Four against c4engine (or any ``opponent`` policy), for one learning agent.

    The board is any c4engine plays (``width`` x ``height``, ``connect`` in a row; 7x6,
    four in a row, by default).  ``agent_first`` says who starts: True (the
    default), False, or None for a fair coin each episode.  The opponent is
    c4engine, perfect by default, or at a ``level`` 0-19 (the engine's ``Skill
    Level``), within ``time`` seconds or about ``nodes`` nodes a move (see
    :class:`c4engine.integrations.player.EnginePlayer`); or ``opponent``, any
    policy (``policy(observation, action_mask) -> action``, a Kaggle agent through
    :func:`c4engine.integrations.kaggle_agents.policy_from_agent`), which then
    replaces the engine.

    Observations are ``connect_four_v3``'s, for any size: ``height x width x 2``
    int8, plane 0 the agent's stones, plane 1 the opponent's, row 0 the top
    row.  ``info["action_mask"]`` (int8, 1 for each column with room, all 0 once
    the episode is over) and :meth:`action_masks` (the same as bools, for
    sb3-contrib's ``MaskablePPO``) give the legal actions; ``info["agent_first"]``
    says who started.

    Rewards: +1 when the agent wins, -1 when the opponent does, 0 for a draw
    and for every move before the end.  An illegal action (a full column) ends
    the episode as in PettingZoo: the board is left as it was, the reward is
    ``illegal_reward`` (-1 by default) and ``info["illegal_action"]`` is True, so
    that an agent without masking learns to avoid it.  An action that is no
    column (outside the action space) raises ``ValueError``, and a step after
    the end ``gymnasium.error.ResetNeeded``.  Episodes are never truncated (a
    game lasts at most ``width * height`` stones).

    ``reset(seed=...)`` seeds the episode's random draws: who starts (for None)
    and the engine's choices among equally good moves, so the same seed and the
    same actions give the same episode (except under ``time``, whose search
    depends on the machine).  ``render_mode="ansi"`` renders the board as text.
    A board c4engine cannot play raises :class:`c4engine.IllegalMoveError` naming
    the limit, and a bad setting ``ValueError``."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, width: int = 7, height: int = 6, connect: int = 4, agent_first: bool | None = True,
                 level: int = FULL_STRENGTH, time: float | None = None, nodes: int | None = None,
                 opponent: Policy | None = None, illegal_reward: float = -1.0,
                 render_mode: str | None = None) -> None:
        self.geometry = board_shape(width, height, connect)
        if agent_first not in (True, False, None):
            raise ValueError(f"agent_first must be True, False or None, got {agent_first!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.agent_first = agent_first
        self.engine = EnginePlayer(level, time, nodes)
        self.opponent = opponent
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.observation_space = gymnasium.spaces.Box(0, 1, (self.geometry.height, self.geometry.width, 2), np.int8)
        self.action_space = gymnasium.spaces.Discrete(self.geometry.width)
        self._start(True)
        self._over = True

    def _start(self, agent_first: bool) -> None:
        self._cells = np.zeros((self.geometry.height, self.geometry.width), dtype=np.int8)
        self._position = Position(self.geometry.width, self.geometry.height, self.geometry.connect)
        self._agent_mark = 1 if agent_first else 2
        self._over = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        agent_first = bool(self.np_random.integers(2)) if self.agent_first is None else self.agent_first
        self.engine.seed(int(self.np_random.integers(2 ** SEED_BITS)))
        self._start(agent_first)
        if not agent_first:
            self._drop(self._opponent_action())
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._over:
            raise gymnasium.error.ResetNeeded("the episode is over: call reset()")
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r}: expected a column 0-{self.geometry.width - 1}")
        if self._cells[0, action] != 0:
            self._over = True
            return self._observation(), self.illegal_reward, True, False, self._info(illegal_action=True)
        self._drop(int(action))
        if not self._position.is_over():
            self._drop(self._opponent_action())
        reward = 0.0
        if self._position.is_over():
            self._over = True
            winner = self._position.winner()
            reward = 0.0 if winner is None else 1.0 if winner == self._agent_mark else -1.0
        return self._observation(), reward, self._over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal actions as sb3-contrib's ``MaskablePPO`` asks for them: one bool per
        column, all False once the episode is over."""
        return self._mask().astype(bool)

    def render(self) -> str | None:
        """The board as text (``X`` the first player, ``O`` the second) in ``ansi`` mode."""
        return None if self.render_mode is None else str(self._position)

    def _drop(self, action: int) -> None:
        """Play ``action`` for the side to move: in the position and in the cells."""
        mark = self._position.side_to_move
        row = int(np.flatnonzero(self._cells[:, action] == 0)[-1])
        self._cells[row, action] = mark
        self._position = self._position.play(action + 1)

    def _opponent_action(self) -> int:
        if self.opponent is None:
            return self.engine.act(self._position)
        cells, mark = self._cells, 3 - self._agent_mark
        action = int(self.opponent(planes_of(cells, mark), action_mask_of(cells)))
        if not (0 <= action < self.geometry.width and cells[0, action] == 0):
            raise ValueError(f"the opponent policy played column {action}, which is not legal here")
        return action

    def _observation(self) -> np.ndarray:
        return planes_of(self._cells, self._agent_mark)

    def _mask(self) -> np.ndarray:
        """The legal columns as int8: none once the episode is over."""
        return np.zeros(self.geometry.width, dtype=np.int8) if self._over else action_mask_of(self._cells)

    def _info(self, illegal_action: bool = False) -> dict[str, Any]:
        return {"action_mask": self._mask(), "agent_first": self._agent_mark == 1, "illegal_action": illegal_action}


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point=f"{__name__}:ConnectFourEnv")
