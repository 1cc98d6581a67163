"""The evaluation's zugzwang rows on every board (kernel.evaluation.zugzwang_rows)."""

from __future__ import annotations

import pytest

from c4engine.geometry import STANDARD, Geometry
from c4engine.kernel import evaluation
from c4engine.kernel.evaluation import zugzwang_rows

BOARDS = ["7x6", "7x7", "8x7", "6x7", "6x5", "5x4", "4x5", "9x6", "4x15", "12x4", "1x4", "2x3k3"]


def last_column_rows(geometry: Geometry) -> tuple[set[int], set[int]]:
    """The rows (from 0) each player fills in the last column, when every other
    column was filled first: the stones counted one by one."""
    stones_before = (geometry.width - 1) * geometry.height
    first, second = set(), set()
    for row in range(geometry.height):
        (first if (stones_before + row) % 2 == 0 else second).add(row)
    return first, second


def rows_of(cells: int, geometry: Geometry) -> set[int]:
    """The rows of the first column that ``cells`` covers; asserts every column agrees."""
    column = (1 << geometry.height) - 1
    rows = {row for row in range(geometry.height) if cells >> row & 1}
    for col in range(geometry.width):
        assert (cells >> (col * geometry.h1)) & column == sum(1 << row for row in rows)
    assert cells & ~geometry.board_mask == 0
    return rows


@pytest.mark.parametrize("board", BOARDS)
def test_each_player_s_rows_are_the_ones_he_fills_in_the_last_column(board: str) -> None:
    geometry = Geometry.parse(board)
    first, second = zugzwang_rows(geometry)
    assert (rows_of(first, geometry), rows_of(second, geometry)) == last_column_rows(geometry)


@pytest.mark.parametrize(("board", "first_rows"), [("7x6", {1, 3, 5}), ("7x7", {1, 3, 5, 7}), ("8x7", {2, 4, 6}),
                                                   ("6x7", {2, 4, 6}), ("5x4", {1, 3})])
def test_the_first_player_s_rows_counted_from_one(board: str, first_rows: set[int]) -> None:
    """Allis' rule on 7x6 (odd rows for the first player); swapped on an odd height
    with an even width."""
    geometry = Geometry.parse(board)
    assert {row + 1 for row in rows_of(zugzwang_rows(geometry)[0], geometry)} == first_rows


def test_the_7x6_kernel_compiles_the_7x6_rows() -> None:
    assert (evaluation.FIRST_PLAYER_ROWS, evaluation.SECOND_PLAYER_ROWS) == zugzwang_rows(STANDARD)
    assert evaluation.ODD_ROWS == evaluation.FIRST_PLAYER_ROWS
