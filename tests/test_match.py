"""The referee: scheduling, judging misbehaving engines, statistics, PGN, command line.

Most matches here use two tiny engines written in plain Python (simple_engine.py,
misbehaving_engine.py) that start in milliseconds; a few are between real
c4engine processes (``python -m c4engine`` from this checkout)."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from c4engine.referee.cli import match_command
from c4engine.referee.config import EngineSpec, MatchConfig, TimeControl
from c4engine.referee.openings import builtin_openings, read_openings, schedule
from c4engine.referee.pgn import read_games
from c4engine.referee.stats import SprtParams
from c4engine.referee.workers import run_match

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SIMPLE = f"{sys.executable} {TESTS / 'engines' / 'simple_engine.py'}"
SIMPLE_LAST = f"{SIMPLE} last"
REAL = f"{sys.executable} -m c4engine"
# The last two moves of this game go into column 4, which alone has room left,
# and the board fills without a four: a draw whoever plays it.
DRAWN_OPENING = "5471256622612712662157437715763153533344"


def misbehaving(mode: str, arg: str = "") -> str:
    return f"{sys.executable} {TESTS / 'engines' / 'misbehaving_engine.py'} {mode} {arg}".rstrip()


def config(first: str, second: str, **changes) -> MatchConfig:
    fields = dict(engines=(EngineSpec(first), EngineSpec(second)),
                  openings=builtin_openings()[:2], games=4, depth=1, concurrency=2)
    fields.update(changes)
    return MatchConfig(**fields)


def play(cfg: MatchConfig):
    lines: list[str] = []
    report = run_match(cfg, lines.append)
    return report, lines


# -- openings and schedule ------------------------------------------------


def test_builtin_openings_are_the_2_ply_positions_up_to_mirroring():
    openings = builtin_openings()
    assert len(openings) == 25
    assert all(len(o) == 2 for o in openings)
    mirrored = {"".join(str(8 - int(c)) for c in o) for o in openings}
    assert len(set(openings) | mirrored) == 49


def test_schedule_plays_each_opening_with_both_colours():
    specs = schedule(["11", "44", "35"], 7, "sequential", None)
    assert [(s.round, s.opening, s.white) for s in specs] == [
        (1, "11", 0), (1, "11", 1), (2, "44", 0), (2, "44", 1),
        (3, "35", 0), (3, "35", 1), (4, "11", 0)]


def test_random_order_is_a_seeded_permutation_per_pass():
    openings = [str(d) * 2 for d in range(1, 8)]
    first = [s.opening for s in schedule(openings, 28, "random", 5)][::2]
    assert first == [s.opening for s in schedule(openings, 28, "random", 5)][::2]
    assert sorted(first[:7]) == sorted(openings) == sorted(first[7:])
    assert first[:7] != openings


def test_openings_files_name_every_bad_line(tmp_path):
    """Issue 10, item 13: a byte that is not UTF-8 gave a bare UnicodeDecodeError
    traceback, and a byte-order mark spoiled the first line."""
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbf44\n35\n")
    assert read_openings(bom) == ("44", "35")
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"44\n# caf\xe9\n4480\n35\n")
    with pytest.raises(click.UsageError) as failure:
        read_openings(latin)
    assert failure.value.message.splitlines() == [
        f"{latin}:2: not UTF-8 text (byte 0xe9 at column 6)",
        f"{latin}:3: opening '4480': move '8': column out of range (1-7)"]


def test_read_openings(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("# suite\n44\n\n4453  # comment\n-\n")
    assert read_openings(good) == ("44", "4453", "")
    bad = tmp_path / "bad.txt"
    bad.write_text("44\n4480\n")
    with pytest.raises(Exception, match=r"bad.txt:2: opening '4480'"):
        read_openings(bad)
    over = tmp_path / "over.txt"
    over.write_text("1212121\n")
    with pytest.raises(Exception, match="already over"):
        read_openings(over)


# -- games between well-behaved engines -----------------------------------


def test_games_are_refereed_by_the_rules(tmp_path):
    pgn = tmp_path / "games.pgn"
    report, lines = play(config(SIMPLE, SIMPLE_LAST, openings=("11", "12", "13"), games=6,
                                pgn_path=pgn))
    assert len(report.tally.outcomes) == 6 and len(lines) == 6
    games = read_games(pgn.read_text())
    assert sorted(int(g.round) for g in games) == [1, 1, 2, 2, 3, 3]
    for game in games:
        final = game.final_position()
        assert game.termination == "normal"
        assert final.last_mover_won()
        assert game.result == ("1-0" if final.side_to_move == 1 else "0-1")
        assert [m.comment for m in game.moves[:2]] == ["book", "book"]
        assert all(m.comment.startswith("0.00/1 ") for m in game.moves[2:])


def test_engine_without_variants_gets_digit_moves(tmp_path):
    pgn = tmp_path / "digits.pgn"
    report, _ = play(config(misbehaving("digits"), SIMPLE_LAST, pgn_path=pgn))
    assert not report.tally.forfeits(0) and not report.tally.forfeits(1)
    assert all(g.termination == "normal" for g in read_games(pgn.read_text()))


def test_full_board_is_a_draw():
    report, _ = play(config(SIMPLE, SIMPLE_LAST, openings=(DRAWN_OPENING,), games=2))
    for outcome in report.tally.outcomes:
        assert outcome.pgn.result == "1/2-1/2"
        assert outcome.pgn.result_comment == "Draw by full board"
        assert outcome.pgn.final_position().stones == 42
    assert report.tally.wdl() == (0, 2, 0)


# -- misbehaving engines lose, the match goes on --------------------------


MISBEHAVIOURS = [
    ("crash", dict(), "abandoned", "disconnects (simple-2 exited with code 3"),
    ("illegal", dict(), "illegal move", "makes an illegal move: P@"),
    ("stall", dict(stall_timeout=0.5), "stalled connection", "connection stalls"),
    ("late", dict(depth=None, movetime=100, timemargin=100), "time forfeit", "loses on time"),
    ("late", dict(depth=None, tc=TimeControl(300, 10)), "time forfeit", "loses on time"),
]


@pytest.mark.parametrize("mode, changes, termination, words", MISBEHAVIOURS)
def test_misbehaving_engine_loses_every_game(mode, changes, termination, words):
    report, lines = play(config(SIMPLE, misbehaving(mode), **changes))
    outcomes = report.tally.outcomes
    assert len(outcomes) == 4 and len(lines) == 4
    for outcome in outcomes:
        assert outcome.forfeit == 1
        assert outcome.points == 1.0
        assert outcome.pgn.termination == termination
        assert words in outcome.pgn.result_comment
    assert report.tally.forfeits(1) == {termination: 4}
    assert not report.tally.forfeits(0)


MEMORY_CAP = 256 << 20  # bytes of address space: the referee itself takes about 150 MB


def capped_match(*args: str) -> subprocess.CompletedProcess[str]:
    """``c4engine match`` run with ``args`` under :data:`MEMORY_CAP` (its engines too).
    One malloc arena: glibc reserves 64 MiB of address space per thread's arena,
    which under a cap counts like memory in use and would measure the threads, not
    the lines."""
    return subprocess.run(
        [sys.executable, "-m", "c4engine", "match", *args], capture_output=True, text=True,
        timeout=120, env={**os.environ, "MALLOC_ARENA_MAX": "1"},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP)))


def test_a_line_longer_than_the_memory_cap_is_dropped_and_costs_no_game(importable_repo):
    """Issue 19, item 1: a 384 MiB line killed the reader thread with a MemoryError."""
    referee = capped_match("--engine", SIMPLE_LAST, "--engine", misbehaving("longline", "384"),
                           "--depth", "1", "--games", "2", "--concurrency", "1")
    assert referee.returncode == 0, referee.stderr
    assert "Traceback" not in referee.stderr and "Error" not in referee.stderr
    assert "2 of 2 games finished" in referee.stdout and "Forfeits" not in referee.stdout
    assert "Dropped from simple-2: 1 line(s) over 65536 bytes" in referee.stdout


def test_a_line_that_never_ends_loses_the_game_on_time_and_says_why(importable_repo):
    referee = capped_match("--engine", SIMPLE, "--engine", misbehaving("endless"),
                           "--movetime", "200", "--games", "1")
    assert referee.returncode == 0, referee.stderr
    assert "Black loses on time (no move in 200 ms; it wrote 1 line(s) over 65536 bytes)" \
        in referee.stderr
    assert "Forfeits by simple-2: 1 (time forfeit 1)" in referee.stdout
    assert "Traceback" not in referee.stderr


def assert_pgn_reads_back_as_played(pgn, outcomes):
    """The file holds exactly the games played: same moves, results and endings."""
    games = read_games(pgn.read_text(encoding="utf-8"))
    played = sorted((o.pgn for o in outcomes), key=lambda g: (g.round, g.white))
    games.sort(key=lambda g: (g.round, g.white))
    assert [(g.white, g.black, g.result, g.termination, [m.col for m in g.moves])
            for g in games] == \
        [(g.white, g.black, g.result, g.termination, [m.col for m in g.moves]) for g in played]


def move_times(outcome) -> list[float]:
    return [float(m.comment.rsplit(" ", 1)[-1].rstrip("s")) for m in outcome.pgn.moves
            if m.comment != "book"]


# Engines that misbehave without breaking a rule that costs the game.
HARMLESS = [
    ("double", 0),  # every bestmove twice: the extra one is discarded, never played
    ("early", 0),  # a bestmove before every readyok: discarded
    ("huge", 0),  # a score of 400 nines: that info line is ignored
    ("garbage", 0),  # malformed info lines around a good one
    ("slowready 0.05", 0),  # every readyok late (the one before each go included)
]


@pytest.mark.parametrize("mode, _", HARMLESS)
def test_harmless_misbehaviour_costs_nothing(tmp_path, mode, _):
    pgn = tmp_path / "games.pgn"
    report, _lines = play(config(SIMPLE_LAST, misbehaving(mode), pgn_path=pgn))
    outcomes = report.tally.outcomes
    assert len(outcomes) == 4
    assert not report.tally.forfeits(0) and not report.tally.forfeits(1)
    for outcome in outcomes:
        final = outcome.pgn.final_position()
        assert outcome.pgn.termination == "normal" and final.last_mover_won()
        assert all(t >= 0 for t in move_times(outcome))
    assert_pgn_reads_back_as_played(pgn, outcomes)
    if mode in ("double", "early"):
        # every engine move has an extra bestmove, seen (and dropped) at the next go
        assert report.tally.stale_bestmoves(1) >= min(len(o.pgn.moves) for o in outcomes) // 2 - 2
        summary = "\n".join(report.tally.summary_lines(report.scheduled))
        assert "bestmove(s) that answered no go" in summary
    if mode == "huge":
        engine_moves = [m for o in outcomes for m in o.pgn.moves[2:]
                        if not m.comment.startswith("0.00/1")]
        assert engine_moves and all(m.comment.startswith("+0.25/3 ") for m in engine_moves)
    if mode == "garbage":
        assert any(m.comment.startswith(">=+M2/4 ") for o in outcomes for m in o.pgn.moves)


def test_pgn_comments_take_the_best_lines_score_under_multipv():
    """Issue 9: with MultiPV 3 the comment showed the last line's score and depth."""
    multi = EngineSpec(misbehaving("multipv"), options=(("MultiPV", "3"),))
    report, _ = play(config(SIMPLE, SIMPLE, engines=(EngineSpec(SIMPLE), multi), games=2))
    comments = [m.comment for o in report.tally.outcomes for m in o.pgn.moves
                if m.comment != "book" and not m.comment.startswith("0.00/1 ")]
    assert comments and all(c.startswith("-0.10/2 ") for c in comments)


