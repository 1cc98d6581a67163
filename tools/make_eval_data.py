"""Make the exactly scored positions the evaluation is trained on (a developer tool).

    PYTHONPATH=. python tools/make_eval_data.py --board 7x6 --book 150000 --solved 0 --games 150000 \
        --stones 12 32 --nodes 2000000 --seed 1 --out build/games-7x6k4.npz

On 7x6 a seeded sample of the 12-stone distance book (``bitbully-databases``),
and on every board positions with ``--stones`` stones from seeded random
playouts (``--solved``), from seeded games the engine plays with some noise
(``--games``) and from the frontier of the engine's searches from such games' positions
(``--leaves``), solved by the engine (a position not proven within ``--nodes``
nodes is skipped).  A seeded tenth is held out from training.  See
:mod:`c4engine.training.data`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
import numpy as np

from c4engine.books.build import Progress
from c4engine.geometry import Geometry
from c4engine.training.data import make_dataset


@click.command()
@click.option("--board", default="7x6", show_default=True, help="WxH or WxHkK")
@click.option("--book", default=150_000, show_default=True, help="12-stone book positions (7x6 only)")
@click.option("--solved", default=2000, show_default=True, help="playout positions solved by the engine")
@click.option("--games", default=0, show_default=True,
              help="positions of noisy engine games, solved by the engine (at most this many games)")
@click.option("--leaves", default=0, show_default=True,
              help="positions the engine's searches from noisy games' positions evaluate, solved by the engine")
@click.option("--stones", default=(6, 40), nargs=2, type=int, show_default=True,
              help="stones of the solved and game positions, both ends")
@click.option("--nodes", "node_limit", default=1_000_000, show_default=True,
              help="solver node cap per position (a position not proven within it is skipped)")
@click.option("--seed", default=1, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
def main(board: str, book: int, solved: int, games: int, leaves: int, stones: tuple[int, int], node_limit: int, seed: int,
         out: Path) -> None:
    geometry = Geometry.parse(board)
    started = time.monotonic()
    progress = Progress(solved + games + leaves, 0, sys.stderr)
    data = make_dataset(geometry, book, solved, stones, seed, node_limit, games, leaves, progress.advance)
    progress.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    data.save(out)
    outcomes = np.bincount(data.result.astype(np.int64) + 1, minlength=3)
    click.echo(f"{out}: {len(data)} positions ({int(data.held_out.sum())} held out), "
               f"loss/draw/win {outcomes.tolist()}, {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
