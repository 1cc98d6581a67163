"""``c4engine connectx``: Kaggle ConnectX tools."""

from __future__ import annotations

from pathlib import Path

import click

from ..cli import board_option
from ..geometry import Geometry
from .bundle import make_bundle


@click.group("connectx")
def connectx_command() -> None:
    """Kaggle ConnectX: a submission that plays as c4engine does."""


@connectx_command.command("bundle")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("submission.tar.gz"),
              show_default=True, help="The archive to write (Kaggle takes a .tar.gz with main.py at its root).")
@board_option
def bundle_command(out: Path, geometry: Geometry) -> None:
    """Write a Kaggle submission: main.py, the package, its network, numba's compiled
    kernel for the board and, on 7x6, the opening book.  Kaggle needs numpy and numba
    in its image, not c4engine."""
    size = make_bundle(out, geometry)
    click.echo(f"{out}: {size:,} bytes ({size / 1e6:.1f} MB; Kaggle takes up to 100 MB)")
