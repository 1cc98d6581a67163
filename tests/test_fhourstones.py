"""Boards past 64 bits against John Tromp's Fhourstones88: the result of random 8x8
and 9x7 positions of 30 to 44 stones, as the issue asks.  The oracle's results are
recorded in ``tests/data/fhourstones88_<board>.txt`` by ``tools/record_fhourstones.py``
(whose header names the source's commit and the build), because CI can build no
Fhourstones88: it reaches no GitHub, and no package registry carries it.
``tools/measure_fhourstones.py`` checks against a live build, and times both."""

from __future__ import annotations

from pathlib import Path

import pytest

from c4engine.geometry import Geometry
from c4engine.rules.board import Board
from c4engine.search.searcher import Searcher

DATA = Path(__file__).resolve().parent / "data"
SIGN = {"-": -1, "=": 0, "+": 1}


def recorded(board: str) -> list[tuple[str, int]]:
    """The recorded (moves, result for the side to move) lines for ``board``."""
    lines = (DATA / f"fhourstones88_{board}.txt").read_text().splitlines()
    return [(moves, SIGN[result]) for moves, result in
            (line.split() for line in lines if line and not line.startswith("#"))]


def position(moves: str, geometry: Geometry) -> Board:
    return Board(geometry=geometry).play_all([int(digit) - 1 for digit in moves])


@pytest.mark.parametrize("board", ["8x8", "9x7"])
def test_the_record_covers_what_the_issue_asks(board: str) -> None:
    """40 positions of 30-44 stones, wins and losses among them."""
    geometry = Geometry.parse(board)
    lines = recorded(board)
    stones = {position(moves, geometry).stones for moves, _ in lines}
    assert len(lines) == 40 and min(stones) >= 30 and max(stones) <= 44
    assert {1, -1} <= {sign for _, sign in lines}


@pytest.mark.slow
@pytest.mark.parametrize("board", ["8x8", "9x7"])
def test_results_agree_with_fhourstones88(board: str) -> None:
    geometry = Geometry.parse(board)
    searcher = Searcher(64, geometry=geometry, solving_only=True)
    for moves, sign in recorded(board):
        searcher.clear()
        score, _nodes = searcher.solve(position(moves, geometry), weak=True)
        assert (score > 0) - (score < 0) == sign, moves
