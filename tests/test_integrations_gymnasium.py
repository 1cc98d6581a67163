"""The Gymnasium environment with c4engine as the opponent, checked by Gymnasium's
own ``check_env`` and played through ``gymnasium.make``."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from c4engine import IllegalMoveError
from c4engine.integrations.gymnasium import ENV_ID, ConnectFourEnv
from c4engine.integrations.planes import action_mask_of, cells_of, position_of_cells

EPISODES = 100


def test_gymnasiums_check_env_passes_without_a_warning() -> None:
    for kwargs in ({}, {"agent_first": False, "level": 4}, {"width": 5, "height": 4, "connect": 3, "agent_first": None}):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # check_env reports what it dislikes as warnings
            check_env(gymnasium.make(ENV_ID, **kwargs).unwrapped)


def check_state(observation: np.ndarray, info: dict[str, Any], env: ConnectFourEnv, terminated: bool) -> None:
    """The observation is a position some game reaches, its mask that position's, and
    the game is still on exactly when the episode is."""
    mark = 1 if info["agent_first"] else 2
    cells, _mark = cells_of(observation, mark)
    assert (cells == env._cells).all()
    if terminated:
        assert not info["action_mask"].any() and not env.action_masks().any()
        return
    position = position_of_cells(cells, mark)  # raises for a board no game reaches, or a finished one
    assert position.side_to_move == mark
    assert (info["action_mask"] == action_mask_of(cells)).all() and (env.action_masks() == info["action_mask"]).all()


def run_episode(env: Any, seed: int) -> tuple[list[np.ndarray], float]:
    """A random agent that keeps to the mask, seeded: the observations and the reward."""
    rng = np.random.default_rng(seed)
    observation, info = env.reset(seed=seed)
    seen = [observation]
    check_state(observation, info, env.unwrapped, False)
    while True:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        observation, reward, terminated, truncated, info = env.step(action)
        seen.append(observation)
        assert not truncated and not info["illegal_action"]
        check_state(observation, info, env.unwrapped, terminated)
        if terminated:
            return seen, reward
        assert reward == 0.0


def test_a_random_agent_never_beats_the_perfect_opponent() -> None:
    env = gymnasium.make(ENV_ID, agent_first=None)
    rewards = [run_episode(env, seed)[1] for seed in range(EPISODES)]
    assert set(rewards) <= {-1.0, 0.0} and rewards.count(-1.0) >= EPISODES - 5


def test_the_same_seed_gives_the_same_episode() -> None:
    """Against a level, whose draws come from the seed, and who starts too."""
    env = gymnasium.make(ENV_ID, agent_first=None, level=2)
    episodes = {seed: run_episode(env, seed)[0] for seed in (3, 4, 5, 6)}
    again = run_episode(env, 5)[0]
    assert len(again) == len(episodes[5]) and all((a == b).all() for a, b in zip(again, episodes[5]))
    openings = {tuple(episode[0].ravel()) + tuple(episode[1].ravel()) for episode in episodes.values()}
    assert len(openings) > 1  # other seeds, other episodes: the check above could fail


def test_an_illegal_action_ends_the_episode_with_the_penalty() -> None:
    env = ConnectFourEnv(width=4, height=4, connect=3, opponent=lambda observation, mask: 0)
    env.reset(seed=0)
    for _ in range(2):
        _observation, _reward, terminated, _truncated, info = env.step(0)
        assert not terminated
    observation, reward, terminated, truncated, info = env.step(0)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert observation[:, 0].sum() == 4  # the board as it was: the column full
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(1)
    env.reset()
    for action in (4, -1, 1.0, "1"):
        with pytest.raises(ValueError, match="expected a column 0-3"):
            env.step(action)


def test_who_starts_and_the_opponents_stone() -> None:
    env = ConnectFourEnv(agent_first=False)
    observation, info = env.reset(seed=1)
    assert not info["agent_first"] and observation[:, :, 0].sum() == 0 and observation[5, 3, 1] == 1
    observation, info = ConnectFourEnv().reset(seed=1)
    assert info["agent_first"] and not observation.any()


def test_an_opponent_policy_and_another_board() -> None:
    env = gymnasium.make(ENV_ID, width=9, height=7, connect=5,
                         opponent=lambda observation, mask: int(np.flatnonzero(mask)[-1]))
    observation, info = env.reset(seed=2)
    assert observation.shape == (7, 9, 2) and env.unwrapped.action_masks().shape == (9,)
    observation, _reward, _terminated, _truncated, _info = env.step(0)
    assert observation[6, 0, 0] == 1 and observation[6, 8, 1] == 1
    assert env.unwrapped.render() is None
    shown = ConnectFourEnv(agent_first=False, render_mode="ansi")
    shown.reset(seed=0)
    assert shown.render().splitlines()[-2] == ". . . X . . ."  # the engine opens in the centre


def test_the_registered_id_loads_its_module() -> None:
    env = gymnasium.make(f"c4engine.integrations.gymnasium:{ENV_ID}", level=1, time=0.05)
    assert env.unwrapped.engine.level == 1 and env.unwrapped.engine.time == 0.05


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"width": 20, "height": 8}, IllegalMoveError, "needs width x \\(height \\+ 1\\) <= 128 bits"),
    ({"agent_first": "yes"}, ValueError, "agent_first must be True, False or None"),
    ({"level": 30}, ValueError, "level must be a whole number from 0 to 20"),
    ({"render_mode": "human"}, ValueError, "render_mode must be None or 'ansi'"),
])
def test_bad_settings_are_refused(kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        ConnectFourEnv(**kwargs)
