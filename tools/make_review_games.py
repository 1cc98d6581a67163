#!/usr/bin/env python3
"""Make the games the review's oracle test judges (tests/data/review_games.pgn).

Real ``c4engine match`` games between difficulty levels: level 0 and level 10
against full strength, short moves, the default 2-ply openings, so that the
file holds every kind of move (kept, slower, mistakes, blunders) and games that
end by a win, a draw or a forfeit.  tests/test_review.py checks every verdict
on them against bitbully's per-column scores.

    python tools/make_review_games.py --rounds 3 --movetime 100
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import click

OUTPUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "review_games.pgn"
PAIRINGS = ((0, 20), (10, 20))


def engine(level: int) -> list[str]:
    return ["--engine", f"{sys.executable} -m c4engine", "--name", f"L{level}",
            "--option", f"Skill Level={level}"]


@click.command()
@click.option("--rounds", type=click.IntRange(1), default=3, show_default=True,
              help="Openings per pairing, each played with both colours.")
@click.option("--movetime", type=click.IntRange(1), default=100, show_default=True, help="ms a move.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=OUTPUT, show_default=True)
def main(rounds: int, movetime: int, output: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        pgn = Path(folder) / "games.pgn"
        for weak, strong in PAIRINGS:
            subprocess.run([sys.executable, "-m", "c4engine", "match", *engine(weak), *engine(strong),
                            "--movetime", str(movetime), "--timemargin", "200", "--rounds", str(rounds),
                            "--order", "random", "--seed", str(weak + 1), "--pgn", str(pgn)], check=True)
        output.write_text(pgn.read_text(encoding="utf-8"), encoding="utf-8")
    click.echo(f"wrote {output}")


if __name__ == "__main__":
    main()
