"""The verdict logic (issue 22): per-column scores to values, marks and summaries."""

from __future__ import annotations

import pytest

from c4engine.engine import Score
from c4engine.geometry import STANDARD, Geometry
from c4engine.rules.notation import parse_digits
from c4engine.verdicts import (
    PlayerSummary,
    Value,
    best_columns,
    best_value,
    column_values,
    judge,
    mark,
    mate_of_pons,
    move_range,
    pons_of_mate,
    possible_marks,
    score_text,
    score_words,
    summarize,
    value_of_line,
)


def line(col: int, kind: str, value: int, depth: int = 10, bound: str | None = None) -> dict:
    info = {"pv": [col], "score": Score(kind, value), "depth": depth}
    if bound:
        info[bound] = True
    return info


def test_mate_and_pons_agree_with_the_rules_on_7x6() -> None:
    for stones in range(42):
        for pons in range(move_range(stones, STANDARD).low, move_range(stones, STANDARD).high + 1):
            if pons:
                mate = mate_of_pons(pons, stones)
                assert pons_of_mate(mate, stones) == pons
                # docs/design.md, "Scores": win N = (22 - s) - n // 2, loss N = -((22 + s) - (n + 1) // 2)
                assert mate == ((22 - pons) - stones // 2 if pons > 0 else -((22 + pons) - (stones + 1) // 2))
    assert pons_of_mate(21, 0) == 1 and pons_of_mate(-20, 1) == -1  # the empty board, perfect play
    assert pons_of_mate(1, 41) == 1 and pons_of_mate(-1, 40) == -1


@pytest.mark.parametrize("geometry", [Geometry(8, 7), Geometry(9, 6, 5), Geometry(5, 4)])
def test_mate_and_pons_invert_each_other_on_other_boards(geometry: Geometry) -> None:
    for stones in range(geometry.cells):
        span = move_range(stones, geometry)
        for pons in range(span.low, span.high + 1):
            if pons:
                assert pons_of_mate(mate_of_pons(pons, stones, geometry), stones, geometry) == pons
    assert move_range(geometry.cells - 1, geometry).high == 1  # winning with the last stone


def test_what_an_info_line_proves() -> None:
    stones = 10
    span = move_range(stones, STANDARD)
    assert value_of_line(line(1, "mate", 3), stones) == Value(pons_of_mate(3, stones), pons_of_mate(3, stones))
    assert value_of_line(line(1, "mate", 3, bound="lowerbound"), stones) == Value(pons_of_mate(3, stones), span.high)
    assert value_of_line(line(1, "mate", -4, bound="upperbound"), stones) == Value(span.low, pons_of_mate(-4, stones))
    assert value_of_line(line(1, "cp", 0, depth=32), stones) == Value(0, 0)  # searched to the end
    assert value_of_line(line(1, "cp", 0, depth=31), stones) == span  # not proven
    assert value_of_line(line(1, "cp", 250, depth=40), stones) == span
    assert value_of_line({"pv": [1]}, stones) == span


def test_column_values_narrow_per_column_and_leave_the_unnamed_open() -> None:
    board = parse_digits("4453")
    lines = [line(4, "mate", 5, bound="lowerbound"), line(4, "mate", 7), line(6, "cp", 30), line(9, "mate", 2)]
    values = column_values(lines, board)
    assert sorted(values) == list(range(7))
    assert values[3] == Value(pons_of_mate(7, 4), pons_of_mate(7, 4))
    assert values[5] == values[0] == move_range(4, STANDARD)


def test_a_full_column_has_no_value() -> None:
    assert 0 not in column_values([], parse_digits("111111"))


@pytest.mark.parametrize("before, after, expected", [
    (5, 5, "kept"), (0, 0, "kept"), (-3, -3, "kept"),
    (5, 2, "slower"), (-3, -7, "slower"),
    (5, 0, "mistake"), (0, -2, "mistake"),
    (5, -2, "blunder"), (1, -1, "blunder"),
])
def test_marks_from_exact_scores(before: int, after: int, expected: str) -> None:
    assert mark(before, after) == expected


def test_a_bound_gives_a_mark_only_where_every_score_agrees() -> None:
    assert possible_marks(Value(5, 5), Value(-9, -1)) == {"blunder"}
    assert possible_marks(Value(5, 9), Value(5, 5)) == {"kept", "slower"}
    assert possible_marks(Value(0, 0), Value(-9, 0)) == {"kept", "mistake"}


def test_judge_a_move() -> None:
    board = parse_digits("4453")
    exact = {col: Value(s, s) for col, s in enumerate([-2, -1, 0, 3, 0, 3, -2])}
    kept = judge(board, 5, exact, ply=5)
    assert (kept.mark, kept.best, kept.before, kept.player) == ("kept", (4, 6), Value(3, 3), 1)
    assert judge(board, 2, exact, ply=5).mark == "mistake"
    assert judge(board, 0, exact, ply=5).nag == "??"
    capped = {**exact, 1: move_range(4, STANDARD)}  # column 2 unproven
    assert judge(board, 1, capped, ply=5).mark is None
    assert judge(board, 0, capped, ply=5).mark == "blunder"  # whatever column 2 is worth
    assert best_columns(capped) == () and best_value(capped) == Value(3, move_range(4, STANDARD).high)


def test_summaries_and_accuracy() -> None:
    board = parse_digits("")
    values = {col: Value(s, s) for col, s in enumerate([-2, -1, 0, 1, 0, -1, -2])}
    verdicts = [judge(board, 3, values, 1), judge(board, 2, values, 2), judge(board, 0, values, 3),
                judge(board, 3, values, 4, opening=True),
                judge(board, 3, {**values, 3: move_range(0, STANDARD)}, 5)]
    first = summarize(verdicts, 1)
    assert first == PlayerSummary(moves=4, kept=1, mistakes=1, blunders=1, unproven=1)
    assert first.accuracy == pytest.approx(1 / 3)
    assert (first + first).moves == 8 and PlayerSummary().accuracy is None


def test_texts_spell_the_sign_out() -> None:
    stones = 4
    win7 = pons_of_mate(7, stones)
    assert score_text(Value(win7, win7), stones) == "+M7"
    assert score_words(Value(win7, win7), stones) == "wins in 7"
    loss12 = pons_of_mate(-12, stones)
    assert score_text(Value(loss12, loss12), stones) == "-M12"
    assert score_words(Value(loss12, loss12), stones) == "loses in 12"
    assert (score_text(Value(0, 0), stones), score_words(Value(0, 0), stones)) == ("0.00", "draw")
    span = move_range(stones, STANDARD)
    assert score_text(Value(win7, span.high), stones) == ">=+M7"
    assert score_words(Value(win7, span.high), stones) == "wins in at most 7"
    assert score_text(span, stones) == "?" and score_words(span, stones) == "unproven"
    assert score_words(Value(0, span.high), stones) == "draw or better"
