"""The ``c4engine solve`` and ``c4engine bench`` tools, run through click's CliRunner.

``solve`` is how the solver is measured against Pons' sets, so a mismatch must
fail the run and a bad line must be reported by number without ending it.
``bench`` prints a node count that is the signature of the search: it is only
useful if two runs of the same code print the same number.
"""

from __future__ import annotations

import re

from click.testing import CliRunner, Result

from c4engine import bench
from c4engine.cli import cli

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
        "",                       # blank lines are skipped
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
    assert "line 5: '1212121': the game is already over" in result.stderr
    assert "line 6: expected '<moves> [<expected score>]'" in result.stderr
    assert "line 7" not in result.stderr and "line 1:" not in result.stderr
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
