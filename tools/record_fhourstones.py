"""Record John Tromp's Fhourstones88 results on random positions of a board past 64
bits, for ``tests/test_fhourstones.py``: the test then checks c4engine against what
the oracle said, where the oracle itself cannot be built (CI reaches no GitHub, and
no package registry carries Fhourstones88).  Fhourstones88 is built outside this
repository, as ``tests/fhourstones.py`` says, in the folder FHOURSTONES88_DIR names.

    FHOURSTONES88_DIR=... python tools/record_fhourstones.py --board 8x8 --positions 40 \\
        --commit <the source's commit> > tests/data/fhourstones88_8x8.txt
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import fhourstones  # noqa: E402  (the tests' helper: the oracle's runner and the positions)

from c4engine.geometry import Geometry  # noqa: E402


def header(board: str, positions: int, stones: str, seed: int, commit: str) -> str:
    geometry = Geometry.parse(board)
    return "\n".join([
        f"# Results of {positions} random {board} connect-four positions of {stones} stones, for the side",
        "# to move (+ win, = draw, - loss), from John Tromp's Fhourstones88.",
        f"# Solver: github.com/tromp/fhourstones88 at commit {commit}, built outside this repo with",
        f"#   g++ -O3 -DWIDTH={geometry.width} -DHEIGHT={geometry.height} -DBOOKWORK=99 "
        "-DLOCKSIZE=50 -DTRANSIZE=8306069, one process a position.",
        f"# Positions: tests/fhourstones.py random_positions(seed={seed}): random games in which",
        "#   neither side completes a line nor lets the other complete one next.",
        f"# Made by: python tools/record_fhourstones.py --board {board} --positions {positions} "
        f"--stones {stones} --seed {seed} --commit {commit}",
        "# Each line: the moves as column digits, then the result.",
    ])


@click.command()
@click.option("--board", default="8x8", show_default=True)
@click.option("--positions", default=40, show_default=True)
@click.option("--stones", default="30-44", show_default=True, help="Stones on the board, low-high.")
@click.option("--seed", default=1, show_default=True)
@click.option("--commit", required=True, help="The Fhourstones88 source's git commit, for the header.")
def main(board: str, positions: int, stones: str, seed: int, commit: str) -> None:
    geometry = Geometry.parse(board)
    program = fhourstones.binary(geometry)
    if program is None:
        raise click.UsageError(f"no Fhourstones88 for {board} in {fhourstones.DIR_ENV}")
    low, high = (int(part) for part in stones.split("-"))
    click.echo(header(board, positions, stones, seed, commit))
    boards = fhourstones.random_positions(geometry, positions, (low, high), seed)
    with tempfile.TemporaryDirectory() as scratch:
        for done, pos in enumerate(boards, 1):
            moves = fhourstones.digits(pos)
            sign = fhourstones.solve(program, moves, Path(scratch)).sign
            click.echo(f"{moves} {'-=+'[sign + 1]}")
            click.echo(f"\r{done}/{len(boards)} positions", nl=False, err=True)
    click.echo(err=True)


if __name__ == "__main__":
    main()
