"""Make the position set of ``c4engine strength`` (a developer tool, not shipped).

    python tools/make_strength_positions.py --per-phase 100 --seed 1 \
        --extra-middle 200 --out c4engine/data/strength_positions.txt

Needs the ``bitbully`` package (pip install bitbully), an independent perfect
solver used here only as a measuring instrument, never inside the engine.  Its
per-column scores follow Pons' convention (checked against his test sets in
tests/test_strength.py), and with its 12-stone opening book they are exact in
the opening too.

Positions come from mostly-sound games, not random ones: random games are
decided within a few moves, so their middle and end games test nothing.  Each
side plays a random move that keeps the game-theoretic result and is within
``SLACK`` points of the best score (so a winner drags its win out a little and a
loser resists nearly as long as it can); with probability ``--inaccuracy`` it
plays instead any move that does not hand the opponent a win on the next move.
A win on the spot is always taken.  From each game at most one position per
phase is kept, picked at random among those where the columns do not all score
the same and the side to move cannot win at once (no decision to test); a
position already in the set, or its mirror image, is not taken twice.

``--extra-middle N`` appends N more positions with 12-16 stones, from games of
their own (a second random stream, so the main set stays what ``--seed`` made):
right after the 12-stone opening book each move must be proved from scratch,
and that is where engines (ours included) lose games.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np
from bitbully import BitBully, Board  # type: ignore[import-untyped]
from bitbully import __version__ as bitbully_version  # type: ignore[import-untyped]

from c4engine.geometry import STANDARD
from c4engine.kernel.constants import WIDTH
from c4engine.referee.strength import PHASES, Phase, TestPosition
from c4engine.rules.notation import parse_digits
from c4engine.training.network import canonical_keys

SLACK = 2
EXTRA_MIDDLE = Phase("12-16 (extra)", 12, 16)


@dataclass(frozen=True)
class Ply:
    """A position reached in a game, with bitbully's score of each playable column."""

    moves: str
    scores: dict[int, int]
    can_win_now: bool

    def as_test_position(self) -> TestPosition:
        return TestPosition(self.moves, tuple(self.scores.get(col) for col in range(WIDTH)))


def sound_choices(scores: dict[int, int]) -> list[int]:
    """Columns that keep the result and lose at most SLACK points on the best."""
    best = max(scores.values())
    return [col for col, s in scores.items()
            if (s > 0) - (s < 0) == (best > 0) - (best < 0) and s >= best - SLACK]


def safe_choices(board: Board, scores: dict[int, int]) -> list[int]:
    """Columns after which the opponent cannot win at once (all columns if none)."""
    safe = [col for col in scores if not board.play_on_copy(col).can_win_next()]
    return safe or list(scores)


def choices(board: Board, scores: dict[int, int], rng: random.Random,
            inaccuracy: float) -> list[int]:
    """The columns a move is drawn from: a win on the spot is always taken."""
    if board.can_win_next():
        return [col for col, s in scores.items() if s == max(scores.values())]
    if rng.random() < inaccuracy:
        return safe_choices(board, scores)
    return sound_choices(scores)


def play_game(agent: BitBully, rng: random.Random, inaccuracy: float) -> Iterator[Ply]:
    """Every position of one mostly-sound game until it ends."""
    board, moves = Board(), ""
    while not board.is_game_over():
        scores = agent.score_all_moves(board)
        yield Ply(moves, scores, board.can_win_next())
        pool = choices(board, scores, rng, inaccuracy)
        col = rng.choice(sorted(pool))
        board.play(col)
        moves += str(col + 1)


def canonical_key(moves: str) -> int:
    """The same number for a position and its mirror image, as ``held-out overlap``
    compares positions."""
    pos = parse_digits(moves)
    return int(canonical_keys(np.array([pos.current]), np.array([pos.mask]), STANDARD)[0])


