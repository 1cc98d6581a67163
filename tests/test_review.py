"""``c4engine review`` and ``c4engine.review()`` (issue 22) against a real engine process,
with bitbully's per-column scores as the oracle.

The games are real: ``c4engine match`` games between difficulty levels
(tests/data/review_games.pgn, made by tools/make_review_games.py), and c4engine
against Fairy-Stockfish under cutechess-cli, the PGN as cutechess wrote it, some
games from EPD positions (tests/data/cutechess_fsf_games.pgn, made by
tools/make_cutechess_games.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import c4engine
from c4engine import IllegalMoveError, Position
from c4engine.cli import cli
from c4engine.geometry import STANDARD
from c4engine.referee.pgn import read_games
from c4engine.reviewer import games as review_games
from c4engine.rules.board import Board
from c4engine.rules.notation import parse_digits
from c4engine.reviewer.verdicts import mark, move_range, pons_of_mate

bitbully = pytest.importorskip("bitbully", reason="the oracle: pip install bitbully")

GAMES = Path(__file__).parent / "data" / "review_games.pgn"
CUTECHESS_GAMES = Path(__file__).parent / "data" / "cutechess_fsf_games.pgn"
HARD = "44444732222456"  # 14 stones: beyond the book, not solved in a millisecond


ORACLE = bitbully.BitBully("12-ply-dist")


def exact_scores(moves: list[int], start: Board | None = None) -> dict[int, int]:
    """bitbully's exact score of every legal column (1-based) after ``moves`` (0-based)
    from ``start`` (default: the empty board)."""
    board = bitbully.Board(None if start is None else columns(start))
    for col in moves:
        board.play(col)
    return {col + 1: score for col, score in ORACLE.score_all_moves(board).items()}


def columns(pos: Board) -> list[list[int]]:
    """``pos`` as bitbully takes a grid: a list per column, bottom row first, 1 and 2 the players."""
    return [[pos.cell(col, row) for row in range(pos.geometry.height)] for col in range(pos.geometry.width)]


VARIANTS_FILE = Path(__file__).resolve().parent / "data" / "variants.ini"


def run(*args: str, text: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, ["review", *args], input=text)


@pytest.fixture(scope="module", params=[pytest.param(GAMES, id="match"),
                                        pytest.param(CUTECHESS_GAMES, id="cutechess", marks=pytest.mark.slow)])
def review_of(request: pytest.FixtureRequest) -> tuple[Path, dict]:
    """A file of real games and its ``review --json``."""
    result = run("--json", str(request.param))
    assert result.exit_code == 0, result.output
    return request.param, json.loads(result.stdout)


def test_every_verdict_agrees_with_bitbully(review_of: tuple[Path, dict]) -> None:
    path, document = review_of
    games = read_games(path.read_text())
    assert len(document["games"]) == len(games) >= 10
    marks = set()
    for game, reviewed in zip(games, document["games"]):
        assert [m["column"] - 1 for m in reviewed["moves"]] == [m.col for m in game.moves]
        start = game.start_position()
        for ply, move in enumerate(reviewed["moves"]):
            oracle = exact_scores([m.col for m in game.moves[:ply]], start)
            shown = {int(col): (v["low"], v["high"]) for col, v in move["columns"].items()}
            best, played = max(oracle.values()), oracle[move["column"]]
            assert (move["before"]["low"], move["before"]["high"]) == (best, best), (reviewed["number"], ply)
            assert (move["after"]["low"], move["after"]["high"]) == (played, played), (reviewed["number"], ply)
            assert move["mark"] == mark(best, played)
            if move["mark"] == "kept":  # proven from two values: every column was not searched
                assert shown == {move["column"]: (best, best)} and move["best"] == [move["column"]]
            else:
                assert shown == {col: (score, score) for col, score in oracle.items()}, (reviewed["number"], ply)
                assert move["best"] == sorted(col for col, score in oracle.items() if score == best)
            marks.add(move["mark"])
    assert {"kept", "slower", "blunder"} <= marks


def test_the_annotated_pgn_reads_back(review_of: tuple[Path, dict]) -> None:
    path, document = review_of
    result = run(str(path))
    assert result.exit_code == 0
    annotated = read_games(result.stdout)
    originals = read_games(path.read_text())
    assert [[m.col for m in g.moves] for g in annotated] == [[m.col for m in g.moves] for g in originals]
    assert [g.start_position() for g in annotated] == [g.start_position() for g in originals]
    for game, reviewed in zip(annotated, document["games"]):
        for move, verdict in zip(game.moves, reviewed["moves"]):
            assert move.nag == verdict["nag"]
            assert {"kept": "", "slower": "?!", "mistake": "?", "blunder": "??"}[verdict["mark"]] == move.nag
            assert move.comment.removeprefix("book, ").split(", ")[0] == verdict["after"]["text"]
            if verdict["mark"] != "kept":
                assert ", best P@" in move.comment


def test_the_cutechess_games_are_as_cutechess_wrote_them() -> None:
    """Both colours, games from the empty board (a PGN book) and from positions (an EPD
    book), with cutechess' own tags and comments."""
    text = CUTECHESS_GAMES.read_text()
    games = read_games(text)
    assert all(g.event.startswith("cutechess-cli") and g.variant.name == "cfour" for g in games)
    assert {(g.white, g.black) for g in games} == {("c4engine", "Fairy-Stockfish"), ("Fairy-Stockfish", "c4engine")}
    assert 0 < sum(g.start_fen is not None for g in games) < len(games)
    assert "[GameDuration " in text and "[SetUp \"1\"]" in text and "{book}" in text and "1... P@" in text