def test_hostile_engine_text_cannot_break_the_pgn(tmp_path):
    """Issue 10, item 3: ``bestmove }1-0{`` and braces in the engine's name, its info
    strings and its stderr; the 4-game PGN used to read back as 6 games."""
    pgn = tmp_path / "braces.pgn"
    report, _ = play(config(SIMPLE, misbehaving("braces"), pgn_path=pgn))
    outcomes = report.tally.outcomes
    assert report.tally.forfeits(1) == {"illegal move": 4}
    assert "}1-0{" in outcomes[0].pgn.result_comment
    assert_pgn_reads_back_as_played(pgn, outcomes)
    assert {g.black for g in read_games(pgn.read_text())} >= {'brace}{ "1-0" \\ {'}


def test_an_engine_that_leaves_a_child_on_its_output_disconnects(tmp_path):
    """Issue 10, item 5: scored as stalled before, and the child outlived the match."""
    pid_file = tmp_path / "child.pid"
    report, _ = play(config(SIMPLE, misbehaving("orphan", str(pid_file)), games=2,
                            concurrency=1, stall_timeout=30))
    assert report.tally.forfeits(1) == {"abandoned": 2}
    assert all("exited with code 3" in o.pgn.result_comment for o in report.tally.outcomes)
    child = int(pid_file.read_text())
    assert not Path(f"/proc/{child}").exists() or \
        Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_a_move_in_the_wrong_notation_is_illegal():
    """Issue 10, item 15: digits after UCI_Variant cfour are refused, as cutechess does."""
    report, _ = play(config(SIMPLE, misbehaving("wrongnotation")))
    assert report.tally.forfeits(1) == {"illegal move": 4}
    assert all("a move is a drop like P@d1" in o.pgn.result_comment
               for o in report.tally.outcomes)


