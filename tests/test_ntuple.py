"""The n-tuple network evaluation: the kernel's look-ups, the shipped network, its training."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from c4engine.geometry import STANDARD, Geometry
from c4engine.kernel.evaluation import (
    HEURISTIC_LIMIT, N_LINEAR, N_WEIGHTS, NTUPLE_ADDRESS, NTUPLE_LINEAR, NTUPLE_WORDS, THREAT_WEIGHTS,
)
from c4engine.kernel.ntuple import (
    FRACTION_BITS, HEADER, MAX_TUPLES, STATE_WORDS, STATES, TUPLE_LENGTH, block_address,
)
from c4engine.kernel.specialise import kernel_for
from c4engine.training.network import (
    Network, book_positions, canonical_keys, cell_rows, decode_book_keys, fit_network, held_out_by_key, judge_linear, judge_network, merged_dataset,
    random_walk_tuples, write_network,
)
from c4engine.rules.bits import mirror
from c4engine.rules.board import Board
from c4engine.referee.strength import builtin_positions, read_positions
from c4engine.rules.notation import parse_digits
from c4engine.search.limits import Limits
from c4engine.search.searcher import Searcher
from c4engine.search.weights import (
    check_block, network_note, ntuple_block, ntuple_network, ntuple_note, ntuple_weights, read_network,
    weights_named,
)
from c4engine.training.data import Dataset, decode_book_key, make_dataset, playout, strength_keys
from kernel_calls import compiled_caller


def random_boards(geometry: Geometry, count: int, seed: int) -> list[Board]:
    rng = np.random.default_rng(seed)
    boards: list[Board] = []
    while len(boards) < count:
        board = playout(geometry, int(rng.integers(0, geometry.cells - 4)), rng)
        if board is not None:
            boards.append(board)
    return boards


def random_block(geometry: Geometry, tuples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cells = cell_rows(random_walk_tuples(geometry, tuples, TUPLE_LENGTH, rng), geometry)
    size = STATES ** TUPLE_LENGTH
    tables = rng.integers(-5000, 5000, size=tuples * size)
    return np.concatenate([[2 * tuples, TUPLE_LENGTH, size], cells, tables]).astype(np.int32)


def naive_value(block: np.ndarray, board: Board) -> int:
    """The side to move's centipawns, the slow way: for each cell row, read its cells'
    contents as a base-3 number and add that entry of its tuple's table."""
    rows, length, size = (int(v) for v in block[:HEADER])
    first = board.current if board.stones % 2 == 0 else board.current ^ board.mask
    total = 0
    for row in range(rows):
        index = 0
        for cell in block[HEADER + row * length:HEADER + (row + 1) * length]:
            state = 1 if first >> int(cell) & 1 else 2 if (board.mask ^ first) >> int(cell) & 1 else 0
            index = 3 * index + state
        total += int(block[HEADER + rows * length + row // 2 * size + index])
    value = total >> FRACTION_BITS
    return value if board.stones % 2 == 0 else -value


def pointing_at(block: np.ndarray) -> np.ndarray:
    weights = np.zeros(N_WEIGHTS, dtype=np.int64)
    weights[NTUPLE_ADDRESS], weights[NTUPLE_WORDS] = block_address(block), block.size
    return weights


@pytest.mark.parametrize("geometry", [STANDARD, Geometry(8, 7, 4)])
def test_the_kernel_reads_the_tables_the_naive_way(geometry: Geometry) -> None:
    block = random_block(geometry, 12, seed=2)
    check_block(block, geometry)
    evaluate = kernel_for(geometry).evaluation.evaluate
    for board in random_boards(geometry, 150, 4):
        assert evaluate(board.current, board.mask, board.stones, pointing_at(block)) == naive_value(block, board)


def block_of_any_cells(geometry: Geometry, tuples: int, seed: int) -> np.ndarray:
    """A block whose rows are random cells of the board, the first row holding the
    highest of them (bit 70 on 8x8, in the high word of a two-word board)."""
    rng = np.random.default_rng(seed)
    cells = [cell for cell in range(geometry.width * geometry.h1) if geometry.board_mask >> cell & 1]
    rows = np.array([rng.choice(cells, TUPLE_LENGTH, replace=False) for _ in range(2 * tuples)])
    rows[0, 0] = cells[-1] if cells[-1] not in rows[0] else rows[0, 0]
    size = STATES ** TUPLE_LENGTH
    tables = rng.integers(-5000, 5000, size=tuples * size)
    return np.concatenate([[2 * tuples, TUPLE_LENGTH, size], rows.ravel(), tables]).astype(np.int32)


def leaves_in_search_order(geometry: Geometry, roots: int, seed: int) -> list[Board]:
    """Positions in the order a depth-limited search meets its leaves: every grandchild
    of a random position in turn (one or two stones apart), then a jump to the next
    root (stones taken off as well as put on, colours swapped)."""
    leaves = []
    for root in random_boards(geometry, roots, seed):
        for child in (root.play(col) for col in root.legal_moves()):
            if not child.is_over():
                leaves += [child.play(col) for col in child.legal_moves()]
    return leaves


@pytest.mark.parametrize("geometry", [STANDARD, Geometry(7, 7, 4), Geometry(8, 8, 4), Geometry(10, 6, 4)], ids=str)
def test_the_leaves_state_moves_to_the_value_the_tables_give(geometry: Geometry) -> None:
    """The search's leaves share one network state, each moving it from the last
    leaf's position (:mod:`c4engine.kernel.ntuple`): every value is the naive sum's,
    on a board of 64 bits or fewer and on ones past 64 bits (cells in both words).
    The state's words past its layout are left alone."""
    kernel = kernel_for(geometry)
    state_words = kernel.ntuple.STATE_WORDS
    leaf_value = compiled_caller(kernel.evaluation.leaf_value)
    block = block_of_any_cells(geometry, 9, seed=11)
    check_block(block, geometry)
    weights = pointing_at(block)
    state = np.full(state_words + 8, 7, dtype=np.int64)
    state[0] = 0  # unmade
    leaves = leaves_in_search_order(geometry, 12, seed=12)
    assert len(leaves) > 300
    for board in leaves:
        value = leaf_value(*kernel.bits(board.current, board.mask), board.stones, weights, state)
        assert value == naive_value(block, board), board.history
    assert (state[state_words:] == 7).all()


def test_the_largest_network_the_search_has_room_for_is_read_right() -> None:
    """A network of MAX_TUPLES tuples fills the state to its last word and is valued
    right; one more tuple is refused (it would not fit)."""
    block = block_of_any_cells(STANDARD, MAX_TUPLES, seed=13)
    check_block(block, STANDARD)
    leaf_value = compiled_caller(kernel_for(STANDARD).evaluation.leaf_value)
    state = np.full(STATE_WORDS + 8, 7, dtype=np.int64)
    state[0] = 0
    for board in leaves_in_search_order(STANDARD, 2, seed=14)[:60]:
        assert leaf_value(board.current, board.mask, board.stones, pointing_at(block), state) == naive_value(block, board)
    assert (state[STATE_WORDS:] == 7).all()
    with pytest.raises(ValueError, match="room"):
        check_block(block_of_any_cells(STANDARD, MAX_TUPLES + 1, seed=13), STANDARD)


def test_a_search_after_another_networks_search_scores_as_a_new_searcher() -> None:
    """Each search makes its leaves' state again: after a search with one network, a
    search with another finds the nodes and score of a searcher that never had the
    first."""
    first, second = random_block(STANDARD, 20, seed=15), random_block(STANDARD, 20, seed=16)
    pos = parse_digits("4453")
    used = Searcher(16, weights=pointing_at(first))
    used.search(pos, Limits(depth=9))
    used.set_weights(pointing_at(second))
    used.clear()
    again = used.search(pos, Limits(depth=9))
    fresh = Searcher(16, weights=pointing_at(second)).search(pos, Limits(depth=9))
    assert (again.nodes, again.report.best.score) == (fresh.nodes, fresh.report.best.score)


def test_a_hybrid_adds_its_linear_weights_to_the_tables() -> None:
    """With ``NTUPLE_LINEAR`` set the value is the tables' (read the naive way) plus the
    linear weights times the threat terms' counts; without it, the tables' alone,
    whatever linear weights the vector holds (an old network's vector)."""
    geometry = Geometry(7, 7, 4)
    block = random_block(geometry, 12, seed=3)
    plain = pointing_at(block)
    plain[:N_LINEAR] = np.random.default_rng(5).integers(-60, 60, size=N_LINEAR)
    hybrid = plain.copy()
    hybrid[NTUPLE_LINEAR] = 1
    evaluation = kernel_for(geometry).evaluation
    counts = np.zeros(N_LINEAR, dtype=np.int64)
    moved = 0
    for board in random_boards(geometry, 150, 6):
        evaluation.features(board.current, board.mask, board.stones, counts)
        linear = sum(int(c) * int(w) for c, w in zip(counts, plain[:N_LINEAR]))
        tables = naive_value(block, board)
        assert evaluation.evaluate(board.current, board.mask, board.stones, hybrid) == tables + linear
        assert evaluation.evaluate(board.current, board.mask, board.stones, plain) == tables
        moved += linear != 0
    assert moved > 100


def test_a_position_and_its_mirror_image_are_worth_the_same() -> None:
    block = random_block(STANDARD, 10, seed=3)
    evaluate = kernel_for(STANDARD).evaluation.evaluate
    for board in random_boards(STANDARD, 100, 5):
        mirrored = Board(mirror(board.current, 7, 6), mirror(board.mask, 7, 6))
        assert (evaluate(board.current, board.mask, board.stones, pointing_at(block))
                == evaluate(mirrored.current, mirrored.mask, mirrored.stones, pointing_at(block)))


def test_a_huge_network_value_stays_heuristic() -> None:
    block = random_block(STANDARD, 4, seed=1)
    block[HEADER + 8 * TUPLE_LENGTH:] = 2 ** 30
    board = Board(0, 0).play_all([3, 3])
    assert kernel_for(STANDARD).evaluation.evaluate(board.current, board.mask, board.stones,
                                                    pointing_at(block)) == HEURISTIC_LIMIT


def test_random_walk_tuples_are_distinct_connected_cells_on_the_board() -> None:
    geometry = Geometry(8, 7, 4)
    tuples = random_walk_tuples(geometry, 30, 7, np.random.default_rng(1))
    assert tuples.shape == (30, 7) and len({tuple(t) for t in tuples}) == 30
    for cells in tuples:
        assert len(set(cells)) == 7 and all((geometry.board_mask >> int(c)) & 1 for c in cells)
        places = {divmod(int(c), geometry.h1) for c in cells}
        reached, frontier = set(), [next(iter(places))]
        while frontier:  # every cell reached from one over neighbouring cells
            col, row = frontier.pop()
            reached.add((col, row))
            frontier += [p for p in places - reached if max(abs(p[0] - col), abs(p[1] - row)) == 1]
        assert reached == places


def test_a_board_without_enough_distinct_tuples_is_refused() -> None:
    with pytest.raises(ValueError):
        random_walk_tuples(Geometry(3, 3, 3), 10, 8, np.random.default_rng(1))  # 9 cells: 9 sets of 8


@pytest.mark.parametrize("damage", ["size", "cell", "rows", "length"])
def test_an_unsound_block_is_refused(damage: str) -> None:
    block = random_block(STANDARD, 3, seed=1)
    if damage == "size":
        block = block[:-1]
    elif damage == "cell":
        block[HEADER] = 6  # the 7th row of column 0: off a 6-row board
    elif damage == "rows":
        block[0] = 5
    else:
        block[1] = TUPLE_LENGTH - 1
    with pytest.raises(ValueError):
        check_block(block, STANDARD)


def test_7x6_ships_a_network_and_other_boards_fall_back() -> None:
    block = ntuple_block(STANDARD)
    assert block is not None and not block.flags.writeable
    weights = ntuple_weights(STANDARD)
    assert weights is not None and weights[NTUPLE_ADDRESS] == block_address(block)
    assert weights_named("ntuple", STANDARD) == (weights, False)
    stand_in, fell_back = weights_named("ntuple", Geometry(9, 6, 5))
    assert fell_back and stand_in is THREAT_WEIGHTS


def test_the_shipped_7x6_network_loads_as_before_with_no_linear_part() -> None:
    """7x6's network file predates hybrids: no linear weights, so the kernel's vector
    holds none and does not add the threat terms.  It predates ``c4engine train``
    too; its held-out accuracy was recorded afterwards (``held-out accuracy
    --record``, on ``held-out make --seed 1001``'s 1,200 positions), and the engine
    names it."""
    weights = ntuple_weights(STANDARD)
    assert weights is not None and weights[NTUPLE_LINEAR] == 0 and not weights[:N_LINEAR].any()
    assert ntuple_note(STANDARD) == "ntuple-7x6k4.npz for the 7x6 board, held-out accuracy 0.6958 on 1200 positions"


HYBRID_BOARDS = [Geometry(7, 7, 4), Geometry(6, 7, 4), Geometry(8, 7, 4), Geometry(9, 6, 4)]


@pytest.mark.parametrize("geometry", HYBRID_BOARDS, ids=str)
def test_the_boards_with_hybrids_ship_vectors_that_add_their_linear_weights(geometry: Geometry) -> None:
    network = ntuple_network(geometry)
    weights = ntuple_weights(geometry)
    assert network is not None and network[1] is not None and weights is not None
    assert weights[NTUPLE_LINEAR] == 1 and np.array_equal(weights[:N_LINEAR], network[1])
    assert weights[NTUPLE_ADDRESS] == block_address(network[0])


def test_a_hybrid_file_reads_back_its_block_and_linear_weights(tmp_path: Path) -> None:
    geometry = Geometry(7, 7, 4)
    rng = np.random.default_rng(8)
    cells = cell_rows(random_walk_tuples(geometry, 3, TUPLE_LENGTH, rng), geometry)
    linear = rng.integers(-90, 90, size=N_LINEAR)
    network = Network(geometry, cells, rng.normal(size=(3, STATES ** TUPLE_LENGTH)), 0.4, linear)
    write_network(tmp_path / "hybrid.npz", network, "test", [], 10)
    with (tmp_path / "hybrid.npz").open("rb") as stream:
        block, read_linear = read_network(stream, "hybrid.npz", geometry)
    assert np.array_equal(block, network.block()) and not block.flags.writeable
    assert read_linear is not None and np.array_equal(read_linear, linear)
    with (tmp_path / "hybrid.npz").open("rb") as stream:
        assert "tuples beside the threat terms" in network_note(stream, "hybrid.npz")
    write_network(tmp_path / "short.npz", replace(network, linear=linear[:-1]), "test", [], 10)
    with (tmp_path / "short.npz").open("rb") as stream, pytest.raises(ValueError):
        read_network(stream, "short.npz", geometry)


def test_the_shipped_network_plays_the_centre_from_the_empty_board() -> None:
    """Without a book, column 4 is the only move from the empty board that does not lose."""
    searcher = Searcher(16, weights=ntuple_weights(STANDARD))
    result = searcher.search(Board(0, 0), Limits(depth=10))
    assert result.move == 3


def test_mirror_images_are_held_out_together_and_the_strength_set_is_left_out() -> None:
    """1122 and 7766 are one position (kept once); the mirror image of a strength set
    position (the set measures the engine) is dropped."""
    measured = next(position.moves for position in read_positions(builtin_positions()) if len(position.moves) > 4)
    mirrored = "".join(str(8 - int(digit)) for digit in measured)
    boards = [parse_digits(digits) for digits in ("4453", "1122", "7766", "12345", mirrored)]
    current = np.array([b.current for b in boards], dtype=np.int64)
    mask = np.array([b.mask for b in boards], dtype=np.int64)
    keys = canonical_keys(current, mask, STANDARD)
    assert keys[1] == keys[2] and keys[0] != keys[3]
    assert held_out_by_key(keys)[1] == held_out_by_key(keys)[2]
    held = held_out_by_key(np.arange(20_000, dtype=np.int64))
    assert 0.08 < held.mean() < 0.12
    data = Dataset(STANDARD, current, mask, np.zeros(5, np.int8), np.zeros(5, np.int8), np.zeros(5, bool))
    merged = merged_dataset(STANDARD, [data], with_book=False)
    assert sorted(canonical_keys(merged.current, merged.mask, STANDARD)) == sorted({*keys[:4].tolist()})


def test_the_whole_book_decodes_as_one_key_at_a_time_does() -> None:
    """The vectorised decoder against :func:`decode_book_key` on a sample of the file."""
    import bitbully_databases  # type: ignore[import-untyped]

    path = bitbully_databases.BitBullyDatabases.get_database_path("12-ply-dist")
    records = np.fromfile(path, dtype=np.dtype([("key", ">i4"), ("value", "i1")]))
    keys = records["key"][np.random.default_rng(2).choice(records.size, 2000, replace=False)]
    keys = keys.astype(np.int64) & 0xFFFFFFFF
    current, mask = decode_book_keys(keys)
    assert [(int(c), int(m)) for c, m in zip(current, mask)] == [decode_book_key(int(key)) for key in keys]
    current, mask, result = book_positions()
    assert current.size == records.size and set(np.unique(np.bitwise_count(mask))) == {12}
    assert set(np.unique(result)) == {-1, 0, 1}


@pytest.fixture(scope="module")
def small_data() -> Dataset:
    sample = make_dataset(STANDARD, book=6000, solved=0, stones=(13, 13), seed=7, node_limit=1)
    return merged_dataset(STANDARD, [sample], with_book=False)


def test_training_beats_the_hand_written_weights_on_held_out_positions(small_data: Dataset) -> None:
    train, test = np.flatnonzero(~small_data.held_out), np.flatnonzero(small_data.held_out)
    network = fit_network(small_data, train, tuples=16, epochs=8, seed=1)
    learned, threats = judge_network(network, small_data, test), judge_linear("threats", THREAT_WEIGHTS, small_data, train, test)
    assert learned.log_loss < threats.log_loss and learned.accuracy > threats.accuracy
    again = fit_network(small_data, train, tuples=16, epochs=8, seed=1)
    assert np.array_equal(again.block(), network.block())  # seeded: the same network


def test_the_training_command_writes_a_network_the_engine_accepts(small_data: Dataset, tmp_path: Path) -> None:
    """``tools/train_ntuple.py`` on a small file, without the book: it prints the
    held-out table and writes a block that :func:`check_block` accepts."""
    data, out = tmp_path / "data.npz", tmp_path / "ntuple.npz"
    small_data.save(data)
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(root / "tools" / "train_ntuple.py"), str(data), "--no-book",
                           "--tuples", "6", "--epochs", "2", "--out", str(out)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "threats (hand-written)" in done.stdout and "n-tuple" in done.stdout
    with np.load(out) as network:
        assert str(network["board"]) == "7x6"
        check_block(network["block"], STANDARD)
        assert network["block"][0] == 12


def zeros_network(path: Path, words: int) -> None:
    """A 7x6 network file whose ``block`` member declares ``words`` int32 words and holds
    them, all zeros: deflated, 400 MB of them take about 400 KB."""
    import zipfile

    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.int32)), "fortran_order": False,
              "shape": (words,)}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("board.npy", "w") as stream:
            np.lib.format.write_array(stream, np.array("7x6"))
        with archive.open("margin.npy", "w") as stream:
            np.lib.format.write_array(stream, np.array(0.5))
        with archive.open("block.npy", "w", force_zip64=True) as stream:
            np.lib.format.write_array_header_1_0(stream, header)
            chunk = bytes(1 << 24)
            for _ in range(words * 4 // len(chunk)):
                stream.write(chunk)


def test_a_network_file_declaring_a_huge_block_is_refused_before_its_data_is_read(tmp_path: Path) -> None:
    """Issue 47: a block of 1.6 GB of compressed zeros was decompressed whole before its
    shape was checked.  The .npy header declares it: both readers (the engine's and
    the training's, one reader) refuse it having read almost nothing."""
    import tracemalloc

    from c4engine.training.network import read_network_file

    path = tmp_path / "ntuple-7x6k4.npz"
    zeros_network(path, 100 << 20)  # 400 MB declared and there
    assert path.stat().st_size < 2 << 20
    def engine_read() -> None:
        with path.open("rb") as stream:
            read_network(stream, path.name, STANDARD)
    for read in (lambda: read_network_file(path, STANDARD), engine_read):
        tracemalloc.start()
        try:
            with pytest.raises(ValueError) as refused:
                read()
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 16 << 20, peak
        assert "the block is declared int32 (104857600,); a network's block is at most" in str(refused.value)
