"""``c4engine serve``: start the solver web service.

aiohttp (the ``service`` extra) is imported only when the command runs, so that
without it the command says what to install instead of failing with a traceback.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..cli import board_option, hash_option
from ..geometry import Geometry, GeometryError
from ..kernel.built_book import BookFileError
from ..protocol.options import find_spec
from ..referee.cluster import ADDRESS_FORMS, INSTALL, check_address
from .params import Limits

if TYPE_CHECKING:
    from .run import Settings

LOOPBACK_NAMES = ("localhost",)


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/c4engine/service.sqlite`` (``~/.cache`` without it)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "c4engine" / "service.sqlite"


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_on_cluster(settings: Settings, address: str, replicas: int, tell: Callable[[str], None]) -> None:
    """``--cluster``: Ray Serve replicas (Ray imported only now); a usage error for a
    port Ray Serve cannot pick itself."""
    if settings.port == 0:
        raise click.BadParameter("Ray Serve's proxy needs a port of its own, not 0", param_hint="'--port'")
    try:
        from ray import serve  # noqa: F401
    except ImportError:
        raise click.ClickException(f"--cluster needs Ray Serve, which is not installed: {INSTALL}") from None
    from .cluster import run_cluster_service
    run_cluster_service(settings, address, replicas, tell)


def _parse_boards(ctx: click.Context, param: click.Parameter, value: str) -> tuple[Geometry, ...]:
    try:
        return tuple(Geometry.parse(text) for text in value.split(",") if text.strip())
    except GeometryError as err:
        raise click.BadParameter(str(err), ctx, param) from None


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but loopback is reachable from other machines.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port (0: a free one).")
@board_option
@click.option("--boards", "extra_boards", default="", callback=_parse_boards,
              help="More boards to serve besides --board, comma-separated (e.g. 8x7,6x7).")
@click.option("--threads", type=click.IntRange(1, find_spec("Threads").high), default=1, show_default=True,
              help="Solver workers, each a searcher of one thread with its own table.")
@hash_option("Transposition table of each worker and board, in MB.")
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="SQLite file of exact answers kept across restarts [default: ~/.cache/c4engine/service.sqlite].")
@click.option("--cache-mb", type=click.IntRange(1, 1 << 20), default=256, show_default=True,
              help="Size bound of the cache file; the oldest answers go first past it.")
@click.option("--movetime", type=click.IntRange(1, 3_600_000), default=1000, show_default=True,
              help="Default time cap per request, in ms (movetime= asks for another).")
@click.option("--max-movetime", type=click.IntRange(1, 3_600_000), default=10_000, show_default=True,
              help="Largest movetime= a request may ask for, in ms; /solve always uses it.")
@click.option("--queue", "queue_size", type=click.IntRange(0, 100_000), default=64, show_default=True,
              help="Solves that may wait for a worker; past it, new ones get 503 with Retry-After.")
@click.option("--cors", default="*", show_default=True,
              help="Origins allowed to read answers from a web page: *, a comma-separated list, or '' for none.")
@click.option("--book", "book_paths", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A book made by `c4engine book build` to answer from (repeatable; exact books only).")
@click.option("--idle-timeout", type=click.FloatRange(0.1, 3600), default=15.0, show_default=True,
              help="Seconds a connection may stay without a complete request (idle or slow clients).")
@click.option("--workers", "processes", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Server processes on the one port (SO_REUSEPORT), each with --threads workers.")
@click.option("--cluster", "cluster_address", default=None, callback=check_address,
              help=f"Serve from Ray Serve replicas on the Ray cluster at this address ({ADDRESS_FORMS}).")
@click.option("--replicas", type=click.IntRange(1, 1024), default=2, show_default=True,
              help="With --cluster: solver replicas, each with --threads workers (a CPU each).")
def serve_command(host: str, port: int, geometry: Geometry, extra_boards: tuple[Geometry, ...], threads: int,
                  hash_mb: int, cache_path: Path | None, cache_mb: int, movetime: int, max_movetime: int,
                  queue_size: int, cors: str, book_paths: tuple[Path, ...], idle_timeout: float,
                  processes: int, cluster_address: str | None, replicas: int) -> None:
    """Serve exact Connect-Four answers over HTTP: Pons' /solve, /api/v1/position,
    /health and /metrics (docs/service.md).  Binds to 127.0.0.1 unless --host says
    otherwise.  Ctrl-C or SIGTERM stops it."""
    try:
        from .run import Settings, run_processes, run_service
    except ImportError as err:
        raise click.ClickException(f"c4engine serve needs aiohttp ({err}): pip install 'c4engine[service]'") from None
    if processes > 1 and cluster_address is not None:
        raise click.BadParameter("--cluster serves from Ray replicas (--replicas), not processes here",
                                 param_hint="'--workers'")
    if movetime > max_movetime:
        raise click.BadParameter(f"{movetime} ms is above --max-movetime {max_movetime} ms", param_hint="'--movetime'")
    boards = tuple(dict.fromkeys((geometry, *extra_boards)))
    limits = Limits(boards, movetime, max_movetime)
    if not is_loopback(host):
        click.echo(f"c4engine serve: listening on {host}, reachable from other machines; "
                   "docs/service.md says how to put it behind a reverse proxy", err=True)
    origins = tuple(origin.strip() for origin in cors.split(",") if origin.strip())
    path = cache_path or default_cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    settings = Settings(host, port, limits, threads, hash_mb, path, cache_mb << 20, queue_size, origins,
                        book_paths, idle_timeout)
    tell = lambda line: click.echo(line, err=True)  # noqa: E731
    try:
        if cluster_address is not None:
            serve_on_cluster(settings, cluster_address, replicas, tell)
        elif processes > 1:
            run_processes(settings, processes, tell)
        else:
            asyncio.run(run_service(settings, tell))
    except BookFileError as err:
        raise click.BadParameter(str(err), param_hint="'--book'") from None
    except sqlite3.Error as err:
        raise click.BadParameter(f"{path}: {err}", param_hint="'--cache'") from None
    except OSError as err:
        raise click.ClickException(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    sys.exit(0)