def test_ctrl_c_ends_the_engines_and_records_no_game_cut_short(tmp_path, importable_repo):
    """Engines run in their own process groups, so Ctrl-C reaches only the referee:
    it must end them itself, and the game it cut short is not a forfeit."""
    pgn = tmp_path / "aborted.pgn"
    referee = subprocess.Popen(
        [sys.executable, "-m", "c4engine", "match", "--engine", SIMPLE,
         "--engine", misbehaving("stall"), "--depth", "1", "--games", "2", "--pgn", str(pgn),
         "--debug"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert referee.stderr is not None
    for line in referee.stderr:  # wait until the staller has been asked for a move
        if line.startswith(">simple-2: go"):
            break
    engines = [int(pid) for pid in Path(f"/proc/{referee.pid}/task/{referee.pid}/children")
               .read_text().split()]
    referee.send_signal(signal.SIGINT)
    _, rest = referee.communicate(timeout=20)
    assert referee.returncode == 1 and "Aborted!" in rest
    assert "Finished game" not in rest and not pgn.exists()
    assert len(engines) == 2
    for pid in engines:
        for _ in range(100):
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.05)
        assert not Path(f"/proc/{pid}").exists()


def test_crash_message_carries_the_engines_last_words():
    report, _ = play(config(misbehaving("crash"), SIMPLE, games=1, concurrency=1))
    assert "crashing on purpose" in report.tally.outcomes[0].pgn.result_comment


def test_sprt_stops_the_match_when_it_decides():
    sprt = SprtParams(0, 200, model="logistic")  # 8 won pairs take the LLR past 2.94
    report, _ = play(config(SIMPLE, misbehaving("illegal"), openings=builtin_openings(),
                            games=40, concurrency=1, sprt=sprt))
    assert report.tally.decision() == "H1"
    assert len(report.tally.outcomes) == 16
    summary = "\n".join(report.tally.summary_lines(report.scheduled))
    assert "H1 was accepted" in summary and "16 of 40 games finished." in summary


# -- the command line -----------------------------------------------------


def run_cli(*args: str):
    return CliRunner().invoke(match_command, list(args))


def test_cli_match_with_names_options_and_pgn(tmp_path):
    pgn = tmp_path / "m.pgn"
    result = run_cli("--engine", SIMPLE, "--name", "First", "--option", "Hash=16",
                     f"--engine={misbehaving('illegal')}", "--name=Cheat",
                     "--rounds", "2", "--tc", "5+0.05", "--pgn", str(pgn),
                     "--sprt", "elo0=0 elo1=10 alpha=0.05 beta=0.05")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Score of First vs Cheat: 4 - 0 - 0  [1.000] 4" in out
    assert "Elo difference: inf +/- inf" in out
    assert "Ptnml(0-2): [0, 0, 0, 0, 2]" in out
    assert "SPRT (normalized, pentanomial)" in out and "lbound -2.94, ubound 2.94" in out
    assert "Forfeits by Cheat: 4 (illegal move 4)" in out
    assert "4 of 4 games finished." in out
    assert "warning: First does not list an option 'Hash'" in result.stderr
    assert result.stderr.count("Finished game") == 4
    games = read_games(pgn.read_text())
    assert {g.time_control for g in games} == {"5+0.05"}
    assert {(g.white, g.black) for g in games} == {("First", "Cheat"), ("Cheat", "First")}


@pytest.mark.parametrize("args, message", [
    (["--engine", SIMPLE, "--depth", "1"], "exactly two --engine"),
    (["--name", "X", "--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1"], "after its --engine"),
    (["--engine", SIMPLE, "--option", "Hash", "--engine", SIMPLE, "--depth", "1"], "NAME=VALUE"),
    (["--engine", SIMPLE, "--engine", SIMPLE], "give a limit"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1", "--games", "2", "--rounds", "1"],
     "not both"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--tc", "fast"], "SECONDS[+INCREMENT]"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1", "--sprt", "elo0=5 elo1=1"],
     "elo0 must be less"),
    # Issue 10, item 4: each of these passed and crashed the run after the first game.
    (["--engine", SIMPLE, "--engine", SIMPLE, "--tc", "inf"], "at most 1e+06 s"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--tc", "nan"], "at most 1e+06 s"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--tc", "1e308"], "at most 1e+06 s"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--tc", "10+inf"], "at most 1e+06 s"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1", "--sprt", "elo0=0 elo1=300"],
     "cannot be computed for elo0 0 and elo1 300"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1", "--sprt", "elo0=-inf elo1=5"],
     "must be finite"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1", "--sprt", "elo0=0 elo1=nan"],
     "must be finite"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1", "--stall-timeout", "nan"],
     "not a finite number"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1", "--stall-timeout", "inf"],
     "0<x<=1000000"),
    (["--engine", SIMPLE, "--engine", SIMPLE, "--movetime", "9" * 30], "1<=x<=1000000000"),
])
def test_cli_usage_errors(args, message):
    result = run_cli(*args)
    assert result.exit_code == 2
    assert message in result.output


