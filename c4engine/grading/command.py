"""``c4engine grade``: build grading sets, grade an agent on them, place it on the ladder."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import IO

import click

from ..cli import board_option
from ..engine.limits import Limit
from ..geometry import Geometry
from ..referee.cli import known_variants
from ..referee.cluster import check_address, run_cluster_match
from ..referee.config import EngineSpec, MatchConfig
from ..rules.notation import uses_digits
from ..reviewer.games import GameInput, InputProblem, read_input, read_limited
from .agents import SHAPES, Agent, AgentUnusable, EngineAgent, PythonAgent, RandomAgent
from .build import DEFAULT_NODE_LIMIT, build_set, exact_scores
from .ladder import ELO_OF_LEVEL, LADDER_LEVELS
from .report import Grading, json_document, set_names, table_lines
from .runner import GAMES_SET, grade_games, grade_sets
from .sets import GradeSet, SetFileError, read_set, write_set


@click.group("grade")
def grade_command() -> None:
    """Exact grades for any agent on any board: sets of positions with every
    column's exact score, an agent's moves judged on them (perfect, good,
    mistake), and a place on the UCI_Elo ladder."""


@grade_command.command("build")
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@board_option
@click.option("--seed", type=int, default=1, show_default=True, help="The same seed makes the same set.")
@click.option("--per-class", type=click.IntRange(1, 100_000), default=100, show_default=True,
              help="Positions wanted in each of Pons' six classes (and at most as many unknown per band).")
@click.option("--node-limit", type=click.IntRange(1, 1 << 60), default=DEFAULT_NODE_LIMIT, show_default=True,
              help="Nodes a column's solve may take; past it the position is unknown, never guessed.")
def build_command(output: Path, geometry: Geometry, seed: int, per_class: int, node_limit: int) -> None:
    """Make a grading set in OUTPUT: positions by random and by imperfect play,
    classed by stones played and moves left as Pons' sets, every column scored
    exactly by c4engine's solver (docs/reference/formats.md has the rules)."""
    from ..books.build import Progress
    if not uses_digits(geometry):
        raise click.BadParameter(f"{geometry}: a set writes moves as column digits, so boards of up to "
                                 f"9 columns", param_hint="--board")
    _check_folder(output)
    bar = Progress(per_class * 6, 0, sys.stderr)
    grade_set, report = build_set(geometry, seed, per_class, node_limit,
                                  lambda done, _total: bar.advance(done - bar.done))
    bar.close()
    _written(output, lambda: write_set(output, grade_set))
    click.echo(f"{output}: {_counts(grade_set)} on {geometry}; {report.solved} positions solved "
               f"in {report.seconds:.1f} s", err=True)


def _check_folder(path: Path) -> None:
    """Refuse, before any work, an output whose folder does not exist."""
    if not path.resolve().parent.is_dir():
        raise click.ClickException(f"cannot write {path}: no folder {path.parent}")


def _written(path: Path, write: Callable[[], None]) -> None:
    """Run ``write``; a click error naming ``path`` if the file cannot be written."""
    try:
        write()
    except OSError as err:
        raise click.ClickException(f"cannot write {path}: {err.strerror or err}") from None


def _counts(grade_set: GradeSet) -> str:
    """``600 positions (L1_R1 100, ..., L1_R? 3)``: the positions of each class."""
    labels = [p.label for p in grade_set.positions]
    each = ", ".join(f"{label} {labels.count(label)}" for label in sorted(set(labels)))
    return f"{len(labels)} positions ({each})"


