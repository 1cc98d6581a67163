"""``c4engine strength``: judging moves, phases, the shipped position set against an
independent solver, and whole runs through the protocol."""

from __future__ import annotations

import os
import random
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from click.testing import CliRunner

from c4engine.geometry import STANDARD
from c4engine.referee.cli import strength_command
from c4engine.referee.strength import (
    PHASES,
    TestPosition,
    builtin_positions,
    judge,
    parse_position_line,
    phase_of,
    read_positions,
    report_lines,
    tally_by_phase,
)
from c4engine.rules.notation import parse_digits
from c4engine.training.network import canonical_keys

TESTS = Path(__file__).resolve().parent
PONS = TESTS.parents[1] / "shared" / "data" / "pons"
SIMPLE = f"{sys.executable} {TESTS / 'engines' / 'simple_engine.py'}"  # plays the first free column

START = TestPosition("", (-2, -1, 0, 1, 0, -1, -2))  # won: only the centre keeps the win
DRAWN = TestPosition("4", (-3, -2, 0, 0, 0, -2, -3))  # scores made up for the judging tests
LOST = TestPosition("44", (-5, -3, -3, -4, -5, -5, -5))
SLOW_WIN = TestPosition("444", (5, 3, 3, 3, -1, 0, 0))


@pytest.fixture(scope="module")
def bitbully() -> ModuleType:
    return pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")


# ---------------------------------------------------------------- judging

@pytest.mark.parametrize(("position", "move", "kept", "fastest"), [
    (START, "4", True, True),
    (START, "3", False, False),  # win to draw
    (START, "1", False, False),  # win to loss
    (DRAWN, "5", True, True),
    (DRAWN, "2", False, False),  # draw to loss
    (LOST, "2", True, True),  # the longest defence
    (LOST, "1", True, False),  # a loss stays a loss: no blunder possible
    (SLOW_WIN, "1", True, True),
    (SLOW_WIN, "2", True, False),  # still a win, only slower
    (SLOW_WIN, "6", False, False),
])
def test_kept_fastest_blunder(position: TestPosition, move: str, kept: bool, fastest: bool) -> None:
    verdict = judge(position, move, drops=False)
    assert (verdict.kept, verdict.fastest, verdict.blunder) == (kept, fastest, not kept)


def test_moves_are_read_in_the_engines_notation() -> None:
    assert judge(START, "P@d1", drops=True).played == 3
    assert judge(DRAWN, "P@d2", drops=True).fastest
    assert judge(START, "4", drops=True).blunder  # digits after UCI_Variant cfour: illegal
    assert judge(START, "P@d1", drops=False).blunder  # drops without it: illegal


@pytest.mark.parametrize("move", ["", "(none)", "8", "P@d1", "p@a1"])
def test_illegal_or_missing_move_is_a_blunder(move: str) -> None:
    verdict = judge(DRAWN, move, drops=True)  # P@d1: column d already holds a stone
    assert verdict.played is None and verdict.blunder and verdict.score is None


def test_full_column_is_illegal() -> None:
    position = TestPosition("444444", (1, 0, 0, None, 0, 0, -1))
    assert judge(position, "4", drops=False).blunder


def test_at_risk_only_when_some_move_worsens_the_result() -> None:
    assert START.at_risk and DRAWN.at_risk and SLOW_WIN.at_risk
    assert not LOST.at_risk


@pytest.mark.parametrize(("stones", "phase"), [
    (0, "0-8"), (8, "0-8"), (9, "9-16"), (16, "9-16"), (17, "17-24"), (24, "17-24"),
    (25, "25+"), (41, "25+"),
])
def test_phase_buckets(stones: int, phase: str) -> None:
    assert phase_of(stones).name == phase


def test_tally_and_report() -> None:
    late = TestPosition("1234567" * 3 + "2266", (2, 2, 2, 5, -3, -3, 5))
    verdicts = [judge(START, move, drops=False) for move in ("4", "3")]
    verdicts += [judge(LOST, "1", drops=False), judge(late, "7", drops=False)]
    tallies = tally_by_phase(verdicts)
    assert list(tallies) == ["0-8", "25+", "all"]
    first = tallies["0-8"]
    assert (first.positions, first.at_risk, first.kept, first.fastest, first.blunders) == (3, 2, 2, 1, 1)
    assert tallies["all"].fastest == 2
    lines = report_lines(verdicts)
    assert lines[1].split() == ["0-8", "3", "2", "2", "1", "1", "33.3"]
    assert lines[-1].strip() == "(start): played column 3 (score 0), best 1 (column 4), phase 0-8"


# ---------------------------------------------------------------- position files

def test_line_round_trip() -> None:
    for position in (START, TestPosition("444444", (1, 0, 0, None, 0, 0, -1))):
        assert parse_position_line(position.to_line()) == position