def pick(plies: list[Ply], phase: Phase, rng: random.Random, seen: set[int]) -> Ply | None:
    """A random position of ``phase`` with a decision to make and not yet in the set.
    A win on the spot is no decision worth testing: every engine finds it."""
    fits = [p for p in plies if phase.low <= len(p.moves) <= phase.high and not p.can_win_now
            and len(set(p.scores.values())) > 1 and canonical_key(p.moves) not in seen]
    return rng.choice(fits) if fits else None


def collect(phases: tuple[Phase, ...], per_phase: int, seed: int, inaccuracy: float,
            seen: set[int]) -> dict[str, list[Ply]]:
    """``per_phase`` positions of every phase in ``phases`` from as many games as that
    takes; ``seen`` (canonical keys of positions taken) grows with them."""
    agent, rng = BitBully("12-ply-dist"), random.Random(seed)
    chosen: dict[str, list[Ply]] = {phase.name: [] for phase in phases}
    games = 0
    while any(len(c) < per_phase for c in chosen.values()):
        plies = list(play_game(agent, rng, inaccuracy))
        games += 1
        for phase in phases:
            ply = pick(plies, phase, rng, seen) if len(chosen[phase.name]) < per_phase else None
            if ply is not None:
                chosen[phase.name].append(ply)
                seen.add(canonical_key(ply.moves))
        print(f"game {games}: " + ", ".join(f"{k} {len(v)}" for k, v in chosen.items()),
              file=sys.stderr)
    return chosen


def outcome_counts(plies: list[Ply]) -> str:
    """How many positions are won, drawn and lost for the side to move."""
    bests = [max(p.scores.values()) for p in plies]
    return (f"{sum(b > 0 for b in bests)} won, {sum(b == 0 for b in bests)} drawn, "
            f"{sum(b < 0 for b in bests)} lost")


def header(per_phase: int, seed: int, inaccuracy: float, extra_middle: int,
           chosen: dict[str, list[Ply]]) -> list[str]:
    lines = [
        "# c4engine strength positions: <moves> <s1> ... <s7>, '-' for the start position.",
        "# s1..s7: exact score of playing that column, Pons' convention from the side to",
        "# move (positive wins, 0 draws, negative loses; larger is a faster win or a",
        "# slower loss); x marks a full column.",
        (f"# made by: python tools/make_strength_positions.py --per-phase {per_phase} "
         f"--seed {seed} --inaccuracy {inaccuracy} --extra-middle {extra_middle}"),
        (f"# scored by bitbully {bitbully_version} (12-ply-dist opening book); mostly-sound "
         f"games: moves keep the result within {SLACK} points of the best, with probability "
         f"{inaccuracy} any move not losing at once; wins on the spot always taken and "
         "never kept as test positions."),
    ]
    lines += [f"# phase {name}: {len(plies)} positions, {outcome_counts(plies)}"
              for name, plies in chosen.items()]
    return lines


@click.command()
@click.option("--per-phase", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--inaccuracy", type=click.FloatRange(0, 1), default=0.15, show_default=True,
              help="Probability of a move chosen among all moves that do not lose at once.")
@click.option("--extra-middle", type=click.IntRange(min=0), default=0, show_default=True,
              help="More positions with 12-16 stones, appended after the main set.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
def main(per_phase: int, seed: int, inaccuracy: float, extra_middle: int, out: Path) -> None:
    """Write the strength position set, the phases taking turns line by line, so
    that the first N positions (``c4engine strength --limit N``) cover every phase;
    the extra 12-16-stone positions come last."""
    seen: set[int] = set()
    chosen = collect(PHASES, per_phase, seed, inaccuracy, seen)
    extra = collect((EXTRA_MIDDLE,), extra_middle, seed + 1, inaccuracy, seen) if extra_middle else {}
    lines = header(per_phase, seed, inaccuracy, extra_middle, chosen | extra)
    for row in zip(*chosen.values()):
        lines += [p.as_test_position().to_line() for p in row]
    lines += [p.as_test_position().to_line() for plies in extra.values() for p in plies]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
