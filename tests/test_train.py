"""``c4engine train`` and ``c4engine held-out``: the same command makes the same
network, a stopped run goes on to it, a held-out set stays out of the data."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from checkpoints import checkpoint_count
from failing_ray import connected_to_failing_ray
from c4engine.cli import cli
from c4engine.geometry import STANDARD
from c4engine.kernel.evaluation import N_LINEAR
from c4engine.search.weights import network_note
from c4engine.training.data import Dataset
from c4engine.training.held_out import make_held_out, phases
from c4engine.training.network import HeldOutAccuracy, canonical_keys, held_out_by_key, record_accuracy, save_npz
from c4engine.training import pipeline
from c4engine.training.pipeline import TrainSpec, chunk_positions, excluded_rows
from c4engine.training.store import Positions, TrainingStore

TINY = ["--board", "7x6", "--no-book", "--games", "8", "--stones", "28", "36", "--nodes", "50000",
        "--tuples", "4", "--epochs", "3"]


def train(out: Path, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["train", *TINY, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("train") / "first.npz"
    output = train(out)
    assert "8/8 games" in output and "positions solved" in output
    assert "3/3 epochs" in output and "held-out accuracy" in output
    return out


def test_the_same_command_makes_the_same_network_byte_for_byte(first: Path, tmp_path: Path) -> None:
    again, other_seed = tmp_path / "again.npz", tmp_path / "seed2.npz"
    train(again)
    train(other_seed, "--seed", "2")
    assert again.read_bytes() == first.read_bytes()
    assert other_seed.read_bytes() != first.read_bytes()


def test_a_run_stopped_by_its_time_limit_goes_on_to_the_same_network(first: Path, tmp_path: Path) -> None:
    """``--minutes 0`` stops after each chunk of games or epoch; the same command goes on."""
    out = tmp_path / "stopped.npz"
    runs = 0
    while not out.exists():
        output = train(out, "--minutes", "0")
        runs += 1
        assert runs < 10
        assert out.exists() or "the same command goes on" in output
    assert runs == 5  # one run per chunk of games (two), then epochs 1 and 2; the third ends the run
    assert out.read_bytes() == first.read_bytes()


@pytest.mark.parametrize("damage, message", [
    ("UPDATE chunks SET current = substr(current, 1, 5) WHERE chunk = 0",
     "is damaged: chunk 0 holds 5 bytes, not whole int64 values"),
    ("UPDATE chunks SET result = substr(result, 1, 3) WHERE chunk = 1",
     "is damaged: chunk 1 holds .* stones, .* masks and 3 results"),
    ("UPDATE chunks SET mask = 7 WHERE chunk = 0", "is damaged: chunk 0 holds a int, not whole int64 values"),
    ("UPDATE fit SET shape = '3,5'", "is damaged: the saved fit holds .* values, not the shape '3,5'"),
])
def test_a_damaged_checkpoint_is_a_one_line_error_naming_it(first: Path, tmp_path: Path, damage: str,
                                                              message: str) -> None:
    """Issue 47: a chunk cut to 5 bytes ended the resumed run in numpy's ValueError
    traceback; it is the CheckpointError the command reports on one line."""
    out = tmp_path / "damaged.npz"
    checkpoint = out.with_name(out.name + ".sqlite")
    shutil.copyfile(first.with_name(first.name + ".sqlite"), checkpoint)
    with closing(sqlite3.connect(checkpoint)) as db, db:
        db.execute("DELETE FROM fit" if "fit" not in damage else "UPDATE fit SET epochs = 1")
        db.execute(damage)
    result = CliRunner().invoke(cli, ["train", *TINY, "--out", str(out)])
    assert result.exit_code == 1 and result.exception is not None and isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines[-1:]) == 1 and lines[-1].startswith(f"Error: {checkpoint} is damaged"), result.output
    assert re.search(message, lines[-1]), lines[-1]
    assert "Traceback" not in result.output


def test_a_killed_run_goes_on_to_the_same_network(first: Path, tmp_path: Path) -> None:
    """SIGKILL once the first chunk of games is in the checkpoint; the same command
    then finishes the run, and the network is the uninterrupted run's."""
    out = tmp_path / "killed.npz"
    checkpoint = out.with_name(out.name + ".sqlite")
    process = subprocess.Popen([sys.executable, "-m", "c4engine", "train", *TINY, "--out", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while chunks_in(checkpoint) < 1:
            assert process.poll() is None and time.monotonic() < deadline, "no chunk was saved"
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    assert not out.exists() and chunks_in(checkpoint) == 1
    train(out)
    assert out.read_bytes() == first.read_bytes()


def chunks_in(checkpoint: Path) -> int:
    return checkpoint_count(checkpoint, "SELECT count(*) FROM chunks")


def test_a_checkpoint_of_another_run_is_refused(first: Path, tmp_path: Path) -> None:
    out = tmp_path / "net.npz"
    train(out, "--checkpoint", str(tmp_path / "run.sqlite"))
    result = CliRunner().invoke(cli, ["train", *TINY, "--seed", "5", "--out", str(out),
                                      "--checkpoint", str(tmp_path / "run.sqlite")])
    assert result.exit_code == 1
    assert "holds another run" in result.output


def test_a_checkpoint_with_other_games_or_fit_keeps_its_whole_chunks(first: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Fewer games: chunk 0 stays, chunk 1 (4 games there, 2 here) is solved again,
    and the network is a fresh run's; more games: only the new chunk is solved;
    another fit: no chunk is solved, and the network is a fresh run's."""
    solved: list[int] = []

    def counted(spec: TrainSpec, chunk: int) -> tuple[int, Positions]:
        solved.append(chunk)
        return chunk_positions(spec, chunk)

    def taken_over(name: str, *options: str) -> tuple[Path, str]:
        out = tmp_path / f"{name}.npz"
        shutil.copy(first.with_name(first.name + ".sqlite"), out.with_name(out.name + ".sqlite"))
        solved.clear()
        with monkeypatch.context() as patch:
            patch.setattr(pipeline, "chunk_positions", counted)
            return out, train(out, *options)

    fewer, output = taken_over("fewer", "--games", "6")
    assert solved == [1] and "6/6 games" in output
    train(fresh := tmp_path / "fresh6.npz", "--games", "6")
    assert fewer.read_bytes() == fresh.read_bytes()
    taken_over("more", "--games", "12")
    assert solved == [2]
    refit, _ = taken_over("refit", "--tuples", "3", "--epochs", "2")
    assert solved == []
    train(fresh := tmp_path / "fresh-fit.npz", "--tuples", "3", "--epochs", "2")
    assert refit.read_bytes() == fresh.read_bytes() != first.read_bytes()


def test_the_network_file_records_its_held_out_accuracy_and_the_command(first: Path) -> None:
    with np.load(first) as document:
        assert str(document["made_by"]) == ("c4engine train --board 7x6 --seed 1 --games 8 --stones 28 36 "
                                             "--nodes 50000 --tuples 4 --epochs 3 --rate 0.5 --no-book")
        assert 0.0 <= float(document["accuracy"]) <= 1.0
        assert int(document["accuracy_positions"]) > 0
        assert "held out by key" in str(document["accuracy_set"])


def test_the_engine_names_a_trained_network_and_its_accuracy(first: Path) -> None:
    with first.open("rb") as stream:
        note = network_note(stream, "ntuple-7x6k4.npz")
    with np.load(first) as document:
        accuracy, positions = float(document["accuracy"]), int(document["accuracy_positions"])
    assert note == f"ntuple-7x6k4.npz for the 7x6 board, held-out accuracy {accuracy:.4f} on {positions} positions"


def test_a_network_trained_beside_a_held_out_set_records_its_accuracy_there(tmp_path: Path) -> None:
    held = make_held_out(STANDARD, 2, 9, 200_000)
    held.save(tmp_path / "held.npz")
    out = tmp_path / "net.npz"
    output = train(out, "--held-out", str(tmp_path / "held.npz"))
    with np.load(out) as document:
        assert int(document["accuracy_positions"]) == len(held)
        assert "independent held-out set" in str(document["accuracy_set"])
    assert f"on {len(held)} positions" in output


def test_a_run_that_held_no_position_out_records_no_accuracy(tmp_path: Path) -> None:
    """Issue 47: one game's positions left none out by key, and the file recorded
    ``held-out accuracy nan on 0 positions``; an accuracy on no positions means nothing."""
    out = tmp_path / "one-game.npz"
    tiny = [*TINY]
    tiny[tiny.index("--games") + 1] = "1"
    result = CliRunner().invoke(cli, ["train", *tiny, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (f"{out}: no held-out accuracy recorded: a tenth of its data, "
                                              "held out by key held no positions")
    with np.load(out) as document:
        assert "accuracy" not in document.files and "accuracy_positions" not in document.files
    with pytest.raises(ValueError, match="measured on 0 positions"):
        record_accuracy(out, HeldOutAccuracy(float("nan"), 0, "nothing"))


def test_a_held_out_position_and_its_mirror_image_are_left_out(first: Path) -> None:
    store = TrainingStore(first.with_name(first.name + ".sqlite"))
    current, mask, result = store.positions(2)
    store.close()
    data = Dataset(STANDARD, current, mask, np.bitwise_count(mask).astype(np.int8), result,
                   np.zeros(current.size, dtype=bool))
    mirrored_current = mirror_all(current[:1])
    held = Dataset(STANDARD, mirrored_current, mirror_all(mask[:1]), data.stones[:1], result[:1],
                   np.ones(1, dtype=bool))
    excluded = excluded_rows(data, held)
    assert excluded[0] and excluded.sum() == np.sum((current == current[0]) & (mask == mask[0]))


def mirror_all(bits: np.ndarray) -> np.ndarray:
    out = np.zeros_like(bits)
    column = (1 << STANDARD.h1) - 1
    for col in range(STANDARD.width):
        out |= ((bits >> (col * STANDARD.h1)) & column) << ((STANDARD.width - 1 - col) * STANDARD.h1)
    return out


def test_a_held_out_set_has_each_phase_solved_and_no_position_twice() -> None:
    data = make_held_out(STANDARD, 3, 7, 200_000)
    bands = phases(STANDARD)
    assert [int(np.sum((data.stones >= low) & (data.stones <= high))) for low, high in bands[1:]] == [3, 3, 3]
    keys = np.minimum(data.current + data.mask, mirror_all(data.current) + mirror_all(data.mask))
    assert np.unique(keys).size == len(data)
    assert set(np.unique(data.result).tolist()) <= {-1, 0, 1}


def test_the_make_command_reports_each_phase_kept_and_not_proven(tmp_path: Path) -> None:
    """A node cap too small for an opening position skips it: the command says how
    many per phase, so that a set's early phase is known to hold only the easier ones."""
    made = CliRunner().invoke(cli, ["held-out", "make", "--per-phase", "2", "--seed", "3", "--nodes", "1000",
                                    "--out", str(tmp_path / "held.npz")])
    assert made.exit_code == 0, made.output
    lines = made.output.splitlines()
    table = lines.index(next(line for line in lines if line.startswith("stones")))
    assert lines[table].split() == ["stones", "kept", "not", "proven"]
    assert [line.split() for line in lines[table + 1:]] == [["0-9", "2", "1"], ["10-20", "2", "0"], ["21-30", "2", "0"],
                                                    ["31-41", "2", "0"]]


def test_a_task_that_fails_on_the_cluster_is_named_with_how_to_go_on(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The error names what the task raised and says that the same command goes on
    (train has no --resume)."""
    monkeypatch.setattr("c4engine.training.cli.connected", connected_to_failing_ray)
    result = CliRunner().invoke(cli, ["train", *TINY, "--out", str(tmp_path / "n.npz"), "--cluster", "auto"])
    assert result.exit_code == 1
    assert ("(OverflowError: Python int too large to convert to C long); the results so far are kept: "
            "the same command goes on") in result.output


def test_the_accuracy_command_reports_each_phase_against_threats(first: Path, tmp_path: Path) -> None:
    positions = tmp_path / "held.npz"
    made = CliRunner().invoke(cli, ["held-out", "make", "--per-phase", "2", "--seed", "3", "--nodes", "200000",
                                    "--out", str(positions)])
    assert made.exit_code == 0, made.output
    result = CliRunner().invoke(cli, ["held-out", "accuracy", str(first), str(positions)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["stones", "positions", "network", "threats"]
    assert lines[-1].startswith("0-41")


def test_the_accuracy_command_records_it_in_a_network_made_without_one(tmp_path: Path) -> None:
    """7x6's network was made before ``c4engine train`` recorded a held-out accuracy:
    ``--record`` writes the accuracy over the whole set into the file, which the
    engine then names at set-up, and leaves the network itself as it was."""
    positions = tmp_path / "held.npz"
    made = CliRunner().invoke(cli, ["held-out", "make", "--per-phase", "2", "--seed", "5", "--nodes", "200000",
                                    "--out", str(positions)])
    assert made.exit_code == 0, made.output
    with files("c4engine").joinpath("data", "ntuple-7x6k4.npz").open("rb") as stream, np.load(stream) as document:
        before = {name: document[name] for name in document.files if not name.startswith("accuracy")}
    network = tmp_path / "ntuple-7x6k4.npz"
    save_npz(network, before)  # its arrays as tools/train_ntuple.py wrote them
    with network.open("rb") as stream:
        assert "accuracy not recorded" in network_note(stream, network.name)
    result = CliRunner().invoke(cli, ["held-out", "accuracy", str(network), str(positions), "--record"])
    assert result.exit_code == 0, result.output
    whole = result.output.splitlines()[-2].split()
    assert whole[0] == "0-41"
    with np.load(network) as document:
        assert all(np.array_equal(document[name], value) for name, value in before.items())
        assert float(document["accuracy"]) == float(whole[2]) and int(document["accuracy_positions"]) == int(whole[1])
        assert str(document["accuracy_set"]) == "an independent held-out set (held.npz)"
    with network.open("rb") as stream:
        note = network_note(stream, network.name)
    assert note == f"ntuple-7x6k4.npz for the 7x6 board, held-out accuracy {whole[2]} on {whole[1]} positions"


def test_the_accuracy_command_refuses_a_network_for_another_board(tmp_path: Path) -> None:
    """The network is read as the engine reads it, so a 7x7 network is not judged on
    7x6 positions; the error names both boards."""
    positions = tmp_path / "held.npz"
    made = CliRunner().invoke(cli, ["held-out", "make", "--per-phase", "1", "--seed", "3", "--nodes", "200000",
                                    "--out", str(positions)])
    assert made.exit_code == 0, made.output
    network = files("c4engine").joinpath("data", "ntuple-7x7k4.npz")
    result = CliRunner().invoke(cli, ["held-out", "accuracy", str(network), str(positions)])
    assert result.exit_code == 1, result.output
    assert "a network for 7x7, not 7x6" in result.output


def test_a_file_that_is_no_network_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a network")
    result = CliRunner().invoke(cli, ["held-out", "accuracy", str(bad), str(bad)])
    assert result.exit_code == 1 and "not a set of positions" in result.output
    bad.write_bytes(b"PK\x03\x04 a broken zip")
    result = CliRunner().invoke(cli, ["held-out", "accuracy", str(bad), str(bad)])
    assert result.exit_code == 1 and "not a set of positions" in result.output


def test_a_text_file_given_as_positions_is_not_called_pickled_data(tmp_path: Path) -> None:
    """numpy reads a file that is no .npz archive as a pickle and refuses it with advice
    to load it unsafely: the error says what the file is not instead."""
    text = tmp_path / "positions.txt"
    text.write_text("4453 -1 0 2 1 -3 0 1\n")
    result = CliRunner().invoke(cli, ["train", "--out", str(tmp_path / "n.npz"), "--held-out", str(text)])
    assert result.exit_code == 1, result.output
    assert "not a set of positions (not an .npz archive)" in result.output
    assert "pickle" not in result.output


def test_the_overlap_command_counts_the_positions_a_run_trained_on(first: Path, tmp_path: Path) -> None:
    """A trained position's mirror image counts, one held out by key or never seen does not."""
    store = TrainingStore(first.with_name(first.name + ".sqlite"))
    current, mask, result = store.positions(2)
    store.close()
    trained = np.flatnonzero(~held_out_by_key(canonical_keys(current, mask, STANDARD)))[0]
    held = np.flatnonzero(held_out_by_key(canonical_keys(current, mask, STANDARD)))[0]
    rows = [trained, held]
    positions = Dataset(STANDARD, np.append(mirror_all(current[rows]), 0), np.append(mirror_all(mask[rows]), 0),
                        np.append(np.bitwise_count(mask[rows]), 0).astype(np.int8), np.zeros(3, dtype=np.int8),
                        np.ones(3, dtype=bool))
    positions.save(tmp_path / "set.npz")
    result_lines = overlap_lines(first, tmp_path / "set.npz")
    assert result_lines[-1].split() == ["0-41", "3", "1"]
    strength = tmp_path / "strength.txt"
    strength.write_text("4453 -1 0 1 -2 -1 0 3\n")
    assert overlap_lines(first, strength)[1:] == ["0-8              1           0",
                                                  "9-16             0           0",
                                                  "17-24            0           0",
                                                  "25-42            0           0",
                                                  "0-41             1           0"]


def overlap_lines(run: Path, positions: Path) -> list[str]:
    result = CliRunner().invoke(cli, ["held-out", "overlap", str(run.with_name(run.name + ".sqlite")),
                                      str(positions)])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_the_overlap_command_refuses_a_file_of_no_run(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    TrainingStore(empty).close()
    result = CliRunner().invoke(cli, ["held-out", "overlap", str(empty), str(empty)])
    assert result.exit_code == 1 and "holds no training run" in result.output


def test_the_overlap_command_leaves_a_file_of_no_run_as_it_was(tmp_path: Path) -> None:
    """``held-out overlap`` only reads its checkpoint: given an empty or a text file by
    mistake it refused it but had written SQLite tables into it."""
    empty, text = tmp_path / "empty.txt", tmp_path / "notes.txt"
    empty.write_bytes(b"")
    text.write_text("4453 -1 0 1 -2 -1 0 3\n")
    for path, message in ((empty, "holds no training run"), (text, "file is not a database")):
        before = path.read_bytes()
        result = CliRunner().invoke(cli, ["held-out", "overlap", str(path), str(text)])
        assert result.exit_code == 1 and message in result.output, result.output
        assert path.read_bytes() == before


def test_leaves_and_playouts_join_the_games_and_the_command_records_them(first: Path) -> None:
    """A run without them keeps the settings it had before they existed (an older
    checkpoint goes on); with them, a game's positions are solved with more beside."""
    with closing(sqlite3.connect(first.with_name(first.name + ".sqlite"))) as db:
        settings = db.execute("SELECT settings FROM run").fetchone()[0]
    assert "leaves" not in settings and "playouts" not in settings
    games_only = TrainSpec("7x6", 1, 1, (20, 36), 50_000, 4, 3, 0.5, False)
    mixed = TrainSpec("7x6", 1, 1, (20, 36), 50_000, 4, 3, 0.5, False, leaves=3, playouts=2)
    assert chunk_keys(games_only) < chunk_keys(mixed)
    assert "--leaves 3 --playouts 2" in mixed.command(None) and "--leaves" not in games_only.command(None)
    assert TrainSpec.from_settings(mixed.settings()) == mixed


def chunk_keys(spec: TrainSpec) -> set[int]:
    """The keys of the positions of the spec's first chunk."""
    current, mask, _ = chunk_positions(spec, 0)[1]
    return set((current + mask).tolist())


def test_a_hybrid_refit_is_seeded_holds_its_linear_weights_and_goes_on_after_a_stop(first: Path,
                                                                                 tmp_path: Path) -> None:
    """``--hybrid`` takes the games' checkpoint over (another fit, no game solved
    again): the same command makes the same file, also when stopped after each
    epoch and taken up again; the file holds linear weights and its command says so."""
    def refit(name: str, *extra: str) -> Path:
        out = tmp_path / f"{name}.npz"
        shutil.copy(first.with_name(first.name + ".sqlite"), out.with_name(out.name + ".sqlite"))
        runs = 0
        while not out.exists():
            train(out, "--hybrid", *extra)
            runs += 1
        assert runs == (3 if extra else 1)
        return out

    hybrid, again, stopped = refit("hybrid"), refit("again"), refit("stopped", "--minutes", "0")
    assert hybrid.read_bytes() == again.read_bytes() == stopped.read_bytes() != first.read_bytes()
    with np.load(hybrid) as document:
        assert str(document["made_by"]).endswith("--tuples 4 --epochs 3 --rate 0.5 --no-book --hybrid")
        assert document["linear"].shape == (N_LINEAR,) and document["linear"].any()