@pytest.mark.parametrize(("line", "error"), [
    ("44 1 2 3", "expected the moves and 7 scores"),
    ("48 0 0 0 0 0 0 0", "column out of range"),
    ("444444 0 0 0 0 0 0 0", "must mark exactly the full columns"),
    ("1212121 0 0 0 0 0 0 0", "already over"),
    ("44 0 0 0 y 0 0 0", "invalid literal"),
])
def test_bad_lines_are_refused(line: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        read_positions(("# a comment\n\n" + line).encode())


def test_position_files_name_every_bad_line() -> None:
    """Issue 10, item 13: a file that is not UTF-8 gave only a traceback."""
    data = b"\xef\xbb\xbf" + START.to_line().encode() + b"\n# \xff\n" + LOST.to_line().encode()
    with pytest.raises(ValueError) as failure:
        read_positions(data + b"\n44 1 2\n", "p.txt")
    assert str(failure.value).splitlines() == [
        "p.txt:2: not UTF-8 text (byte 0xff at column 3)",
        "p.txt:4: expected the moves and 7 scores, found 3 fields"]
    good = data.replace(b"\xff", b"ok")
    assert read_positions(good) == [START, LOST]


def test_builtin_set_covers_every_phase() -> None:
    positions = read_positions(builtin_positions())
    counts = {phase.name: 0 for phase in PHASES}
    for position in positions:
        counts[phase_of(position.stones).name] += 1
        assert len({s for s in position.scores if s is not None}) > 1, position.moves
    extra = 200  # 12-16 stones, appended after the main set (tools/make_strength_positions.py)
    assert counts == {phase.name: 100 + (extra if phase.name == "9-16" else 0) for phase in PHASES}
    assert all(12 <= p.stones <= 16 for p in positions[-extra:])
    first = [phase_of(p.stones).name for p in positions[:len(PHASES)]]
    assert first == [phase.name for phase in PHASES]  # phases take turns: --limit stays balanced


def test_the_tool_makes_an_independent_set_that_strength_reads(bitbully: ModuleType, tmp_path: Path) -> None:
    """``tools/make_strength_positions.py``, how a set apart from the package's is made
    (the one it ships is seed 1): every phase, phases taking turns, and no position
    twice, nor its mirror image."""
    out = tmp_path / "positions.txt"
    root = TESTS.parent
    done = subprocess.run([sys.executable, str(root / "tools" / "make_strength_positions.py"),
                           "--per-phase", "2", "--seed", "29", "--out", str(out)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)},
                          timeout=300)
    assert done.returncode == 0, done.stderr
    positions = read_positions(out.read_bytes())
    assert [phase_of(p.stones).name for p in positions] == [phase.name for phase in PHASES] * 2
    boards = [parse_digits(p.moves) for p in positions]
    keys = canonical_keys(np.array([b.current for b in boards]), np.array([b.mask for b in boards]), STANDARD)
    assert len(set(keys.tolist())) == len(positions)


def test_bitbully_follows_pons_convention(bitbully: ModuleType) -> None:
    """The best column's score is the position's score in Pons' own test set."""
    path = PONS / "Test_L3_R1"
    if not path.exists():
        pytest.skip(f"{path} not found")
    solver = bitbully.BitBully(opening_book=None)
    for line in path.read_text().splitlines()[:100]:
        moves, score = line.split()
        board = bitbully.Board([int(d) - 1 for d in moves])
        assert max(solver.score_all_moves(board).values()) == int(score), moves


def test_builtin_sample_agrees_with_bitbully(bitbully: ModuleType) -> None:
    """20 random lines of the shipped set, rescored (with the 12-stone book, exact)."""
    positions = read_positions(builtin_positions())
    solver = bitbully.BitBully("12-ply-dist")
    for position in random.Random(4).sample(positions, 20):
        scores = solver.score_all_moves(bitbully.Board([int(d) - 1 for d in position.moves]))
        assert tuple(scores.get(col) for col in range(7)) == position.scores, position.moves


# ---------------------------------------------------------------- whole runs

def table(output: str) -> dict[str, list[str]]:
    """The rows of the report's table by phase name, numbers as printed."""
    names = {phase.name for phase in PHASES} | {"all"}
    return {words[0]: words[1:] for words in map(str.split, output.splitlines())
            if words and words[0] in names}


def write_positions(tmp_path: Path, positions: list[TestPosition]) -> Path:
    path = tmp_path / "positions.txt"
    path.write_text("# hand-made\n" + "\n".join(p.to_line() for p in positions) + "\n")
    return path


def test_run_with_a_drop_engine_lists_its_blunder(tmp_path: Path) -> None:
    """The simple engine takes the cfour variant, answers in drops and plays column 1."""
    lost = TestPosition("4", (-3, -2, -1, -1, -1, -2, -3))  # made-up scores
    path = write_positions(tmp_path, [START, lost])
    result = CliRunner().invoke(strength_command, [
        "--positions", str(path), "--engine", SIMPLE, "--movetime", "10"])
    assert result.exit_code == 1, result.output
    assert table(result.output)["0-8"] == ["2", "1", "1", "0", "1", "50.0"]
    assert result.output.splitlines()[-1].strip() == "(start): played column 1 (score -2), best 1 (column 4), phase 0-8"


