"""The public Python API (``c4engine.__all__``): the Position, its errors, and the
in-process solve / analyse / best_move.

These are what programs outside the package build on, so every call and every
refusal is pinned down here, with the messages the protocol gives for the same
input.
"""

from __future__ import annotations

import math
import pickle
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from collections import OrderedDict
from typing import Callable

import pytest

import c4engine
from c4engine import IllegalMoveError, Position
from c4engine.geometry import Geometry
from c4engine.search.searcher import Searcher

import minimax_oracle as oracle

START_FEN = "7/7/7/7/7/7[PPPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] w - - 0 1"
# A 42-move game that fills the board with no four (tests/test_rules.py).
DRAWN_GAME = "547125662261271266215743771576315353334444"


def test_public_names_are_exactly_all() -> None:
    exported = {name for name in dir(c4engine) if not name.startswith("_")}
    assert set(c4engine.__all__) - {"__version__"} <= exported
    namespace: dict[str, object] = {}
    exec("from c4engine import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(c4engine.__all__)


def test_importing_the_package_leaves_numba_and_the_search_out() -> None:
    """The protocol process imports the package and must answer ``uci`` at once."""
    code = ("import sys, c4engine; "
            "print(sorted(m for m in sys.modules if m.startswith(('numba', 'c4engine.kernel', 'c4engine.search.searcher'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- Position --------------------------------------------------------------

def test_empty_board() -> None:
    pos = Position()
    assert pos.side_to_move == 1
    assert pos.moves == ()
    assert pos.start_fen is None
    assert pos.legal_moves() == [1, 2, 3, 4, 5, 6, 7]
    assert not pos.is_over()
    assert pos.winner() is None
    assert pos.fen() == START_FEN
    assert pos == Position.from_moves("") == Position.from_fen(START_FEN)


def test_play_returns_a_new_position_and_keeps_the_old_one() -> None:
    pos = Position()
    after = pos.play(4)
    assert pos.moves == () and after.moves == (4,)
    assert after.side_to_move == 2
    assert after.play(4).play(5).play(3) == Position.from_moves("4453")


def test_from_moves_takes_digits_or_columns() -> None:
    pos = Position.from_moves("4453")
    assert pos.moves == (4, 4, 5, 3)
    assert Position.from_moves([4, 4, 5, 3]) == pos
    assert Position.from_moves(pos.moves).moves == pos.moves


def test_text_board_shows_who_holds_each_cell() -> None:
    assert str(Position.from_moves("4453")).splitlines() == [
        ". . . . . . .",
        ". . . . . . .",
        ". . . . . . .",
        ". . . . . . .",
        ". . . O . . .",
        ". . O X X . .",
        "1 2 3 4 5 6 7",
    ]


def test_fen_round_trip_and_start_fen() -> None:
    pos = Position.from_moves("4453")
    assert pos.fen() == "7/7/7/7/3p3/2pPP2[PPPPPPPPPPPPPPPPPPPppppppppppppppppppp] w - - 0 3"
    again = Position.from_fen(pos.fen())
    assert again == pos
    assert again.moves == ()
    assert again.start_fen == pos.fen()
    later = again.play(1).play(7)
    assert later.moves == (1, 7)
    assert later.start_fen == pos.fen()
    assert later == Position.from_moves("445317")


def test_from_fen_writes_the_start_fen_out_in_full() -> None:
    pos = Position.from_fen("7/7/7/7/7/3P3 b")
    assert pos.start_fen == f"7/7/7/7/7/3P3[{'P' * 20}{'p' * 21}] b - - 0 1"
    assert pos == Position.from_moves("4")


def test_equal_positions_are_equal_whatever_the_move_order() -> None:
    a, b = Position.from_moves("1234"), Position.from_moves("3214")
    assert a == b and hash(a) == hash(b)
    assert a.moves != b.moves
    assert len({a, b, Position.from_moves("4321")}) == 2
    assert a != Position.from_moves("1243")
    assert a != "1234"


def test_positions_pickle_with_their_moves_and_start() -> None:
    """Positions travel to other processes (multiprocessing, Ray) by pickle."""
    pos = Position.from_fen(Position.from_moves("4453").fen()).play(2)
    again = pickle.loads(pickle.dumps(pos))
    assert again == pos and again.moves == (2,) and again.start_fen == pos.start_fen


def test_a_four_ends_the_game_and_names_the_winner() -> None:
    first_wins = Position.from_moves("1212121")
    assert first_wins.is_over() and first_wins.winner() == 1 and first_wins.legal_moves() == []
    second_wins = Position.from_moves("71212121")
    assert second_wins.is_over() and second_wins.winner() == 2


def test_a_full_board_is_a_draw() -> None:
    pos = Position.from_moves(DRAWN_GAME)
    assert pos.is_over() and pos.winner() is None and pos.legal_moves() == []


def test_a_full_column_is_not_a_legal_move() -> None:
    assert Position.from_moves("444444").legal_moves() == [1, 2, 3, 5, 6, 7]


def test_columns_may_be_numpy_integers() -> None:
    numpy = pytest.importorskip("numpy")
    assert Position().play(numpy.int64(4)) == Position.from_moves("4")


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Position().play(8), "move '8': column out of range (1-7)"),
    (lambda: Position().play(0), "move '0': column out of range (1-7)"),
    (lambda: Position().play("4"), "move '4': expected an int column 1-7"),  # type: ignore[arg-type]
    (lambda: Position().play(True), "move True: expected an int column 1-7"),
    (lambda: Position().play(4.0), "move 4.0: expected an int column 1-7"),  # type: ignore[arg-type]
    (lambda: Position.from_moves("444444").play(4), "move '4': column 4 is full"),
    (lambda: Position.from_moves("1212121").play(3), "move '3': column 3: the game is already over"),
    (lambda: Position.from_moves("4444444"), "move '4': column 4 is full"),
    (lambda: Position.from_moves("48"), "move '8': column out of range (1-7)"),
    (lambda: Position.from_moves("4x"), "'4x' is not a string of column digits"),
    (lambda: Position.from_moves([4, 9]), "move '9': column out of range (1-7)"),
    (lambda: Position.from_fen("junk"), "FEN 'junk': needs at least the board and the side to move"),
    (lambda: Position.from_fen("7/7/7/7/7/7 x"), "FEN side to move 'x': expected w or b"),
    (lambda: Position.from_fen("7/7/7/7/3P3/7 b"), "column 4 has a stone floating above an empty cell"),
    (lambda: Position.from_fen("7/7/7/7/7/3P3 w"),
     "wrong side to move: with these stones the second player is to move"),
    (lambda: Position.from_fen("7/7/p6/P6/P6/P6 b"),
     "impossible stone counts: 3 for the first player, 1 for the second"),
    (lambda: Position.from_fen("7/7/7/7/7/PPPPppp b"),
     "the game is already over: a side has four in a row"),
    (lambda: Position.from_fen(42), "FEN 42: expected a string"),  # type: ignore[arg-type]
    (lambda: Position.from_fen(None), "FEN None: expected a string"),  # type: ignore[arg-type]
    (lambda: Position.from_moves(None),  # type: ignore[arg-type]
     "moves None: expected a digit string or a sequence of columns"),
    (lambda: Position.from_moves(4453),  # type: ignore[arg-type]
     "moves 4453: expected a digit string or a sequence of columns"),
])
def test_bad_input_raises_illegal_move_error_with_the_protocols_message(
        make: Callable[[], object], message: str) -> None:
    with pytest.raises(IllegalMoveError) as caught:
        make()
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("moves", ["4444444", "48", "12121213"])
def test_move_errors_read_as_the_protocol_writes_them(moves: str) -> None:
    from c4engine.protocol.server import parse_position
    from c4engine.rules.board import RulesError
    with pytest.raises(RulesError) as protocol:
        parse_position(["startpos", "moves", *moves])
    with pytest.raises(IllegalMoveError) as api:
        Position.from_moves(moves)
    assert str(api.value) == str(protocol.value)