@grade_command.command("import")
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("pons_files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def import_command(output: Path, pons_files: tuple[str, ...]) -> None:
    """Store Pons' test files (Test_L1_R1 ...) as one set in OUTPUT, every column
    solved once (on 7x6 with the book), so that later gradings reuse the scores."""
    _check_folder(output)
    sets = _load_sets(pons_files, None)
    merged = GradeSet(output.name, sets[0].geometry, tuple(p for s in sets for p in s.positions),
                      {"source": "pons " + " ".join(Path(f).name for f in pons_files)})
    _written(output, lambda: write_set(output, merged))
    click.echo(f"{output}: {_counts(merged)}", err=True)


def _load_sets(paths: Sequence[str], geometry: Geometry | None) -> list[GradeSet]:
    sets = []
    for path in paths:
        try:
            sets.append(read_set(path, geometry, partial(exact_scores, node_limit=None)))
        except SetFileError as err:
            raise click.ClickException(str(err)) from None
    boards = {s.geometry for s in sets}
    if len(boards) > 1:
        raise click.ClickException(f"the sets are of different boards ({', '.join(sorted(b.name for b in boards))}): "
                                   f"grade one board at a time")
    return sets


def _option_pairs(values: Sequence[str]) -> list[tuple[str, str]]:
    pairs = []
    for text in values:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{text}: expected NAME=VALUE", param_hint="--option")
        pairs.append((name.strip(), value))
    return pairs


def _agent(python: str | None, shape: str, openspiel: str | None, pettingzoo: str | None, engine: str | None,
           options: Sequence[str], random_seed: int | None, movetime: int | None, depth: int | None,
           nodes: int | None, move_seconds: float, geometry: Geometry) -> Agent:
    given = [kind for kind, value in (("--python", python), ("--openspiel", openspiel), ("--pettingzoo", pettingzoo),
                                      ("--engine", engine), ("--random", random_seed)) if value is not None]
    if len(given) != 1:
        raise click.UsageError("give one agent: --python, --openspiel, --pettingzoo, --engine or --random "
                               "(or --games FILE)")
    if python is not None:
        return PythonAgent(python, shape, move_seconds)
    if openspiel is not None:
        return PythonAgent(openspiel, "openspiel", move_seconds)
    if pettingzoo is not None:
        return PythonAgent(pettingzoo, "pettingzoo", move_seconds)
    if engine is not None:
        if not (movetime or depth or nodes):
            movetime = 100
        limit = Limit(time=None if movetime is None else movetime / 1000, depth=depth, nodes=nodes)
        return EngineAgent(engine, _option_pairs(options), limit, geometry)
    assert random_seed is not None
    return RandomAgent(random_seed)


@grade_command.command("run")
@click.argument("sets", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--board", "board", default=None, metavar="WxH[kK]",
              help="Refuse sets of any other board [default: the sets' own].")
@click.option("--python", metavar="MODULE:FUNCTION", help="A Python agent (or file.py:function), run in a child process.")
@click.option("--shape", type=click.Choice(SHAPES[:2]), default="kaggle", show_default=True,
              help="How --python is called: agent(observation, configuration) -> 0-based column (Kaggle), "
                   "or agent(position) -> column 1-W.")
@click.option("--openspiel", metavar="mcts:N|MODULE:FACTORY",
              help="An OpenSpiel bot: OpenSpiel's MCTSBot with N simulations, or FACTORY(game) -> pyspiel.Bot.")
@click.option("--pettingzoo", metavar="MODULE:POLICY",
              help="A PettingZoo connect_four_v3 policy: POLICY(observation, action_mask) -> 0-based column.")
@click.option("--engine", metavar="CMD", help="An engine command line speaking the protocol, as match --engine.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE", help="setoption for --engine (repeatable).")
@click.option("--movetime", type=click.IntRange(1, 3_600_000), metavar="MS",
              help="--engine's time a move [default: 100 ms unless --depth or --nodes].")
@click.option("--depth", type=click.IntRange(1, 1000), help="--engine's depth a move.")
@click.option("--nodes", type=click.IntRange(1, 1 << 60), help="--engine's nodes a move.")
@click.option("--random", "random_seed", type=int, metavar="SEED", help="A uniformly random mover, seeded.")
@click.option("--games", "games_path", type=click.File("rb"), metavar="FILE",
              help="Grade the moves of played games (PGN or a digit line per game) instead of an agent.")
@click.option("--player", metavar="NAME", help="With --games: only this player's moves (a White/Black tag).")
@click.option("--move-seconds", type=click.FloatRange(0.01, 3600), default=10.0, show_default=True,
              help="A --python agent's time a move; past it the move is a failure and the agent restarted.")
@click.option("--node-limit", type=click.IntRange(1, 1 << 60), default=DEFAULT_NODE_LIMIT, show_default=True,
              help="With --games: nodes a column's solve may take; past it the move is left out.")
@click.option("--name", "agent_name", help="The agent's name in the report.")
@click.option("--json", "as_json", is_flag=True, help="Write the grades as JSON on standard output.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a report (one offline HTML file, with plots) here.")
def run_command(sets: tuple[str, ...], board: str | None, python: str | None, shape: str, openspiel: str | None,
                pettingzoo: str | None, engine: str | None,
                options: tuple[str, ...], movetime: int | None, depth: int | None, nodes: int | None,
                random_seed: int | None, games_path: IO[bytes] | None, player: str | None, move_seconds: float,
                node_limit: int, agent_name: str | None, as_json: bool, html_path: Path | None) -> None:
    """Grade an agent's move in every position of SETS (set files from `grade build`,
    or Pons' Test_L*_R* files) against exact scores: perfect (the best score),
    good (the win/draw/loss kept), mistake (as AlphaZero.jl counts it), by set,
    class and phase, with Wilson 95% intervals.

    An agent that raises, hangs, crashes or gives an illegal move fails that
    position, named in the report, and grading goes on."""
    from ..books.build import Progress
    from ..referee.cli import board_geometry
    geometry = board_geometry(board)
    command = "c4engine grade run " + shlex.join(sys.argv[3:]) if len(sys.argv) > 3 else ""
    bar: Progress | None = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = Progress(total, 0, sys.stderr)
        bar.advance(done - bar.done)

    if games_path is not None:
        if sets:
            raise click.UsageError("give SETS or --games, not both")
        grading = _grade_games(games_path, player, node_limit, progress, agent_name, command)
    else:
        if not sets:
            raise click.UsageError("give the SETS to grade on (c4engine grade build makes one)")
        loaded = _load_sets(sets, geometry)
        board_of = loaded[0].geometry
        agent = _agent(python, shape, openspiel, pettingzoo, engine, options, random_seed, movetime, depth, nodes,
                       move_seconds, board_of)
        try:
            grades = grade_sets(agent, loaded, progress)
        except AgentUnusable as err:
            raise click.ClickException(f"the agent cannot be used: {err}") from None
        finally:
            agent.close()
        grading = Grading(agent_name or agent.name, board_of.name, grades, set_names(loaded),
                          sum(len(s.positions) - len(s.known) for s in loaded), command)
    if bar is not None:
        bar.close()
    _write(grading, as_json, html_path)


def _grade_games(source: IO[bytes], player: str | None, node_limit: int, progress: Callable[[int, int], None],
                 agent_name: str | None, command: str) -> Grading:
    try:
        items = read_input(read_limited(source), known_variants(None))
    except ValueError as err:
        raise click.ClickException(str(err)) from None
    games = [item for item in items if isinstance(item, GameInput) and item.game.start_fen is None]
    for item in items:
        if isinstance(item, InputProblem):
            click.echo(f"error: {item}", err=True)
        elif item.game.start_fen is not None:
            click.echo(f"error: game {item.number} (line {item.line}): set up from a FEN: left out", err=True)
    boards = {g.geometry for g in games}
    if len(boards) > 1:
        raise click.ClickException("the games are of different boards: grade one board at a time")
    if not games:
        raise click.ClickException("no game to grade")
    grades, unknown = grade_games(games, player, node_limit, progress)
    name = agent_name or player or "the games' players"
    return Grading(name, games[0].geometry.name, grades, [GAMES_SET], unknown, command)


def _write(grading: Grading, as_json: bool, html_path: Path | None) -> None:
    if html_path is not None:
        from .html import write_report
        _written(html_path, lambda: write_report(html_path, grading))
    if as_json:
        click.echo(json.dumps(json_document(grading), indent=1))
    else:
        for line in table_lines(grading):
            click.echo(line)


def _levels(text: str) -> list[int]:
    try:
        levels = [int(word) for word in text.split(",")]
    except ValueError:
        raise click.BadParameter(f"{text}: expected levels like 0,5,10", param_hint="--levels") from None
    unknown = [level for level in levels if level not in LADDER_LEVELS]
    if unknown:
        raise click.BadParameter(f"level {unknown[0]}: the scale is measured at levels "
                                 f"{', '.join(map(str, LADDER_LEVELS))}", param_hint="--levels")
    return levels


@grade_command.command("ladder")
@click.option("--python", metavar="MODULE:FUNCTION", help="A Python agent, played through a protocol shim.")
@click.option("--shape", type=click.Choice(SHAPES[:2]), default="kaggle", show_default=True,
              help="How --python is called (as for grade run).")
@click.option("--openspiel", metavar="mcts:N|MODULE:FACTORY", help="An OpenSpiel bot (as for grade run).")
@click.option("--pettingzoo", metavar="MODULE:POLICY", help="A PettingZoo policy (as for grade run).")
@click.option("--engine", metavar="CMD", help="An engine command line speaking the protocol.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE", help="setoption for --engine (repeatable).")
@click.option("--levels", default=",".join(map(str, LADDER_LEVELS)), show_default=True,
              help="The levels to play, of those the scale is measured at.")
@click.option("--games", type=click.IntRange(2, 100_000), default=10, show_default=True,
              help="Games against each level (openings played with both colours).")
@click.option("--movetime", type=click.IntRange(1, 3_600_000), default=100, show_default=True, metavar="MS",
              help="Time a move, for both sides (the scale was measured at 50 ms).")
@click.option("--timemargin", type=click.IntRange(0, 3_600_000), default=2000, show_default=True, metavar="MS",
              help="Lateness tolerated before a move loses on time: an agent that does not watch the "
                   "clock gets Kaggle's 2 s.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the openings' order.")
@click.option("--sprt", metavar="'elo0=0 elo1=10 alpha=0.05 beta=0.05'",
              help="Stop a level's match when the SPRT decides (as match --sprt).")
@click.option("--concurrency", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Games played at once.")
@click.option("--cluster", metavar="ADDRESS", callback=check_address,
              help="Play the matches on a Ray cluster (as match --cluster).")
@click.option("--json", "as_json", is_flag=True, help="Write the results as JSON.")
def ladder_command(python: str | None, shape: str, openspiel: str | None, pettingzoo: str | None,
                   engine: str | None, options: tuple[str, ...], levels: str, games: int, movetime: int,
                   timemargin: int, seed: int, sprt: str | None, concurrency: int, cluster: str | None,
                   as_json: bool) -> None:
    """Place an agent on c4engine's UCI_Elo scale (a random mover is 0): short matches
    against the engine's levels through the referee, and the Elo that fits all
    the results, with its 95% interval.  On 7x6, where the scale is measured."""
    from ..engine.process import EngineError
    from ..referee.cli import default_engine_command, parse_sprt
    from ..referee.workers import run_match
    from .ladder import LadderSettings, climb, place, shim_command
    kinds = [(flag, value) for flag, value in (("python", python), ("openspiel", openspiel),
                                               ("pettingzoo", pettingzoo), ("engine", engine)) if value is not None]
    if len(kinds) != 1:
        raise click.UsageError("give one agent: --python, --openspiel, --pettingzoo or --engine")
    kind, spec = kinds[0]
    shapes = {"python": shape, "openspiel": "openspiel", "pettingzoo": "pettingzoo"}
    agent = EngineSpec(spec, spec, tuple(_option_pairs(options))) if kind == "engine" \
        else EngineSpec(shim_command(shapes[kind], spec), spec)

    def run(config: MatchConfig) -> tuple[int, int, int]:
        def progress(line: str) -> None:
            click.echo(line, err=True)
        report = run_cluster_match(config, progress, address=cluster, concurrency=concurrency) if cluster \
            else run_match(config, progress)
        return report.tally.wdl()

    try:
        settings = LadderSettings(games, movetime, timemargin, seed, parse_sprt(sprt) if sprt else None, concurrency)
        rungs = climb(agent, default_engine_command(), _levels(levels), settings, run)
    except EngineError as err:
        raise click.ClickException(str(err)) from None
    placement = place(rungs)
    if as_json:
        click.echo(json.dumps({"agent": spec, "elo": placement.elo, "low": placement.low, "high": placement.high,
                               "bound": placement.bound or None,
                               "levels": [{"level": r.level, "elo": ELO_OF_LEVEL[r.level], "wins": r.wins,
                                           "draws": r.draws, "losses": r.losses} for r in rungs]}, indent=1))
        return
    click.echo(f"{'level':>5} {'its Elo':>7} {'agent W-D-L':>12}")
    for r in rungs:
        click.echo(f"{r.level:>5} {ELO_OF_LEVEL[r.level]:>7} {f'{r.wins}-{r.draws}-{r.losses}':>12}")
    click.echo(f"Elo of {spec} on c4engine's UCI_Elo scale: {placement} (95%)")
