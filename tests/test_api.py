"""The public Python API (``c4engine.__all__``): the Position, its errors, and the
in-process solve / analyse / best_move.

These are what programs outside the package build on, so every call and every
refusal is pinned down here, with the messages the protocol gives for the same
input.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import c4engine
from c4engine import IllegalMoveError, Position

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
            "print(sorted(m for m in sys.modules if m.startswith(('numba', 'c4engine.search'))))")
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
    (lambda: Position().play("4"), "move '4': expected an int column 1-7"),
    (lambda: Position().play(True), "move True: expected an int column 1-7"),
    (lambda: Position().play(4.0), "move 4.0: expected an int column 1-7"),
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
    (lambda: Position.from_fen(42), "FEN 42: expected a string"),
])
def test_bad_input_raises_illegal_move_error_with_the_protocols_message(make, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(IllegalMoveError) as caught:
        make()
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("moves", ["4444444", "48", "12121213"])
def test_move_errors_read_as_the_protocol_writes_them(moves: str) -> None:
    from c4engine.board import RulesError
    from c4engine.protocol import parse_position
    with pytest.raises(RulesError) as protocol:
        parse_position(["startpos", "moves", *moves])
    with pytest.raises(IllegalMoveError) as api:
        Position.from_moves(moves)
    assert str(api.value) == str(protocol.value)