# -- solve, analyse, best_move -----------------------------------------------

PONS = Path(__file__).resolve().parent.parent / "../shared/data/pons"
SEED = 20261122
CENTRE_FIRST = (4, 3, 5, 2, 6, 1, 7)


def searcher_in_play() -> Searcher:
    """The searcher of the board of the last call."""
    from c4engine import api
    return api._boards[api._in_play].searcher


def pons_lines(name: str, count: int) -> list[tuple[str, int]]:
    path = PONS / name
    if not path.exists():
        pytest.skip(f"Pons' test set {path} is not available")
    with path.open() as lines:
        pairs = [line.split() for _, line in zip(range(count), lines)]
    return [(moves, int(score)) for moves, score in pairs]


def random_position(rng: random.Random, stones: int) -> Position:
    """A position after up to ``stones`` random moves, stopping before the game ends."""
    pos = Position()
    for _ in range(stones):
        after = [pos.play(col) for col in pos.legal_moves()]
        going_on = [child for child in after if not child.is_over()]
        if not going_on:
            break
        pos = rng.choice(going_on)
    return pos


@pytest.mark.parametrize("test_set", ["Test_L3_R1", "Test_L2_R1", "Test_L1_R1", "Test_L2_R2"])
def test_solve_gives_pons_scores(test_set: str) -> None:
    for moves, score in pons_lines(test_set, 25):
        pos = Position.from_moves(moves)
        assert c4engine.solve(pos) == score, moves
        assert c4engine.solve(pos, weak=True) == (score > 0) - (score < 0), moves


