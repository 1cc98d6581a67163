"""Difficulty levels (issue 11): the ``Skill Level``, ``UCI_LimitStrength`` and
``UCI_Elo`` options on the real process (pexpect), and the level's choice of move.

The level's effect is measured over many positions, not one: at level 0 the
engine must miss a win with the next stone in a good share of 100 positions
that have exactly one such win, and at full strength in none.
"""

from __future__ import annotations

import random

import pytest
from engine_process import EngineProcess, bestmoves, errors, infos

from c4engine.rules.board import Board
from c4engine.rules.scores import MATE, to_internal
from c4engine.search.levels import (
    ELO_AT_LEVEL,
    MAX_ELO,
    MIN_ELO,
    Strength,
    level_for_elo,
    move_value,
)
from c4engine.search.limits import Limits

EASY_WINS = 100
MIN_MISSED = 15  # measured: 182 missed of 300, so 15 of 100 is far below any fluke


def one_win_positions(count: int, seed: int = 11) -> list[Board]:
    """Positions from seeded random games where the side to move has exactly one
    column that wins at once."""
    rng = random.Random(seed)
    found: list[Board] = []
    while len(found) < count:
        pos = Board()
        while not pos.is_over():
            wins = [col for col in pos.legal_moves() if pos.is_winning_move(col)]
            if len(wins) == 1:
                found.append(pos)
                break
            pos = pos.play(rng.choice(pos.legal_moves()))
    return found


def digits(pos: Board) -> str:
    return "".join(str(col + 1) for col in pos.history)




def reset(engine: EngineProcess) -> None:
    for line in ("setoption name Skill Level value 20", "setoption name UCI_LimitStrength value false",
                 f"setoption name UCI_Elo value {MAX_ELO}", "setoption name MultiPV value 1",
                 "ucinewgame"):
        engine.send(line)
    assert engine.sync() == []


def missed_wins(engine: EngineProcess, positions: list[Board]) -> int:
    """How many of ``positions`` the engine answers with a move that does not win at once."""
    missed = 0
    for pos in positions:
        engine.send(f"position startpos moves {digits(pos)}")
        engine.send("go depth 2")
        move = bestmoves(engine.read_until("bestmove"))[0]["move"]
        missed += not pos.is_winning_move(int(move) - 1)
    return missed


# ------------------------------------------------------------------ options

def test_uci_lists_the_level_options(engine: EngineProcess) -> None:
    engine.send("uci")
    lines = engine.read_until("uciok")
    assert "option name Skill Level type spin default 20 min 0 max 20" in lines
    assert "option name UCI_LimitStrength type check default false" in lines
    assert f"option name UCI_Elo type spin default {MAX_ELO} min {MIN_ELO} max {MAX_ELO}" in lines


@pytest.mark.parametrize("line", [f"setoption name Skill Level value {level}" for level in range(21)]
                         + ["setoption name UCI_LimitStrength value true",
                            "setoption name uci_limitstrength value FALSE",
                            f"setoption name UCI_Elo value {MIN_ELO}",
                            f"setoption name UCI_Elo value {(MIN_ELO + MAX_ELO) // 2}",
                            f"setoption name UCI_Elo value {MAX_ELO}"])
def test_every_value_is_accepted_and_searches(engine: EngineProcess, line: str) -> None:
    reset(engine)
    assert engine.command(line) == []
    engine.send("position startpos moves 4453")
    engine.send("go depth 3")
    lines = engine.read_until("bestmove")
    assert not errors(lines) and len(bestmoves(lines)) == 1


@pytest.mark.parametrize("value, message", [
    ("-1", "option Skill Level: -1 is outside 0-20"),
    ("21", "option Skill Level: 21 is outside 0-20"),
    ("easy", "option Skill Level: 'easy' is not a whole number"),
])
def test_skill_level_refusals(engine: EngineProcess, value: str, message: str) -> None:
    reset(engine)
    assert errors(engine.command(f"setoption name Skill Level value {value}")) == [
        f"info string error {message}"]


@pytest.mark.parametrize("line, message", [
    (f"setoption name UCI_Elo value {MIN_ELO - 1}", f"option UCI_Elo: {MIN_ELO - 1} is outside {MIN_ELO}-{MAX_ELO}"),
    (f"setoption name UCI_Elo value {MAX_ELO + 1}", f"option UCI_Elo: {MAX_ELO + 1} is outside {MIN_ELO}-{MAX_ELO}"),
    ("setoption name UCI_LimitStrength value yes", "option UCI_LimitStrength: 'yes' is not true or false"),
    ("setoption name UCI_LimitStrength", "option UCI_LimitStrength needs a value"),
])
def test_limit_strength_refusals(engine: EngineProcess, line: str, message: str) -> None:
    reset(engine)
    assert errors(engine.command(line)) == [f"info string error {message}"]


