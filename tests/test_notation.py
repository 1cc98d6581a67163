"""Notation: digit strings, cutechess drops and FEN, both ways.

cutechess and Fairy-Stockfish send drops and FENs; a misread one makes the
engine play a different game from the GUI's, and cutechess scores an illegal
move as a loss.  So every notation must round-trip, and every refusal the
DESIGN promises must happen with a message that says what is wrong.
"""

from __future__ import annotations

import random

import pytest

from c4engine.geometry import Geometry, GeometryError
from c4engine.rules.board import Board, RulesError
from c4engine.rules.notation import (
    format_line,
    parse_board,
    parse_digits,
    parse_fen,
    parse_move,
    play_moves,
    start_fen,
    to_fen,
)

SEED = 20240612
# The start position exactly as cutechess writes it for the cfour variant.
CUTECHESS_START_FEN = "7/7/7/7/7/7[PPPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] w - - 0 1"
# A 42-move game that fills the board with no four (as in test_rules).
DRAWN_GAME = "547125662261271266215743771576315353334444"


def random_game_positions(rng: random.Random, games: int) -> list[Board]:
    """Every position, start included, of ``games`` random games that is not over."""
    out = []
    for _ in range(games):
        pos = Board()
        while not pos.is_over():
            out.append(pos)
            pos = pos.play(rng.choice(pos.legal_moves()))
    return out


def digits_of(pos: Board) -> str:
    return "".join(str(col + 1) for col in pos.history)


def with_hand(board: str, side: str, first: int, second: int) -> str:
    """A FEN whose stones in hand agree with ``first`` and ``second`` stones on the board."""
    return f"{board}[{'P' * (21 - first)}{'p' * (21 - second)}] {side} - - 0 1"


@pytest.fixture(scope="module")
def positions() -> list[Board]:
    return random_game_positions(random.Random(SEED), 60)


# ---------------------------------------------------------------- round trips

def test_digit_strings_round_trip(positions: list[Board]) -> None:
    """A game as digits replays to the same position, and is written back the same."""
    for pos in positions:
        digits = digits_of(pos)
        again = parse_digits(digits)
        assert (again.current, again.mask) == (pos.current, pos.mask), digits
        assert "".join(format_line(Board(), list(pos.history), drops=False)) == digits


def test_drops_round_trip(positions: list[Board]) -> None:
    """A game written as cutechess drops replays to the same position."""
    for pos in positions:
        drops = format_line(Board(), list(pos.history), drops=True)
        again = play_moves(Board(), drops)
        assert (again.current, again.mask) == (pos.current, pos.mask), drops


def test_drops_name_the_landing_cell() -> None:
    """The rank of a drop is the row the stone lands on, counted from 1 at the bottom."""
    assert format_line(Board(), [3, 3, 4, 2, 3], drops=True) == [
        "P@d1", "P@d2", "P@e1", "P@c1", "P@d3"]
    assert play_moves(Board(), ["P@d1", "P@d2"]) == parse_digits("44")


def test_digits_and_drops_mix() -> None:
    """A move list may mix digit strings and drops, as the protocol's ``moves`` may."""
    mixed = play_moves(Board(), ["44", "P@e1", "3"])
    assert mixed == parse_digits("4453")


def test_fen_round_trips(positions: list[Board]) -> None:
    """Every non-final position of random games survives to_fen and parse_fen."""
    assert len(positions) > 500
    for pos in positions:
        fen = to_fen(pos)
        again = parse_fen(fen)
        assert (again.current, again.mask) == (pos.current, pos.mask), fen
        assert to_fen(again) == fen


def test_cutechess_start_fen() -> None:
    assert start_fen() == CUTECHESS_START_FEN
    start = parse_fen(CUTECHESS_START_FEN)
    assert (start.current, start.mask) == (0, 0)
    assert to_fen(Board()) == CUTECHESS_START_FEN


def test_fen_of_a_worked_position() -> None:
    """``4453``: d1 P, d2 p, e1 P, c1 p; 19 P and 19 p in hand; move 3, first player to move."""
    expected = "7/7/7/7/3p3/2pPP2[" + "P" * 19 + "p" * 19 + "] w - - 0 3"
    pos = parse_digits("4453")
    assert to_fen(pos) == expected
    assert parse_fen(expected) == Board(pos.current, pos.mask)


def test_fen_without_a_hand_is_read() -> None:
    """The stones in hand are optional; without them only the board decides."""
    pos = parse_digits("4453")
    assert parse_fen("7/7/7/7/3p3/2pPP2 w") == Board(pos.current, pos.mask)


# ---------------------------------------------------------------- FEN refusals