def test_summary_and_progress_on_stderr() -> None:
    result = run(text="4453\n4444443\n")
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith("game 1/2: 4 moves reviewed") and lines[1].startswith("game 2/2: 7 moves")
    assert lines[2].split()[:3] == ["player", "moves", "kept"]
    first = next(line for line in lines if line.startswith("first player")).split()
    assert first[2:8] == ["6", "5", "0", "0", "1", "0"]  # 4, 5, 4, 4, 4, 3: the last 4 of game 2 throws the win
    assert "1. 4" not in result.stdout and "P@d1" in result.stdout


def test_bad_games_are_named_and_the_others_reviewed() -> None:
    good = '[White "good"]\n[Variant "cfour"]\n\n1. P@d1 P@d2 *\n\n'
    illegal = '[White "illegal"]\n\n1. P@d1 P@d3 *\n\n'
    wrong_result = '[White "liar"]\n\n1. P@a1 P@b1 2. P@a2 P@b2 3. P@a3 P@b3 4. P@a4 0-1\n\n'
    chess = '[White "chess"]\n[Variant "Standard"]\n\n1. e4 e5 *\n\n'
    truncated = '[White "cut"]\n\n1. P@d1 P@d2 2. P@d3'
    text = (good + illegal + wrong_result + chess).encode() + b'[White "bytes \xff"]\n\n1. P@d1 *\n\n' + \
        (good + truncated).encode()
    result = run("--json", "--movetime", "200", text=text)
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: game 2 (line 6): game 'illegal' vs '?': move 2 'P@d3': move 'P@d3': a stone dropped in file d lands on rank 2",
        "error: game 3 (line 10): result 0-1, but the board after move 7 says 1-0",
        "error: game 4 (line 14): variant 'Standard' is not Connect Four (known: cfour, cfour-WxH, "
        "cfour-WxHkK and the --variants file's names)",
        "error: game 5 (line 19): line 19: not UTF-8 text (byte 0xff at column 15)",
        "error: game 7 (line 28): no result (1-0, 0-1, 1/2-1/2 or *) at its end: the game is cut off",
    ]
    document = json.loads(result.stdout)
    assert [g["number"] for g in document["games"]] == [1, 6]
    assert [len(g["moves"]) for g in document["games"]] == [2, 2]


def test_a_game_whose_fen_has_the_wrong_shape_is_named_and_the_others_reviewed() -> None:
    """A FEN of three rows and no moves: nothing replays it, so the reader must check it
    as it reads the game, not when the review sets it up."""
    good = '[White "good"]\n\n1. P@d1 P@d2 *\n\n'
    short_fen = ('[White "short"]\n[FEN "7/7/7[' + "P" * 21 + "p" * 21 + '] w - - 0 1"]\n'
                 '[SetUp "1"]\n[Result "*"]\n\n*\n\n')
    result = run("--json", "--movetime", "200", text=good + short_fen + good)
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: game 2 (line 5): game 'short' vs '?': FEN board '7/7/7': expected 6 rows, found 3"]
    assert [g["number"] for g in json.loads(result.stdout)["games"]] == [1, 3]


