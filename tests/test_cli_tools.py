"""The ``c4engine solve`` and ``c4engine bench`` tools, run through click's CliRunner.

``solve`` is how the solver is measured against Pons' sets, so a mismatch must
fail the run and a bad line must be reported by number without ending it.
``bench`` prints a node count that is the signature of the search: it is only
useful if two runs of the same code print the same number.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from positions import late_positions

from c4engine import cli as cli_module
from c4engine.cli import cli
from c4engine.geometry import STANDARD, Geometry
from c4engine.rules.scores import to_pons
from c4engine.rules.board import Board
from c4engine.search import bench
from c4engine.search.limits import Limits
from c4engine.search.progress import SolveProgress
from c4engine.search.searcher import Searcher

SEED = 20261122

# Positions from Pons' test sets with their exact scores.
LATE_DRAW = "23163416124767223154467471272416755633"    # 0
LATE_WIN = "7422341735647741166133573473242566"         # 1
LATE_LOSS = "2252576253462244111563365343671351441"     # -1
WIN_BY_3 = "715371563635542612576371"                   # 3
LOSS_BY_9 = "35531254275547623"                         # -9
# The first player to move can win at once (score 5).
WIN_AT_ONCE = "15462333372762277773655252141365"


def run(args: list[str], text: str = "") -> Result:
    return CliRunner().invoke(cli, args, input=text)


def scores_printed(stdout: str) -> dict[str, int]:
    """``moves -> score`` from solve's ``<moves> <score> <nodes> <microseconds>`` lines."""
    out = {}
    for line in stdout.splitlines():
        moves, score, nodes, micros = line.split()
        assert int(nodes) >= 0 and int(micros) >= 0
        out[moves] = int(score)
    return out


def test_solve_reports_mismatches_and_bad_lines_and_goes_on() -> None:
    text = "\n".join([
        f"{LATE_LOSS} -1",
        f"{LATE_WIN} 2",          # wrong expected score: the true one is 1
        "12x4 3",                 # not digits
        "1212121",                # the game is already over
        "4 5 6",                  # too many fields
        f"{LATE_DRAW} 0",
        WIN_BY_3,                 # no expected score: solved, not checked
    ]) + "\n"
    result = run(["solve"], text)
    assert result.exit_code == 1
    assert scores_printed(result.stdout) == {LATE_LOSS: -1, LATE_WIN: 1, LATE_DRAW: 0, WIN_BY_3: 3}
    assert f"line 2: {LATE_WIN} expected 2, got 1" in result.stderr
    assert "line 3: '12x4' is not a string of column digits" in result.stderr
    assert "line 4: '1212121': the game is already over" in result.stderr
    assert "line 5: expected '<moves> [<expected score>]'" in result.stderr
    assert "line 6" not in result.stderr and "line 1:" not in result.stderr
    assert "4 positions, 2/3 correct, 3 bad lines" in result.stderr


def test_solve_weak_prints_signs_and_passes() -> None:
    """``--weak`` compares with the sign of the expected score; all correct: exit 0."""
    text = "\n".join(f"{moves} {score}" for moves, score in [
        (WIN_BY_3, 3), (LOSS_BY_9, -9), (LATE_DRAW, 0), (LATE_WIN, 1)]) + "\n"
    result = run(["solve", "--weak"], text)
    assert result.exit_code == 0, result.stderr
    assert scores_printed(result.stdout) == {WIN_BY_3: 1, LOSS_BY_9: -1, LATE_DRAW: 0, LATE_WIN: 1}
    assert "4 positions, 4/4 correct, 0 bad lines" in result.stderr


def test_solve_weak_on_an_immediate_win() -> None:
    result = run(["solve", "--weak"], f"{WIN_AT_ONCE} 5\n")
    assert result.exit_code == 0, result.stderr
    assert scores_printed(result.stdout) == {WIN_AT_ONCE: 1}