def test_each_position_is_sent_once_on_a_fresh_table(tmp_path: Path) -> None:
    """What the engine receives: per position ``ucinewgame``, one ``position`` with
    the game's moves (in drops, the variant it offered), one ``go`` at the movetime."""
    path = write_positions(tmp_path, [START, SLOW_WIN, LOST])
    received = tmp_path / "received.txt"
    engine = shlex.join([sys.executable, str(TESTS / "engines" / "recording_engine.py"), str(received)])
    result = CliRunner().invoke(strength_command, [
        "--positions", str(path), "--engine", engine, "--movetime", "10"])
    assert result.exit_code == 1, result.output  # column 1 in SLOW_WIN is fine, at the start not
    game = [line for line in received.read_text().splitlines()
            if line.split()[:1] in (["ucinewgame"], ["position"], ["go"])]
    assert game == ["ucinewgame", "position startpos", "go movetime 10",
                    "ucinewgame", "position startpos moves P@d1 P@d2 P@d3", "go movetime 10",
                    "ucinewgame", "position startpos moves P@d1 P@d2", "go movetime 10"]


def test_nodes_instead_of_movetime(tmp_path: Path) -> None:
    """``--nodes N`` sends ``go nodes N``; with ``--movetime`` too it is a usage error."""
    path = write_positions(tmp_path, [START])
    received = tmp_path / "received.txt"
    engine = shlex.join([sys.executable, str(TESTS / "engines" / "recording_engine.py"), str(received)])
    result = CliRunner().invoke(strength_command, [
        "--positions", str(path), "--engine", engine, "--nodes", "5000"])
    assert result.exit_code == 1, result.output  # the recording engine plays column 1
    assert [line for line in received.read_text().splitlines() if line.startswith("go")] == ["go nodes 5000"]
    result = CliRunner().invoke(strength_command, [
        "--positions", str(path), "--engine", engine, "--nodes", "5000", "--movetime", "10"])
    assert result.exit_code == 2 and "give --movetime or --nodes, not both" in result.output


def test_phase_and_limit_select(tmp_path: Path) -> None:
    path = write_positions(tmp_path, [START, DRAWN, TestPosition("1234567" * 3 + "2266", (2,) * 7)])
    result = CliRunner().invoke(strength_command, [
        "--positions", str(path), "--engine", SIMPLE, "--movetime", "10", "--phase", "25+"])
    assert result.exit_code == 0, result.output
    assert list(table(result.output)) == ["25+", "all"]
    result = CliRunner().invoke(strength_command, [
        "--positions", str(path), "--engine", SIMPLE, "--movetime", "10", "--limit", "1"])
    assert table(result.output)["all"][0] == "1"


def test_bad_option_and_bad_engine_are_reported(tmp_path: Path) -> None:
    path = write_positions(tmp_path, [START])
    result = CliRunner().invoke(strength_command, ["--positions", str(path), "--option", "Hash"])
    assert result.exit_code == 2 and "NAME=VALUE" in result.output
    result = CliRunner().invoke(strength_command, [
        "--positions", str(path), "--engine", str(tmp_path / "no-such-engine")])
    assert result.exit_code == 2 and "cannot start" in result.output


def test_real_engine_end_to_end() -> None:
    """Four shipped positions, one per phase, against ``python -m c4engine``."""
    result = CliRunner().invoke(strength_command, ["--limit", "4", "--movetime", "50"])
    rows = table(result.output)
    assert list(rows) == ["0-8", "9-16", "17-24", "25+", "all"], result.output
    assert rows["all"][0] == "4"
    # Whether c4engine finds the result in 50 ms on a busy machine may vary; what may
    # not is that the exit status, the table and the list of blunders agree.
    blunders = int(rows["all"][4])
    assert result.exit_code == (1 if blunders else 0), result.output
    listed = [line for line in result.output.splitlines() if line.startswith("  ")]
    assert len(listed) == blunders
    assert ("blunders (" in result.output) == bool(blunders)


@pytest.mark.parametrize(("board", "message"), [
    ("8x7", "board 8x7: strength positions are 7x6 four-in-a-row games"),
    ("7x6k5", "board 7x6k5: strength positions are 7x6"),
    ("12x10", "needs width x (height + 1) <= 128 bits (here 132)"),
])
def test_another_board_is_refused_naming_why(board: str, message: str, tmp_path: Path) -> None:
    path = write_positions(tmp_path, [START])
    result = CliRunner().invoke(strength_command, ["--positions", str(path), "--board", board])
    assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output


def test_the_standard_board_may_be_named(tmp_path: Path) -> None:
    path = write_positions(tmp_path, [START])
    result = CliRunner().invoke(strength_command, [
        "--positions", str(path), "--engine", SIMPLE, "--movetime", "10", "--board", "7x6"])
    assert result.exit_code in (0, 1) and "all" in table(result.output), result.output  # measured