def test_a_game_on_a_board_too_large_says_so_not_that_it_is_no_connect_four() -> None:
    """``cfour-12x10`` is Connect Four on a board past the bitboard's 128 bits: the
    error gives the board's reason, and the game after it is still reviewed."""
    large = '[White "large"]\n[Variant "cfour-12x10"]\n\n1. P@a1 *\n\n'
    good = '[White "good"]\n\n1. P@d1 P@d2 *\n\n'
    result = run("--json", "--movetime", "200", text=large + good)
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: game 1 (line 1): variant 'cfour-12x10': board 12x10: needs width x "
                      "(height + 1) <= 128 bits (here 132); the bitboard is at most 2 64-bit words"]
    assert [g["number"] for g in json.loads(result.stdout)["games"]] == [2]


def test_a_game_of_a_variants_file_is_reviewed_with_that_file() -> None:
    """``match --variants`` writes the file's name in the Variant tag (cfour8x7 here):
    ``review`` reads it with the same file, and without it names what it lacks."""
    start = "8/8/8/8/8/8/8[" + "P" * 28 + "p" * 28 + "] w - - 0 1"
    game = (f'[White "a"]\n[Black "b"]\n[Result "1-0"]\n[FEN "{start}"]\n[SetUp "1"]\n'
            '[Variant "cfour8x7"]\n\n1. P@a1 P@b1 2. P@a2 P@b2 3. P@a3 P@b3 4. P@a4 1-0\n\n')
    without = run("--json", "--movetime", "200", text=game)
    assert without.exit_code == 1
    assert "error: game 1 (line 1): variant 'cfour8x7' is not Connect Four" in without.stderr
    result = run("--json", "--movetime", "200", "--variants", str(VARIANTS_FILE), text=game)
    assert result.exit_code == 0, result.output
    (reviewed,) = json.loads(result.stdout)["games"]
    assert reviewed["board"] == "8x7" and len(reviewed["moves"]) == 7
    winning_drop = reviewed["moves"][-1]
    assert (winning_drop["column"], winning_drop["mark"], winning_drop["before"]["text"]) == (1, "kept", "+M1")


def test_a_bad_variants_file_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ini"
    bad.write_text("[chess8x8]\nmaxFile = h\nmaxRank = 8\npieceDrops = false\n")
    result = run("--variants", str(bad), text="4453\n")
    assert result.exit_code == 2 and "--variants" in result.output


def test_input_too_large_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(review_games, "MAX_INPUT_BYTES", 100)
    result = run(text="4453\n" * 30)
    assert result.exit_code == 1 and "a review reads at most" in result.stderr


def test_an_endless_input_is_read_to_the_limit_and_refused() -> None:
    """``review /dev/zero`` reads one byte past the 64 MiB limit and refuses, under an
    address-space cap of 1 GiB that reading all there is would break."""
    import resource
    import subprocess
    import sys

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    done = subprocess.run([sys.executable, "-m", "c4engine", "review", "/dev/zero"], capture_output=True,
                          text=True, timeout=120, preexec_fn=cap)
    assert done.returncode == 1
    assert done.stderr == "Error: the input has more than 64 MiB; a review reads at most 64 MiB (split it)\n"


@pytest.mark.parametrize("mate", ["99999", "0", "-22"])
def test_a_mate_no_game_can_have_is_unknown_not_exact(mate: str) -> None:
    """An engine that answers ``score mate 99999`` (or ``mate 0``, or a loss after more
    stones than the board holds) for every column: those lines are not taken, so
    the review proves nothing rather than writing "+M99955" as exact."""
    import sys
    fake = f"{sys.executable} {Path(__file__).parent / 'engines' / 'misbehaving_engine.py'} mate {mate}"
    result = run("--json", "--movetime", "200", "--engine", fake, text="44\n")
    assert result.exit_code == 0, result.output
    (game,) = json.loads(result.stdout)["games"]
    for move in game["moves"]:
        assert move["mark"] is None and not move["before"]["exact"] and not move["after"]["exact"]
        assert move["before"]["text"] == "?"
    assert "M99955" not in result.stdout and "-M0" not in result.stdout


