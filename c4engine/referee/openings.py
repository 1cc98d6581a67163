"""The openings a match is played from and the schedule of its games.

Each opening is played twice, the engines swapping colours, so that a lopsided
opening costs both the same; the pairs feed the pentanomial statistics.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import click

from ..geometry import STANDARD, Geometry
from ..inputs import numbered_lines, summary
from ..rules.board import RulesError
from ..rules.notation import parse_digits, uses_digits
from .config import GameSpec


def builtin_openings(geometry: Geometry = STANDARD) -> tuple[str, ...]:
    """Every 2-ply opening, one of each mirror pair: 25 positions on 7x6 (on a board
    too wide for digit moves, only the empty board).

    After two stones no side can be lost at once (a threat needs three), all first
    moves and replies are covered, and a mirror image would only replay the same
    game.  Many of these are won for one side with perfect play (the first player
    wins by starting in the centre), which pairing with colours swapped cancels;
    a vetted balanced list can be given with --openings."""
    if not uses_digits(geometry):
        return ("",)
    mirror = geometry.width + 1
    return tuple(f"{a}{b}" for a in range(1, mirror) for b in range(1, mirror)
                 if f"{a}{b}" <= f"{mirror - a}{mirror - b}")


EMPTY_BOARD = "-"  # an openings-file line for "start from the empty board"


def read_openings(path: Path, geometry: Geometry = STANDARD) -> tuple[str, ...]:
    """Digit strings, one per line (blank lines and ``#`` comments skipped, ``-`` for
    the empty board); each must be a legal game that is not over yet.  A file with
    bad lines is refused with all of them named (see :mod:`c4engine.inputs`)."""
    lines, problems = numbered_lines(path.read_bytes())
    openings = []
    for number, raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line == EMPTY_BOARD:
            line = ""
        try:
            if parse_digits(line, geometry).is_over():
                raise RulesError("the game is already over")
        except RulesError as err:
            problems.append((number, f"opening '{line}': {err}"))
        openings.append(line)
    if problems:
        raise click.UsageError(summary(str(path), problems))
    if not openings:
        raise click.UsageError(f"{path}: no openings found")
    return tuple(openings)


def schedule(openings: Sequence[str], games: int, order: str,
             seed: int | None) -> list[GameSpec]:
    """``games`` games in rounds of two: the same opening, engine 0 White then Black."""
    picks = _opening_stream(openings, order, seed)
    specs = []
    opening = ""
    for number in range(1, games + 1):
        if number % 2 == 1:
            opening = next(picks)
        specs.append(GameSpec(number, (number + 1) // 2, opening, white=(number - 1) % 2))
    return specs


def _opening_stream(openings: Sequence[str], order: str, seed: int | None) -> Iterator[str]:
    """Openings in file order, or shuffled anew on each pass through the list."""
    if order == "sequential":
        yield from itertools.cycle(openings)
    else:
        rng = random.Random(seed)
        while True:
            batch = list(openings)
            rng.shuffle(batch)
            yield from batch
