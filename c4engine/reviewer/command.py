"""``c4engine review``: the games of a file reviewed, written annotated or as JSON."""

from __future__ import annotations

import json
import sys
import time
from typing import IO

import click

from ..engine.process import EngineError
from ..referee.cli import known_variants
from ..referee.pgn import write_game
from .verdicts import GameReview
from .driver import DEFAULT_MOVETIME_MS, Reviewer
from .games import GameInput, InputProblem, read_input, read_limited
from .report import annotated, json_document, progress_line, summary_table, totals


@click.command("review")
@click.argument("file", type=click.File("rb"), default="-")
@click.option("--movetime", "movetime_ms", type=click.IntRange(1, 3_600_000),
              default=DEFAULT_MOVETIME_MS, show_default=True, metavar="MS",
              help="Time cap per search: where it hits, a score is a bound, never shown as exact.")
@click.option("--engine", metavar="CMD", default=None,
              help="Engine command line (shell quoting) that gives mate scores and MultiPV "
                   "lines for every column; default: c4engine itself.")
@click.option("--variants", "variants_path", type=click.Path(exists=True, dir_okay=False),
              help="A Fairy-Stockfish variants file: the names a Variant tag may use besides "
                   "cfour-WxH[kK] (as `match --variants` writes them).")
@click.option("--json", "as_json", is_flag=True, help="Write the verdicts as JSON instead of PGN.")
def review_command(file: IO[bytes], movetime_ms: int, engine: str | None, variants_path: str | None,
                   as_json: bool) -> None:
    """Judge every move of games with exact scores: kept, slower (?!), mistake (?) or
    blunder (??).

    FILE (default: standard input) is PGN, as `c4engine match`, cutechess and the
    board page write it, or one game per line in digits (4453...).  Writes the
    games annotated as PGN (or JSON with --json) on standard output, a line per
    game as it is done and each player's summary on standard error.  A game that
    cannot be read is named and skipped; the exit status is then 1."""
    variants = known_variants(variants_path)
    try:
        items = read_input(read_limited(file), variants)
    except ValueError as err:
        raise click.ClickException(str(err)) from None
    games = [item for item in items if isinstance(item, GameInput)]
    problems = [item for item in items if isinstance(item, InputProblem)]
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    reviews = _review_all(games, engine, movetime_ms)
    if as_json:
        click.echo(json.dumps(json_document(games, reviews, problems), indent=1))
    else:
        for item, review in zip(games, reviews):
            click.echo(write_game(annotated(item.game, review)), nl=False)
    click.echo(summary_table(totals(reviews)), err=True)
    if problems:
        sys.exit(1)


def _review_all(games: list[GameInput], engine: str | None, movetime_ms: int) -> list[GameReview]:
    reviews = []
    try:
        with Reviewer(engine, movetime_ms) as reviewer:
            for item in games:
                began = time.perf_counter()
                review = reviewer.review(item)
                reviews.append(review)
                click.echo(progress_line(len(reviews), len(games), review,
                                         time.perf_counter() - began), err=True)
    except EngineError as err:
        raise click.ClickException(f"the engine failed: {err}") from None
    return reviews
