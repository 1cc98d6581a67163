"""PGN in cutechess' cfour form: writing, reading back, and reading cutechess' own."""

from __future__ import annotations

from pathlib import Path

import pytest

from c4engine.engine import Score
from c4engine.referee.pgn import (
    BOOK,
    PgnGame,
    PgnMove,
    move_comment,
    read_games,
    write_game,
)
from c4engine.rules.notation import parse_digits
from c4engine.rules.variants import VariantSet


def sample_game(**changes) -> PgnGame:
    pos = parse_digits("445544332")  # White completes the bottom row with b1
    comments = [BOOK, BOOK, "+0.35/12 0.103s", "-M4/9 0.020s", "0.00/3 1.500s",
                "+1.20/5 0.001s", "+M2/7 0.050s", "-M1/7 0.049s", "+M1/7 0.002s"]
    fields = dict(white='Engine "A"', black="B\\C", result="1-0",
                  moves=tuple(PgnMove(c, k) for c, k in zip(pos.history, comments)),
                  round="7", event="c4engine match", date="2024.05.06",
                  termination="normal", result_comment="White wins", time_control="10+0.1")
    fields.update(changes)
    return PgnGame(**fields)


def test_move_comments_in_cutechess_form():
    def comment(seconds, **info):
        return move_comment(info, seconds)
    assert comment(0.1034, score=Score("cp", 35), depth=12) == "+0.35/12 0.103s"
    assert comment(2.0, score=Score("cp", -120), depth=5) == "-1.20/5 2.000s"
    assert comment(0.0, score=Score("cp", 0), depth=3) == "0.00/3 0.000s"
    assert comment(0.5, score=Score("mate", 3), depth=12) == "+M3/12 0.500s"
    assert comment(0.5, score=Score("mate", -4), depth=9) == "-M4/9 0.500s"
    assert comment(0.25) == "0.250s"


def test_a_bound_is_not_written_as_an_exact_score():
    assert move_comment(dict(score=Score("mate", 3), lowerbound=True, depth=7), 0.1) == \
        ">=+M3/7 0.100s"
    assert move_comment(dict(score=Score("cp", -5), upperbound=True, depth=2), 0.1) == \
        "<=-0.05/2 0.100s"


def test_any_engine_number_formats():
    """Issue 10, item 1: a score of 400 nines made the writer raise OverflowError."""
    huge = int("9" * 400)
    assert move_comment(dict(score=Score("cp", huge), depth=1), 0.0).startswith("+" + "9" * 398 + ".99/1")


def test_written_layout():
    text = write_game(sample_game())
    head, body = text.split("\n\n", 1)
    assert head.splitlines() == [
        '[Event "c4engine match"]', '[Site "?"]', '[Date "2024.05.06"]', '[Round "7"]',
        '[White "Engine \\"A\\""]', '[Black "B\\\\C"]', '[Result "1-0"]', '[PlyCount "9"]',
        '[Termination "normal"]', '[TimeControl "10+0.1"]', '[Variant "cfour"]']
    assert body.startswith("1. P@d1 {book} P@d2 {book} 2. P@e1 {+0.35/12 0.103s} P@e2")
    assert body.rstrip().endswith("5. P@b1 {+M1/7 0.002s} {White wins} 1-0")
    assert all(len(line) < 80 for line in body.splitlines())
    assert text.endswith("\n\n")


def test_round_trip():
    game = sample_game()
    assert read_games(write_game(game)) == [game]


def test_round_trip_of_several_games_and_forfeits():
    games = [sample_game(),
             sample_game(result="0-1", termination="illegal move", moves=sample_game().moves[:3],
                         result_comment="Black makes an illegal move: P@a3 (rank 1)"),
             sample_game(result="1/2-1/2", time_control=None, result_comment="")]
    assert read_games("".join(write_game(g) for g in games)) == games