def test_solve_the_empty_board_the_first_player_wins_with_the_last_stone() -> None:
    assert c4engine.solve(Position()) == 1


def test_analyse_agrees_with_bitbully_on_random_positions() -> None:
    bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")
    oracle = bitbully.BitBully("12-ply-dist")
    rng = random.Random(SEED)
    for _ in range(40):
        pos = random_position(rng, rng.choice([0, 3, 8, 12, 14, 18, 24, 30, 36]))
        expected = oracle.score_all_moves(bitbully.Board([col - 1 for col in pos.moves]))
        scores = c4engine.analyse(pos)
        assert scores == {col: expected.get(col - 1) for col in range(1, 8)}, pos.moves
        assert c4engine.solve(pos) == max(score for score in scores.values() if score is not None)


def test_analyse_marks_full_columns_none_and_sees_immediate_results() -> None:
    scores = c4engine.analyse(Position.from_moves("4444443"))
    assert scores[4] is None
    assert scores == {1: -16, 2: -1, 3: -16, 4: None, 5: -2, 6: -16, 7: -16}
    one_to_win = Position.from_moves("121212")
    assert c4engine.analyse(one_to_win)[1] == (43 - 6) // 2


def test_best_move_plays_a_best_column() -> None:
    for moves in ("", "4453", "44444", "3343", "121212"):
        pos = Position.from_moves(moves)
        scores = c4engine.analyse(pos)
        best = max(score for score in scores.values() if score is not None)
        assert scores[c4engine.best_move(pos)] == best, moves


def test_best_move_past_the_book_keeps_every_proven_result() -> None:
    """A game's move asks the solver for the result only: past the 7x6 book a won
    position may get a slower win than the fastest, never a move that does not
    win, and a drawn or lost one keeps its best (bitbully's scores)."""
    bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")
    oracle = bitbully.BitBully("12-ply-dist")
    rng = random.Random(SEED + 29)
    drawn = [Position.from_moves("42444465216775"), Position.from_moves("23163416124767223154467471272416755633")]
    signs = set()
    for pos in [random_position(rng, rng.choice([14, 18, 24])) for _ in range(24)] + drawn:
        expected = oracle.score_all_moves(bitbully.Board([col - 1 for col in pos.moves]))
        best = max(expected.values())
        played = expected[c4engine.best_move(pos, time=30) - 1]
        assert (played > 0, played == 0) == (best > 0, best == 0), pos.moves
        assert best > 0 or played == best, pos.moves
        signs.add((best > 0) - (best < 0))
    assert signs == {-1, 0, 1}


def test_a_best_move_of_a_millisecond_keeps_the_result_the_books_hold() -> None:
    """Within the 7x6 books a move of 1 ms keeps its position's result (bitbully's
    scores): the package's 4-stone book is probed as the engine's ``OwnBook`` does,
    and the book's solve follows depth 1 whatever the time (2 and 6 gave up a
    win, 22 a draw, through the 12-stone book alone)."""
    bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")
    oracle = bitbully.BitBully()
    for moves in ("2", "6", "22", "4376", "71"):
        expected = oracle.score_all_moves(bitbully.Board([int(col) - 1 for col in moves]))
        best = max(expected.values())
        played = expected[c4engine.best_move(Position.from_moves(moves), time=0.001) - 1]
        assert (played > 0, played >= 0) == (best > 0, best >= 0), (moves, expected, played)


