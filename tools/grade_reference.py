"""Grade the reference rows of docs/guides/grading.md and write their figures.

Usage: ``python tools/grade_reference.py SET [ROW ...]`` runs ``c4engine grade
run SET ... --json`` for each row named (all of :data:`ROWS` by default) in turn,
keeps each row's JSON beside SET (``SET.<row>.json``, so that an interrupted run
resumes where it stopped), and then writes ``c4engine/grading/data/reference.json``
(the rows the HTML report draws) and prints the Markdown table for the guide,
each row with the command that made it.  The SET is made by the guide's
``c4engine grade build`` command.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
REFERENCE = REPOSITORY / "c4engine" / "grading" / "data" / "reference.json"
ENGINE = "c4engine"  # as the guide's commands name it; run here as python -m c4engine

ROWS: dict[str, tuple[str, list[str]]] = {
    "random": ("random mover", ["--random", "1"]),
    "negamax": ("Kaggle's negamax", ["--python", "kaggle_environments.envs.connectx.connectx:negamax_agent"]),
    "mcts100": ("OpenSpiel MCTS, 100 simulations", ["--openspiel", "mcts:100"]),
    "mcts1000": ("OpenSpiel MCTS, 1,000 simulations", ["--openspiel", "mcts:1000"]),
    "mcts10000": ("OpenSpiel MCTS, 10,000 simulations", ["--openspiel", "mcts:10000", "--move-seconds", "600"]),
    **{f"level{level}": (f"c4engine level {level}, 100 ms", ["--engine", ENGINE, "--option", f"Skill Level={level}",
                                                             "--movetime", "100"])
       for level in (0, 5, 10, 15, 20)},
    **{f"c4engine{ms}ms": (f"c4engine, {ms} ms a move", ["--engine", ENGINE, "--movetime", str(ms)])
       for ms in (1, 10, 100)},
}


def run_row(grade_set: Path, key: str) -> dict[str, object]:
    out = grade_set.with_name(f"{grade_set.name}.{key}.json")
    if not out.exists():
        arguments = [a if a != ENGINE else f"{sys.executable} -m c4engine" for a in ROWS[key][1]]
        done = subprocess.run([sys.executable, "-m", "c4engine", "grade", "run", str(grade_set), *arguments, "--json"],
                              capture_output=True, text=True, check=True)
        out.write_text(done.stdout)
    document: dict[str, object] = json.loads(out.read_text())
    return document


def main() -> None:
    grade_set = Path(sys.argv[1])
    keys = sys.argv[2:] or list(ROWS)
    rows = []
    for key in keys:
        document = run_row(grade_set, key)
        total = document["all"]
        name, arguments = ROWS[key]
        command = shlex.join(["c4engine", "grade", "run", grade_set.name, *arguments])
        rows.append({"name": name, "board": document["board"], "sets": [grade_set.name],
                     "perfect": total["perfect"]["rate"], "good": total["good"]["rate"],  # type: ignore[index]
                     "perfect_ci": [total["perfect"]["low"], total["perfect"]["high"]],  # type: ignore[index]
                     "good_ci": [total["good"]["low"], total["good"]["high"]],  # type: ignore[index]
                     "positions": total["positions"], "failures": total["failures"],  # type: ignore[index]
                     "seconds": round(sum(p["seconds"] for p in document["positions"]), 1),  # type: ignore[attr-defined]
                     "command": command})
    REFERENCE.write_text(json.dumps(rows, indent=1) + "\n")
    print("| agent | perfect % [95% CI] | good % [95% CI] | failures | agent's time | command |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        p, g = row["perfect_ci"], row["good_ci"]
        print(f"| {row['name']} | {100 * row['perfect']:.1f} [{100 * p[0]:.1f}-{100 * p[1]:.1f}] "  # type: ignore[index, operator]
              f"| {100 * row['good']:.1f} [{100 * g[0]:.1f}-{100 * g[1]:.1f}] | {row['failures']} "  # type: ignore[index, operator]
              f"| {row['seconds']} s | `{row['command']}` |")


if __name__ == "__main__":
    main()
