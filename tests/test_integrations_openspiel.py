"""c4engine as an OpenSpiel bot, tested in OpenSpiel's own loops: Python's
``evaluate_bots`` and C++'s ``pyspiel.evaluate_bots``, against its ``MCTSBot`` and
its exact ``alpha_beta_search``; bitbully checks every move c4engine makes."""

from __future__ import annotations

import re
import random
from typing import Any

import bitbully
import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots
from open_spiel.python.algorithms.minimax import alpha_beta_search

from c4engine import IllegalMoveError, Position
from c4engine.integrations.openspiel import C4Bot, PolicyBot, UnsupportedGameError, position_of_state
from c4engine.integrations.pettingzoo import C4Policy

SEVEN_BY_SIX = pyspiel.load_game("connect_four")
SEEDS = (1, 2, 3)


def connect_four(columns: int, rows: int, connect: int) -> Any:
    return pyspiel.load_game(f"connect_four(rows={rows},columns={columns},x_in_row={connect})")


def mcts(game: Any, simulations: int, seed: int) -> Any:
    """OpenSpiel's C++ MCTSBot with random rollouts, solving what it can."""
    return pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, seed), 2.0, simulations, 1000, True, seed, False)


def play(game: Any, bots: list[Any], seed: int, loop: str, state: Any = None) -> list[float]:
    """One game through OpenSpiel's Python or C++ evaluate_bots."""
    start = game.new_initial_state() if state is None else state
    if loop == "python":
        return evaluate_bots(start, bots, np.random.RandomState(seed))
    return pyspiel.evaluate_bots(start, bots, seed)


@pytest.mark.parametrize("loop", ["python", "cpp"])
@pytest.mark.parametrize("seed", SEEDS)
def test_first_on_7x6_it_beats_mcts_with_1000_simulations(loop: str, seed: int) -> None:
    assert play(SEVEN_BY_SIX, [C4Bot(SEVEN_BY_SIX, seed=seed), mcts(SEVEN_BY_SIX, 1000, seed)], seed, loop) == [1.0, -1.0]


# 3-9 s a game: one in the default run, the other five with the slow tests
TEN_THOUSAND = [pytest.param(seed, loop, marks=[] if (seed, loop) == (1, "cpp") else [pytest.mark.slow])
                for seed in SEEDS for loop in ("python", "cpp")]


@pytest.mark.parametrize(("seed", "loop"), TEN_THOUSAND)
def test_first_on_7x6_it_beats_mcts_with_10000_simulations(seed: int, loop: str) -> None:
    assert play(SEVEN_BY_SIX, [C4Bot(SEVEN_BY_SIX, seed=seed), mcts(SEVEN_BY_SIX, 10000, seed)], seed, loop) == [1.0, -1.0]


class CheckedBot(C4Bot):
    """C4Bot whose every move bitbully scores against the best move of the position."""

    oracle = bitbully.BitBully("12-ply-dist")

    def __init__(self, game: Any, seed: int) -> None:
        super().__init__(game, seed=seed)
        self.moves = 0

    def step(self, state: Any) -> int:
        action = super().step(state)
        scores = self.oracle.score_all_moves(bitbully.Board(list(state.history())))
        best = max(scores.values())
        assert np.sign(scores[action]) == np.sign(best), (state.history(), action, scores)
        self.moves += 1
        return action


@pytest.mark.parametrize("loop", ["python", "cpp"])
@pytest.mark.parametrize("seed", SEEDS)
def test_second_on_7x6_every_move_keeps_the_result_of_its_position(loop: str, seed: int) -> None:
    bot = CheckedBot(SEVEN_BY_SIX, seed)
    returns = play(SEVEN_BY_SIX, [mcts(SEVEN_BY_SIX, 1000, seed), bot], seed, loop)
    assert bot.moves >= 3 and returns[1] in (-1.0, 0.0, 1.0)


SMALL = [(4, 4, 4), (4, 5, 4), (3, 3, 3), (4, 4, 3), (5, 4, 3), (4, 5, 3)]


def self_play(game: Any, state: Any, seed: int) -> float:
    """The first player's result when c4engine plays both sides from ``state``."""
    return play(game, [C4Bot(game, seed=seed), C4Bot(game, seed=seed + 1)], seed, "cpp", state)[0]


@pytest.mark.parametrize("shape", SMALL, ids=lambda shape: "%dx%dk%d" % shape)
def test_on_small_boards_its_results_are_alpha_beta_searchs(shape: tuple[int, int, int]) -> None:
    game = connect_four(*shape)
    value, _action = alpha_beta_search(game, maximizing_player_id=0)
    assert self_play(game, game.new_initial_state(), 0) == value


@pytest.mark.slow
def test_on_5x4_its_result_is_alpha_beta_searchs() -> None:
    """A minute of OpenSpiel's pure-Python search."""
    game = connect_four(5, 4, 4)
    value, _action = alpha_beta_search(game, maximizing_player_id=0)
    assert self_play(game, game.new_initial_state(), 0) == value


def from_json(game: Any, moves: list[int]) -> Any:
    """The state after ``moves``, made again from its JSON: a state with no history."""
    state = game.new_initial_state()
    for action in moves:
        state.apply_action(action)
    fresh = game.new_initial_state(state.to_json())
    assert fresh.history() == [] and str(fresh) == str(state)
    return fresh


