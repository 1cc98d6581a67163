"""The learned evaluation: its features, its training data, the fit, the shipped weights."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from c4engine.geometry import STANDARD, Geometry
from c4engine.kernel.evaluation import CENTRE_ONLY, N_LINEAR, N_WEIGHTS, THREAT_WEIGHTS
from c4engine.kernel.specialise import kernel_for
from c4engine.rules.board import Board
from c4engine.protocol.options import find_spec
from c4engine.search.weights import DEFAULT, NAMES, learned_weights, weights_named
from c4engine.training import data as training_data
from c4engine.kernel.book import OpeningBook
from c4engine.rules.notation import parse_digits
from c4engine.search.limits import Limits
from c4engine.search.searcher import Searcher, proving_searcher
from c4engine.rules.bits import mirror
from c4engine.training.data import (
    Dataset, book_sample, make_dataset, noisy_game, playout, searched_positions, strength_keys,
)
from c4engine.training.linear import feature_matrix, train


def random_positions(geometry: Geometry, count: int, seed: int) -> list[Board]:
    rng = np.random.default_rng(seed)
    boards = []
    while len(boards) < count:
        board = playout(geometry, int(rng.integers(0, geometry.cells // 2)), rng)
        if board is not None:
            boards.append(board)
    return boards


def test_the_evaluation_is_the_features_times_the_weights() -> None:
    """``features`` is what training fits: ``evaluate`` must equal it times any weights."""
    evaluation = kernel_for(STANDARD).evaluation
    rng = np.random.default_rng(3)
    out = np.zeros(N_LINEAR, dtype=np.int64)
    weights = np.zeros(N_WEIGHTS, dtype=np.int64)  # no n-tuple network: its address stays 0
    for board in random_positions(STANDARD, 200, 1):
        weights[:N_LINEAR] = rng.integers(-50, 50, N_LINEAR)
        evaluation.features(board.current, board.mask, board.stones, out)
        assert evaluation.evaluate(board.current, board.mask, board.stones, weights) == out @ weights[:N_LINEAR]


def test_the_hand_written_weights_evaluate_as_before() -> None:
    """The weight layout changed, not the hand-written evaluation: 4453 is 0 (each
    side 5 centre points), and a lone good-parity threat of X is worth 24 more."""
    evaluation = kernel_for(STANDARD).evaluation
    board = Board(0, 0).play_all([3, 3, 4, 2])
    assert evaluation.evaluate(board.current, board.mask, board.stones, THREAT_WEIGHTS) == 0
    assert evaluation.evaluate(board.current, board.mask, board.stones, CENTRE_ONLY) == 0
    threat = Board(0, 0).play_all([0, 6, 1, 6, 2])  # X threatens a1 (row 1: good for X); O to move
    value = evaluation.evaluate(threat.current, threat.mask, threat.stones, THREAT_WEIGHTS)
    centre = evaluation.evaluate(threat.current, threat.mask, threat.stones, CENTRE_ONLY)
    assert value - centre == -24


def test_book_positions_decode_to_what_the_book_answers() -> None:
    """Every sampled key decodes to a 12-stone position, first player to move, that
    the book's own probe answers (book_sample raises otherwise)."""
    boards, results = book_sample(300, np.random.default_rng(5))
    assert len(boards) == 300 and {b.stones for b in boards} == {12}
    assert set(results) <= {-1, 0, 1} and len(set(results)) >= 2


@pytest.fixture(scope="module")
def small_data() -> Dataset:
    return make_dataset(STANDARD, book=3000, solved=40, stones=(20, 36), seed=7, node_limit=200_000)


def test_the_data_is_seeded_and_the_held_out_part_is_apart(small_data: Dataset) -> None:
    again = make_dataset(STANDARD, book=3000, solved=40, stones=(20, 36), seed=7, node_limit=200_000)
    assert np.array_equal(again.current, small_data.current) and np.array_equal(again.held_out, small_data.held_out)
    keys = small_data.current + small_data.mask
    assert len(set(keys[small_data.held_out]) & set(keys[~small_data.held_out])) == 0
    assert 0.05 < small_data.held_out.mean() < 0.15
    assert (small_data.stones > 12).sum() >= 30  # solved positions at other stone counts


def test_training_beats_the_hand_written_weights_on_held_out_positions(small_data: Dataset) -> None:
    training = train(small_data, steps=400)
    scores = {score.name: score for score in training.scores}
    old, new = scores["threats (hand-written)"], scores["learned"]
    assert new.log_loss < old.log_loss
    assert training.held_out == int(small_data.held_out.sum())
    assert feature_matrix(small_data).shape == (len(small_data), N_LINEAR)


