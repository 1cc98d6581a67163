"""Boards past 64 bits against John Tromp's Fhourstones88 (tests/fhourstones.py): the
result of random 8x8 and 9x7 positions of 30 to 44 stones, as the issue asks.  Slow,
and skipped where no Fhourstones88 was built (``FHOURSTONES88_DIR``)."""

from __future__ import annotations

from pathlib import Path

import fhourstones
import pytest

from c4engine.geometry import Geometry
from c4engine.search.searcher import Searcher

POSITIONS = {"8x8": 12, "9x7": 8}


@pytest.mark.slow
@pytest.mark.parametrize("board", list(POSITIONS))
def test_results_agree_with_fhourstones88(board: str, tmp_path: Path) -> None:
    geometry = Geometry.parse(board)
    program = fhourstones.binary(geometry)
    if program is None:
        pytest.skip(f"no Fhourstones88 for {board}: build it and name its folder in {fhourstones.DIR_ENV}")
    searcher = Searcher(64, geometry=geometry, solving_only=True)
    for pos in fhourstones.random_positions(geometry, POSITIONS[board], (30, 44), seed=geometry.cells):
        moves = fhourstones.digits(pos)
        searcher.clear()
        score, _nodes = searcher.solve(pos, weak=True)
        assert score == fhourstones.solve(program, moves, tmp_path).sign, moves
