"""The submission's main.py (c4engine/kaggle/main.py) in the test process: what Kaggle's
loader takes from it, and the plain-Python player that moves until the search is ready."""

from __future__ import annotations

import os
import time
from pathlib import Path
from unittest import mock

import numba  # noqa: F401  (whole, before main's warm-up thread imports it: see below)
import pytest

# Importing main starts its warm-up thread, which imports numba while pytest collects
# the other test files, which import the kernel: two threads importing numba's
# modules (which import one another) at once can each get the other's half-made one.
NUMBA_CPU_BEFORE = os.environ.get("NUMBA_CPU_NAME")
with mock.patch.dict(os.environ):  # main.py sets NUMBA_CPU_NAME for Kaggle's process, not for this one's children
    from c4engine.kaggle import main

MAIN = Path(main.__file__)


def board_of(rows: list[str]) -> list[int]:
    """A Kaggle board from rows drawn top first: '.' empty, 'x' mark 1, 'o' mark 2."""
    return [".xo".index(cell) for row in rows for cell in row]


def test_importing_main_leaves_this_process_environment_as_it_was() -> None:
    """Every engine a later test starts inherits it: under NUMBA_CPU_NAME the
    release test's fresh install compiled what the wheel carries."""
    assert os.environ.get("NUMBA_CPU_NAME") == NUMBA_CPU_BEFORE


def test_kaggles_loader_takes_the_agent() -> None:
    agent = pytest.importorskip("kaggle_environments.agent", reason="kaggle-environments: the test extra")
    loaded = agent.get_last_callable(MAIN.read_text(encoding="utf-8"), path=str(MAIN))
    assert loaded.__name__ == "agent" and loaded.__code__.co_argcount == 2


def test_the_fallback_makes_its_four_before_blocking() -> None:
    board = board_of([".......", ".......", ".......", "o......", "ox.....", "oxx.x.."])
    assert main.fallback_column(board, 1, 7, 6, 4) == 3  # its own four on the bottom row, not the block in 1


def test_the_fallback_blocks_a_four() -> None:
    board = board_of([".......", ".......", ".......", ".......", "o......", "o.xxx.."])
    assert main.fallback_column(board, 2, 7, 6, 4) in (1, 5)
    board = board_of([".......", ".......", ".......", "x......", "xo.....", "xo....."])
    assert main.fallback_column(board, 2, 7, 6, 4) == 0


def test_the_fallback_keeps_to_the_centre_without_handing_over_a_four() -> None:
    assert main.fallback_column([0] * 42, 1, 7, 6, 4) == 3
    # x has 3 of a four in the second row: o's stone in the centre column would let x complete it
    board = board_of([".......", ".......", ".......", ".......", ".xx.x..", ".xo.o.o"])
    assert main.fallback_column(board, 2, 7, 6, 4) == 2
    assert main.fallback_column(board_of(["x" * 6 + ".", "o" * 6 + "."] * 3), 1, 7, 6, 4) == 6


# the position after 5, 5, 2 (o to move): the plain-Python player keeps to the centre
# and draws, the search plays 5 and wins
WON_BY_SEARCH = board_of([".......", ".......", ".......", ".......", "....o..", ".x..x.."])


def test_a_board_that_fails_leaves_the_bundles_board_its_search() -> None:
    """One configuration c4engine cannot play (30 columns) must cost the search that
    board only (issue 47: every later 7x6 move was the plain-Python player's)."""
    wide = {"columns": 30, "rows": 6, "inarow": 4, "actTimeout": 60}
    assert main.agent({"board": [0] * 180, "mark": 1}, wide) in range(30)
    assert main.fallback_column(list(WON_BY_SEARCH), 2, 7, 6, 4) == 3
    assert main.agent({"board": WON_BY_SEARCH, "mark": 2}, {"actTimeout": 60}) == 4


def test_another_boards_warm_up_keeps_no_move_of_the_bundles_board_waiting() -> None:
    """After a call on another board, whose kernel then compiles on a thread, the
    bundle's board still searches, within actTimeout (issue 47: 15-19 s late)."""
    assert main.READY[main.BOARD].wait(120)
    five = {"inarow": 5, "actTimeout": 2}
    began = time.perf_counter()
    assert main.agent({"board": [0] * 42, "mark": 1}, five) in range(7)
    assert time.perf_counter() - began < 2.0
    for _ in range(3):
        began = time.perf_counter()
        assert main.agent({"board": WON_BY_SEARCH, "mark": 2}, {"actTimeout": 2}) == 4
        assert time.perf_counter() - began < 2.0
