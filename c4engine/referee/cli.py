"""``c4engine match``: the command line of the referee.

Every value is checked here, before any engine starts: a time control or an
SPRT bound that could only fail later (infinite, not a number, too large for
the clocks, outside what the SPRT model can compute) is refused at once.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from ..engine.limits import HANDSHAKE_TIMEOUT, Limit
from ..engine.process import EngineError, own_engine_argv
from ..geometry import STANDARD, Geometry, GeometryError
from ..protocol.go_params import MAX_VALUE
from ..rules.notation import parse_board
from ..rules.variants import Variant, VariantError, VariantSet, variant_name
from .cluster import (
    ADDRESS_FORMS,
    check_address,
    run_cluster_match,
    run_cluster_strength,
)
from .config import STALL_TIMEOUT, EngineSpec, MatchConfig, TimeControl
from .openings import builtin_openings, read_openings
from .stats import SprtParams
from .strength import (
    BUILTIN_POSITIONS,
    PHASES,
    EngineUnderTest,
    Verdict,
    builtin_positions,
    read_positions,
    report_lines,
    run_positions,
    select,
)
from .workers import run_match

MAX_SECONDS = 1e6  # about 11 days: any longer clock or wait is a typing error
MAX_MS = round(MAX_SECONDS * 1000)
MAX_COUNT = MAX_VALUE  # depth and nodes: the largest number the protocol's go takes
MAX_GAMES = 10_000_000  # the schedule is made up front
MAX_CONCURRENCY = 256  # two engine processes each


class Seconds(click.FloatRange):
    """A positive, finite number of seconds up to MAX_SECONDS (click's FloatRange
    lets ``nan`` through, and ``inf`` would overflow a wait)."""

    name = "seconds"

    def __init__(self) -> None:
        super().__init__(min=0, max=MAX_SECONDS, min_open=True)

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return seconds


def parse_tc(text: str) -> TimeControl:
    """``10+0.1`` or ``10``: seconds of base time and of increment per move."""
    base, _, inc = text.partition("+")
    try:
        base_s, inc_s = float(base), float(inc or 0)
    except ValueError:
        raise click.BadParameter(f"'{text}': expected SECONDS[+INCREMENT], e.g. 10+0.1",
                                 param_hint="--tc") from None
    if not (0 < base_s <= MAX_SECONDS and 0 <= inc_s <= MAX_SECONDS):
        raise click.BadParameter(f"'{text}': the base time must be more than 0 and the "
                                 f"increment at least 0, both at most {MAX_SECONDS:g} s",
                                 param_hint="--tc")
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


_GROUPED = {"--engine": "engine", "--name": "name", "--option": "option"}
_ENGINE_GROUP_KEY = "c4engine.match.engines"


class _MatchCommand(click.Command):
    """click keeps each option's values apart, but ``--name`` and ``--option`` belong
    to the ``--engine`` before them: the order is read from the arguments first,
    then click parses them as usual (and reports any other mistake)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[_ENGINE_GROUP_KEY] = _engine_specs(args)
        return super().parse_args(ctx, args)


def _grouped_options(args: Sequence[str]) -> list[tuple[str, str]]:
    """(``engine`` | ``name`` | ``option``, value) in command-line order, from both
    ``--engine CMD`` and ``--engine=CMD``; a bare ``--`` ends the options."""
    found = []
    i = 0
    while i < len(args) and args[i] != "--":
        flag, sep, value = args[i].partition("=")
        if flag in _GROUPED:
            if not sep:
                if i + 1 >= len(args):
                    break  # click reports the missing value
                i += 1
                value = args[i]
            found.append((_GROUPED[flag], value))
        i += 1
    return found


def _engine_specs(args: Sequence[str]) -> list[EngineSpec]:
    specs: list[EngineSpec] = []
    for kind, value in _grouped_options(args):
        if kind == "engine":
            specs.append(EngineSpec(value))
        elif not specs:
            raise click.UsageError(f"--{kind} {value}: give it after its --engine")
        elif kind == "name":
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