def test_best_move_within_a_time_or_a_depth_plays_a_legal_column_and_takes_a_win() -> None:
    pos = Position.from_moves("4453")
    assert c4engine.best_move(pos, time=0.05) in pos.legal_moves()
    assert c4engine.best_move(pos, depth=1) in pos.legal_moves()
    assert c4engine.best_move(Position.from_moves("121212"), depth=1) == 1
    assert c4engine.best_move(Position.from_moves("121212"), time=0.001) == 1


def test_best_move_at_a_node_limit_plays_a_legal_column_and_takes_a_win() -> None:
    pos = Position.from_moves("4453")
    assert c4engine.best_move(pos, nodes=500) in pos.legal_moves()
    assert c4engine.best_move(Position.from_moves("121212"), nodes=1) == 1


def test_a_level_draws_its_moves_from_its_rng() -> None:
    """Level 0 sees one ply: its draws spread over the columns, and the same seed
    draws the same moves; level 20 is full strength, the default."""
    pos = Position.from_moves("4453")
    draws = [c4engine.best_move(pos, level=0, rng=random.Random(seed)) for seed in range(40)]
    assert len(set(draws)) >= 3 and set(draws) <= set(pos.legal_moves())
    again = [c4engine.best_move(pos, level=0, rng=random.Random(seed)) for seed in range(40)]
    assert again == draws
    assert c4engine.best_move(pos, level=20) == c4engine.best_move(pos)


def test_a_level_searches_without_the_books_and_full_strength_with_them() -> None:
    """As the engine's Skill Level: a level knows nothing past its depth."""
    c4engine.best_move(Position.from_moves("4453"), level=10)
    assert not searcher_in_play().book.score_records
    c4engine.best_move(Position.from_moves("4453"))
    assert searcher_in_play().book.score_records


def test_best_move_stops_at_its_time() -> None:
    """A 13-stone position from Pons' hardest set (about a second to solve), which no
    other test searches: only the time stops the search."""
    pos = Position.from_moves("6143156275532")
    began = time.perf_counter()
    c4engine.best_move(pos, time=0.2)
    assert time.perf_counter() - began < 1.0


@pytest.mark.parametrize("call", [c4engine.solve, c4engine.analyse, c4engine.best_move])
def test_a_finished_game_is_refused(call: Callable[[Position], object]) -> None:
    with pytest.raises(IllegalMoveError, match=r"the game is already over"):
        call(Position.from_moves("1212121"))


@pytest.mark.parametrize("call", [c4engine.solve, c4engine.analyse, c4engine.best_move])
def test_only_a_position_is_taken(call: Callable[[object], object]) -> None:
    """Refused by the one rule: a ValueError (here IllegalMoveError) whatever the type."""
    with pytest.raises(IllegalMoveError, match="expected a c4engine.Position, got str"):
        call("4453")