def test_a_position_won_at_once_is_answered_without_the_kernel() -> None:
    """The rules score a win at once as the kernel does, with no node, and no kernel is
    made for it (on 6x5, whose kernel would compile); the first position that needs a
    search makes it, and is solved."""
    result = run(["solve", "--board", "6x5"], "3344553344\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split()[:3] == ["3344553344", "10", "0"]
    assert "kernel ready" not in result.stderr and "no table: no position needed a search" in result.stderr
    for weak, win in ([], 5), (["--weak"], 1):
        both = run(["solve", *weak], f"{WIN_AT_ONCE}\n{LATE_WIN}\n")
        assert both.exit_code == 0, both.stderr
        assert scores_printed(both.stdout) == {WIN_AT_ONCE: win, LATE_WIN: 1} and "kernel ready" in both.stderr


def test_an_empty_line_is_the_empty_board() -> None:
    """As in Pons' solver.  The empty board itself takes minutes to solve (see the slow
    test below), so this records the position the solver is handed instead."""
    asked: list[Board] = []

    class Recorder:
        geometry = STANDARD

        def clear(self) -> None:
            pass

        def fit_table(self, pos: Board) -> None:
            pass

        def solve(self, pos: Board, weak: bool) -> tuple[int, int]:
            asked.append(pos)
            return 0, 0

        def searcher(self) -> Recorder:
            return self

        def interpreted(self, pos: Board, weak: bool, every_column: bool) -> None:
            return None  # a board whose kernel is compiled

        def solve_progress(self) -> tuple[list[int], int]:
            return [], 0

    tally, recorder = cli_module._SolveTally(), Recorder()
    progress = SolveProgress(recorder, print)  # type: ignore[arg-type]
    for number, line in enumerate([b"\n", b"   \n", b"44\n"], start=1):
        cli_module._solve_line(recorder, number, line, False, False, tally, progress)  # type: ignore[arg-type]
    assert [pos.history for pos in asked] == [(), (), (3, 3)]
    assert tally.bad_lines == 0 and tally.positions == 3


def test_a_few_plies_through_the_same_path() -> None:
    """A 4-stone position, solved from scratch in the default run: the first player wins
    with its 4th stone (c1 or f1 makes two threats), Pons score 18."""
    result = run(["solve"], "4455 18\n")
    assert result.exit_code == 0, result.stderr
    assert scores_printed(result.stdout) == {"4455": 18}


def test_the_interpreted_tier_answers_only_while_the_kernel_compiles(monkeypatch) -> None:
    """On a board whose kernel is not compiled, ``solve``'s session answers from the
    interpreted tier while the child compiling the kernel runs (8x8 after 44445555:
    a win with the mover's 5th stone, 3 of the tier's nodes), and stops asking it
    once that child has ended: the kernel then answers."""
    from c4engine.search import kernel_build
    build = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    monkeypatch.setattr(kernel_build, "start_kernel_build", lambda geometry, whole, standard=False: build)
    board = Geometry(8, 8)
    session = cli_module._KernelOnDemand(board, lambda: pytest.fail("the kernel was made"))
    try:
        assert session.interpreted(Board(geometry=board).play_all([3, 3, 3, 3, 4, 4, 4, 4]), False, False) \
            == ([27], 3)
    finally:
        build.kill()
        build.wait()
    assert session.interpreted(Board(geometry=board), False, False) is None
    assert session.page_report() == "no table: the interpreted tier answered while the kernel compiled"


@pytest.mark.slow
def test_solving_the_empty_board() -> None:
    """The first player wins with its last stone (Pons score 1); weakly: a win."""
    for args, score in ((["solve", "--weak", "--hash", "1024"], 1), (["solve", "--hash", "1024"], 1)):
        result = run(args, "\n")
        assert result.exit_code == 0, result.stderr
        assert result.stdout.split()[0] == str(score)


def every_column_printed(stdout: str) -> dict[str, list[int]]:
    """``moves -> seven scores`` from ``solve --all`` lines."""
    out = {}
    for line in stdout.splitlines():
        fields = line.split()
        assert len(fields) == 10, line
        out[fields[0]] = [int(x) for x in fields[1:8]]
    return out


def test_solve_all_agrees_with_multipv_7() -> None:
    """``--all`` gives each playable column the score the engine's MultiPV 7 gives it,
    -1000 to the full ones; and the position's score, checked, is their maximum."""
    positions = late_positions(random.Random(SEED + 24), 6, 24) + late_positions(random.Random(SEED + 32), 6, 32)
    assert any(not all(pos.can_play(col) for col in range(7)) for pos in positions), "no full column"
    text = "".join(f"{''.join(str(c + 1) for c in pos.history)}\n" for pos in positions)
    result = run(["solve", "--all"], text)
    assert result.exit_code == 0, result.stderr
    printed = every_column_printed(result.stdout)
    searcher = Searcher(hash_mb=16)
    for pos in positions:
        moves = "".join(str(c + 1) for c in pos.history)
        searcher.clear()
        report = searcher.search(pos, Limits(), multipv=7).report
        assert report is not None and report.exact
        expected = [-1000] * 7
        for line in report.lines:
            expected[line.pv[0]] = int(to_pons(line.score))
        assert printed[moves] == expected, moves


def test_solve_all_agrees_with_bitbully() -> None:
    bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")
    positions = (late_positions(random.Random(SEED + 14), 8, 14) + late_positions(random.Random(SEED + 20), 8, 20)
                 + late_positions(random.Random(SEED + 30), 8, 30))
    text = "".join(f"{''.join(str(c + 1) for c in pos.history)}\n" for pos in positions)
    result = run(["solve", "--all"], text)
    assert result.exit_code == 0, result.stderr
    printed = every_column_printed(result.stdout)
    oracle = bitbully.BitBully()
    for pos in positions:
        moves = "".join(str(c + 1) for c in pos.history)
        scores = oracle.score_all_moves(bitbully.Board.from_moves(list(pos.history)))  # legal columns only
        expected = [scores.get(col, -1000) for col in range(7)]
        assert printed[moves] == expected, moves


def test_solve_all_weak_and_checked() -> None:
    result = run(["solve", "--all", "--weak"], f"{LATE_LOSS} -1\n{WIN_AT_ONCE} 5\n")
    assert result.exit_code == 0, result.stderr
    printed = every_column_printed(result.stdout)
    assert max(printed[LATE_LOSS]) == -1 and max(printed[WIN_AT_ONCE]) == 1
    assert set(printed[LATE_LOSS]) <= {-1, 0, 1, -1000}


def run_solve_process(data: bytes, env_extra: dict[str, str] | None = None,
                      options: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    """``c4engine solve`` as a real process, reading ``data`` from a file."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent), **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "c4engine", "solve", *options, "-"], input=data,
                          capture_output=True, timeout=300, env=env)


# An early position from Pons' "begin hard" set: tens of millions of nodes, seconds of search.
LONG_SOLVE, LONG_SOLVE_SCORE = "5776", 2
PROGRESS_LINE = re.compile(r"^solving: (\d+) s, windows? ((?:\[-?\d+, -?\d+\] ?)+), ([\d.]+) M nodes, "
                           r"[\d.]+ M nodes/s$")


@pytest.mark.slow
@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_long_solve_shows_its_progress_on_stderr(threads: str) -> None:
    """Every few seconds a line with the null windows searched, the nodes and the rate;
    stdout keeps Pons' format, one line per position."""
    done = run_solve_process(f"{LONG_SOLVE} {LONG_SOLVE_SCORE}\n{LATE_WIN} 1\n".encode(),
                             options=("--threads", threads))
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, stderr
    assert scores_printed(stdout) == {LONG_SOLVE: LONG_SOLVE_SCORE, LATE_WIN: 1} and len(stdout.splitlines()) == 2
    progress = [match for line in stderr.splitlines() if (match := PROGRESS_LINE.match(line))]
    assert progress, stderr
    assert int(progress[0].group(1)) >= 3
    windows = [int(low) for low in re.findall(r"\[(-?\d+),", " ".join(match.group(2) for match in progress))]
    assert all(-18 <= low <= 18 for low in windows)
    assert all(float(match.group(3)) > 0 for match in progress)
    assert stderr.count("solving:") == len(progress)


def test_a_quick_solve_shows_no_progress() -> None:
    done = run_solve_process(f"{LATE_WIN} 1\n{LOSS_BY_9} -9\n".encode())
    assert done.returncode == 0, done.stderr.decode()
    assert "solving:" not in done.stderr.decode()


def test_a_file_that_is_not_utf8_gets_per_line_errors() -> None:
    """The good lines are solved; each bad one is named; no traceback; exit 1."""
    data = f"{LATE_LOSS} -1\n".encode() + b"44\xff53\n" + f"{LATE_DRAW} 0\n".encode() + b"\xe9\n"
    done = run_solve_process(data)
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 1
    assert scores_printed(stdout) == {LATE_LOSS: -1, LATE_DRAW: 0}
    assert "line 2: not UTF-8 text (byte 0xff at column 3)" in stderr
    assert "line 4: not UTF-8 text (byte 0xe9 at column 1)" in stderr
    assert "Traceback" not in stderr


def test_a_byte_order_mark_does_not_spoil_the_first_line() -> None:
    done = run_solve_process(b"\xef\xbb\xbf" + f"{LATE_WIN} 1\n{LATE_DRAW} 0\n".encode())
    assert done.returncode == 0, done.stderr.decode()
    assert scores_printed(done.stdout.decode()) == {LATE_WIN: 1, LATE_DRAW: 0}


def test_output_survives_a_narrow_terminal_encoding() -> None:
    """A bad line quoting characters the terminal cannot show is reported with escapes."""
    done = run_solve_process("h\u2713llo\n".encode() + f"{LATE_WIN} 1\n".encode(),
                             {"PYTHONIOENCODING": "latin-1"})
    stderr = done.stderr.decode("latin-1")
    assert done.returncode == 1
    assert "line 1: 'h\\u2713llo' is not a string of column digits" in stderr, stderr
    assert "Traceback" not in stderr
    assert scores_printed(done.stdout.decode("latin-1")) == {LATE_WIN: 1}


def test_solve_with_two_threads() -> None:
    text = "\n".join(f"{moves} {score}" for moves, score in [
        (WIN_BY_3, 3), (LOSS_BY_9, -9), (LATE_DRAW, 0), (LATE_WIN, 1)]) + "\n"
    result = run(["solve", "--threads", "2"], text)
    assert result.exit_code == 0, result.stderr
    assert "4 positions, 4/4 correct, 0 bad lines" in result.stderr


def nodes_searched(result: Result) -> int:
    match = re.search(r"^Nodes searched\s*:\s*(\d+)$", result.stdout, re.MULTILINE)
    assert match, result.stdout
    return int(match.group(1))


def test_bench_is_deterministic() -> None:
    """Two runs print the same node count (the search's signature) and the same
    per-position lines."""
    positions = bench.BENCH_POSITIONS
    first, second = run(["bench", "--depth", "4"]), run(["bench", "--depth", "4"])
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    assert nodes_searched(first) == nodes_searched(second) > 0
    per_position = [line for line in first.stdout.splitlines() if line.startswith("Position")]
    assert len(per_position) == len(positions)
    assert per_position == [line for line in second.stdout.splitlines() if line.startswith("Position")]


def test_bench_runs_on_its_own_positions() -> None:
    result = run(["bench", "--depth", "4"])
    assert result.exit_code == 0, result.output
    assert nodes_searched(result) > 0


@pytest.mark.parametrize("command", [["bench"], ["play"], ["gui"], ["book", "build", "--plies", "2"], ["solve"],
                                     ["match", "--engine", "x", "--engine", "y", "--movetime", "10"],
                                     ["strength"]])
@pytest.mark.parametrize("board, message", [
    ("27x1k3", "at most 26 columns"),
    ("32x1k3", "at most 26 columns"),
    ("７x６", "expected WxH or WxHkK"),   # fullwidth digits: ASCII digits only
    ("٧x٦", "expected WxH or WxHkK"),     # Arabic-Indic digits
])
def test_every_board_option_refuses_what_no_interface_plays(command: list[str], board: str, message: str) -> None:
    """One check for every ``--board``: more than 26 columns (one file letter each)
    or digits other than ASCII are a usage error, exit status 2, before anything runs."""
    result = run([*command, "--board", board])
    assert result.exit_code == 2, result.output
    assert message in result.output


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pages are faulted in ahead on Linux only")
def test_solve_maps_only_the_table_a_late_position_can_fill_and_says_when_it_began() -> None:
    """``--hash 1024`` on a position few others can follow: the process stays far below
    the 1 GB it would have faulted in, and the summary gives the time to the first node."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import resource, subprocess, sys
        done = subprocess.run([sys.executable, "-m", "c4engine", "solve", "--hash", "1024"], input=sys.argv[1],
                              capture_output=True, text=True)
        print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
        print(done.stderr)
        """), f"{LATE_DRAW} 0\n"], capture_output=True, text=True, timeout=120, env=env)
    returncode, peak_mb = map(int, done.stdout.split("\n", 1)[0].split())
    assert returncode == 0, done.stdout
    assert peak_mb < 512, peak_mb
    first_node = float(re.search(r"first node (\d+\.\d+) s after the start", done.stdout).group(1))
    assert 0 < first_node < 60