def test_a_refused_level_keeps_the_last_good_one(engine: EngineProcess) -> None:
    reset(engine)
    engine.command("setoption name Skill Level value 0")
    engine.command("setoption name Skill Level value 99")
    assert missed_wins(engine, one_win_positions(EASY_WINS)) >= MIN_MISSED


# ------------------------------------------------------------------ effect

def test_level_0_misses_easy_wins_and_full_strength_never(engine: EngineProcess) -> None:
    """Level 0 missed 182 of 300 such wins when measured at 2d240a6 (113 of 300
    when the solver still ran between its iterations); at least 15 of 100 is asked."""
    positions = one_win_positions(EASY_WINS)
    reset(engine)
    assert missed_wins(engine, positions) == 0
    engine.command("setoption name Skill Level value 0")
    assert missed_wins(engine, positions) >= MIN_MISSED


def test_limit_strength_at_the_lowest_elo_plays_like_level_0(engine: EngineProcess) -> None:
    positions = one_win_positions(EASY_WINS)
    reset(engine)
    engine.command("setoption name UCI_LimitStrength value true")
    engine.command(f"setoption name UCI_Elo value {MIN_ELO}")
    assert missed_wins(engine, positions) >= MIN_MISSED
    engine.command("setoption name UCI_LimitStrength value false")
    assert missed_wins(engine, positions) == 0


def test_level_20_searches_exactly_as_full_strength(engine: EngineProcess) -> None:
    """Same node counts and move at a fixed depth: level 20 changes nothing."""
    def run() -> list[str]:
        engine.command("ucinewgame")
        engine.send("position startpos moves 4453")
        engine.send("go depth 9")
        lines = engine.read_until("bestmove")
        return [f"{m['depth']} {m['nodes']} {m['pv']}" for m in infos(lines)] + [lines[-1]]
    reset(engine)
    engine.command("setoption name Skill Level value 0")
    engine.command("setoption name Skill Level value 20")
    at_level_20 = run()
    reset(engine)
    assert run() == at_level_20


def test_a_level_knows_no_book_and_nothing_beyond_its_depth(engine: EngineProcess) -> None:
    """At full strength both positions are proven at once, the first through the
    book (its 12-stone scores lie four plies on), the second by the solver; a
    level searching as deep knows neither, and both are back at level 20."""
    def score_kinds(moves: str) -> list[str]:
        engine.send(f"position startpos moves {moves}")
        engine.send("go depth 4")
        return [m["kind"] for m in infos(engine.read_until("bestmove"))]
    in_the_book, late = "44533354", "544111732146347"
    reset(engine)
    assert all(score_kinds(moves)[-1] == "mate" for moves in (in_the_book, late))
    engine.command("setoption name Skill Level value 19")
    for moves in (in_the_book, late):
        assert "mate" not in score_kinds(moves), moves
    engine.command("setoption name Skill Level value 20")
    assert all(score_kinds(moves)[-1] == "mate" for moves in (in_the_book, late))


def test_a_level_shows_only_the_multipv_lines_asked_for(engine: EngineProcess) -> None:
    reset(engine)
    engine.command("setoption name Skill Level value 5")
    engine.send("position startpos moves 4453")
    engine.send("go depth 3")
    found = infos(engine.read_until("bestmove"))
    assert found and {m["multipv"] for m in found} == {"1"}


# ------------------------------------------------------------------ the choice itself

def test_level_depth_caps_grow_and_stay_below_full_strength() -> None:
    caps = [Strength(level).depth_cap for level in range(20)]
    assert caps == sorted(caps) and caps[0] == 1
    assert Strength(0).cap(Limits(depth=30, hard_ms=50)) == Limits(depth=1, hard_ms=50)


def test_proven_results_outweigh_any_heuristic_value() -> None:
    assert move_value(to_internal(1)) > move_value(MATE - 1) > move_value(0)
    assert move_value(to_internal(-1)) < move_value(-MATE + 1)
    assert move_value(to_internal(5)) > move_value(to_internal(2))  # the quicker win
    assert move_value(to_internal(-2)) > move_value(to_internal(-5))  # the slower loss


def test_choice_follows_the_scores() -> None:
    """At level 19 the best move wins almost always; at level 0 the worst still
    comes up, but less often than the best."""
    rng = random.Random(3)
    scores = [to_internal(3), 0, 10, to_internal(-5)]
    picks19 = [Strength(19).choose(scores, rng) for _ in range(500)]
    picks0 = [Strength(0).choose(scores, rng) for _ in range(2000)]
    assert picks19.count(0) == 500
    assert picks0.count(0) > picks0.count(2) > picks0.count(3) > 0


def test_elo_maps_onto_the_measured_levels() -> None:
    assert level_for_elo(MIN_ELO) == 0
    assert level_for_elo(MAX_ELO) == 20
    for (level, elo) in ELO_AT_LEVEL:
        assert level_for_elo(elo) == pytest.approx(level)
    assert 0 < level_for_elo((ELO_AT_LEVEL[0][1] + ELO_AT_LEVEL[1][1]) // 2) < 5
