"""The ladder: an agent placed on c4engine's ``UCI_Elo`` scale by short matches
against the engine's levels, played by the referee.

Each level's Elo is the one the scale is anchored on
(:data:`c4engine.search.levels.ELO_AT_LEVEL`: a random mover is 0, measured
with ``c4engine match``).  The agent plays each chosen level a fixed number of
games (or until an SPRT decides), through :func:`c4engine.referee.workers.run_match`
(or the Ray cluster's runner), and its Elo is the one under which the logistic
model makes the points it scored against all the levels together most likely
(as Ordo and BayesElo fit ratings): the expected score against a level of Elo
``E`` being ``1 / (1 + 10 ** ((E - R) / 400))``.  The interval is that
estimate's 95% normal interval, from the Fisher information of the games.
An agent that beat or lost to every level has no finite estimate: the ladder
then says "above the top" or "below the bottom" instead of a number.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..referee.config import EngineSpec, MatchConfig
from ..referee.openings import builtin_openings
from ..referee.stats import SprtParams
from ..search.levels import ELO_AT_LEVEL

Z_95 = 1.959963984540054
LADDER_LEVELS = tuple(level for level, _ in ELO_AT_LEVEL)
ELO_OF_LEVEL = dict(ELO_AT_LEVEL)


@dataclass(frozen=True)
class Rung:
    """The agent's results against one level: wins, draws, losses from its side."""

    level: int
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2


@dataclass(frozen=True)
class Placement:
    """The agent's Elo on the scale and its 95% interval; ``bound`` is ``above`` or
    ``below`` when it won or lost every game (then ``elo`` is the scale's end)."""

    elo: float
    low: float
    high: float
    bound: str = ""

    def __str__(self) -> str:
        if self.bound:
            return f"{self.bound} {self.elo:.0f} (it {'won' if self.bound == 'above' else 'lost'} every game)"
        return f"{self.elo:.0f} [{self.low:.0f}, {self.high:.0f}]"


def expected(agent: float, level_elo: float) -> float:
    return 1 / (1 + 10 ** ((level_elo - agent) / 400))


def place(rungs: Sequence[Rung]) -> Placement:
    """The maximum-likelihood Elo of the agent from its results against the levels."""
    played = [r for r in rungs if r.games]
    points, games = sum(r.points for r in played), sum(r.games for r in played)
    elos = [ELO_OF_LEVEL[r.level] for r in played]
    if not played or points == 0:
        return Placement(min(elos, default=0), -math.inf, min(elos, default=0), "below")
    if points == games:
        return Placement(max(elos), max(elos), math.inf, "above")
    low, high = min(elos) - 2000.0, max(elos) + 2000.0
    for _ in range(100):  # the points expected grow with the Elo: bisect for the points scored
        middle = (low + high) / 2
        if sum(r.games * expected(middle, ELO_OF_LEVEL[r.level]) for r in played) < points:
            low = middle
        else:
            high = middle
    elo = (low + high) / 2
    slope = math.log(10) / 400
    information = sum(r.games * expected(elo, e) * (1 - expected(elo, e)) * slope ** 2 for r, e in zip(played, elos))
    margin = Z_95 / math.sqrt(information)
    return Placement(elo, elo - margin, elo + margin)


@dataclass(frozen=True)
class LadderSettings:
    """How each level's match is played: games, time a move and the lateness
    tolerated, the openings' seed, an SPRT, games at once."""

    games: int = 10
    movetime: int = 100
    timemargin: int = 2000
    seed: int = 1
    sprt: SprtParams | None = None
    concurrency: int = 1


def level_config(agent: EngineSpec, engine_command: str, level: int, settings: LadderSettings) -> MatchConfig:
    """The match of ``agent`` (engine 0) against c4engine at ``level``."""
    opponent = EngineSpec(engine_command, f"c4engine level {level}", (("Skill Level", str(level)),))
    return MatchConfig(engines=(agent, opponent), openings=builtin_openings(), games=settings.games,
                       movetime=settings.movetime, timemargin=settings.timemargin, order="random",
                       seed=settings.seed + level, sprt=settings.sprt, concurrency=settings.concurrency)


def shim_command(shape: str, spec: str) -> str:
    """The engine command that plays a Python agent (:mod:`.shim`)."""
    import shlex
    return shlex.join([sys.executable, "-m", "c4engine.grading.shim", shape, spec])


def climb(agent: EngineSpec, engine_command: str, levels: Sequence[int], settings: LadderSettings,
          run: Callable[[MatchConfig], tuple[int, int, int]]) -> list[Rung]:
    """The agent's results against each level, each match run by ``run`` (which
    gives engine 0's wins, draws and losses)."""
    rungs = []
    for level in levels:
        config = level_config(agent, engine_command, level, settings)
        rungs.append(Rung(level, *run(config)))
    return rungs
