"""``c4engine train --method self-play``: TD(lambda) games that follow the rules, values
that are the network's, the same command making the same file, a stopped run going on."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from checkpoints import checkpoint_count
from c4engine.cli import cli
from c4engine.geometry import Geometry
from c4engine.kernel.evaluation import N_LINEAR, THREAT_WEIGHTS
from c4engine.kernel.ntuple import STATES, TUPLE_LENGTH, network_values
from c4engine.kernel.specialise import kernel_for
from c4engine.rules import bits
from c4engine.search.weights import network_note
from c4engine.training import td
from c4engine.training.held_out import make_held_out
from c4engine.training.network import cell_rows, random_walk_tuples
from c4engine.training.selfplay import CP_PER_UNIT, cell_pairs, makes_line, play_game

BOARD = Geometry.parse("5x4")


@pytest.fixture(scope="module")
def held_out(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("selfplay") / "held-5x4.npz"
    make_held_out(BOARD, 10, 7, 200_000).save(path)
    return str(path)


def train(held_out: str, out: str, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["train", "--method", "self-play", "--board", "5x4", "--games", "6000",
                                      "--tuples", "6", "--held-out", held_out, "--out", out, *extra])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("board", ["7x6", "9x6", "5x4"])
def test_a_line_is_found_where_the_rules_find_one(board: str) -> None:
    geometry, rng = Geometry.parse(board), np.random.default_rng(3)
    for _ in range(200):
        cells = np.zeros(geometry.width * geometry.h1, dtype=np.int8)
        heights = [0] * geometry.width
        for ply in range(geometry.cells):
            col = int(rng.choice([c for c in range(geometry.width) if heights[c] < geometry.height]))
            player = 1 + ply % 2
            found = makes_line(cells, col, heights[col], player, geometry.width, geometry.height, geometry.connect)
            cells[col * geometry.h1 + heights[col]] = player
            heights[col] += 1
            stones = sum(1 << int(cell) for cell in np.flatnonzero(cells == player))
            assert found == bits.has_line(stones, geometry.width, geometry.height, geometry.connect)
            if found:
                break


@pytest.mark.parametrize("hybrid", [False, True])
def test_each_afterstate_is_a_legal_position_valued_as_the_network_values_it(hybrid: bool) -> None:
    """Random tables, random moves: each afterstate's rows read the board one stone on
    from the one before, dropped where gravity puts it; its sum is the network's
    value of that position (and the threat terms', for a hybrid); the game ends at the
    first line, or full."""
    rng = np.random.default_rng(11)
    tuples = random_walk_tuples(BOARD, 12, TUPLE_LENGTH, rng)
    cells = cell_rows(tuples, BOARD)
    assert set(cells.tolist()) == {c * BOARD.h1 + r for c in range(BOARD.width) for r in range(BOARD.height)}
    tables = rng.normal(size=(12, STATES ** TUPLE_LENGTH))
    pairs = cell_pairs(cells, BOARD.width * BOARD.h1)
    linear = kernel_for(BOARD).evaluation.linear_score
    history = np.zeros((BOARD.cells, cells.size // TUPLE_LENGTH), dtype=np.int64)
    sums, greedy = np.zeros(BOARD.cells), np.zeros(BOARD.cells, dtype=np.bool_)
    for _ in range(20):
        plies, result = play_game(tables, pairs, (BOARD.width, BOARD.height, BOARD.connect), 1.0, 0, linear,
                                  THREAT_WEIGHTS, hybrid, history, sums, greedy)
        current, mask = 0, 0
        for ply in range(plies):
            board = boards_of(history[ply], cells)
            added = board - (boards_of(history[ply - 1], cells) if ply else 0)
            assert np.count_nonzero(added) == 1 and added.max() == 1 + ply % 2
            cell = int(np.flatnonzero(added)[0])
            assert cell % BOARD.h1 == 0 or (mask >> (cell - 1)) & 1
            current, mask = current ^ mask, mask | (1 << cell)
            value = network_values(cells, tables, np.array([current]), np.array([mask]), np.array([ply + 1]))[0]
            first_view = value if (ply + 1) % 2 == 0 else -value
            if hybrid:
                score = linear(current, mask, ply + 1, THREAT_WEIGHTS)
                first_view += (score if (ply + 1) % 2 == 0 else -score) / CP_PER_UNIT
            assert sums[ply] == pytest.approx(first_view)
            mover = current ^ mask
            assert bits.has_line(mover, BOARD.width, BOARD.height, BOARD.connect) == (ply == plies - 1 and result != 0)
        assert result != 0 or plies == BOARD.cells


def boards_of(indices: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Each cell's contents as the rows' indices read them; every row agrees."""
    board = np.full(int(cells.max()) + 1, -1)
    for row, index in enumerate(indices):
        for place in range(TUPLE_LENGTH):
            cell, state = cells[row * TUPLE_LENGTH + place], (index // STATES ** (TUPLE_LENGTH - 1 - place)) % STATES
            assert board[cell] in (-1, state)
            board[cell] = state
    return np.maximum(board, 0)


def test_the_same_command_makes_the_same_network_and_a_stopped_run_goes_on_to_it(
        held_out: str, tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(td.SelfPlaySpec, "games_per_chunk", 2000)
    first, again, other = (str(tmp_path / name) for name in ("first.npz", "again.npz", "other.npz"))
    output = train(held_out, first)
    assert "6000/6000 games" in output and "held-out accuracy" in output
    train(held_out, again)
    train(held_out, other, "--seed", "2")
    stopped, runs = tmp_path / "stopped.npz", 0
    while not stopped.exists():
        output = train(held_out, str(stopped), "--minutes", "0")
        runs += 1
        assert stopped.exists() or "the same command goes on" in output
    assert runs == 3
    assert open(first, "rb").read() == open(again, "rb").read() == stopped.read_bytes()
    assert open(other, "rb").read() != open(first, "rb").read()


def test_the_file_records_its_command_and_accuracy_and_the_engine_names_them(held_out: str, tmp_path) -> None:
    out = tmp_path / "hybrid.npz"
    train(held_out, str(out), "--hybrid", "--epsilon", "0.2")
    with np.load(out) as document:
        assert str(document["made_by"]) == (
            "c4engine train --method self-play --board 5x4 --seed 1 --games 6000 --tuples 6 --rate 0.5 "
            "--lambda 0.5 --epsilon 0.2 --random-plies 2 --hybrid --held-out held-5x4.npz")
        assert np.array_equal(document["linear"], THREAT_WEIGHTS[:N_LINEAR])
        accuracy, positions = float(document["accuracy"]), int(document["accuracy_positions"])
        assert positions == 40 and 0.0 <= accuracy <= 1.0
        assert 0.0 < float(document["margin"]) <= 4.0
    with out.open("rb") as stream:
        note = network_note(stream, "ntuple-5x4k4.npz")
    assert note == (f"ntuple-5x4k4.npz for the 5x4 board, tuples beside the threat terms, held-out accuracy "
                    f"{accuracy:.4f} on {positions} positions")


@pytest.mark.parametrize("options, message", [
    (["--stones", "3", "9"], "--stones is for --method solver"),
    (["--epochs", "2"], "--epochs is for --method solver"),
    (["--no-book"], "--book is for --method solver"),
    (["--cluster", "auto"], "--cluster is for --method solver"),
])
def test_an_option_of_the_solver_method_is_a_usage_error(held_out: str, tmp_path, options: list[str],
                                                         message: str) -> None:
    result = CliRunner().invoke(cli, ["train", "--method", "self-play", "--board", "5x4", "--held-out", held_out,
                                      "--out", str(tmp_path / "n.npz"), *options])
    assert result.exit_code == 2 and message in result.output


@pytest.mark.parametrize("method", ["solver", "self-play"])
def test_a_board_past_64_cells_is_refused_by_either_method(method: str, held_out: str, tmp_path) -> None:
    result = CliRunner().invoke(cli, ["train", "--method", method, "--board", "9x8", "--held-out", held_out,
                                      "--out", str(tmp_path / "n.npz")])
    assert result.exit_code == 2 and "9x8 board: it has 72 cells" in result.output
    assert not (tmp_path / "n.npz.sqlite").exists()


def test_self_play_options_need_the_self_play_method_and_it_needs_a_held_out_set(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["train", "--board", "5x4", "--lambda", "0.7", "--out", str(tmp_path / "n")])
    assert result.exit_code == 2 and "--lambda is for --method self-play, not solver" in result.output
    result = CliRunner().invoke(cli, ["train", "--method", "self-play", "--board", "5x4", "--out", str(tmp_path / "n")])
    assert result.exit_code == 2 and "needs --held-out" in result.output
    assert not (tmp_path / "n.sqlite").exists()


def test_a_checkpoint_of_the_other_method_is_refused(held_out: str, tmp_path) -> None:
    solver_run, self_play_run = tmp_path / "solver.sqlite", tmp_path / "td.sqlite"
    result = CliRunner().invoke(cli, ["train", "--board", "5x4", "--games", "1", "--stones", "10", "12", "--tuples",
                                      "2", "--epochs", "1", "--checkpoint", str(solver_run),
                                      "--out", str(tmp_path / "solver.npz")])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(cli, ["train", "--method", "self-play", "--board", "5x4", "--held-out", held_out,
                                      "--checkpoint", str(solver_run), "--out", str(tmp_path / "td.npz")])
    assert result.exit_code == 1 and "holds another run" in result.output
    train(held_out, str(tmp_path / "td.npz"), "--checkpoint", str(self_play_run))
    for command in (["train", "--board", "5x4", "--games", "1", "--stones", "10", "12", "--checkpoint",
                     str(self_play_run), "--out", str(tmp_path / "s.npz")],
                    ["held-out", "overlap", str(self_play_run), held_out]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 1 and "holds a self-play run" in result.output


@pytest.mark.slow
def test_a_killed_run_goes_on_to_the_same_network(held_out: str, tmp_path) -> None:
    """SIGKILL once the tables of the first chunk of 100,000 games are saved
    (``--checkpoint-minutes 0`` saves after each); the same command then finishes
    the run, and the network is the uninterrupted run's."""
    command = [sys.executable, "-m", "c4engine", "train", "--method", "self-play", "--board", "5x4", "--games",
               "300000", "--tuples", "6", "--held-out", held_out, "--checkpoint-minutes", "0"]
    whole, killed = tmp_path / "whole.npz", tmp_path / "killed.npz"
    subprocess.run([*command, "--out", str(whole)], check=True, capture_output=True)
    process = subprocess.Popen([*command, "--out", str(killed)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while games_saved(killed.with_name(killed.name + ".sqlite")) == 0:
            assert process.poll() is None and time.monotonic() < deadline, "no chunk was saved"
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    assert not killed.exists()
    assert games_saved(killed.with_name(killed.name + ".sqlite")) in (100_000, 200_000)
    subprocess.run([*command, "--out", str(killed)], check=True, capture_output=True)
    assert killed.read_bytes() == whole.read_bytes()


def games_saved(checkpoint: Path) -> int:
    return checkpoint_count(checkpoint, "SELECT games FROM play")