def test_noisy_games_keep_the_result_while_the_book_proves_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without noise, every move under 12 stones keeps the best result (the book-backed
    solver picks it): each position's result is the negation of the one before.  Random
    moves would throw results away within a few moves."""
    monkeypatch.setattr(training_data, "GAME_NOISE", 0.0)
    solver = proving_searcher(STANDARD, 64)
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(3):
        game = noisy_game(STANDARD, 12, rng, solver, Searcher(16))
        assert [board.stones for board in game] == list(range(len(game)))
        results = [int(np.sign(solver.solve(board, weak=True)[0])) for board in game]
        assert all(after == -before for before, after in zip(results, results[1:]))
        checked += len(game) - 1
    assert checked >= 20


def test_game_positions_are_solved_in_their_stone_range() -> None:
    data = make_dataset(STANDARD, book=0, solved=0, stones=(14, 20), seed=2, node_limit=500_000, games=40)
    assert 30 <= len(data) <= 40 and set(data.stones.tolist()) <= set(range(14, 21))
    solver = Searcher(16, book=OpeningBook.load())
    for current, mask, result in zip(data.current[:10], data.mask[:10], data.result[:10]):
        assert np.sign(solver.solve(Board(int(current), int(mask)), weak=True)[0]) == result


def test_leaf_positions_are_solved_in_their_stone_range() -> None:
    """Leaves come from searches of noisy games' positions: they lie in the asked
    range, their results are the solver's, and the same seed makes the same data."""
    data = make_dataset(STANDARD, book=0, solved=0, stones=(10, 30), seed=4, node_limit=500_000, leaves=40)
    again = make_dataset(STANDARD, book=0, solved=0, stones=(10, 30), seed=4, node_limit=500_000, leaves=40)
    assert 30 <= len(data) <= 40 and set(data.stones.tolist()) <= set(range(10, 31))
    assert data.current.tolist() == again.current.tolist() and data.mask.tolist() == again.mask.tolist()
    solver = Searcher(16, book=OpeningBook.load())
    for current, mask, result in zip(data.current[:10], data.mask[:10], data.result[:10]):
        assert np.sign(solver.solve(Board(int(current), int(mask)), weak=True)[0]) == result


@pytest.mark.parametrize("board", ["7x6", "7x7", "6x5"])
def test_the_table_gives_back_the_positions_the_search_stored(board: str) -> None:
    """Every position read back from the table lies below the root: the root's
    stones are there, in the same colours (or mirrored, since a position and
    its mirror image share an entry).  A wrong key would decode to a position
    that does not.  One-word entries (7x6, 6x5) recover the key by the Chinese
    remainder theorem, two-word ones (7x7) read it whole."""
    geometry = Geometry.parse(board)
    searcher = Searcher(16, weights=THREAT_WEIGHTS, geometry=geometry)
    root = Board(0, 0, geometry=geometry).play_all([geometry.width // 2, 0, geometry.width // 2])
    searcher.search(root, Limits(nodes=20_000))
    everything, frontier = searched_positions(searcher, 64), searched_positions(searcher, 1)
    assert len(everything) > 500 and 0 < len(frontier) < len(everything)
    mirrored_root = Board(mirror(root.current, geometry.width, geometry.height),
                          mirror(root.mask, geometry.width, geometry.height), geometry=geometry)
    for board in everything:
        below = [r for r in (root, mirrored_root) if board.mask & r.mask == r.mask
                 and (board.first_player_stones() & r.mask) == r.first_player_stones()]
        assert below and board.stones >= root.stones


def test_each_solved_position_is_counted_as_it_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """The progress bar moves while the data are made, not once at the end: the
    first game position is counted before any leaf is searched for."""
    events: list[str] = []

    def leaves(*args: object) -> Iterator[tuple[Board, int]]:
        events.append("leaves")
        yield parse_digits("1111"), 1

    monkeypatch.setattr(training_data, "leaf_positions", leaves)
    make_dataset(STANDARD, book=0, solved=0, stones=(14, 20), seed=2, node_limit=500_000, games=3, leaves=1,
                 solved_one=lambda count: events.append("counted"))
    assert events[0] == "counted" and events[-1] == "counted" and "leaves" in events


def test_the_strength_positions_are_never_trained_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """They measure the engine: a sample that happens to hold one (or its mirror
    image) loses it."""
    measured = parse_digits("462135")  # in the set
    mirrored = parse_digits("426753")  # its mirror image, not listed itself
    other = parse_digits("1111")
    assert measured.key in strength_keys() and mirrored.key in strength_keys() and other.key not in strength_keys()
    monkeypatch.setattr(training_data, "book_sample", lambda count, rng: ([measured, other, mirrored], [0, 1, 0]))
    data = make_dataset(STANDARD, book=3, solved=0, stones=(12, 12), seed=1, node_limit=1000)
    assert data.current.tolist() == [other.current] and data.mask.tolist() == [other.mask]


def test_7x6_ships_learned_weights_and_other_boards_fall_back() -> None:
    learned = learned_weights(STANDARD)
    assert learned is not None and learned.shape == (N_WEIGHTS,) and not np.array_equal(learned, THREAT_WEIGHTS)
    weights, stand_in = weights_named("learned", Geometry(9, 6, 5))
    assert stand_in and weights is THREAT_WEIGHTS
    assert weights_named("centre", STANDARD) == (CENTRE_ONLY, False)


def test_the_option_offers_every_named_evaluation() -> None:
    """The option table names them itself (it must load without numpy): the same names,
    and the same default as the searcher's (docs/guides/evaluation.md, "The n-tuple evaluation")."""
    spec = find_spec("Evaluation")
    assert spec.choices == NAMES and spec.default == DEFAULT
