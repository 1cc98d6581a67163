"""The Kaggle ConnectX agent: its reading of Kaggle's board, its refusals, its time,
and its games in Kaggle's own environment (``kaggle-environments`` 1.12.0,
test-only) against the built-in ``negamax`` and ``random`` agents.

The full match (10 games per colour against each built-in agent) is marked
slow because ``negamax`` itself thinks for most of it; the default run plays
every random game and three per colour against ``negamax``, through the same
code.
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import c4engine
from c4engine import IllegalMoveError, Position
from c4engine.connectx import agent, position_of, search_seconds
from c4engine.geometry import Geometry

PONS = Path(__file__).resolve().parent.parent / "../shared/data/pons"


def kaggle_board(pos: Position) -> list[int]:
    """Kaggle's flat board for ``pos``: top row first, 1 for the first player's stones.

    Written from the game's moves (not from the FEN the agent reads), so the
    two conversions check each other."""
    columns, rows = pos.width, pos.height
    heights = [0] * columns
    cells = [0] * (columns * rows)
    for ply, column in enumerate(pos.moves):
        row_from_top = rows - 1 - heights[column - 1]
        cells[row_from_top * columns + column - 1] = 1 + ply % 2
        heights[column - 1] += 1
    return cells


def observation(moves: str) -> dict[str, object]:
    pos = Position.from_moves(moves)
    return {"board": kaggle_board(pos), "mark": pos.side_to_move}


# -- reading the board ------------------------------------------------------

@pytest.mark.parametrize("moves", ["", "4", "4453", "1234567", "444444", "3343212"])
def test_the_board_reads_as_the_position_its_moves_make(moves: str) -> None:
    obs = observation(moves)
    assert position_of(obs["board"], obs["mark"]) == Position.from_moves(moves)  # type: ignore[arg-type]


def test_the_top_row_comes_first() -> None:
    board = [0] * 42
    board[41] = 1  # the bottom-right cell
    assert position_of(board, 2) == Position.from_moves("7")


@pytest.mark.parametrize(("board", "mark", "message"), [
    ([0] * 41, 1, "ConnectX board: expected 42 cells, found 41"),
    ([3] + [0] * 41, 1, "ConnectX board: cell 0 is 3; cells must be 0 (empty), 1 or 2"),
    ([0] * 41 + [1.0], 2, "ConnectX board: cell 41 is 1.0; cells must be 0 (empty), 1 or 2"),
    ([0] * 41 + [True], 2, "ConnectX board: cell 41 is True; cells must be 0 (empty), 1 or 2"),
    ([0] * 41 + ["1"], 2, "ConnectX board: cell 41 is '1'; cells must be 0 (empty), 1 or 2"),
    (42, 1, "ConnectX board 42: expected a list of cells"),
    ([0] * 42, 3, "ConnectX mark 3: expected 1 or 2"),
    ([0] * 42, 1.0, "ConnectX mark 1.0: expected 1 or 2"),
    ([0] * 42, True, "ConnectX mark True: expected 1 or 2"),
    ([0] * 42, 2, "wrong side to move: with these stones the first player is to move"),
    ([1] + [0] * 41, 2, "column 1 has a stone floating above an empty cell"),
    ([0] * 35 + [1, 1, 1, 1, 2, 2, 2], 2, "the game is already over: a side has four in a row"),
])
def test_a_board_no_game_reaches_is_refused(board: list[int], mark: int, message: str) -> None:
    with pytest.raises(IllegalMoveError) as caught:
        agent({"board": board, "mark": mark}, {})
    assert str(caught.value) == message


@pytest.mark.parametrize(("width", "height", "connect", "moves"), [
    (8, 7, 4, "18845"), (6, 5, 3, "1616"), (9, 6, 5, "999123"), (12, 4, 4, [12, 1, 10, 10]),
])
def test_a_board_of_another_size_reads_as_its_moves_make_it(
        width: int, height: int, connect: int, moves: str | list[int]) -> None:
    pos = Position.from_moves(moves, width=width, height=height, connect=connect)
    geometry = Geometry(width, height, connect)
    assert position_of(kaggle_board(pos), pos.side_to_move, geometry) == pos


def test_the_agent_plays_another_board() -> None:
    pos = Position.from_moves("1122", width=6, height=5, connect=3)
    configuration = {"columns": 6, "rows": 5, "inarow": 3, "actTimeout": 2}
    column = agent({"board": kaggle_board(pos), "mark": 1}, configuration)
    assert column + 1 == 3  # the only move that wins at once; 5 and 6 would not


def test_a_board_of_the_wrong_size_for_the_configuration_is_refused() -> None:
    with pytest.raises(IllegalMoveError, match="ConnectX board: expected 56 cells, found 42"):
        agent(observation(""), {"columns": 8, "rows": 7})


# -- the configuration ------------------------------------------------------

@pytest.mark.parametrize(("configuration", "limit"), [
    ({"columns": 12, "rows": 10}, "board 12x10: needs width x (height + 1) <= 128 bits (here 132)"),
    ({"columns": 11, "rows": 11}, "board 11x11: needs width x (height + 1) <= 128 bits (here 132)"),
    ({"inarow": 8}, "board 7x6k8: row length 8 is out of range (3-7 on a 7x6 board)"),
    ({"inarow": 2}, "board 7x6k2: row length 2 is out of range (3-7 on a 7x6 board)"),
    ({"columns": 30, "rows": 1, "inarow": 3}, "board 30x1k3: drops name files a-z, so at most 26 columns"),
])
def test_a_game_that_does_not_fit_is_refused_naming_the_limit(configuration: dict[str, int], limit: str) -> None:
    shape = {"columns": 7, "rows": 6, "inarow": 4} | configuration
    with pytest.raises(IllegalMoveError) as caught:
        agent(observation(""), configuration)
    assert str(caught.value).startswith(f"ConnectX: c4engine cannot play {shape['columns']} columns, "
                                        f"{shape['rows']} rows, {shape['inarow']} in a row: {limit}")


@pytest.mark.parametrize(("configuration", "message"), [
    ({"columns": "7"}, "ConnectX: c4engine cannot play '7' columns, 6 rows, 4 in a row: "
                       "board width '7': expected a whole number"),
    ({"rows": 6.0}, "ConnectX: c4engine cannot play 7 columns, 6.0 rows, 4 in a row: "
                    "board height 6.0: expected a whole number"),
    ({"inarow": True}, "ConnectX: c4engine cannot play 7 columns, 6 rows, True in a row: "
                       "board connect True: expected a whole number"),
    ({"actTimeout": "2"}, "ConnectX: actTimeout must be a number of seconds above 0, got '2'"),
    ({"actTimeout": math.nan}, "ConnectX: actTimeout must be a number of seconds above 0, got nan"),
    ({"actTimeout": 0}, "ConnectX: actTimeout must be a number of seconds above 0, got 0"),
])
def test_a_value_of_another_kind_is_named(configuration: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        agent(observation(""), configuration)
    assert str(caught.value) == message


def test_an_infinite_act_timeout_is_no_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """It started a timer thread that died with an OverflowError."""
    died: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", died.append)
    assert agent(observation("121212"), {"actTimeout": math.inf}) == 0
    time.sleep(0.1)
    assert not died, died[0].exc_value


def test_numpy_cells_and_marks_are_whole_numbers() -> None:
    numpy = pytest.importorskip("numpy")
    obs = observation("4453")
    assert position_of(numpy.array(obs["board"]), numpy.int64(obs["mark"])) == Position.from_moves("4453")


def test_observation_and_configuration_may_be_attribute_objects() -> None:
    obs = SimpleNamespace(**observation("121212"))
    config = SimpleNamespace(columns=7, rows=6, inarow=4, actTimeout=1)
    assert agent(obs, config) == 0  # column 1 wins at once


def test_a_missing_board_is_named() -> None:
    with pytest.raises(ValueError, match="ConnectX: no 'board' given"):
        agent({"mark": 1}, {})


# -- time -------------------------------------------------------------------

def test_the_search_keeps_a_margin_and_subtracts_what_the_call_spent() -> None:
    assert search_seconds(2.0, 0.0) == pytest.approx(1.6)
    assert search_seconds(2.0, 0.5) == pytest.approx(1.1)
    assert 0 < search_seconds(2.0, 5.0) <= 0.05  # a cold start: a brief search only
    assert 0 < search_seconds(0.1, 0.0) <= 0.05


def test_a_move_in_a_hard_position_comes_within_act_timeout() -> None:
    """A 13-stone position from Pons' hardest set, which the search cannot solve in the
    time: the move must still come before ``actTimeout`` (best of three tries, so that
    a busy machine's hiccup is not taken for the agent's)."""
    path = PONS / "Test_L1_R3"
    if not path.exists():
        pytest.skip(f"Pons' test set {path} is not available")
    with path.open() as lines:
        moves = next(line.split()[0] for line in lines if len(line.split()[0]) == 13)
    c4engine.warm_up()
    durations = []
    for _ in range(3):
        began = time.perf_counter()
        column = agent(observation(moves), {"actTimeout": 0.3})
        durations.append(time.perf_counter() - began)
        assert column + 1 in Position.from_moves(moves).legal_moves()
    assert min(durations) < 0.3


# -- games in Kaggle's environment ------------------------------------------

STANDARD_SHAPE = {"columns": 7, "rows": 6, "inarow": 4}
FIRST_PLAYER_WINS = {(7, 6, 4), (8, 7, 4), (6, 5, 3)}  # Tromp's table; 3 in a row on 6x5 is easy


def play_games(opponent: str, games_per_colour: int, act_timeout: float,
               shape: dict[str, int] = STANDARD_SHAPE) -> list[tuple[int, float, int]]:
    """(c4engine's colour, its longest move in seconds, its reward) of each game."""
    kaggle = pytest.importorskip("kaggle_environments", reason="kaggle-environments is not installed")
    # Kaggle loads an agent's file untimed; the first move is timed
    c4engine.warm_up(shape["columns"], shape["rows"], shape["inarow"])
    results = []
    for me in (0, 1):
        for _ in range(games_per_colour):
            env = kaggle.make("connectx", configuration={"actTimeout": act_timeout, **shape})
            env.run([agent, opponent] if me == 0 else [opponent, agent])
            assert [state["status"] for state in env.state] == ["DONE", "DONE"], env.state
            durations = [step[me]["duration"] for step in env.logs
                         if len(step) > me and "duration" in step[me]]
            results.append((me + 1, max(durations), env.state[me]["reward"]))
    return results


def check_results(results: list[tuple[int, float, int]], act_timeout: float,
                  shape: dict[str, int] = STANDARD_SHAPE) -> None:
    """No move past ``act_timeout``, and (a DONE status having ruled out an invalid move)
    every game won as first player on a board the first player wins, none lost
    as second on the standard board."""
    first_wins = (shape["columns"], shape["rows"], shape["inarow"]) in FIRST_PLAYER_WINS
    for mark, longest, reward in results:
        assert longest < act_timeout, (mark, longest)
        if mark == 1 and first_wins:
            assert reward == 1, "c4engine must win every game as first player"
        elif mark == 2 and shape == STANDARD_SHAPE:
            assert reward >= 0, "c4engine must lose no game as second player"


KAGGLE_BOARDS = [{"columns": 8, "rows": 7, "inarow": 4}, {"columns": 6, "rows": 5, "inarow": 3},
                 pytest.param({"columns": 9, "rows": 6, "inarow": 5}, marks=pytest.mark.slow),  # ~1 min
                 pytest.param({"columns": 8, "rows": 8, "inarow": 4}, marks=pytest.mark.slow),  # past 64 bits
                 pytest.param({"columns": 10, "rows": 8, "inarow": 4}, marks=pytest.mark.slow)]


@pytest.mark.parametrize("shape", KAGGLE_BOARDS, ids=lambda s: f"{s['columns']}x{s['rows']}k{s['inarow']}")
def test_kaggle_games_against_negamax_on_other_boards(shape: dict[str, int]) -> None:
    check_results(play_games("negamax", 1, act_timeout=2.0, shape=shape), act_timeout=2.0, shape=shape)


@pytest.mark.parametrize(("opponent", "games_per_colour"), [("random", 10), ("negamax", 3)])
def test_kaggle_games_against_the_built_in_agents(opponent: str, games_per_colour: int) -> None:
    check_results(play_games(opponent, games_per_colour, act_timeout=2.0), act_timeout=2.0)


@pytest.mark.slow
def test_kaggle_ten_games_per_colour_against_negamax() -> None:
    check_results(play_games("negamax", 10, act_timeout=2.0), act_timeout=2.0)
