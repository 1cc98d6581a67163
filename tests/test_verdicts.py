"""The verdict logic (issue 22): engine scores to values, marks and summaries, and
the searches a game's review takes (against tests/minimax_oracle.py on a tiny board)."""

from __future__ import annotations

import random
from functools import cache

import minimax_oracle
import pytest

from c4engine.engine import Score
from c4engine.geometry import STANDARD, Geometry
from c4engine.rules.board import Board
from c4engine.rules.notation import parse_digits
from c4engine.reviewer.verdicts import (
    GameJudge,
    PlayerSummary,
    Search,
    Value,
    best_columns,
    best_value,
    column_values,
    judge,
    mark,
    mate_of_pons,
    move_range,
    pons_of_mate,
    position_value,
    possible_marks,
    summarize,
    value_of_line,
)
from c4engine.reviewer.verdict_text import score_text, score_words


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


def test_judge_a_move_from_every_column() -> None:
    board = parse_digits("4453")
    exact = {col: Value(s, s) for col, s in enumerate([-2, -1, 0, 3, 0, 3, -2])}
    unknown = move_range(4, STANDARD)
    kept = judge(board, 5, unknown, unknown, 5, exact)
    assert (kept.mark, kept.best, kept.before, kept.player) == ("kept", (4, 6), Value(3, 3), 1)
    assert judge(board, 2, unknown, unknown, 5, exact).mark == "mistake"
    assert judge(board, 0, unknown, unknown, 5, exact).nag == "??"
    capped = {**exact, 1: unknown}  # column 2 unproven
    assert judge(board, 1, unknown, unknown, 5, capped).mark is None
    assert judge(board, 0, unknown, unknown, 5, capped).mark == "blunder"  # whatever column 2 is worth
    assert best_columns(capped) == () and best_value(capped) == Value(3, unknown.high)
    narrowed = judge(board, 1, Value(3, 3), Value(-1, -1), 5, capped)  # the value searches narrow it
    assert (narrowed.mark, narrowed.best, narrowed.columns[2]) == ("blunder", (4, 6), Value(-1, -1))


def test_judge_a_move_from_two_values() -> None:
    """Without a search of every column a move proven kept is the best column
    named; any other has no best column."""
    board = parse_digits("4453")
    kept = judge(board, 5, Value(3, 3), Value(3, 3), 5)
    assert (kept.mark, kept.best, kept.columns) == ("kept", (6,), {6: Value(3, 3)})
    slower = judge(board, 5, Value(3, 3), Value(1, 1), 5)
    assert (slower.mark, slower.best) == ("slower", ())
    assert judge(board, 5, Value(3, 3), Value(0, 3), 5).best == ()


def test_the_position_value_is_its_best_lines() -> None:
    board = parse_digits("4453")
    win = pons_of_mate(7, 4)
    assert position_value([line(6, "mate", 7)], board) == Value(win, win)
    assert position_value([line(6, "mate", 7, bound="lowerbound")], board) == Value(win, move_range(4, STANDARD).high)
    assert position_value([line(6, "cp", 40)], board) == move_range(4, STANDARD)
    # a search cut short names the best move it finished: its loss is not the position's
    assert position_value([line(5, "mate", -15, bound="upperbound")], board) == move_range(4, STANDARD)
    assert position_value([{**line(2, "mate", -3), "multipv": 2}], board) == move_range(4, STANDARD)


def test_summaries_and_accuracy() -> None:
    board = parse_digits("")
    values = {col: Value(s, s) for col, s in enumerate([-2, -1, 0, 1, 0, -1, -2])}
    unknown = move_range(0, STANDARD)
    verdicts = [judge(board, 3, unknown, unknown, 1, values), judge(board, 2, unknown, unknown, 2, values),
                judge(board, 0, unknown, unknown, 3, values),
                judge(board, 3, unknown, unknown, 4, values, opening=True),
                judge(board, 3, unknown, unknown, 5, {**values, 3: unknown})]
    first = summarize(verdicts, 1)
    assert first == PlayerSummary(moves=4, kept=1, mistakes=1, blunders=1, unproven=1)
    assert first.accuracy == pytest.approx(1 / 3)
    assert (first + first).moves == 8 and PlayerSummary().accuracy is None


# -- the searches of a game, on a tiny board against a plain minimax -----------

TINY = Geometry(4, 3, 3)


