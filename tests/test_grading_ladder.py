"""``c4engine grade ladder``: the Elo fit, and a short ladder through the referee with a
Python agent behind the protocol shim."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from c4engine.grading.command import grade_command
from c4engine.grading.ladder import ELO_OF_LEVEL, Rung, expected, place

AGENTS = Path(__file__).resolve().parent / "engines" / "grading_agents.py"


def test_an_even_score_against_one_level_places_the_agent_on_that_level() -> None:
    placement = place([Rung(10, 5, 10, 5)])
    assert placement.elo == pytest.approx(ELO_OF_LEVEL[10], abs=0.01)
    assert placement.low < placement.elo < placement.high and not placement.bound


def test_the_fit_makes_the_points_scored_the_points_expected() -> None:
    rungs = [Rung(0, 8, 1, 1), Rung(5, 3, 2, 5), Rung(10, 1, 0, 9)]
    placement = place(rungs)
    scored = sum(r.points for r in rungs)
    assert sum(r.games * expected(placement.elo, ELO_OF_LEVEL[r.level]) for r in rungs) == pytest.approx(scored)
    assert ELO_OF_LEVEL[0] < placement.elo < ELO_OF_LEVEL[10]
    wider = place([Rung(r.level, r.wins // 2, r.draws // 2, r.losses // 2) for r in rungs[:2]])
    assert wider.high - wider.low > placement.high - placement.low  # fewer games, a wider interval


def test_an_agent_that_wins_or_loses_everything_is_bounded_not_placed() -> None:
    assert place([Rung(0, 4, 0, 0), Rung(5, 4, 0, 0)]).bound == "above"
    below = place([Rung(0, 0, 0, 6)])
    assert below.bound == "below" and below.elo == ELO_OF_LEVEL[0] and math.isinf(below.low)
    assert "lost every game" in str(below)


def test_a_python_agent_climbs_the_ladder_through_the_referee() -> None:
    result = CliRunner().invoke(grade_command, ["ladder", "--python", f"{AGENTS}:prints", "--shape", "position",
                                                "--levels", "0,20", "--games", "2", "--movetime", "20", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    levels = {entry["level"]: entry for entry in document["levels"]}
    assert set(levels) == {0, 20}
    assert all(e["wins"] + e["draws"] + e["losses"] == 2 for e in levels.values())
    assert levels[20]["losses"] == 2  # the first free column every move loses to full strength


def test_each_level_s_match_gets_the_ladder_s_settings() -> None:
    from c4engine.grading.ladder import LadderSettings, level_config
    from c4engine.referee.config import EngineSpec
    from c4engine.referee.stats import SprtParams
    sprt = SprtParams(elo0=0, elo1=50)
    config = level_config(EngineSpec("agent"), "c4engine", 5, LadderSettings(4, 30, 500, 7, sprt, 2))
    assert config.engines[1].options == (("Skill Level", "5"),)
    assert (config.games, config.movetime, config.timemargin, config.sprt, config.concurrency) == (4, 30, 500, sprt, 2)
    assert config.seed == 12 and config.order == "random"


@pytest.mark.parametrize(("arguments", "says"), [
    (["--engine", "x", "--levels", "3"], "the scale is measured at levels 0, 5, 10, 15, 20"),
    (["--engine", "x", "--python", "m:f"], "give one agent"),
    (["--engine", "x", "--sprt", "elo0=1 elo1=0"], "--sprt"),
])
def test_bad_ladder_settings_are_refused_before_any_game(arguments: list[str], says: str) -> None:
    result = CliRunner().invoke(grade_command, ["ladder", *arguments])
    assert result.exit_code == 2 and says in result.output
