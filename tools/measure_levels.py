#!/usr/bin/env python3
"""Measure the difficulty levels (docs/guides/playing.md, "Difficulty levels"): a dev tool, not a test.

Plays every fifth level (0, 5, 10, 15, 20) with ``c4engine match`` against a
uniformly random mover (``tests/engines/random_engine.py``), levels 0-15 against
full strength (level 20), and each level against the next (a sweep against
full strength says little about how far apart two weak levels are), then
fits one Elo per level by maximum likelihood with the random mover fixed at 0.  Each pairing gets one virtual draw (a weak
prior), so that a clean sweep gives a finite estimate instead of infinity.
The error bars are 95% intervals from the fit's curvature.

    python tools/measure_levels.py --games 200 --movetime 50 --concurrency 2

A game's two engines think in turn, one thread each, so ``--concurrency 2`` keeps
both cores of a 2-core machine busy without two searches sharing one.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import click
import numpy as np

LEVELS = (0, 5, 10, 15, 20)
RANDOM = "random"
TIME_MARGIN = 500  # ms
ENGINES = Path(__file__).resolve().parent.parent / "tests" / "engines"
SCORE_RE = re.compile(r"^Score of \S+ vs \S+: (\d+) - (\d+) - (\d+)", re.M)


def engine_args(name: str) -> list[str]:
    if name == RANDOM:
        return ["--engine", f"{sys.executable} {ENGINES / 'random_engine.py'}", "--name", RANDOM]
    return ["--engine", f"{sys.executable} -m c4engine", "--name", name,
            "--option", f"Skill Level={name.removeprefix('L')}"]


def play(first: str, second: str, games: int, movetime: int, concurrency: int,
         ) -> tuple[int, int, int]:
    """Wins, losses, draws of ``first`` against ``second``.  Strength is measured, not
    punctuality: a move up to ``TIME_MARGIN`` ms late on a busy machine does not lose."""
    command = [sys.executable, "-m", "c4engine", "match", *engine_args(first), *engine_args(second),
               "--movetime", str(movetime), "--games", str(games), "--timemargin", str(TIME_MARGIN),
               "--concurrency", str(concurrency)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    wins, losses, draws = map(int, SCORE_RE.findall(out)[-1])
    click.echo(f"{first} vs {second}: {wins}-{losses}-{draws}", err=True)  # a pairing takes minutes
    return wins, losses, draws


def fit(results: dict[tuple[str, str], tuple[int, int, int]]) -> tuple[dict[str, float], dict[str, float]]:
    """Elo per player (random mover 0) and its 95% half-interval, by Newton's method."""
    players = [f"L{level}" for level in LEVELS]
    index = {name: i for i, name in enumerate(players)}
    elo = np.zeros(len(players))
    scale = math.log(10) / 400

    def strength(name: str) -> float:
        return 0.0 if name == RANDOM else elo[index[name]]

    for _ in range(100):
        grad, hess = np.zeros(len(players)), np.zeros((len(players), len(players)))
        for (a, b), (w, l, d) in results.items():
            points, games = w + d / 2 + 0.5, w + l + d + 1  # one virtual draw
            p = 1 / (1 + math.exp(-scale * (strength(a) - strength(b))))
            g, h = scale * (points - games * p), scale * scale * games * p * (1 - p)
            for name, sign in ((a, 1), (b, -1)):
                if name != RANDOM:
                    grad[index[name]] += sign * g
            for x in (a, b):
                for y in (a, b):
                    if RANDOM not in (x, y):
                        hess[index[x], index[y]] += h if x == y else -h
        elo += np.linalg.solve(hess, grad)
    errors = 1.96 * np.sqrt(np.diag(np.linalg.inv(hess)))
    return ({name: float(elo[i]) for name, i in index.items()},
            {name: float(errors[i]) for name, i in index.items()})


def pairing_elo(wins: int, losses: int, draws: int) -> tuple[float, float, float]:
    """The score, the Elo difference it means, and its 95% half-interval (normal
    approximation of the per-game score's spread, through the logistic's slope)."""
    games = wins + losses + draws
    score = (wins + draws / 2) / games
    clipped = min(max(score, 0.5 / games), 1 - 0.5 / games)
    variance = (wins * (1 - score) ** 2 + losses * score ** 2 + draws * (0.5 - score) ** 2) / games
    elo = -400 * math.log10(1 / clipped - 1)
    slope = 400 / math.log(10) / (clipped * (1 - clipped))
    return score, elo, 1.96 * math.sqrt(variance / games) * slope


@click.command()
@click.option("--games", type=int, default=100, show_default=True, help="Games per pairing.")
@click.option("--movetime", type=int, default=50, show_default=True, help="ms per move, both sides.")
@click.option("--concurrency", type=int, default=1, show_default=True, help="Games played at once.")
def main(games: int, movetime: int, concurrency: int) -> None:
    results: dict[tuple[str, str], tuple[int, int, int]] = {}
    for level in LEVELS:
        results[(f"L{level}", RANDOM)] = play(f"L{level}", RANDOM, games, movetime, concurrency)
        for stronger in sorted({level + 5, 20} - {level, 25}):
            results[(f"L{level}", f"L{stronger}")] = play(f"L{level}", f"L{stronger}", games, movetime,
                                                        concurrency)
    elo, error = fit(results)
    click.echo("| level | vs random (W-L-D) | vs level +5 (W-L-D) | vs level 20 (W-L-D) | Elo (random = 0) |")
    click.echo("|---|---|---|---|---|")
    for level in LEVELS:
        name = f"L{level}"
        cells = [results.get((name, other)) for other in (RANDOM, f"L{level + 5}", "L20")]
        if level == 15:
            cells[1] = None  # level 20 is the next level: one column is enough
        click.echo(f"| {level} | " + " | ".join("-".join(map(str, c)) if c else "-" for c in cells)
                   + f" | {elo[name]:.0f} ± {error[name]:.0f} |")
    click.echo("\n| pairing | W-L-D | score | Elo difference (95%) |")
    click.echo("|---|---|---|---|")
    for (a, b), (w, l, d) in results.items():
        score, diff, half = pairing_elo(w, l, d)
        swept = w == w + l + d or l == w + l + d
        shown = f"{'≥' if w else '≤'} {diff:+.0f} (a sweep)" if swept else f"{diff:+.0f} ± {half:.0f}"
        click.echo(f"| {a} vs {b} | {w}-{l}-{d} | {score:.3f} | {shown} |")


if __name__ == "__main__":
    main()