@pytest.mark.parametrize("command, message", [
    ("/nonexistent/engine", "cannot start '/nonexistent/engine'"),
    (misbehaving("silent"), "misbehaving_engine.py silent: no uciok within 3 s"),
    (misbehaving("slowready", "30"), "misbehaving_engine.py slowready 30: no readyok within 3 s"),
    (f"{sys.executable} -c pass", "exited with code 0"),
    (misbehaving("chess"), "its UCI_Variant option offers no cfour"),
])
def test_cli_engine_that_does_not_start_is_an_error_before_any_game(tmp_path, command, message):
    """The handshake limit leaves the well-behaved engine time to start on a busy machine."""
    pgn = tmp_path / "none.pgn"
    result = run_cli("--engine", SIMPLE, "--engine", command, "--depth", "1",
                     "--handshake-timeout", "3", "--concurrency", "2", "--pgn", str(pgn))
    assert result.exit_code == 1
    assert message in result.output
    assert "Finished game" not in result.output
    assert not pgn.exists()


# -- real engines -----------------------------------------------------------


@pytest.fixture
def importable_repo(monkeypatch):
    """Let ``python -m c4engine`` find this checkout whatever the working directory."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)


def test_real_engines_play_clean_games(tmp_path, importable_repo):
    pgn = tmp_path / "real.pgn"
    report, _ = play(config(REAL, REAL, openings=("44", "35"), depth=2, pgn_path=pgn))
    assert len(report.tally.outcomes) == 4
    assert not report.tally.forfeits(0) and not report.tally.forfeits(1)
    for game in read_games(pgn.read_text()):
        final = game.final_position()
        assert final.is_over()
        assert game.result == ("1/2-1/2" if not final.last_mover_won()
                               else "1-0" if final.side_to_move == 1 else "0-1")


def test_real_engine_beats_the_first_column_player(importable_repo):
    report, _ = play(config(REAL, SIMPLE, openings=("44", "35"), depth=4))
    assert not report.tally.forfeits(0)
    wins, draws, losses = report.tally.wdl()
    assert wins >= 3 and losses == 0


def test_real_engines_keep_to_a_clock(importable_repo):
    report, _ = play(config(REAL, REAL, openings=("44",), games=2, depth=None,
                            tc=TimeControl(2000, 50)))
    assert len(report.tally.outcomes) == 2
    assert not report.tally.forfeits(0) and not report.tally.forfeits(1)