@pytest.mark.parametrize("shape", [(5, 4, 4), (4, 5, 4), (5, 4, 3)], ids=lambda shape: "%dx%dk%d" % shape)
def test_from_start_at_positions_its_results_are_alpha_beta_searchs(shape: tuple[int, int, int]) -> None:
    """Mid-game states made from JSON, so that ``history()`` is empty: both loops
    call ``restart_at`` with them, and the bot must read the board."""
    game, rng = connect_four(*shape), random.Random(sum(shape))
    checked = 0
    while checked < 4:
        state = game.new_initial_state()
        for _ in range(rng.choice([4, 5, 6, 7])):
            state.apply_action(rng.choice(state.legal_actions()))
            if state.is_terminal():
                break
        if state.is_terminal():
            continue
        value, _action = alpha_beta_search(game, state.clone(), maximizing_player_id=0)
        for loop in ("python", "cpp"):
            start = from_json(game, state.history())
            bots = [C4Bot(game, seed=checked), C4Bot(game, seed=checked + 1)]
            assert play(game, bots, checked, loop, start)[0] == value, state.history()
        checked += 1


def test_its_policy_is_uniform_over_the_best_scored_moves() -> None:
    """Over every legal action, as MCTSBot gives it: 0 off the best exact score."""
    state = from_json(SEVEN_BY_SIX, [3, 3, 3, 3, 2, 2])
    policy, action = C4Bot(SEVEN_BY_SIX).step_with_policy(state)
    scores = CheckedBot.oracle.score_all_moves(bitbully.Board([3, 3, 3, 3, 2, 2]))
    best = sorted(move for move, score in scores.items() if score == max(scores.values()))
    assert [move for move, _p in policy] == state.legal_actions()
    assert [move for move, p in policy if p > 0] == best and action in best
    assert all(p == pytest.approx(1 / len(best)) for _move, p in policy if p > 0)
    assert C4Bot(SEVEN_BY_SIX).provides_policy()


def test_a_level_or_a_limit_plays_legal_moves_with_its_move_as_policy() -> None:
    for bot in (C4Bot(SEVEN_BY_SIX, level=0, seed=1), C4Bot(SEVEN_BY_SIX, nodes=2000), C4Bot(SEVEN_BY_SIX, time=0.02)):
        returns = play(SEVEN_BY_SIX, [bot, mcts(SEVEN_BY_SIX, 20, 1)], 1, "cpp")
        assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])
        policy, action = bot.step_with_policy(SEVEN_BY_SIX.new_initial_state())
        assert [(move, p) for move, p in policy if p > 0] == [(action, 1.0)] and len(policy) == 7


def test_a_seeded_level_repeats_its_game() -> None:
    games = [play(SEVEN_BY_SIX, [C4Bot(SEVEN_BY_SIX, level=3, seed=7), pyspiel.make_uniform_random_bot(1, 5)],
                  5, "python") for _ in range(2)]
    assert games[0] == games[1]


def test_the_board_is_read_from_the_state_on_every_size() -> None:
    game = connect_four(9, 7, 5)
    state = game.new_initial_state()
    for action in (0, 8, 4, 4):
        state.apply_action(action)
    position = position_of_state(state, C4Bot(game).geometry)
    assert (position.width, position.height, position.connect, position.side_to_move) == (9, 7, 5, 1)
    assert position.fen().startswith("9/9/9/9/9/4p4/P3P3p[")


@pytest.mark.parametrize("shape", [(7, 6, 4), (9, 7, 5), (11, 10, 4)], ids=lambda shape: "%dx%dk%d" % shape)
def test_every_state_of_random_games_reads_as_its_moves_make_it(shape: tuple[int, int, int]) -> None:
    """Against the history, which the bot never reads: the same stones, the same side to move."""
    game, rng = connect_four(*shape), random.Random(sum(shape))
    geometry = C4Bot(game).geometry
    for _ in range(5):
        state = game.new_initial_state()
        while not state.is_terminal():
            position = position_of_state(state, geometry)
            assert position == Position.from_moves([action + 1 for action in state.history()], *shape)
            assert position.side_to_move == state.current_player() + 1
            state.apply_action(rng.choice(state.legal_actions()))


@pytest.mark.parametrize(("game", "message"), [
    ("tic_tac_toe", "c4engine plays connect_four, not tic_tac_toe"),
    ("connect_four(rows=15,columns=9)", "needs width x (height + 1) <= 128 bits"),
    ("connect_four(rows=4,columns=4,x_in_row=5)", "row length 5 is out of range"),
    ("connect_four(rows=4,columns=27,x_in_row=4)", "27"),
])
def test_a_game_it_cannot_play_is_refused_naming_why(game: str, message: str) -> None:
    with pytest.raises(UnsupportedGameError, match=re.escape(message)):
        C4Bot(pyspiel.load_game(game))


def test_a_finished_game_and_bad_settings_are_refused() -> None:
    state = SEVEN_BY_SIX.new_initial_state()
    for action in (0, 1, 0, 1, 0, 1, 0):
        state.apply_action(action)
    with pytest.raises(IllegalMoveError, match="already over"):
        C4Bot(SEVEN_BY_SIX).step(state)
    with pytest.raises(ValueError, match="level must be a whole number from 0 to 20"):
        C4Bot(SEVEN_BY_SIX, level=21)
    with pytest.raises(ValueError, match="nodes must be a whole number of at least 1"):
        C4Bot(SEVEN_BY_SIX, nodes=0)


def test_any_policy_plays_as_a_bot() -> None:
    """c4engine's PettingZoo policy behind PolicyBot beats a random bot, and a policy
    that answers an illegal column is refused."""
    bot = PolicyBot(SEVEN_BY_SIX, C4Policy(seed=3))
    assert play(SEVEN_BY_SIX, [bot, pyspiel.make_uniform_random_bot(1, 3)], 3, "cpp") == [1.0, -1.0]
    state = from_json(SEVEN_BY_SIX, [0, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="column 0, which is not legal"):
        PolicyBot(SEVEN_BY_SIX, lambda observation, mask: 0).step(state)