@cache
def oracle(moves: tuple[int, ...]) -> int:
    """The exact score of the position after ``moves`` (0-based) on :data:`TINY`."""
    return minimax_oracle.solve(minimax_oracle.Board.from_moves(
        TINY.width, TINY.height, TINY.connect, [col + 1 for col in moves]))


def column_scores(moves: tuple[int, ...]) -> dict[int, int]:
    board = Board(geometry=TINY).play_all(list(moves))
    return {col: minimax_oracle.win_score(oracle_board(moves)) if board.is_winning_move(col)
            else (0 if board.stones + 1 == TINY.cells else -oracle(moves + (col,)))
            for col in board.legal_moves()}


def oracle_board(moves: tuple[int, ...]) -> minimax_oracle.Board:
    return minimax_oracle.Board.from_moves(TINY.width, TINY.height, TINY.connect, [c + 1 for c in moves])


def info(col: int, score: int, stones: int, multipv: int = 1) -> dict:
    """The ``info`` line an exact engine writes for ``col`` (0-based) scored ``score``."""
    mate = mate_of_pons(score, stones, TINY)
    return {"multipv": multipv, "pv": [col + 1], "depth": TINY.cells - stones,
            "score": Score("cp", 0) if mate is None else Score("mate", mate)}


def exact_engine(moves: list[int], search: Search) -> list[dict]:
    """What an engine that solves everything answers to ``search``."""
    played = tuple(moves[:search.played])
    scores = column_scores(played)
    ranked = sorted(scores, key=lambda col: -scores[col])
    if not search.every_column:
        return [info(ranked[0], scores[ranked[0]], len(played))]
    return [info(col, scores[col], len(played), n) for n, col in enumerate(ranked, start=1)]


def random_games(count: int) -> list[list[int]]:
    rng, games = random.Random(22), []
    while len(games) < count:
        board, moves = Board(geometry=TINY), []
        while not board.is_over() and (len(moves) < 4 or rng.random() > 0.1):
            moves.append(rng.choice(board.legal_moves()))
            board = board.play(moves[-1])
        games.append(moves)
    return games


@pytest.mark.parametrize("moves", random_games(12))
def test_a_game_is_judged_from_few_searches_as_if_every_column_were(moves: list[int]) -> None:
    """Each position is searched once for its value, every column only where the
    move was not kept, and the position a game-ending move reaches not at all; the
    verdicts are those of scoring every column everywhere."""
    judge_ = GameJudge(Board(geometry=TINY), moves, [False] * len(moves), TINY)
    searches = []
    while (search := judge_.next_search()) is not None:
        searches.append(search)
        judge_.take(exact_engine(moves, search))
    assert judge_.done and len(judge_.verdicts) == len(moves)
    ends = Board(geometry=TINY).play_all(moves).is_over()
    assert [s.played for s in searches if not s.every_column] == list(range(len(moves) + (not ends)))
    not_kept = []
    for ply, verdict in enumerate(judge_.verdicts):
        scores = column_scores(tuple(moves[:ply]))
        best = max(scores.values())
        assert verdict.before == Value(best, best) and verdict.after == Value(scores[moves[ply]], scores[moves[ply]])
        assert verdict.mark == mark(best, scores[moves[ply]])
        if verdict.mark == "kept":
            assert verdict.best == (moves[ply] + 1,)
        else:
            not_kept.append(ply)
            assert verdict.best == tuple(col + 1 for col, s in sorted(scores.items()) if s == best)
            assert verdict.columns == {col + 1: Value(s, s) for col, s in scores.items()}
    assert [s.played for s in searches if s.every_column] == not_kept


def test_a_capped_engine_leaves_marks_open_after_searching_every_column() -> None:
    moves = [1, 2, 1]
    judge_ = GameJudge(Board(geometry=TINY), moves, [False, True, False], TINY)
    searches = []
    while (search := judge_.next_search()) is not None:
        searches.append(search)
        judge_.take([{"multipv": 1, "pv": [1], "depth": 3, "score": Score("cp", 20)}])
    assert [(s.played, s.every_column) for s in searches] == [(0, False), (1, False), (0, True),
                                                             (2, False), (1, True), (3, False), (2, True)]
    assert [v.mark for v in judge_.verdicts] == [None, None, None]
    assert [v.opening for v in judge_.verdicts] == [False, True, False]
    with pytest.raises(ValueError):
        judge_.take([])


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