@pytest.mark.parametrize(("limits", "message"), [
    ({"time": 0}, "best_move: time must be a number of seconds above 0, got 0"),
    ({"time": -1.0}, "time must be a number of seconds above 0, got -1.0"),
    ({"time": math.nan}, "time must be a number of seconds above 0, got nan"),
    ({"time": -math.inf}, "time must be a number of seconds above 0, got -inf"),
    ({"time": "1"}, "time must be a number of seconds above 0, got '1'"),
    ({"time": True}, "time must be a number of seconds above 0, got True"),
    ({"depth": 0}, "best_move: depth must be a whole number of at least 1, got 0"),
    ({"depth": math.nan}, "depth must be a whole number of at least 1, got nan"),
    ({"depth": math.inf}, "depth must be a whole number of at least 1, got inf"),
    ({"depth": 1.5}, "depth must be a whole number of at least 1, got 1.5"),
    ({"depth": 4.0}, "depth must be a whole number of at least 1, got 4.0"),
    ({"depth": "4"}, "depth must be a whole number of at least 1, got '4'"),
    ({"nodes": 0}, "best_move: nodes must be a whole number of at least 1, got 0"),
    ({"nodes": 1e6}, "nodes must be a whole number of at least 1, got 1000000.0"),
    ({"level": -1}, "best_move: level must be a whole number from 0 to 20, got -1"),
    ({"level": 21}, "level must be a whole number from 0 to 20, got 21"),
    ({"level": 19.5}, "level must be a whole number from 0 to 20, got 19.5"),
    ({"level": True}, "level must be a whole number from 0 to 20, got True"),
    ({"rng": 7}, "best_move: rng must be a random.Random, got 7"),
])
def test_best_move_refuses_other_limits_by_one_rule(limits: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        c4engine.best_move(Position(), **limits)  # type: ignore[arg-type]
    assert message in str(caught.value)


@pytest.mark.parametrize("huge", [math.inf, 1e12, pytest.param(10**400, id="10**400")])
def test_a_huge_time_is_no_limit_and_no_timer_dies(huge: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """A timer thread started with a wait beyond what threading can wait for died
    with an OverflowError in the background; 10**400 overflowed the conversion."""
    died: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", died.append)
    pos = Position.from_moves("121212")  # a win at once: no limit needed to end the search
    assert c4engine.best_move(pos, time=huge) == 1
    time.sleep(0.1)
    assert not died, died[0].exc_value


@pytest.mark.parametrize("weak", [[], None, 1, "yes"])
def test_solve_refuses_a_weak_that_is_not_true_or_false(weak: object) -> None:
    with pytest.raises(ValueError) as caught:
        c4engine.solve(Position(), weak=weak)  # type: ignore[arg-type]
    assert str(caught.value) == f"solve: weak must be True or False, got {weak!r}"


def test_calls_from_several_threads_give_the_answers_one_thread_gets() -> None:
    """Solves running while other threads' timed searches are stopped by their timers:
    with one table and one stop flag shared carelessly, a stop or a counter reset
    meant for one call would cut another short and give it a wrong score."""
    lines = pons_lines("Test_L2_R2", 40)
    hard = [Position.from_moves(moves) for moves, _ in pons_lines("Test_L1_R3", 8) if len(moves) > 12]

    def solve(line: tuple[str, int]) -> bool:
        return c4engine.solve(Position.from_moves(line[0])) == line[1]

    def search(pos: Position) -> bool:
        return c4engine.best_move(pos, time=0.02) in pos.legal_moves()

    with ThreadPoolExecutor(max_workers=4) as pool:
        searched = pool.map(search, hard * 3)
        solved = pool.map(solve, lines)
        assert all(solved) and all(searched)


def test_without_the_book_it_warns_and_still_solves(monkeypatch: pytest.MonkeyPatch) -> None:
    from c4engine import api
    from c4engine.kernel.book import BookUnavailableError, OpeningBook

    def unavailable() -> OpeningBook:
        raise BookUnavailableError("bitbully-databases is not installed")
    monkeypatch.setattr(OpeningBook, "load", unavailable)
    monkeypatch.setattr(api, "_boards", OrderedDict())  # a searcher of its own, dropped afterwards
    with pytest.warns(UserWarning, match="no opening book, searching without it: bitbully-databases") \
            as warned:
        c4engine.warm_up()
    assert warned[0].filename == __file__  # it points at the caller's line, not ours
    for moves, score in pons_lines("Test_L2_R1", 5):
        assert c4engine.solve(Position.from_moves(moves)) == score


def test_warm_up_builds_the_searcher_once() -> None:
    c4engine.warm_up()
    began = time.perf_counter()
    c4engine.warm_up()
    assert time.perf_counter() - began < 0.05


# -- other boards -------------------------------------------------------------

def test_a_board_being_built_holds_up_no_call_on_another_board(monkeypatch: pytest.MonkeyPatch) -> None:
    """A board whose searcher is still being made (its kernel compiling: here its warm-up
    held back) must not make a call on another board wait for it, nor cost that board
    its searcher (issue 47: the Kaggle agent was 15-19 s late on 7x6 after one call on
    7x6 with five in a row)."""
    c4engine.warm_up()
    release, building = threading.Event(), threading.Event()
    warm_up = Searcher.warm_up

    def slow_warm_up(searcher: Searcher, searching: bool = True) -> None:
        if searcher.geometry == Geometry(6, 4, 4) and not release.is_set():
            building.set()
            release.wait(60)
        warm_up(searcher, searching)
    monkeypatch.setattr(Searcher, "warm_up", slow_warm_up)
    other = threading.Thread(target=c4engine.warm_up, kwargs={"width": 6, "height": 4})  # no other test's board
    other.start()
    try:
        assert building.wait(120)
        answered: list[int] = []
        began = time.perf_counter()
        mover = threading.Thread(target=lambda: answered.append(c4engine.best_move(Position(), time=0.2)))
        mover.start()
        mover.join(5.0)
        assert answered == [4] and time.perf_counter() - began < 5.0
        assert c4engine.api.is_warm(7, 6, 4) and not c4engine.api.is_warm(6, 4, 4)
    finally:
        release.set()
        other.join()
    assert c4engine.api.is_warm(6, 4, 4) and c4engine.api.is_warm(7, 6, 4)
    began = time.perf_counter()
    c4engine.warm_up()  # the 7x6 searcher was kept beside the 6x4 one
    assert time.perf_counter() - began < 0.05

def test_a_position_on_another_board() -> None:
    pos = Position(width=8, height=7).play(8)
    assert (pos.width, pos.height, pos.connect, pos.board) == (8, 7, 4, "8x7")
    assert pos.legal_moves() == list(range(1, 9))
    assert pos.fen().startswith("8/8/8/8/8/8/7P[")
    assert Position.from_fen(pos.fen(), width=8, height=7) == pos
    assert Position.from_moves([8], width=8, height=7) == pos
    assert Position(width=9, height=6, connect=5).board == "9x6k5"
    assert repr(pos) == "<Position board='8x7' moves='8'>"


def test_the_same_stones_on_other_boards_are_other_positions() -> None:
    assert Position.from_moves("1") != Position.from_moves("1", width=8, height=7)
    assert Position.from_moves("1") != Position.from_moves("1", connect=5)


def test_the_row_length_decides_who_won() -> None:
    three = Position.from_moves("11223", width=6, height=5, connect=3)
    assert three.is_over() and three.winner() == 1
    assert not Position.from_moves("11223").is_over()


def test_a_wide_board_takes_columns_not_digits() -> None:
    pos = Position.from_moves([12, 1], width=12, height=4)
    assert pos.moves == (12, 1)
    with pytest.raises(IllegalMoveError, match="on a board of 12 columns moves are drops"):
        Position.from_moves("1", width=12, height=4)


@pytest.mark.parametrize(("shape", "message"), [
    ({"width": 12, "height": 10}, "board 12x10: needs width x (height + 1) <= 128 bits (here 132)"),
    ({"width": 11, "height": 11}, "board 11x11: needs width x (height + 1) <= 128 bits (here 132)"),
    ({"width": 4, "height": 4, "connect": 5}, "board 4x4k5: row length 5 is out of range (3-4"),
    ({"connect": 2}, "board 7x6k2: row length 2 is out of range (3-7"),
    ({"width": 27, "height": 1, "connect": 3}, "board 27x1k3: drops name files a-z, so at most 26 columns"),
    ({"width": 0}, "board 0x6: width and height must be at least 1"),
    ({"width": 7.0}, "board width 7.0: expected a whole number"),
    ({"height": "6"}, "board height '6': expected a whole number"),
    ({"connect": True}, "board connect True: expected a whole number"),
])
def test_a_board_the_engine_cannot_play_is_refused_naming_the_limit(
        shape: dict[str, object], message: str) -> None:
    for make in (lambda: Position(**shape), lambda: Position.from_moves("", **shape),
                 lambda: Position.from_fen("", **shape), lambda: c4engine.warm_up(**shape)):
        with pytest.raises(IllegalMoveError) as caught:
            make()
        assert str(caught.value).startswith(message)


def test_board_sizes_may_be_numpy_integers() -> None:
    numpy = pytest.importorskip("numpy")
    assert Position(width=numpy.int64(8), height=numpy.int8(7)).board == "8x7"


def test_a_fen_of_another_size_is_refused() -> None:
    with pytest.raises(IllegalMoveError, match="expected 7 rows, found 6"):
        Position.from_fen(START_FEN, width=8, height=7)


SMALL_BOARDS = [(5, 4, 4), (4, 5, 3), (6, 4, 3), (4, 4, 3)]


def small_position(rng: random.Random, shape: tuple[int, int, int]) -> tuple[Position, oracle.Board]:
    """A random unfinished position on a small board with at most 9 empty cells (so
    that plain minimax is quick), and the same one for the oracle."""
    width, height, connect = shape
    while True:
        pos = Position(width=width, height=height, connect=connect)
        for _ in range(width * height - 9 + rng.randrange(3)):
            if pos.is_over():
                break
            pos = pos.play(rng.choice(pos.legal_moves()))
        if not pos.is_over():
            return pos, oracle.Board.from_moves(width, height, connect, list(pos.moves))


@pytest.mark.parametrize("shape", SMALL_BOARDS, ids=lambda s: f"{s[0]}x{s[1]}k{s[2]}")
def test_solve_and_analyse_agree_with_plain_minimax_on_small_boards(shape: tuple[int, int, int]) -> None:
    """The searcher's answers (warmed up first: on a board new to the caches the
    interpreted tier would answer, checked on its own below)."""
    c4engine.warm_up(*shape)
    rng = random.Random(SEED)
    for _ in range(6):
        pos, board = small_position(rng, shape)
        assert c4engine.solve(pos) == oracle.solve(board), pos
        assert c4engine.solve(pos, weak=True) == (oracle.solve(board) > 0) - (oracle.solve(board) < 0)
        scores = c4engine.analyse(pos)
        assert sorted(scores) == list(range(1, pos.width + 1))
        for col, score in scores.items():
            if col not in pos.legal_moves():
                assert score is None
            elif pos.play(col).is_over():
                assert score == oracle.win_score(board)
            else:
                child = oracle.Board.from_moves(*shape, [*pos.moves, col])
                assert score == -oracle.solve(child), (pos, col)
        best = c4engine.best_move(pos)
        assert scores[best] == max(s for s in scores.values() if s is not None)


class SearcherMade(Exception):
    """Raised by a stand-in for the API's searcher factory: the call reached the kernel."""


def test_a_new_boards_solve_and_analyse_are_answered_while_its_kernel_compiles(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a board whose kernel is not compiled, ``solve`` and ``analyse`` are answered by
    the interpreted tier while a child compiles the whole kernel (here a stand-in
    child that runs on): the minimax's scores, and no searcher made.  ``analyse``
    with a node cap (the kernel's nodes) and any call once the child has ended go
    to the searcher, made after the child."""
    from c4engine import api
    from c4engine.search import kernel_build
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    monkeypatch.setattr(kernel_build, "start_kernel_build", lambda geometry, whole, standard=False: child if whole else None)
    monkeypatch.setattr(api, "_boards", OrderedDict())

    def no_searcher(geometry: Geometry) -> None:
        tier = api._boards[geometry].tier
        assert tier is None or child.poll() is not None, "the searcher was made before the child ended"
        raise SearcherMade(str(geometry))
    monkeypatch.setattr(api, "_new_searcher", no_searcher)
    try:
        assert c4engine.solve(Position.from_moves("44445555", width=8, height=8)) == 27
        rng = random.Random(SEED)
        for shape in SMALL_BOARDS:
            pos, board = small_position(rng, shape)
            assert c4engine.solve(pos) == oracle.solve(board), pos
            assert c4engine.analyse(pos) == minimax_columns(pos, board), pos
        with pytest.raises(SearcherMade):  # a board with no tier yet, and a cap: no tier asked
            c4engine.analyse(Position.from_moves("33334444", width=5, height=5), nodes=10 ** 9)
        assert not any(c4engine.api.is_warm(*shape) for shape in SMALL_BOARDS)
    finally:
        child.kill()
        child.wait()
    with pytest.raises(SearcherMade):
        c4engine.solve(pos)


def minimax_columns(pos: Position, board: oracle.Board) -> dict[int, int | None]:
    """``analyse``'s answer by plain minimax: each column's score, None for a full one."""
    scores: dict[int, int | None] = {}
    for col in range(1, pos.width + 1):
        if col not in pos.legal_moves():
            scores[col] = None
        elif pos.play(col).is_over():
            scores[col] = oracle.win_score(board) if pos.play(col).winner() is not None else 0
        else:
            scores[col] = -oracle.solve(oracle.Board.from_moves(pos.width, pos.height, pos.connect,
                                                                [*pos.moves, col]))
    return scores


def test_best_move_on_a_bigger_board_keeps_its_time() -> None:
    pos = Position.from_moves("45", width=9, height=6, connect=5)
    c4engine.warm_up(width=9, height=6, connect=5)
    began = time.perf_counter()
    assert c4engine.best_move(pos, time=0.3) in pos.legal_moves()
    assert time.perf_counter() - began < 1.5


def test_a_review_on_another_board() -> None:
    """The 5x4 position 442335312152 scores 0 for Steininger's c4
    (tests/data/c4_scores_5x4.txt); the review finds it before the game's last move."""
    review = c4engine.review(Position.from_moves("4423353121521", width=5, height=4), movetime=200)
    assert review.geometry.name == "5x4" and len(review.moves) == 13
    assert review.moves[12].before == c4engine.Value(0, 0)
    assert "442335312152 0" in (Path(__file__).resolve().parent / "data" / "c4_scores_5x4.txt").read_text()


# -- books built by `c4engine book build` -------------------------------------

@pytest.fixture(scope="module")
def built_books(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 4-ply 5x4 book and a 2-ply 4x4 one, made as ``c4engine book build`` makes them."""
    import os

    from c4engine.books.build import BuildSpec, build
    from c4engine.geometry import Geometry
    folder = tmp_path_factory.mktemp("books")
    books = {}
    for name, geometry, plies in (("5x4", Geometry(5, 4), 4), ("4x4", Geometry(4, 4), 2)):
        books[name] = folder / f"{name}.book"
        with open(os.devnull, "w") as quiet:
            build(BuildSpec(geometry, plies, False, 16), books[name], resume=False, stream=quiet)
    return books


def searched_book() -> Path | None:
    """The path of the book the searcher of the board in play probes now."""
    book = searcher_in_play().built_book
    return None if book is None else book.path


def test_use_book_loads_a_book_of_the_board_in_play_and_none_unloads(built_books: dict[str, Path]) -> None:
    c4engine.use_book(None)
    c4engine.warm_up(width=5, height=4)
    pos = Position.from_moves("4423", width=5, height=4)
    score = c4engine.solve(pos)
    try:
        c4engine.use_book(str(built_books["5x4"]))
        assert searched_book() == built_books["5x4"]
        assert c4engine.solve(pos) == score
        c4engine.warm_up(width=4, height=4)
        assert searched_book() is None  # another board searches without it
        c4engine.warm_up(width=5, height=4)
        assert searched_book() == built_books["5x4"]  # and its own board with it again
    finally:
        c4engine.use_book(None)
    assert searched_book() is None


def test_use_book_refuses_another_boards_book_or_a_bad_file_and_keeps_its_book(
        built_books: dict[str, Path], tmp_path: Path) -> None:
    from c4engine.kernel.built_book import BookFileError
    c4engine.warm_up(width=5, height=4)
    not_a_book = tmp_path / "not.book"
    not_a_book.write_bytes(b"hello" * 20)
    try:
        c4engine.use_book(built_books["5x4"])
        for path, message in ((built_books["4x4"], "is for the 4x4 board, not 5x4"),
                              (not_a_book, "not a c4engine book"), (tmp_path / "missing.book", "No such file")):
            with pytest.raises(BookFileError, match=message) as refused:
                c4engine.use_book(str(path))
            assert isinstance(refused.value, ValueError)
            assert searched_book() == built_books["5x4"]
    finally:
        c4engine.use_book(None)



@pytest.mark.parametrize("path", [b"x.book", 4, 2**64, ["x.book"], object()])
def test_use_book_refuses_a_path_of_another_type_with_value_error(path: object) -> None:
    c4engine.use_book(None)
    with pytest.raises(ValueError, match="use_book: path must be"):
        c4engine.use_book(path)  # type: ignore[arg-type]
    assert c4engine.api._built_book is None


@pytest.mark.parametrize("engine", [5, b"c4engine", ["python", 5], [None], [], ""])
def test_review_refuses_an_engine_that_is_no_command_line_with_value_error(engine: object) -> None:
    """``engine`` is a command line, a string or a list of strings: anything else was
    a TypeError from deep in the process start (an int in the list, bytes)."""
    with pytest.raises(ValueError, match="review: engine must be"):
        c4engine.review("4453", movetime=0.05, engine=engine)  # type: ignore[arg-type]
