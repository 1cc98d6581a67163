"""``c4engine gui``: start the web board's server on 127.0.0.1 and open the browser.

The server module needs aiohttp (the ``gui`` extra); it is imported only when
the command runs, so that without it ``c4engine gui`` says what to install
instead of failing with a traceback.
"""

from __future__ import annotations

import shlex
import socket
import webbrowser

import click

from ..cli import board_option
from ..engine.process import EngineError, engine_argv, own_engine_argv
from ..geometry import Geometry
from ..service.client import remote


def listening_socket(port: int) -> socket.socket:
    """A socket on 127.0.0.1 (``port`` 0: any free port), already listening, so that
    a browser opened before the server loop runs waits instead of failing."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    return sock


@click.command("gui")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--engine", "engine", metavar="CMD", default=None,
              help="Engine command line (shell quoting) speaking the protocol, e.g. fairy-stockfish; "
                   "default: c4engine itself.")
@click.option("--service", "service_url", metavar="URL", default=None,
              help="A solving server (c4engine serve, http://HOST:PORT) that answers the page's "
                   "analysis in place of the engine's search; the engine still plays its moves.")
@click.option("--no-browser", is_flag=True, help="Do not open the browser.")
@board_option
def gui_command(port: int, engine: str | None, service_url: str | None, no_browser: bool,
                geometry: Geometry) -> None:
    """Play and analyse in the browser: a local web board (Ctrl-C stops it).  The page
    opens on ``--board`` (its chooser picks another)."""
    try:
        service = remote(service_url) if service_url is not None else None
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--service") from None
    try:
        from aiohttp import web

        from .server import create_app
    except ImportError as err:
        raise click.ClickException(f"c4engine gui needs aiohttp ({err}): pip install 'c4engine[gui]'") from None
    try:
        argv = engine_argv(engine) if engine is not None else own_engine_argv()
    except EngineError as err:
        raise click.BadParameter(str(err), param_hint="--engine") from None
    try:
        sock = listening_socket(port)
    except OSError as err:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {err.strerror}") from None
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/" + ("" if geometry.is_standard else f"?board={geometry}")
    app = create_app(argv, service)

    async def announce(_app: web.Application) -> None:
        """The address, once aiohttp handles SIGINT and SIGTERM (its startup hooks run
        after that): a Ctrl-C from then on stops the server, even in a process started
        with SIGINT ignored (as ``&`` in a script starts it), where one sent before
        would be lost."""
        analysis = f"; analysis: {service.url}" if service is not None else ""
        click.echo(f"c4engine gui on {url} (engine: {shlex.join(argv)}{analysis}); Ctrl-C stops it")
        if not no_browser:
            webbrowser.open(url)

    app.on_startup.append(announce)
    web.run_app(app, sock=sock, print=None, shutdown_timeout=5.0)
