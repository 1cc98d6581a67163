"""The interpreted tier (c4engine/search/interpreted.py): exact scores in plain Python,
checked against a plain minimax and Pons' scores, and its giving up when told."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import minimax_oracle as oracle
from c4engine.geometry import Geometry
from c4engine.rules.board import Board
from c4engine.rules.notation import parse_digits
from c4engine.search.interpreted import GivenUp, InterpretedSolve, interpreted_score

PONS = Path(__file__).resolve().parent.parent / "../shared/data/pons"
# boards and the stones played at random first, so that the oracle's minimax is quick
SMALL_BOARDS = [(Geometry(4, 4), 6), (Geometry(5, 4), 8), (Geometry(4, 5, 3), 6), (Geometry(3, 3, 3), 2),
                (Geometry(5, 5), 12), (Geometry(6, 4), 12), (Geometry(4, 5), 8)]


def always() -> bool:
    return True


def random_positions(geometry: Geometry, played: int, count: int, rng: random.Random) -> list[list[int]]:
    """Move lists (0-based) of positions still to be played whose mover cannot win at once."""
    found: list[list[int]] = []
    while len(found) < count:
        pos, moves = Board(geometry=geometry), []
        for _ in range(rng.randint(played, geometry.cells)):
            if pos.is_over() or pos.can_win_now():
                break
            moves.append(rng.choice(pos.legal_moves()))
            pos = pos.play(moves[-1])
        if not pos.is_over() and not pos.can_win_now():
            found.append(moves)
    return found


@pytest.mark.parametrize(("geometry", "played"), SMALL_BOARDS, ids=lambda value: str(value))
def test_scores_are_the_plain_minimax_scores(geometry: Geometry, played: int) -> None:
    rng = random.Random(f"{geometry}-{played}")
    for moves in random_positions(geometry, played, 8, rng):
        pos = Board(geometry=geometry).play_all(moves)
        exact = oracle.solve(oracle.Board.from_moves(geometry.width, geometry.height, geometry.connect,
                                                     [col + 1 for col in moves]))
        assert interpreted_score(pos, False, always)[0] == exact, moves
        assert interpreted_score(pos, True, always)[0] == (exact > 0) - (exact < 0), moves


def test_scores_are_pons_scores_near_the_end() -> None:
    """Pons' end-game set (7x6, his scores), the positions his rules do not settle."""
    path = PONS / "Test_L3_R1"
    if not path.exists():
        pytest.skip(f"Pons' test set {path} is not available")
    with path.open() as lines:
        pairs = [line.split() for _, line in zip(range(60), lines)]
    solved = 0
    for moves, score in pairs:
        pos = parse_digits(moves, Geometry(7, 6))
        if not pos.can_win_now():
            assert interpreted_score(pos, False, always)[0] == int(score), moves
            solved += 1
    assert solved >= 40


def test_a_win_forced_in_two_moves_takes_a_few_nodes() -> None:
    """8x8 after 44445555: c3 or f3 makes two threats, a win with the mover's 5th stone."""
    score, nodes = interpreted_score(parse_digits("44445555", Geometry(8, 8)), False, always) or (0, 0)
    assert (score, nodes) == (27, 3)


def test_the_solve_gives_up_when_told_and_asks_every_check_nodes() -> None:
    asked: list[int] = []

    def keep_going() -> bool:
        asked.append(solve.nodes)
        return len(asked) < 3

    empty = Board()
    solve = InterpretedSolve(empty, keep_going)
    assert interpreted_score(empty, False, lambda: False) is None
    with pytest.raises(GivenUp):
        solve.score(empty, False)
    assert asked == [InterpretedSolve.CHECK_NODES * k for k in (1, 2, 3)]
