"""``c4engine train`` and ``c4engine held-out``: make a network, make a held-out set,
measure a network on it."""

from __future__ import annotations

import sqlite3
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import click
import numpy as np

from ..books.build import ClusterError, Progress, tasks_on_ray
from ..cli import board_option
from ..geometry import Geometry
from ..kernel.ntuple import MAX_TUPLES
from ..referee.cluster import check_address, connected
from .data import Dataset
from ..referee.strength import PHASES, read_positions
from ..rules.notation import parse_digits
from .held_out import make_held_out, overlap, phase_accuracy, phases
from .network import HeldOutAccuracy, read_network_file, record_accuracy
from .packing import fits, packs
from .pipeline import Run, Stopped, TrainSpec, chunk_positions, train, trained_keys
from .store import CheckpointError
from .td import SelfPlaySpec, train_self_play

DATA_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
METHODS = ("solver", "self-play")
ONLY_FOR = {"solver": ("stones", "node_limit", "epochs", "leaves", "playouts", "book", "cluster"),
            "self-play": ("lam", "epsilon", "random_plies")}  # the options one method takes and not the other


@click.command("train")
@board_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="The network file.")
@click.option("--method", type=click.Choice(METHODS), default="solver", show_default=True,
              help="Fit solved positions of engine games, or learn by TD(lambda) from self-play games.")
@click.option("--seed", default=1, show_default=True)
@click.option("--games", type=click.IntRange(1), default=None,
              help="Noisy engine games whose positions are solved [default: 20000]; self-play games "
                   "[default: 10000000].")
@click.option("--stones", nargs=2, type=int, default=None,
              help="Stones of the positions trained on, both ends [default: 12 to cells - 8].")
@click.option("--nodes", "node_limit", type=click.IntRange(1), default=2_000_000, show_default=True,
              help="Solver node cap per position (one not proven within it is skipped).")
@click.option("--tuples", type=click.IntRange(1, MAX_TUPLES), default=None,
              help="Random-walk tuples, each read on the mirror image too (the search keeps room for the most) "
                   "[default: 150; self-play 70].")
@click.option("--epochs", type=click.IntRange(1), default=8, show_default=True)
@click.option("--rate", type=click.FloatRange(min=0, min_open=True), default=0.5, show_default=True,
              help="The step in the value per unit of error, falling to a tenth by the last epoch (self-play: "
                   "the last chunk of games).")
@click.option("--leaves", type=click.IntRange(0), default=0, show_default=True,
              help="Per game, positions a search from one of its positions evaluates, solved too.")
@click.option("--playouts", type=click.IntRange(0), default=0, show_default=True,
              help="Per game, random playout positions with --stones stones, solved too.")
@click.option("--book/--no-book", default=True, show_default=True, help="Add the 12-stone book's positions (7x6).")
@click.option("--hybrid", is_flag=True,
              help="Beside the tuples, the threat evaluation's linear terms, fitted first (the tuples learn the rest).")
@click.option("--held-out", type=DATA_FILE, default=None,
              help="A set of `c4engine held-out make`: left out of the data, and the accuracy the file records.")