def board_geometry(board: str | None) -> Geometry | None:
    """The board ``--board`` names (None when it is not given); click's error for a
    board that cannot be read."""
    try:
        return parse_board(board) if board else None
    except GeometryError as err:
        raise click.BadParameter(str(err), param_hint="--board") from None


def known_variants(variants_path: str | None) -> VariantSet:
    """The built-in games and those of the ``--variants`` file; click's error for a
    file that cannot be read or defines a game c4engine does not play."""
    try:
        return VariantSet().with_file(variants_path) if variants_path else VariantSet()
    except VariantError as err:
        raise click.BadParameter(str(err), param_hint="--variants") from None


def resolve_variant(board: str | None, name: str | None, variants_path: str | None) -> Variant:
    """The game ``--board``, ``--variant`` and ``--variants`` ask for; click's errors
    when they are bad or disagree."""
    known = known_variants(variants_path)
    geometry = board_geometry(board)
    try:
        variant = known.find(name) if name else known.find(variant_name(geometry or STANDARD))
    except (VariantError, GeometryError) as err:
        raise click.BadParameter(str(err), param_hint="--variant" if name else "--board") from None
    if geometry is not None and variant.geometry != geometry:
        raise click.UsageError(f"--variant {name} is played on {variant.geometry}, not --board {geometry}")
    return variant


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
@click.option("--movetime", type=click.IntRange(1, MAX_MS), metavar="MS", help="Time per move.")
@click.option("--depth", type=click.IntRange(1, MAX_COUNT), help="Depth per move.")
@click.option("--nodes", type=click.IntRange(1, MAX_COUNT), help="Nodes per move.")
@click.option("--timemargin", type=click.IntRange(0, MAX_MS), default=0, show_default=True,
              metavar="MS", help="Lateness tolerated before a move loses on time.")
@click.option("--stall-timeout", type=Seconds(),
              default=STALL_TIMEOUT, show_default=True, metavar="SECONDS",
              help="Wait for a depth/nodes-limited move before it counts as a stall.")
@click.option("--handshake-timeout", type=Seconds(),
              default=HANDSHAKE_TIMEOUT, show_default=True, metavar="SECONDS",
              help="Wait for uciok, then for the first readyok, at each engine start.")
@click.option("--openings", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="File of openings, one digit string per line, '-' for the empty board "
                   "(default: all 2-ply openings).")
@click.option("--order", type=click.Choice(["sequential", "random"]), default="sequential",
              show_default=True)
