"""``c4engine solve`` against John Tromp's Fhourstones88 on the same positions of a board
past 64 bits: each position's time in each (Fhourstones88's own milliseconds, one
process a position; ``solve``'s microseconds, one process for all, its table
cleared before each), then the median ratio c4engine / Fhourstones88 over the
positions Fhourstones88 takes 0.1-20 s on.  Fhourstones88 solves weakly (win, draw
or loss), so ``--weak`` is the like-for-like comparison; without it c4engine finds
the exact score.  Fhourstones88 is built as ``tests/fhourstones.py`` says, in the
folder that FHOURSTONES88_DIR names.

    FHOURSTONES88_DIR=... python tools/measure_fhourstones.py --board 8x8 --positions 40 --weak
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import fhourstones  # noqa: E402  (the tests' helper: the oracle's runner and the positions)

from c4engine.geometry import Geometry  # noqa: E402

RANGE = (0.1, 20.0)  # Fhourstones88's seconds on the positions the ratio counts


def c4engine_seconds(board: str, lines: list[str], weak: bool, hash_mb: int) -> list[tuple[int, float]]:
    """``c4engine solve``'s score and seconds for each line."""
    command = [sys.executable, "-m", "c4engine", "solve", "--board", board, "--hash", str(hash_mb)]
    done = subprocess.run(command + (["--weak"] if weak else []), input="\n".join(lines) + "\n",
                          capture_output=True, text=True, check=True)
    rows = [line.split() for line in done.stdout.splitlines()]
    return [(int(row[1]), int(row[3]) / 1e6) for row in rows]


@click.command()
@click.option("--board", default="8x8", show_default=True)
@click.option("--positions", default=40, show_default=True)
@click.option("--stones", default="30-44", show_default=True, help="Stones on the board, low-high.")
@click.option("--seed", default=1, show_default=True)
@click.option("--weak", is_flag=True, help="Solve weakly, as Fhourstones88 does.")
@click.option("--hash", "hash_mb", default=512, show_default=True,
              help="c4engine's table in MB (Fhourstones88's, as built: about 500 MB).")
def main(board: str, positions: int, stones: str, seed: int, weak: bool, hash_mb: int) -> None:
    geometry = Geometry.parse(board)
    program = fhourstones.binary(geometry)
    if program is None:
        raise click.UsageError(f"no Fhourstones88 for {board} in {fhourstones.DIR_ENV}")
    low, high = (int(part) for part in stones.split("-"))
    boards = fhourstones.random_positions(geometry, positions, (low, high), seed)
    lines = [fhourstones.digits(pos) for pos in boards]
    ours = c4engine_seconds(board, lines, weak, hash_mb)
    ratios = []
    with tempfile.TemporaryDirectory() as scratch:
        for moves, (score, seconds) in zip(lines, ours):
            theirs = fhourstones.solve(program, moves, Path(scratch))
            agree = (score > 0) - (score < 0) == theirs.sign
            counted = RANGE[0] <= theirs.seconds <= RANGE[1]
            if counted:
                ratios.append(seconds / theirs.seconds)
            click.echo(f"{moves} fhourstones88 {theirs.seconds:.3f} s c4engine {seconds:.3f} s "
                       f"{'agree' if agree else 'DISAGREE'}{' counted' if counted else ''}")
    if ratios:
        click.echo(f"{len(ratios)} positions in {RANGE[0]}-{RANGE[1]} s: median ratio c4engine/fhourstones88 "
                   f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")


if __name__ == "__main__":
    main()
