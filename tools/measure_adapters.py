#!/usr/bin/env python3
"""Measure what the adapters of c4engine.integrations cost per move beside the engine's
search (docs/figures.md, "The training adapters"): a dev tool, not a test.

Every adapter is timed on the positions of random 7x6 games, whole calls, and
the time spent inside the engine (``c4engine.analyse`` and ``c4engine.best_move``,
the only calls the adapters make into it) is subtracted; what is left is the
adapter's own work: reading the position from the library's state, writing the
action back, and for the Gymnasium environment the whole step around the
opponent's search (the agent's stone, the opponent's, the observation and the
info).  The engine plays with a node limit, so that its searches, subtracted
anyway, keep the run short.

    PYTHONPATH=. python tools/measure_adapters.py --games 20 --seed 1
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import click
import numpy as np
import pettingzoo
import pyspiel

import c4engine
from c4engine.integrations import player
from c4engine.integrations.gymnasium import ConnectFourEnv
from c4engine.integrations.kaggle_agents import agent_from_policy, policy_from_agent
from c4engine.integrations.openspiel import C4Bot
from c4engine.integrations.pettingzoo import C4Policy

NODES = 1000
inside_engine = [0.0]


def timed(call: Callable[..., Any]) -> Callable[..., Any]:
    """``call``, adding the seconds it takes to ``inside_engine``."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            inside_engine[0] += time.perf_counter() - began
    return wrapper


def own_cost(call: Callable[[], Any]) -> tuple[float, Any]:
    """Microseconds ``call`` takes outside the engine, and what it returns."""
    inside_engine[0] = 0.0
    began = time.perf_counter()
    result = call()
    return (time.perf_counter() - began - inside_engine[0]) * 1e6, result


def random_games(games: int, rng: random.Random) -> list[list[int]]:
    """The 0-based moves of ``games`` random 7x6 games, each position still to be played."""
    found = []
    for _ in range(games):
        position, moves = c4engine.Position(), []
        while not position.is_over():
            moves.append(rng.choice(position.legal_moves()) - 1)
            position = position.play(moves[-1] + 1)
        found.append(moves[:-1])
    return found


def openspiel_costs(games: list[list[int]]) -> list[float]:
    game = pyspiel.load_game("connect_four")
    bot = C4Bot(game, nodes=NODES)
    costs = []
    for moves in games:
        state = game.new_initial_state()
        for action in moves:
            costs.append(own_cost(lambda: bot.step(state))[0])
            state.apply_action(action)
    return costs


def pettingzoo_costs(games: list[list[int]], policy: Callable[[np.ndarray, np.ndarray], int]) -> list[float]:
    env = pettingzoo.make("aec", "classic/connect_four-v3")
    costs = []
    for moves in games:
        env.reset()
        for action in moves:
            observation, *_ = env.last()
            costs.append(own_cost(lambda: policy(observation["observation"], observation["action_mask"]))[0])
            env.step(action)
    return costs


def gymnasium_costs(episodes: int, seed: int) -> list[float]:
    """Per step of a random agent (each step includes the opponent's move)."""
    env, rng = ConnectFourEnv(nodes=NODES, agent_first=None), np.random.default_rng(seed)
    costs = []
    for episode in range(episodes):
        _observation, info = env.reset(seed=seed + episode)
        terminated = False
        while not terminated:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            cost, (_observation, _reward, terminated, _truncated, info) = own_cost(lambda: env.step(action))
            costs.append(cost)
    return costs


@click.command()
@click.option("--games", default=20, show_default=True,
              help="random 7x6 games whose positions are timed, and Gymnasium episodes of a random agent")
@click.option("--seed", default=1, show_default=True)
def main(games: int, seed: int) -> None:
    player.analyse = timed(player.analyse)
    player.best_move = timed(player.best_move)
    positions = random_games(games, random.Random(seed))
    c4engine.warm_up()
    engine = C4Policy(nodes=NODES)
    rows = [("OpenSpiel C4Bot.step", openspiel_costs(positions)),
            ("PettingZoo C4Policy", pettingzoo_costs(positions, engine)),
            ("Kaggle agent -> policy -> agent", pettingzoo_costs(
                positions, policy_from_agent(agent_from_policy(engine)))),
            ("Gymnasium step (with the opponent's move)", gymnasium_costs(games, seed))]
    click.echo(f"Adapters' own cost per move on 7x6, beside the engine's search ({games} random games)")
    click.echo(f"{'adapter':<44}{'moves':>7}{'median us':>11}{'p90 us':>9}{'max us':>9}")
    for name, costs in rows:
        ordered = sorted(costs)
        click.echo(f"{name:<44}{len(costs):>7}{statistics.median(costs):>11.0f}"
                   f"{ordered[int(0.9 * len(ordered))]:>9.0f}{ordered[-1]:>9.0f}")


if __name__ == "__main__":
    main()