def test_game_from_a_set_up_position():
    start = "7/7/7/7/3p3/3PP2[PPPPPPPPPPPPPPPPPPPpppppppppppppppppppp] b - - 0 2"
    game = PgnGame("A", "B", "*", (PgnMove(4, "0.00/1 0.010s"), PgnMove(2, "0.00/1 0.010s")),
                   start_fen=start)
    text = write_game(game)
    assert '[SetUp "1"]' in text and f'[FEN "{start}"]' in text
    assert "2... P@e2 {0.00/1 0.010s} 3. P@c1" in text
    assert read_games(text) == [game]


def test_reads_cutechess_output():
    # As cutechess-cli 1.x writes a cfour game that started from an EPD position.
    text = """[Event "?"]
[Site "?"]
[Date "2024.01.01"]
[Round "1"]
[White "fsf"]
[Black "c4engine"]
[Result "0-1"]
[FEN "7/7/7/7/7/3P3[PPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] b - - 0 1"]
[GameDuration "00:00:01"]
[PlyCount "3"]
[SetUp "1"]
[Termination "time forfeit"]
[TimeControl "1+0.01"]
[Variant "cfour"]

1... P@d2 {-0.15/10 0.101s} 2. P@c1 {+0.20/11 0.098s} P@c2 {-0.10/10 0.100s}
{White loses on time} 0-1
"""
    [game] = read_games(text)
    assert [m.col for m in game.moves] == [3, 2, 2]
    assert game.termination == "time forfeit"
    assert game.result_comment == "White loses on time"
    assert game.final_position().stones == 4


def test_reader_refuses_an_illegal_move():
    text = '[White "A"]\n[Black "B"]\n[Result "*"]\n\n1. P@d1 {x} P@d3 {y} *\n'
    with pytest.raises(ValueError, match="move 2 'P@d3'"):
        read_games(text)


def test_move_annotations_are_written_and_read_back():
    """Issue 22: a review writes ``?!``, ``?`` and ``??`` after its moves; the reader
    takes them, and numeric NAGs ($2), from any PGN."""
    pos = parse_digits("4455")
    moves = (PgnMove(pos.history[0], "+M21"), PgnMove(pos.history[1], "-M20", "?!"),
             PgnMove(pos.history[2], "", "??"), PgnMove(pos.history[3], "0.00", "?"))
    game = sample_game(moves=moves, result="*", result_comment="")
    text = write_game(game)
    assert "P@d2?! {-M20}" in text and "P@e1??" in text
    assert read_games(text) == [game]
    numeric = read_games('[Variant "cfour"]\n\n1. P@d1 $1 {good} P@d2 $6 $14 *')[0]
    assert [(m.nag, m.comment) for m in numeric.moves] == [("!", "good"), ("?!", "")]


def test_move_numbers_and_nags_take_ascii_digits_only():
    """Issue 27: a move number or NAG written in another script's digits is no PGN
    number: ``١.`` is read as a move (and refused), not skipped as a move number."""
    with pytest.raises(ValueError):
        read_games('[Variant "cfour"]\n\n١. P@d1 *')


VARIANTS_FILE = Path(__file__).resolve().parent / "data" / "variants.ini"
FILE_VARIANT_GAME = """[White "a"]
[Black "b"]
[Result "*"]
[Variant "cfour8x7"]

1. P@h1 P@h2 2. P@a1 *
"""


def test_a_game_of_a_file_variant_reads_back_with_that_file():
    """The Variant tag names a variant of a variants file: read with the file's names
    the game is on that board; without them it is refused, naming the variant."""
    with pytest.raises(ValueError, match="no variant named 'cfour8x7'"):
        read_games(FILE_VARIANT_GAME)
    game, = read_games(FILE_VARIANT_GAME, VariantSet().with_file(str(VARIANTS_FILE)))
    assert game.variant.geometry.width == 8 and [m.col for m in game.moves] == [7, 7, 0]


@pytest.mark.parametrize("variant", ["cfour-٧x٦", "cfour-７x６"])
def test_a_variant_tag_with_digits_other_than_ascii_is_refused(variant: str):
    """``cfour-٧x٦`` is not 7x6: board names are written in ASCII digits."""
    with pytest.raises(ValueError, match="expected WxH or WxHkK"):
        read_games(f'[Variant "{variant}"]\n\n1. P@d1 *')
