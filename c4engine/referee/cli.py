"""``c4engine match``: the command line of the referee."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from ..engine import HANDSHAKE_TIMEOUT, EngineError
from .config import STALL_TIMEOUT, EngineSpec, MatchConfig, TimeControl
from .openings import builtin_openings, read_openings
from .stats import SprtParams
from .workers import run_match

def parse_tc(text: str) -> TimeControl:
    """``10+0.1`` or ``10``: seconds of base time and of increment per move."""
    base, _, inc = text.partition("+")
    try:
        base_s, inc_s = float(base), float(inc or 0)
    except ValueError:
        raise click.BadParameter(f"'{text}': expected SECONDS[+INCREMENT], e.g. 10+0.1",
                                 param_hint="--tc") from None
    if base_s <= 0 or inc_s < 0:
        raise click.BadParameter(f"'{text}': the base time must be positive", param_hint="--tc")
    return TimeControl(round(base_s * 1000), round(inc_s * 1000))


def parse_sprt(text: str) -> SprtParams:
    """``elo0=0 elo1=10 alpha=0.05 beta=0.05 [model=normalized|logistic]``."""
    values: dict[str, Any] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or key not in ("elo0", "elo1", "alpha", "beta", "model"):
            raise click.BadParameter(f"'{word}': expected elo0=, elo1=, alpha=, beta= or model=",
                                     param_hint="--sprt")
        try:
            values[key] = value if key == "model" else float(value)
        except ValueError:
            raise click.BadParameter(f"'{word}': not a number", param_hint="--sprt") from None
    try:
        return SprtParams(**values)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--sprt") from None


_ENGINE_GROUP_KEY = "c4engine.match.engines"
_GROUPED = ("engine", "name", "option")


class _MatchCommand(click.Command):
    """click keeps each option's values apart, but ``--name`` and ``--option`` belong
    to the ``--engine`` before them; the parser's record of the order tells which."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        opts, _, order = self.make_parser(ctx).parse_args(args=list(args))
        ctx.meta[_ENGINE_GROUP_KEY] = _engine_specs(opts, order)
        return super().parse_args(ctx, args)


def _engine_specs(opts: dict[str, object], order: Sequence[click.Parameter]) -> list[EngineSpec]:
    specs: list[EngineSpec] = []
    seen: Counter[str] = Counter()
    for param in order:
        if param.name not in _GROUPED:
            continue
        value = opts[param.name][seen[param.name]]  # type: ignore[index]
        seen[param.name] += 1
        if param.name == "engine":
            specs.append(EngineSpec(value))
        elif not specs:
            raise click.UsageError(f"--{param.name} {value}: give it after its --engine")
        elif param.name == "name":
            if specs[-1].name is not None:
                raise click.UsageError(f"--name {value}: this engine already has a name")
            specs[-1] = replace(specs[-1], name=value)
        else:
            specs[-1] = replace(specs[-1], options=specs[-1].options + (_split_option(value),))
    return specs


def _split_option(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise click.UsageError(f"--option {text}: expected NAME=VALUE")
    return name.strip(), value


def _game_count(games: int | None, rounds: int | None, openings: int) -> int:
    """--games, or two per round; by default every opening once with each colour."""
    if games is not None and rounds is not None:
        raise click.UsageError("give --games or --rounds, not both")
    if games is not None:
        return games
    return 2 * (rounds if rounds is not None else openings)


def _echo_err(line: str) -> None:
    click.echo(line, err=True)


@click.command("match", cls=_MatchCommand)
@click.option("--engine", "engine", multiple=True, metavar="CMD",
              help="Engine command line (shell quoting); give it twice.")
@click.option("--name", "name", multiple=True, metavar="N",
              help="Display name of the preceding --engine.")
@click.option("--option", "option", multiple=True, metavar="NAME=VALUE",
              help="setoption for the preceding --engine (repeatable).")
@click.option("--tc", help="Time control SECONDS[+INC], e.g. 10+0.1; the referee keeps the clocks.")
@click.option("--movetime", type=click.IntRange(min=1), metavar="MS", help="Time per move.")
@click.option("--depth", type=click.IntRange(min=1), help="Depth per move.")
@click.option("--nodes", type=click.IntRange(min=1), help="Nodes per move.")
@click.option("--timemargin", type=click.IntRange(min=0), default=0, show_default=True,
              metavar="MS", help="Lateness tolerated before a move loses on time.")
@click.option("--stall-timeout", type=click.FloatRange(min=0, min_open=True),
              default=STALL_TIMEOUT, show_default=True, metavar="SECONDS",
              help="Wait for a depth/nodes-limited move before it counts as a stall.")
@click.option("--handshake-timeout", type=click.FloatRange(min=0, min_open=True),
              default=HANDSHAKE_TIMEOUT, show_default=True, metavar="SECONDS",
              help="Wait for uciok at each engine start.")
@click.option("--openings", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="File of openings, one digit string per line, '-' for the empty board "
                   "(default: all 2-ply openings).")
@click.option("--order", type=click.Choice(["sequential", "random"]), default="sequential",
              show_default=True)
@click.option("--seed", type=int, help="Seed for --order random.")
@click.option("--games", type=click.IntRange(min=1), help="Number of games.")
@click.option("--rounds", type=click.IntRange(min=1), help="Number of openings, each played twice.")
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True,
              help="Games played at once, each with its own engine processes.")
@click.option("--sprt", metavar="'elo0=0 elo1=10 alpha=0.05 beta=0.05'",
              help="Stop when the SPRT decides: fastchess' GSPRT on game pairs, bounds in "
                   "normalized Elo (add model=logistic for plain Elo).")
@click.option("--pgn", "pgn_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Append the games to this PGN file.")
@click.option("--debug", is_flag=True, help="Print all engine traffic on stderr.")
@click.pass_context
def match_command(ctx: click.Context, /, tc: str | None, movetime: int | None, depth: int | None,
                  nodes: int | None, timemargin: int, stall_timeout: float,
                  handshake_timeout: float, openings: Path | None, order: str, seed: int | None,
                  games: int | None, rounds: int | None, concurrency: int, sprt: str | None,
                  pgn_path: Path | None, debug: bool, **_grouped: object) -> None:
    """Play two engines against each other and report the result."""
    specs = ctx.meta[_ENGINE_GROUP_KEY]
    if len(specs) != 2:
        raise click.UsageError(f"give exactly two --engine options, not {len(specs)}")
    if not (tc or movetime or depth or nodes):
        raise click.UsageError("give a limit: --tc, --movetime, --depth or --nodes")
    if pgn_path and not pgn_path.resolve().parent.is_dir():
        raise click.BadParameter(f"no directory for '{pgn_path}'", param_hint="--pgn")
    suite = read_openings(openings) if openings else builtin_openings()
    config = MatchConfig(
        engines=(specs[0], specs[1]), openings=suite,
        games=_game_count(games, rounds, len(suite)), tc=parse_tc(tc) if tc else None,
        movetime=movetime, depth=depth, nodes=nodes, timemargin=timemargin,
        stall_timeout=stall_timeout, handshake_timeout=handshake_timeout, order=order,
        seed=seed, concurrency=concurrency, sprt=parse_sprt(sprt) if sprt else None,
        pgn_path=pgn_path)
    try:
        report = run_match(config, _echo_err, _echo_err if debug else None)
    except EngineError as err:
        raise click.ClickException(str(err)) from None
    for line in report.tally.summary_lines(report.scheduled):
        click.echo(line)
