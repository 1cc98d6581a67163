"""Kaggle ConnectX agents as the adapters' policies and back, each run in the other's loop:
a Kaggle agent in PettingZoo's AEC loop and OpenSpiel's, a policy in
kaggle-environments' own ``connectx`` runner."""

from __future__ import annotations

import random
from types import SimpleNamespace

import kaggle_environments
import numpy as np
import pettingzoo
import pyspiel

import c4engine
from c4engine.connectx import agent as c4engine_agent
from c4engine.integrations.kaggle_agents import agent_from_policy, policy_from_agent
from c4engine.integrations.openspiel import PolicyBot
from c4engine.integrations.pettingzoo import C4Policy, play_game
from c4engine.integrations.planes import action_mask_of, planes_of


def random_agent(seed: int):  # type: ignore[no-untyped-def]
    """A Kaggle agent that plays a random legal column."""
    rng = random.Random(seed)

    def agent(observation: dict, configuration: dict) -> int:
        top = observation["board"][:configuration["columns"]]
        return rng.choice([column for column, cell in enumerate(top) if cell == 0])
    return agent


def random_cells(rng: random.Random, stones: int) -> tuple[np.ndarray, int]:
    """The cells and mover's mark after ``stones`` random moves of a game still going on."""
    while True:
        position = c4engine.Position()
        for _ in range(stones):
            position = position.play(rng.choice(position.legal_moves()))
            if position.is_over():
                break
        if not position.is_over():
            cells = np.zeros((6, 7), dtype=np.int8)
            heights = [0] * 7
            for ply, column in enumerate(position.moves):
                cells[5 - heights[column - 1], column - 1] = ply % 2 + 1
                heights[column - 1] += 1
            return cells, position.side_to_move


def test_a_kaggle_agent_as_a_policy_sees_the_board_kaggle_would_show() -> None:
    """The round trip policy -> agent -> policy asks the inner policy the same question."""
    seen = []

    def recording(observation: np.ndarray, mask: np.ndarray) -> int:
        seen.append((observation.copy(), mask.copy()))
        return int(np.flatnonzero(mask)[0])
    round_trip = policy_from_agent(agent_from_policy(recording))
    rng = random.Random(8)
    for stones in (0, 5, 12, 23):
        cells, mark = random_cells(rng, stones)
        planes, mask = planes_of(cells, mark), action_mask_of(cells)
        assert round_trip(planes, mask) == int(np.flatnonzero(mask)[0])
        assert (seen[-1][0] == planes).all() and (seen[-1][1] == mask).all()


def test_a_policy_as_a_kaggle_agent_takes_attribute_structs() -> None:
    agent = agent_from_policy(C4Policy())
    observation = SimpleNamespace(board=[0] * 42, mark=1)
    assert agent(observation, SimpleNamespace(columns=7, rows=6, inarow=4)) == 3


def test_c4engines_kaggle_agent_wins_first_in_pettingzoos_loop() -> None:
    env = pettingzoo.make("aec", "classic/connect_four-v3")
    policy = policy_from_agent(c4engine_agent)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        opponent = lambda observation, mask: int(rng.choice(np.flatnonzero(mask)))  # noqa: E731
        assert play_game(env, {"player_0": policy, "player_1": opponent}, seed=seed)["player_0"] == 1.0


def test_a_kaggle_agent_plays_in_openspiels_loop() -> None:
    game = pyspiel.load_game("connect_four")
    bots = [PolicyBot(game, policy_from_agent(c4engine_agent)), PolicyBot(game, policy_from_agent(random_agent(1)))]
    assert pyspiel.evaluate_bots(game.new_initial_state(), bots, 1) == [1.0, -1.0]


def test_c4engines_policy_as_a_kaggle_agent_beats_negamax_in_kaggles_runner() -> None:
    for order in ((0, 1), (1, 0)):
        env = kaggle_environments.make("connectx")
        agents = [agent_from_policy(C4Policy(seed=1)), "negamax"]
        env.run([agents[index] for index in order])
        assert [state["status"] for state in env.state] == ["DONE", "DONE"]
        mine = order.index(0)
        reward = env.state[mine]["reward"]
        assert reward == 1 if mine == 0 else reward >= 0


def test_kaggles_negamax_as_the_gymnasium_opponent() -> None:
    """Kaggle's own negamax agent, through policy_from_agent, plays second against an
    agent that copies c4engine's perfect moves: the agent wins."""
    from kaggle_environments.envs.connectx.connectx import negamax_agent

    from c4engine.integrations.gymnasium import ConnectFourEnv
    env = ConnectFourEnv(opponent=policy_from_agent(negamax_agent))
    engine = C4Policy(seed=5)
    observation, info = env.reset(seed=5)
    terminated = False
    while not terminated:
        observation, reward, terminated, _truncated, info = env.step(engine(observation, info["action_mask"]))
    assert reward == 1.0 and not info["illegal_action"]
