"""c4engine as a PettingZoo ``connect_four_v3`` policy, run in PettingZoo's own AEC
loop and checked by its own ``api_test``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import pettingzoo
from pettingzoo.classic import connect_four_v3
from pettingzoo.test import api_test

from c4engine import IllegalMoveError
from c4engine.connectx import position_of
from c4engine.geometry import STANDARD
from c4engine.integrations.planes import cells_of, position_of_planes
from c4engine.integrations.pettingzoo import C4Policy, play_game

GAMES = 5


def connect_four() -> Any:
    """``connect_four_v3`` as PettingZoo 1.27 makes it from its registry."""
    return pettingzoo.make("aec", "classic/connect_four-v3")


def random_policy(seed: int) -> Any:
    rng = np.random.default_rng(seed)
    return lambda observation, mask: int(rng.choice(np.flatnonzero(mask)))


def one_ply_policy(seed: int) -> Any:
    """The tutorials' rule player: win at once if it can, else stop the opponent's
    win at once, else a random legal column."""
    rng = np.random.default_rng(seed)

    def policy(observation: np.ndarray, mask: np.ndarray) -> int:
        position = position_of_planes(observation)
        legal = [int(action) for action in np.flatnonzero(mask)]
        for action in legal:
            if position.play(action + 1).winner() is not None:
                return action
        for action in legal:
            after = position.play(action + 1)
            threats = [reply for reply in after.legal_moves() if after.play(reply).winner() is not None]
            if threats:
                return threats[0] - 1
        return int(rng.choice(legal))
    return policy


def test_pettingzoos_api_test_passes_on_the_environment() -> None:
    """Made from the registry, and as the tutorials before 1.27 import it."""
    api_test(connect_four(), num_cycles=100)
    api_test(connect_four_v3.env(), num_cycles=100)


def test_the_board_read_from_every_observation_is_the_environments() -> None:
    """At every step of the AEC loop, terminal ones included, the cells read from
    the observation are ``env.unwrapped.board``; while the game goes on, the
    position c4engine reads is the one the board shows."""
    env = connect_four()
    for seed in range(4):
        policies = {"player_0": C4Policy(seed=seed), "player_1": random_policy(seed)}
        env.reset(seed=seed)
        steps = 0
        for agent in env.agent_iter():
            observation, _reward, termination, truncation, _info = env.last()
            mark = env.possible_agents.index(agent) + 1
            board = np.array(env.unwrapped.board, dtype=np.int8).reshape(6, 7)
            cells, _mark = cells_of(observation["observation"], mark)
            assert (cells == board).all()
            if termination or truncation:
                env.step(None)
                continue
            assert position_of_planes(observation["observation"]) == position_of(env.unwrapped.board, mark, STANDARD)
            env.step(policies[agent](observation["observation"], observation["action_mask"]))
            steps += 1
        assert steps >= 7


@pytest.mark.parametrize("opponent", [random_policy, one_ply_policy], ids=["random", "one-ply"])
def test_first_it_wins_every_game(opponent: Any) -> None:
    env = connect_four()
    for seed in range(GAMES):
        totals = play_game(env, {"player_0": C4Policy(seed=seed), "player_1": opponent(seed)}, seed=seed)
        assert totals == {"player_0": 1.0, "player_1": -1.0}, seed


def test_second_it_never_loses_to_the_one_ply_player() -> None:
    env = connect_four()
    for seed in range(3):
        totals = play_game(env, {"player_0": one_ply_policy(seed), "player_1": C4Policy(seed=seed)}, seed=seed)
        assert totals["player_1"] >= 0.0


def test_the_policy_takes_the_observation_dict_too() -> None:
    env = connect_four()
    env.reset(seed=0)
    observation, *_ = env.last()
    assert C4Policy()(observation) == 3  # the only winning first move: the centre


def test_a_level_plays_legal_moves_and_a_seed_repeats_them() -> None:
    env = connect_four()
    games = [play_game(env, {"player_0": C4Policy(level=2, seed=4), "player_1": random_policy(4)}, seed=4)
             for _ in range(2)]
    assert games[0] == games[1]


def test_other_boards_and_bad_observations() -> None:
    planes = np.zeros((7, 9, 2), dtype=np.int8)
    planes[6, 4, 1] = 1  # the opponent opened in the centre: the agent moves second
    assert C4Policy(connect=5, time=0.05)(planes, np.ones(9)) in range(9)
    with pytest.raises(IllegalMoveError, match="expected H x W x 2 planes"):
        C4Policy()(np.zeros((6, 7)), np.ones(7))
    with pytest.raises(IllegalMoveError, match="no game reaches that"):
        C4Policy()(np.dstack([np.ones((6, 7)) * 0, np.pad(np.ones((2, 7)), ((4, 0), (0, 0)))]), np.ones(7))
    with pytest.raises(IllegalMoveError, match="is it this agent's turn"):
        C4Policy()(np.zeros((6, 7, 2)), np.zeros(7))
