"""The training's packed words on boards past 64 bits (:mod:`c4engine.training.packing`):
what the fits and judges read of a packed position is what the engine reads of
its board, and 8x8 trains end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from c4engine.cli import cli
from c4engine.geometry import Geometry
from c4engine.kernel.evaluation import N_LINEAR, N_WEIGHTS, NTUPLE_ADDRESS, NTUPLE_WORDS
from c4engine.kernel.ntuple import FRACTION_BITS, HEADER, STATES, TUPLE_LENGTH, block_address, block_value, sides
from c4engine.kernel.specialise import kernel_for
from c4engine.rules.board import Board
from c4engine.search.weights import check_block
from c4engine.training.data import Dataset, playout
from c4engine.training.linear import feature_matrix
from c4engine.training.network import canonical_keys, cell_rows, data_block, random_walk_tuples
from c4engine.training.packing import pack, packs, stone_counts, unpack

EIGHT = Geometry(8, 8, 4)
WIDE = [EIGHT, Geometry(10, 6, 4)]


def sample_boards(geometry: Geometry, count: int, seed: int) -> list[Board]:
    """Random playout positions of every stage, and one with the last column full
    (on 8x8 its top cell is the packed word's sign bit)."""
    rng = np.random.default_rng(seed)
    boards = [Board(geometry=geometry).play_all([geometry.width - 1] * geometry.height)]
    while len(boards) < count:
        board = playout(geometry, int(rng.integers(0, geometry.cells - 2)), rng)
        if board is not None:
            boards.append(board)
    return boards


def test_a_board_packs_only_past_64_bits() -> None:
    assert packs(EIGHT) and packs(Geometry(10, 6, 4)) and packs(Geometry(9, 7, 4))
    assert not any(packs(Geometry.parse(name)) for name in ("7x6", "8x7", "9x6", "7x7"))
    board = sample_boards(Geometry(8, 7, 4), 2, 1)[1]
    assert pack(board.current, board.geometry) == board.current


@pytest.mark.parametrize("geometry", WIDE, ids=str)
def test_a_packed_word_unpacks_to_its_board_and_counts_its_stones(geometry: Geometry) -> None:
    boards = sample_boards(geometry, 300, 2)
    data = Dataset.of_boards(geometry, boards, [0] * len(boards), np.zeros(len(boards), dtype=bool))
    assert [unpack(int(c), geometry) for c in data.current] == [b.current for b in boards]
    assert [unpack(int(m), geometry) for m in data.mask] == [b.mask for b in boards]
    assert stone_counts(data.mask).tolist() == [b.stones for b in boards]
    if geometry == EIGHT:
        assert data.mask[0] < 0  # the sign bit is a cell


@pytest.mark.parametrize("geometry", WIDE, ids=str)
def test_a_packed_position_and_its_mirror_image_share_a_key_and_no_other_does(geometry: Geometry) -> None:
    boards = sample_boards(geometry, 600, 3)
    mirrors = [Board(geometry=geometry).play_all([geometry.width - 1 - col for col in b.history]) for b in boards]
    none = np.zeros(len(boards), dtype=bool)
    data, mirrored = (Dataset.of_boards(geometry, b, [0] * len(b), none) for b in (boards, mirrors))
    keys = canonical_keys(data.current, data.mask, geometry)
    assert (keys == canonical_keys(mirrored.current, mirrored.mask, geometry)).all()
    distinct = {min(b.key, m.key) for b, m in zip(boards, mirrors)}
    assert np.unique(keys).size == len(distinct)


def network_block(geometry: Geometry, tuples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cells = cell_rows(random_walk_tuples(geometry, tuples, TUPLE_LENGTH, rng), geometry)
    tables = rng.integers(-5000, 5000, size=tuples * STATES ** TUPLE_LENGTH)
    return np.concatenate([[2 * tuples, TUPLE_LENGTH, STATES ** TUPLE_LENGTH], cells, tables]).astype(np.int32)


@pytest.mark.parametrize("geometry", WIDE, ids=str)
def test_the_fit_reads_a_packed_position_as_the_engine_reads_its_board(geometry: Geometry) -> None:
    """The tables' value and the threat terms' counts that training takes from a
    packed word are those the engine's kernel takes from the board's two words."""
    block = network_block(geometry, 30, seed=4)
    check_block(block, geometry)
    assert block[HEADER:HEADER + 60 * TUPLE_LENGTH].max() >= 64  # cells in the high word
    weights = np.zeros(N_WEIGHTS, dtype=np.int64)
    weights[NTUPLE_ADDRESS], weights[NTUPLE_WORDS] = block_address(block), block.size
    kernel = kernel_for(geometry)
    boards = sample_boards(geometry, 200, 5)
    data = Dataset.of_boards(geometry, boards, [0] * len(boards), np.zeros(len(boards), dtype=bool))
    packed = data_block(block, geometry)
    counts = feature_matrix(data)
    engine_counts = np.zeros(N_LINEAR, dtype=np.int64)
    for i, board in enumerate(boards):
        bits = kernel.bits(board.current, board.mask)
        first, second, first_to_move = sides(int(data.current[i]), int(data.mask[i]), board.stones)
        trained = block_value(packed, first, second) >> FRACTION_BITS
        assert kernel.evaluation.evaluate(*bits, board.stones, weights) == (trained if first_to_move else -trained)
        kernel.evaluation.features(*bits, board.stones, engine_counts)
        assert (counts[i] == engine_counts).all()


def test_8x8_trains_a_hybrid_that_the_engine_checks_and_judges(tmp_path: Path) -> None:
    """A small 8x8 run, its own held-out set beside it: the file's block is one the
    engine takes (cells in both words), and its accuracy is reported per phase."""
    held = tmp_path / "held.npz"
    made = CliRunner().invoke(cli, ["held-out", "make", "--board", "8x8", "--per-phase", "2", "--seed", "5",
                                    "--nodes", "100000", "--out", str(held)])
    assert made.exit_code == 0, made.output
    out = tmp_path / "net.npz"
    trained = CliRunner().invoke(cli, ["train", "--board", "8x8", "--games", "4", "--stones", "40", "56",
                                       "--nodes", "50000", "--tuples", "12", "--epochs", "2", "--hybrid",
                                       "--held-out", str(held), "--out", str(out)])
    assert trained.exit_code == 0, trained.output
    assert "4/4 games" in trained.output and "on 8 positions" in trained.output
    with np.load(out) as document:
        assert str(document["board"]) == "8x8" and document["linear"].shape == (N_LINEAR,)
        block = document["block"]
    check_block(block, EIGHT)
    assert block[HEADER:HEADER + 24 * TUPLE_LENGTH].max() >= 64
    judged = CliRunner().invoke(cli, ["held-out", "accuracy", str(out), str(held)])
    assert judged.exit_code == 0, judged.output
    assert judged.output.splitlines()[-1].split()[:2] == ["0-63", "8"]


def test_self_play_refuses_a_packed_board_and_no_board_past_64_cells_trains(tmp_path: Path) -> None:
    held = tmp_path / "held.npz"
    held.write_bytes(b"refused before it is read")
    selfplay = CliRunner().invoke(cli, ["train", "--method", "self-play", "--board", "8x8", "--held-out", str(held),
                                        "--out", str(tmp_path / "a.npz")])
    assert selfplay.exit_code == 2 and "use --method solver" in selfplay.output
    for command in (["train"], ["held-out", "make"]):
        result = CliRunner().invoke(cli, [*command, "--board", "9x8", "--out", str(tmp_path / "b.npz")])
        assert result.exit_code == 2, result.output
        assert "no n-tuple network on the 9x8 board: it has 72 cells" in result.output
    assert sorted(path.name for path in tmp_path.iterdir()) == ["held.npz"]