@pytest.mark.parametrize("fen, message", [
    ("7/7/7/7/7/7", "needs at least the board and the side to move"),
    ("7/7/7/7/7/7[PPP w", r"must close with '\]'"),
    ("7/7/7/7/7/x6[] w", "rank 1 'x6': unexpected 'x'"),
    (with_hand("7/7/7/7/7/7", "x", 0, 0), "side to move 'x': expected w or b"),
    ("7/7/7/7/7/7[PPx] w", "only P and p may appear"),
], ids=["no side", "open hand", "bad character", "bad side", "bad hand"])
def test_malformed_fen(fen: str, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        parse_fen(fen)


@pytest.mark.parametrize("fen, message", [
    (with_hand("7/7/7/7/7", "w", 0, 0), "expected 6 rows, found 5"),
    (with_hand("7/7/7/7/7/7/7", "w", 0, 0), "expected 6 rows, found 7"),
    (with_hand("8/7/7/7/7/7", "w", 0, 0), "rank 6 '8': describes 8 cells, expected 7"),
    (with_hand("7/7/7/7/7/6", "w", 0, 0), "rank 1 '6': describes 6 cells, expected 7"),
    (with_hand("7/7/7/7/7/PpPpPpPp", "w", 4, 4), "rank 1 'PpPpPpPp': describes 8 cells"),
    (with_hand("16/7/7/7/7/7", "w", 0, 0), "rank 6 '16': describes 16 cells, expected 7"),
    (with_hand("7/7/7/7/7/P06", "w", 1, 0), "rank 1 'P06': an empty run is a number 1-7 with no leading 0"),
], ids=["5 rows", "7 rows", "8 wide", "6 wide", "8 stones wide", "two-digit run", "empty run of 0"])
def test_fen_with_the_wrong_shape(fen: str, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        parse_fen(fen)


def test_fen_with_floating_stones() -> None:
    with pytest.raises(RulesError, match="column 3 has a stone floating above an empty cell"):
        parse_fen(with_hand("7/7/7/7/2P4/7", "b", 1, 0))


@pytest.mark.parametrize("fen, message", [
    (with_hand("7/7/7/7/7/PPP4", "b", 3, 0), "impossible stone counts: 3 for the first player, 0"),
    (with_hand("7/7/7/7/7/p6", "w", 0, 1), "impossible stone counts: 0 for the first player, 1"),
], ids=["first too many", "second ahead"])
def test_fen_with_impossible_counts(fen: str, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        parse_fen(fen)


def test_fen_whose_hand_disagrees_with_the_board() -> None:
    fen = "7/7/7/7/7/3P3[" + "P" * 21 + "p" * 21 + "] b - - 0 1"
    with pytest.raises(RulesError, match="21 'P' in hand and 1 on the board do not make 21"):
        parse_fen(fen)


def test_fen_with_both_sides_four() -> None:
    with pytest.raises(RulesError, match="both sides have four in a row"):
        parse_fen(with_hand("7/7/P1p4/P1p4/P1p4/P1p4", "w", 4, 4))


def test_fen_of_a_won_game() -> None:
    with pytest.raises(RulesError, match="already over: a side has four in a row"):
        parse_fen(with_hand("7/7/P6/P6/P6/Pp1p1p1", "b", 4, 3))


def test_fen_of_a_full_board() -> None:
    full = parse_digits(DRAWN_GAME)
    assert full.is_over() and not full.last_mover_won()
    with pytest.raises(RulesError, match="already over: the board is full"):
        parse_fen(to_fen(full))


@pytest.mark.parametrize("fen, expected", [
    (with_hand("7/7/7/7/7/7", "b", 0, 0), "first"),
    (with_hand("7/7/7/7/7/3P3", "w", 1, 0), "second"),
])
def test_fen_with_the_wrong_side_to_move(fen: str, expected: str) -> None:
    with pytest.raises(RulesError, match=f"wrong side to move: .* the {expected} player is to move"):
        parse_fen(fen)


# ---------------------------------------------------------------- move refusals

@pytest.mark.parametrize("token, message", [
    ("p@a1", "the piece must be an uppercase P"),
    ("P@a2", "a stone dropped in file a lands on rank 1"),
    ("P@h1", "file must be a-g"),
    ("P@A1", "file must be a-g"),
    ("P@a7", "rank must be 1-6"),
    ("P@a0", "rank must be 1-6"),
], ids=["lowercase", "wrong rank", "file h", "uppercase file", "rank 7", "rank 0"])
def test_drop_refusals(token: str, message: str) -> None:
    with pytest.raises(RulesError, match=f"move '{token}': {message}"):
        parse_move(token, Board())


def test_drop_onto_a_cell_above_the_landing_one() -> None:
    """The rank must be the lowest empty cell, not any empty cell of the file."""
    pos = parse_digits("44")
    assert parse_move("P@d3", pos) == 3
    with pytest.raises(RulesError, match="lands on rank 3"):
        parse_move("P@d4", pos)


@pytest.mark.parametrize("rank", ["1", "6"])
def test_drop_into_a_full_column(rank: str) -> None:
    with pytest.raises(RulesError, match="the column is full"):
        parse_move(f"P@a{rank}", parse_digits("111111"))


@pytest.mark.parametrize("digits", ["0", "8", "408", "4458"])
def test_digits_out_of_range(digits: str) -> None:
    with pytest.raises(RulesError, match=r"column out of range \(1-7\)"):
        parse_digits(digits)


def test_play_moves_names_the_refused_move() -> None:
    """A legal-looking digit into a full column is refused with the move named."""
    with pytest.raises(RulesError, match="move '1': column 1 is full"):
        play_moves(Board(), ["1111111"])


def test_superscript_digit_is_a_rules_error() -> None:
    with pytest.raises(RulesError):
        parse_digits("4²")


def test_non_ascii_digit_is_refused() -> None:
    with pytest.raises(RulesError):
        parse_digits("٣")


# ---------------------------------------------------------------- other boards

BOARD_8X7 = Geometry.parse("8x7")
BOARD_10X5 = Geometry.parse("10x5")
BOARD_4X15 = Geometry.parse("4x15")


def test_start_fen_follows_the_board() -> None:
    """Fairy-Stockfish's form: one row per rank, the hand one stone per cell, the first
    player holding the larger half on an odd cell count."""
    assert start_fen(BOARD_8X7) == "8/8/8/8/8/8/8[" + "P" * 28 + "p" * 28 + "] w - - 0 1"
    assert start_fen(Geometry.parse("7x7")) == "7/" * 6 + "7[" + "P" * 25 + "p" * 24 + "] w - - 0 1"
    assert start_fen(BOARD_10X5) == "10/10/10/10/10[" + "P" * 25 + "p" * 25 + "] w - - 0 1"


@pytest.mark.parametrize("geometry", [BOARD_8X7, BOARD_10X5, BOARD_4X15, Geometry.parse("9x6k5")],
                         ids=str)
def test_fen_round_trip_on_other_boards(geometry: Geometry) -> None:
    rng = random.Random(SEED)
    for _ in range(20):
        pos = Board(geometry=geometry)
        while not pos.is_over():
            fen = to_fen(pos)
            again = parse_fen(fen, geometry)
            assert (again.current, again.mask, again.geometry) == (pos.current, pos.mask, geometry), fen
            assert to_fen(again) == fen
            pos = pos.play(rng.choice(pos.legal_moves()))


def test_wide_rows_use_multi_digit_runs() -> None:
    """Ten empty cells are ``10``, as Fairy-Stockfish writes them; a stone in the last
    column of 10 is file j."""
    pos = play_moves(Board(geometry=BOARD_10X5), ["P@j1", "P@a1"])
    assert to_fen(pos).split("[")[0] == "10/10/10/10/p8P"
    assert parse_fen("10/10/10/10/p8P w", BOARD_10X5) == Board(pos.current, pos.mask, geometry=BOARD_10X5)


def test_a_fen_of_another_size_is_refused() -> None:
    with pytest.raises(RulesError, match="expected 7 rows, found 6"):
        parse_fen(CUTECHESS_START_FEN, BOARD_8X7)
    with pytest.raises(RulesError, match="describes 7 cells, expected 8"):
        parse_fen("7/7/7/7/7/7/7 w", BOARD_8X7)
    with pytest.raises(RulesError, match=r"do not make 28"):
        parse_fen("8/8/8/8/8/8/8[" + "P" * 21 + "p" * 21 + "] w", BOARD_8X7)


def test_drops_on_an_8x7_board() -> None:
    pos = Board(geometry=BOARD_8X7)
    assert parse_move("P@h1", pos) == 7
    assert parse_move("8", pos) == 7
    assert format_line(pos, [7, 7, 0], drops=True) == ["P@h1", "P@h2", "P@a1"]
    full = pos.play_all([7] * 7)
    with pytest.raises(RulesError, match="lands on nowhere: the column is full"):
        parse_move("P@h7", full)
    with pytest.raises(RulesError, match="file must be a-h"):
        parse_move("P@i1", pos)
    with pytest.raises(RulesError, match="rank must be 1-7"):
        parse_move("P@a8", pos)


def test_tall_boards_have_ranks_past_9() -> None:
    pos = Board(geometry=BOARD_4X15).play_all([0] * 9)
    assert format_line(pos, [0], drops=True) == ["P@a10"]
    assert parse_move("P@a10", pos) == 0
    with pytest.raises(RulesError, match="rank must be 1-15"):
        parse_move("P@a010", pos)


def test_boards_wider_than_9_take_no_digits() -> None:
    """``12`` could be column 12 or columns 1 and 2: past 9 columns moves are drops only,
    and the engine writes drops even where digits were asked for."""
    pos = Board(geometry=BOARD_10X5)
    with pytest.raises(RulesError, match="on a board of 10 columns moves are drops"):
        play_moves(pos, ["1"])
    with pytest.raises(RulesError, match="on a board of 10 columns moves are drops"):
        parse_digits("12", BOARD_10X5)
    assert format_line(pos, [9], drops=False) == ["P@j1"]


@pytest.mark.parametrize("text, message", [
    ("７x６", "expected WxH or WxHkK"), ("٧x٦", "expected WxH or WxHkK"), ("7x٦k3", "expected WxH or WxHkK"),
    ("27x1k3", "at most 26 columns"), ("12x10", "at most 2 64-bit words"),
])
def test_parse_board_refuses_what_no_interface_plays(text: str, message: str) -> None:
    """The one reader of board names (every ``--board``, the page, ``cfour-WxH``)."""
    with pytest.raises(GeometryError, match=message):
        parse_board(text)
    assert parse_board("26x1k3") == Geometry(26, 1, 3)