def test_a_capped_review_gives_bounds_never_a_guess() -> None:
    """At 2 ms a position, the 13th and 14th positions are not solved: their values
    are ranges that hold bitbully's exact scores, and their marks stay open."""
    review = c4engine.review(HARD, movetime=0.002)
    open_values = 0
    for ply, verdict in enumerate(review.moves):
        oracle = exact_scores([int(ch) - 1 for ch in HARD[:ply]])
        for col, value in verdict.columns.items():
            assert value.low <= oracle[col] <= value.high
            open_values += not value.exact
        best = max(oracle.values())
        assert verdict.mark in (None, mark(best, oracle[verdict.column]))
    assert open_values > 0 and any(v.mark is None for v in review.moves)


def test_the_python_api() -> None:
    review = c4engine.review("4453")
    assert isinstance(review, c4engine.GameReview)
    assert [v.column for v in review.moves] == [4, 4, 5, 3]
    assert review.moves[0].before == review.moves[0].after == c4engine.Value(1, 1)
    assert review.moves[2].mark == "blunder" and review.first.accuracy == 0.5  # 5 throws the win away
    from_position = c4engine.review(Position.from_moves([4, 4, 5, 3]))
    assert from_position.moves == review.moves
    pgn = c4engine.review('[White "a"]\n[Black "b"]\n\n1. P@a1 P@d1 *')
    assert (pgn.white, pgn.moves[0].mark, pgn.moves[0].best) == ("a", "blunder", (4,))
    assert pgn.moves[0].after == c4engine.Value(-2, -2) == c4engine.Value(pons_of_mate(-20, 0), pons_of_mate(-20, 0))


@pytest.mark.parametrize("bad, error", [
    ("4444444", IllegalMoveError), ([4, 9], IllegalMoveError),
    ("1. P@d1 P@d3 *", ValueError), ("1. P@d1 * 1. P@d1 *", ValueError),
])
def test_the_python_api_refuses_bad_games(bad: object, error: type) -> None:
    with pytest.raises(error):
        c4engine.review(bad)


def test_the_python_api_refuses_bad_arguments() -> None:
    with pytest.raises(IllegalMoveError):
        c4engine.review(3.5)
    with pytest.raises(ValueError):
        c4engine.review("44", movetime=0)


def test_an_empty_move_list_has_no_verdicts() -> None:
    assert c4engine.review("").moves == ()
    assert move_range(0, STANDARD).high == 21 and parse_digits("").stones == 0


def test_a_7x6_review_after_one_on_another_board() -> None:
    """The shared engine restarted for 7x6 after a 5x4 review must play 7x6 again:
    its client kept the 5x4 board and refused the 7x6 moves ('column 4 is full')."""
    c4engine.review(Position.from_moves("4423353121521", width=5, height=4), movetime=200)
    review = c4engine.review(Position.from_moves("44444"), movetime=200)
    assert review.geometry.name == "7x6" and len(review.moves) == 5


def test_a_review_past_64_bits() -> None:
    review = c4engine.review(Position.from_moves([4, 5, 4, 5, 4, 5], width=8, height=8), movetime=0.2)
    assert review.geometry.name == "8x8" and len(review.moves) == 6
    assert all(verdict.after is not None for verdict in review.moves)


def test_c4engine_gets_time_to_compile_a_new_board_before_its_first_readyok(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``c4engine.review`` on a board the installation has not used yet waited the
    35 s handshake for c4engine's first ``readyok``, which its kernel compile
    outlasts on a busy machine.  c4engine now gets the match's allowance; another
    engine still gets the handshake (here cut to 1 s against a 3 s answer)."""
    import sys
    from c4engine.engine.process import EngineTimeout
    from c4engine.reviewer import driver
    monkeypatch.setattr(driver, "HANDSHAKE_TIMEOUT", 1.0)
    engine = f"{sys.executable} {Path(__file__).parent / 'engines' / 'misbehaving_engine.py'}"
    review = c4engine.review("4453", movetime=0.05, engine=f"{engine} compiling 3")
    assert len(review.moves) == 4
    with pytest.raises(EngineTimeout, match="no readyok within 1 s"):
        c4engine.review("4453", movetime=0.05, engine=f"{engine} slowready 3")