@click.option("--checkpoint", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The run's state, to go on after a stop [default: OUT.sqlite].")
@click.option("--checkpoint-minutes", type=click.FloatRange(min=0), default=5.0, show_default=True,
              help="Save the fit this often (the data are saved as each chunk of games ends).")
@click.option("--minutes", type=click.FloatRange(min=0), default=None,
              help="Stop after this long, the checkpoint saved; the same command goes on.")
@click.option("--cluster", callback=check_address, default=None, metavar="ADDRESS",
              help="Play and solve the games on the Ray cluster at auto, HOST:PORT or ray://HOST:PORT.")
@click.option("--lambda", "lam", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Self-play: the weight of later values in each afterstate's return.")
@click.option("--epsilon", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="Self-play: the share of moves played at random.")
@click.option("--random-plies", type=click.IntRange(0), default=2, show_default=True,
              help="Self-play: the moves each game opens with at random.")
@click.pass_context
def train_command(ctx: click.Context, geometry: Geometry, out: Path, method: str, seed: int, games: int | None,
                  stones: tuple[int, int] | None, node_limit: int, tuples: int | None, epochs: int, rate: float,
                  leaves: int, playouts: int, book: bool, hybrid: bool, held_out: Path | None,
                  checkpoint: Path | None, checkpoint_minutes: float, minutes: float | None, cluster: str | None,
                  lam: float, epsilon: float, random_plies: int) -> None:
    """Train an n-tuple network for the board: fitted to solved positions of seeded
    engine games (--method solver), or learnt from its own games (--method self-play)."""
    _check_method_options(ctx, method)
    _check_network_board(geometry)
    checkpoint = checkpoint or out.with_name(out.name + ".sqlite")
    if method == "self-play":
        if held_out is None:
            raise click.UsageError("--method self-play needs --held-out: its games have no exact labels of their own")
        if packs(geometry):
            raise click.BadParameter(f"--method self-play plays boards of at most 64 bits; {geometry}'s has "
                                     f"{geometry.width * geometry.h1}: use --method solver", param_hint="--board")
        spec = SelfPlaySpec(geometry.name, seed, games or 10_000_000, tuples or 70, rate, lam, epsilon, random_plies,
                            hybrid)
        run = Run(spec, out, checkpoint, spec.command(held_out.name), None, minutes, 60 * checkpoint_minutes)
        _report(run, lambda: train_self_play(run, _held_out(held_out, geometry)))
        return
    low, high = stones or (min(12, geometry.cells // 4), geometry.cells - 8)
    if not 0 <= low <= high < geometry.cells:
        raise click.BadParameter(f"{low} {high} is no range of stone counts on the {geometry} board",
                                 param_hint="--stones")
    spec = TrainSpec(geometry.name, seed, games or 20_000, (low, high), node_limit, tuples or 150, epochs, rate, book,
                     leaves, playouts, hybrid)
    run = Run(spec, out, checkpoint, spec.command(held_out.name if held_out else None), _held_out(held_out, geometry),
              minutes, 60 * checkpoint_minutes)
    _report(run, lambda: _train_solved(run, cluster))


def _train_solved(run: Run, cluster: str | None) -> HeldOutAccuracy:
    if cluster is None:
        return train(run)
    with connected(cluster) as ray:
        run.solver = lambda s, work: tasks_on_ray(ray, chunk_positions, s, work)
        return train(run)


def _report(run: Run, training: Callable[[], HeldOutAccuracy]) -> None:
    """Run ``training`` and say what it made, or that it stopped, or why it failed."""
    try:
        found = training()
    except Stopped:
        click.echo(f"stopped after {run.minutes:g} minutes; {run.checkpoint} holds the run: the same command goes on")
        return
    except ClusterError as err:
        raise click.ClickException(f"{err}: the same command goes on") from None
    except (CheckpointError, sqlite3.Error, OSError) as err:
        raise click.ClickException(str(err)) from None
    if not found.positions:
        click.echo(f"{run.out}: no held-out accuracy recorded: {found.source} held no positions")
        return
    click.echo(f"{run.out}: held-out accuracy {found.accuracy:.4f} on {found.positions} positions ({found.source})")


def _check_method_options(ctx: click.Context, method: str) -> None:
    """A usage error for an option given that the method does not take."""
    for owner, names in ONLY_FOR.items():
        for name in names:
            if owner != method and ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT:
                option = next(p for p in ctx.command.params if p.name == name)
                raise click.UsageError(f"{option.opts[0]} is for --method {owner}, not {method}")


def _held_out(path: Path | None, geometry: Geometry) -> Dataset | None:
    if path is None:
        return None
    data = _load_set(path)
    if data.geometry != geometry:
        raise click.BadParameter(f"{path} is a set for {data.geometry}, not {geometry}", param_hint="--held-out")
    return data


def _load_set(path: Path) -> Dataset:
    try:
        return Dataset.load(path)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        raise click.ClickException(f"{path}: not a set of positions ({err})") from None


def _check_network_board(geometry: Geometry) -> None:
    """Refuse a board whose positions the training cannot hold: a training or held-out
    position is one 64-bit word (:mod:`c4engine.training.packing`)."""
    if not fits(geometry):
        raise click.BadParameter(f"no n-tuple network on the {geometry} board: it has {geometry.cells} cells, "
                                 "and a training position is one 64-bit word", param_hint="--board")


@click.group("held-out")
def held_out_command() -> None:
    """Positions apart from any training data, solved, to measure a network on."""


@held_out_command.command("make")
@board_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--per-phase", type=click.IntRange(1), default=300, show_default=True,
              help="Positions per phase (four bands of stone counts).")
@click.option("--seed", default=1001, show_default=True)
@click.option("--nodes", "node_limit", type=click.IntRange(1), default=20_000_000, show_default=True,
              help="Solver node cap per position (one not proven within it is skipped).")
def make_command(geometry: Geometry, out: Path, per_phase: int, seed: int, node_limit: int) -> None:
    """Solve seeded random playout positions, an equal share per phase."""
    _check_network_board(geometry)
    bands = phases(geometry)
    progress = Progress(per_phase * len(bands), 0, sys.stderr)
    skipped = [0] * len(bands)

    def solved(phase: int, proven: bool) -> None:
        if proven:
            progress.advance(1)
        else:
            skipped[phase] += 1

    data = make_held_out(geometry, per_phase, seed, node_limit, solved)
    progress.close()
    data.save(out)
    counts = np.bincount(data.result.astype(np.int64) + 1, minlength=3).tolist()
    click.echo(f"{out}: {len(data)} positions, loss/draw/win {counts}")
    click.echo(f"{'stones':<8}{'kept':>6}{'not proven':>12}")
    for (low, high), missed in zip(bands, skipped):
        kept = int(np.sum((data.stones >= low) & (data.stones <= high)))
        click.echo(f"{f'{low}-{high}':<8}{kept:>6}{missed:>12}")


@held_out_command.command("accuracy")
@click.argument("network", type=DATA_FILE)
@click.argument("positions", type=DATA_FILE)
@click.option("--record", is_flag=True,
              help="Write the accuracy over all of POSITIONS into NETWORK, which the engine names at set-up.")
def accuracy_command(network: Path, positions: Path, record: bool) -> None:
    """Win/draw/loss accuracy of NETWORK against threat counting on POSITIONS, per phase.

    With --record, NETWORK's file records the accuracy over all of POSITIONS as its
    held-out accuracy, for a network made before `c4engine train` recorded one: the
    positions must be apart from its training data (see `held-out overlap`)."""
    data = _load_set(positions)
    try:
        block, linear, margin = read_network_file(network, data.geometry)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        raise click.ClickException(f"{network}: not a network file for the positions ({err})") from None
    click.echo(f"{'stones':<8}{'positions':>10}{'network':>10}{'threats':>10}")
    rows = phase_accuracy(block, margin, data, linear)
    for row in rows:
        low, high = row.phase
        click.echo(f"{f'{low}-{high}':<8}{row.positions:>10}{row.network:>10.4f}{row.threats:>10.4f}")
    if record:
        whole = rows[-1]
        if not whole.positions:
            raise click.ClickException(f"{positions}: no positions, so no accuracy to record")
        record_accuracy(network, HeldOutAccuracy(whole.network, whole.positions,
                                                 f"an independent held-out set ({positions.name})"))
        click.echo(f"{network}: held-out accuracy {whole.network:.4f} on {whole.positions} positions recorded")


@held_out_command.command("overlap")
@click.argument("checkpoint", type=DATA_FILE)
@click.argument("positions", type=DATA_FILE)
def overlap_command(checkpoint: Path, positions: Path) -> None:
    """How many of POSITIONS (a held-out set, or a position file of `c4engine strength`)
    the run in CHECKPOINT trains on, a position or its mirror image, per phase."""
    try:
        geometry, keys = trained_keys(checkpoint)
    except (CheckpointError, sqlite3.Error) as err:
        raise click.ClickException(f"{checkpoint}: {err}") from None
    if zipfile.is_zipfile(positions):
        data, bands = _load_set(positions), phases(geometry)
    else:
        data, bands = _strength_set(positions, geometry), [(phase.low, phase.high) for phase in PHASES]
    if data.geometry != geometry:
        raise click.ClickException(f"{positions} holds {data.geometry} positions, the run is on {geometry}")
    click.echo(f"{'stones':<8}{'positions':>10}{'trained on':>12}")
    for row in overlap(data, keys, bands):
        low, high = row.phase
        click.echo(f"{f'{low}-{high}':<8}{row.positions:>10}{row.trained_on:>12}")


def _strength_set(path: Path, geometry: Geometry) -> Dataset:
    """The positions of a ``c4engine strength`` file, without results (7x6 games)."""
    try:
        boards = [parse_digits(position.moves) for position in read_positions(path.read_bytes(), str(path))]
    except (OSError, ValueError) as err:
        raise click.ClickException(f"{path}: not a position file ({err})") from None
    if not geometry.is_standard:
        raise click.ClickException(f"{path} holds 7x6 positions, the run is on {geometry}")
    return Dataset.of_boards(geometry, boards, [0] * len(boards), np.ones(len(boards), dtype=bool))
