"""``c4engine book``: build a book (here or on a Ray cluster), and solve a board from one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click

from ..cli import board_option, hash_option
from ..geometry import Geometry
from ..kernel.built_book import BookFileError, BuiltBook
from ..referee.cluster import check_address, connected
from .build import BuildSpec, ClusterError, build, solve_here, solve_on_ray
from .positions import BookRequestError, check_plies
from .root import verdict
from .store import StoreError


@click.group("book")
def book_command() -> None:
    """Opening books of our own, for any board."""


@book_command.command("build")
@board_option
@click.option("--plies", type=int, required=True, help="The stones on the board in the book's positions.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The book file; the build's state is kept beside it in FILE.sqlite.")
@click.option("--weak", is_flag=True, help="Win/draw/loss only: faster.")
@click.option("--resume", is_flag=True, help="Go on with the build kept in FILE.sqlite.")
@click.option("--cluster", callback=check_address, default=None, metavar="ADDRESS",
              help="Solve on the Ray cluster at auto, HOST:PORT or ray://HOST:PORT.")
@hash_option("Transposition table size in MB of each solving process.")
def build_command(geometry: Geometry, plies: int, out: Path, weak: bool, resume: bool,
                  cluster: str | None, hash_mb: int) -> None:
    """Solve every reachable, undecided position at PLIES stones, then write the book."""
    try:
        check_plies(geometry, plies)
    except BookRequestError as err:
        raise click.BadParameter(str(err), param_hint="--plies") from None
    spec = BuildSpec(geometry, plies, weak, hash_mb)
    try:
        if cluster is None:
            header = build(spec, out, resume, solve_here)
        else:
            with connected(cluster) as ray:
                header = build(spec, out, resume, lambda s, work: solve_on_ray(ray, s, work))
    except ClusterError as err:
        raise click.ClickException(f"{err}: --resume goes on") from None
    except (StoreError, BookFileError, OSError) as err:
        raise click.ClickException(str(err)) from None
    except sqlite3.Error as err:  # a full disk, say: what was committed stays
        raise click.ClickException(f"build database: {err}; the positions solved so far are kept, "
                                   "--resume goes on") from None
    click.echo(f"{out}: {header.entries} positions, {header.describe}")


@book_command.command("solve")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def solve_command(file: Path) -> None:
    """The value of the empty board, by minimax over a finished book."""
    try:
        click.echo(verdict(BuiltBook.load(file)))
    except BookFileError as err:
        raise click.ClickException(str(err)) from None