@click.option("--seed", type=int, help="Seed for --order random.")
@click.option("--games", type=click.IntRange(1, MAX_GAMES), help="Number of games.")
@click.option("--rounds", type=click.IntRange(1, MAX_GAMES // 2),
              help="Number of openings, each played twice.")
@click.option("--concurrency", type=click.IntRange(1, MAX_CONCURRENCY),
              help="Games played at once, each with its own engine processes "
                   "[default: 1; with --cluster, one per two CPUs of the cluster].")
@click.option("--sprt", metavar="'elo0=0 elo1=10 alpha=0.05 beta=0.05'",
              help="Stop when the SPRT decides: fastchess' GSPRT on game pairs, bounds in "
                   "normalized Elo (add model=logistic for plain Elo).")
@click.option("--pgn", "pgn_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Append the games to this PGN file.")
@click.option("--debug", is_flag=True, help="Print all engine traffic on stderr.")
@click.option("--board", default=None, metavar="WxH[kK]",
              help="The board: 8x7, or 9x6k5 for five in a row [default: 7x6, four in a row].")
@click.option("--variant", "variant_name", metavar="NAME",
              help="UCI_Variant to play: cfour, cfour-WxH[kK] or a name from --variants "
                   "[default: the --board's].")
@click.option("--variants", "variants_path", type=click.Path(exists=True, dir_okay=False),
              help="A Fairy-Stockfish variants file, given to each engine as VariantPath.")
@click.option("--cluster", metavar="ADDRESS", callback=check_address,
              help=f"Play on a Ray cluster ({ADDRESS_FORMS}); needs "
                   "pip install 'c4engine[cluster]'.")
@click.pass_context
def match_command(ctx: click.Context, /, tc: str | None, movetime: int | None, depth: int | None,
                  nodes: int | None, timemargin: int, stall_timeout: float,
                  handshake_timeout: float, openings: Path | None, order: str, seed: int | None,
                  games: int | None, rounds: int | None, concurrency: int | None,
                  sprt: str | None, pgn_path: Path | None, debug: bool, board: str | None,
                  variant_name: str | None, variants_path: str | None, cluster: str | None,
                  **_grouped: object) -> None:
    """Play two engines against each other and report the result.

    Each opening is played twice, the engines swapping colours. The referee keeps
    the position and the clocks itself and trusts neither engine: a game is lost
    by the engine that

    \b
    - plays an illegal move, including a move in the wrong notation: a drop
      (P@d1) once it was given UCI_Variant cfour, a column digit if it offers no
      UCI_Variant (cutechess forfeits these too);
    - answers after its time plus --timemargin ("time forfeit"), or, with only
      --depth/--nodes, after --stall-timeout ("stalled connection");
    - crashes or closes its output ("abandoned"; it is restarted for the next game).

    \b
    Also:
    - an isready goes before every go; a bestmove written before its readyok
      (printed twice, or before any go) answers nothing: it is discarded and
      counted in the summary, never played;
    - a malformed or out-of-range number makes its info line count as unsent;
    - engine text is made safe for the PGN (braces become parentheses);
    - each engine runs in its own process group, ended with it;
    - uciok and the first readyok after a start are awaited --handshake-timeout
      each (an engine may compile or load its data first), but the first c4engine
      started, alone, up to 600 s: on a new board it compiles its kernel, which the
      engines started after it then load; every later readyok
      15 s; a readyok 8 s more per GiB of a Hash option (an engine that
      allocates or clears a large table at once is slow);
    - an engine line over 64 KiB is dropped unread and counted in the summary.
    """
    specs = ctx.meta[_ENGINE_GROUP_KEY]
    if len(specs) != 2:
        raise click.UsageError(f"give exactly two --engine options, not {len(specs)}")
    if not (tc or movetime or depth or nodes):
        raise click.UsageError("give a limit: --tc, --movetime, --depth or --nodes")
    if pgn_path and not pgn_path.resolve().parent.is_dir():
        raise click.BadParameter(f"no directory for '{pgn_path}'", param_hint="--pgn")
    variant = resolve_variant(board, variant_name, variants_path)
    geometry = variant.geometry
    suite = read_openings(openings, geometry) if openings else builtin_openings(geometry)
    config = MatchConfig(
        engines=(specs[0], specs[1]), openings=suite,
        games=_game_count(games, rounds, len(suite)), tc=parse_tc(tc) if tc else None,
        movetime=movetime, depth=depth, nodes=nodes, timemargin=timemargin,
        stall_timeout=stall_timeout, handshake_timeout=handshake_timeout, order=order,
        seed=seed, concurrency=concurrency or 1, sprt=parse_sprt(sprt) if sprt else None,
        pgn_path=pgn_path, variant=variant, variants_path=variants_path)
    try:
        runner = partial(run_cluster_match, address=cluster, concurrency=concurrency) \
            if cluster else run_match
        report = runner(config, _echo_err, _echo_err if debug else None)
    except EngineError as err:
        raise click.ClickException(str(err)) from None
    for line in report.tally.summary_lines(report.scheduled):
        click.echo(line)


def check_strength_board(board: str | None) -> None:
    """Refuse any board but 7x6 four in a row, naming why: the exact scores of the
    strength positions (shipped or given) are 7x6 ones."""
    geometry = board_geometry(board) or STANDARD
    if geometry != STANDARD:
        raise click.BadParameter(
            f"board {geometry}: strength positions are 7x6 four-in-a-row games with exact scores; "
            f"on other boards measure an engine with match --board {geometry}", param_hint="--board")


def _progress_line(verdict: Verdict) -> None:
    mark = "BLUNDER" if verdict.blunder else "fastest" if verdict.fastest else "kept"
    click.echo(f"{verdict.position.moves or '-'} {verdict.move} {mark} "
               f"{verdict.elapsed * 1000:.0f} ms", err=True)


def default_engine_command() -> str:
    """This installed engine, run by the interpreter that runs this command."""
    return shlex.join(own_engine_argv())


def strength_limit(ctx: click.Context, movetime: int, nodes: int | None) -> Limit:
    """``go nodes N`` with ``--nodes``, else ``go movetime MS``; both given is a usage error."""
    if nodes is None:
        return Limit(time=movetime / 1000)
    if ctx.get_parameter_source("movetime") is ParameterSource.COMMANDLINE:
        raise click.UsageError("give --movetime or --nodes, not both")
    return Limit(nodes=nodes)


@click.command("strength")
@click.option("--positions", "positions_file", type=click.Path(exists=True, dir_okay=False,
              path_type=Path), help="Position file: '<digits> <s1> ... <s7>' per line "
              "(default: the set shipped with c4engine).")
@click.option("--engine", "engine_command", metavar="CMD", default=None,
              help="Engine command line (shell quoting; default: this c4engine).")
@click.option("--movetime", type=click.IntRange(1, 1_000_000_000), default=1000, show_default=True,
              metavar="MS", help="Time per move.")
@click.option("--nodes", type=click.IntRange(1, MAX_COUNT), metavar="N",
              help="Nodes per move instead of --movetime: a single-threaded engine's run is "
                   "then the same however busy the machine is.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="setoption for the engine (repeatable).")
@click.option("--phase", "phases", multiple=True, type=click.Choice([p.name for p in PHASES]),
              help="Only positions of this phase (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N positions.")
@click.option("-v", "--verbose", is_flag=True, help="Print each position's result on stderr.")
@click.option("--cluster", metavar="ADDRESS", callback=check_address,
              help=f"Spread the positions over a Ray cluster ({ADDRESS_FORMS}), an engine "
                   "per CPU; needs pip install 'c4engine[cluster]'.")
@click.option("--board", default=None, metavar="WxH[kK]",
              help="The board [default: 7x6, four in a row]; the positions are 7x6 games, so "
                   "another board is refused (measure it with match).")
@click.pass_context
def strength_command(ctx: click.Context, positions_file: Path | None, engine_command: str | None,
                     movetime: int, nodes: int | None, options: tuple[str, ...],
                     phases: tuple[str, ...], limit: int | None, verbose: bool, cluster: str | None,
                     board: str | None) -> None:
    """Ask an engine for a move in positions whose exact scores are known and report,
    per phase, the moves that kept the result, the fastest, and the blunders.
    Exits with status 1 if any move blundered, 2 if the run could not be made."""
    check_strength_board(board)
    search_limit = strength_limit(ctx, movetime, nodes)
    try:
        if positions_file:
            positions = read_positions(positions_file.read_bytes(), str(positions_file))
        else:
            positions = read_positions(builtin_positions(), BUILTIN_POSITIONS)
        positions = select(positions, phases, limit)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--positions") from None
    pairs = [_split_option(o) for o in options]
    command = engine_command or default_engine_command()
    progress = _progress_line if verbose else None
    try:
        if cluster:
            verdicts = run_cluster_strength(cluster, command, pairs, positions, search_limit, progress)
        else:
            engine = EngineUnderTest(command, pairs)
            try:
                verdicts = run_positions(engine, positions, search_limit, progress)
            finally:
                engine.close()
    except EngineError as err:
        failure = click.ClickException(str(err))
        failure.exit_code = 2  # 1 is kept for "measured, and it blundered"
        raise failure from None
    for line in report_lines(verdicts):
        click.echo(line)
    ctx.exit(1 if any(v.blunder for v in verdicts) else 0)
