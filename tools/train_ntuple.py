"""Fit an n-tuple network evaluation to exactly scored positions and ship it (a developer tool).

    PYTHONPATH=. python tools/train_ntuple.py build/games-7x6k4.npz build/leaves-7x6k4.npz \\
        build/playouts-7x6k4.npz

(docs/guides/evaluation.md, "The n-tuple evaluation", has the commands that make those files).

On 7x6 the whole 12-stone distance book is added to the files' positions (the
strength set left out; ``--no-book`` for none).  Prints the held-out accuracy
and log-loss, by stone count, of the hand-written threat weights, the linear
learned weights (if the board has them) and the network, then writes the
network to ``c4engine/data/ntuple-<board>.npz`` (``--out`` for elsewhere),
where ``Evaluation ntuple`` finds it.  Deterministic for the same data and
seed.  See :mod:`c4engine.training.network`.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import click
import numpy as np

from c4engine.geometry import Geometry
from c4engine.kernel.evaluation import THREAT_WEIGHTS
from c4engine.kernel.ntuple import MAX_TUPLES
from c4engine.training.network import (
    Judged, fit_network, judge_linear, judge_network, merged_dataset, write_network,
)
from c4engine.search.weights import learned_weights, ntuple_file_name, source_data_path
from c4engine.training.data import Dataset

STONE_RANGES = ((0, 11), (12, 12), (13, 20), (21, 64))
BOOK_STONES = 12


@click.command()
@click.argument("data", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--board", default="7x6", show_default=True, help="WxH or WxHkK, when no data file names it")
@click.option("--book/--no-book", default=True, show_default=True, help="add the 12-stone book (7x6)")
@click.option("--tuples", type=click.IntRange(1, MAX_TUPLES), default=150, show_default=True,
              help="random-walk tuples (each also mirrored)")
@click.option("--epochs", default=8, show_default=True)
@click.option("--repeat-others", default=4, show_default=True,
              help="times per epoch a position of another stone count than the book's is seen "
                   "(else the book's 4.2 M drown them)")
@click.option("--rate", default=0.5, show_default=True, help="step size (logits per unit gradient)")
@click.option("--seed", default=1, show_default=True)
@click.option("--judged", default=60_000, show_default=True, help="held-out positions the linear weights are judged on")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="network file [default: the package's file for the data's board]")
def main(data: tuple[Path, ...], board: str, book: bool, tuples: int, epochs: int, repeat_others: int, rate: float,
         seed: int, judged: int, out: Path | None) -> None:
    parts = [Dataset.load(path) for path in data]
    geometry = parts[0].geometry if parts else Geometry.parse(board)
    if any(part.geometry != geometry for part in parts):
        raise click.UsageError("the data files are for different boards")
    dataset = merged_dataset(geometry, parts, book)
    train, test = np.flatnonzero(~dataset.held_out), np.flatnonzero(dataset.held_out)
    trained_on = int(train.size)
    click.echo(f"{geometry}: trained on {trained_on}, held out {test.size}")
    others = train[dataset.stones[train] != BOOK_STONES]
    train = np.sort(np.concatenate([train, *[others] * (repeat_others - 1)]))
    started = time.monotonic()
    network = fit_network(dataset, train, tuples, epochs, seed, rate,
                          report=lambda epoch, margin: click.echo(
                              f"epoch {epoch + 1}: margin {margin:.3f}, {time.monotonic() - started:.0f} s"))
    linear = {"threats (hand-written)": THREAT_WEIGHTS, "learned (linear)": learned_weights(geometry)}
    rng = np.random.default_rng(seed)
    scores: list[Judged] = []
    click.echo(f"{'stones':<8}{'positions':>10}  {'evaluation':<24}{'accuracy':>10}{'log-loss':>10}")
    for low, high in STONE_RANGES:
        rows = test[(dataset.stones[test] >= low) & (dataset.stones[test] <= high)]
        if rows.size == 0:
            continue
        sample = np.sort(rng.choice(rows, size=min(judged, rows.size), replace=False))
        found = [judge_linear(name, weights, dataset, train, sample) for name, weights in linear.items()
                 if weights is not None]
        found.append(judge_network(network, dataset, rows))
        for score, size in zip(found, [sample.size] * (len(found) - 1) + [rows.size]):
            click.echo(f"{f'{low}-{high}':<8}{size:>10}  {score.name:<24}{score.accuracy:>10.4f}{score.log_loss:>10.4f}")
        scores += [Judged(f"{score.name}, {low}-{high} stones", score.accuracy, score.log_loss) for score in found]
    target = out or source_data_path(ntuple_file_name(geometry))
    write_network(target, network, shlex.join(["python", *sys.argv]), scores, trained_on)
    click.echo(f"{tuples} tuples, {network.block().size} words -> {target} "
               f"({target.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
