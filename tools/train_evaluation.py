"""Fit the evaluation's weights to exactly scored positions and ship them (a developer tool).

    PYTHONPATH=. python tools/make_eval_data.py --board 7x6 --book 150000 --solved 12000 --seed 1 \
        --out build/eval-7x6k4.npz
    PYTHONPATH=. python tools/train_evaluation.py build/eval-7x6k4.npz

Prints the held-out accuracy and log-loss of the hand-written weights, of the
hand-written terms tuned (Texel) and of the learned weights, then writes the
learned ones to ``c4engine/data/evaluation-<board>.json`` (``--out`` for
elsewhere), where the engine's ``Evaluation learned`` finds them.  Minutes on
150,000 positions; deterministic for the same data.  See :mod:`c4engine.training.linear`.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from c4engine.search.weights import source_data_path, weights_file_name
from c4engine.training.data import Dataset
from c4engine.training.linear import train, write_weights


@click.command()
@click.argument("data", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--steps", default=1000, show_default=True, help="optimiser steps per fit")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="weights file [default: the package's file for the data's board]")
def main(data: Path, steps: int, out: Path | None) -> None:
    dataset = Dataset.load(data)
    training = train(dataset, steps)
    click.echo(f"{dataset.geometry}: trained on {training.trained_on}, held out {training.held_out}")
    click.echo(f"{'evaluation':<24}{'accuracy':>10}{'log-loss':>10}")
    for score in training.scores:
        click.echo(f"{score.name:<24}{score.accuracy:>10.4f}{score.log_loss:>10.4f}")
    target = out or source_data_path(weights_file_name(dataset.geometry))
    write_weights(target, dataset.geometry, training, shlex.join(["python", *sys.argv]))
    click.echo(f"weights {training.weights.tolist()} -> {target}")


if __name__ == "__main__":
    main()
