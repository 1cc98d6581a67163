"""Time management: the budgets a clock gives must never risk a loss on time."""

from __future__ import annotations

import itertools

import pytest

from c4engine.search.limits import LATENESS_WINDOW, Lateness, Limits, clock_budget, movetime_budget


@pytest.mark.parametrize(("time_left", "increment", "moves_to_go", "stones", "overhead"),
                         list(itertools.product((1, 50, 1000, 60_000), (0, 10, 1000), (None, 1, 5),
                                                (0, 13, 30, 41), (0, 30))))
def test_clock_budget_keeps_a_margin(time_left: int, increment: int, moves_to_go: int | None,
                                     stones: int, overhead: int) -> None:
    """Whatever the clock, the hard limit leaves the overhead and never takes more than
    half the clock plus part of the increment; the soft limit comes first."""
    budget = clock_budget(time_left, increment, moves_to_go, stones, overhead)
    usable = max(0, time_left - overhead)
    assert 0 <= budget.soft_ms <= budget.hard_ms
    assert budget.hard_ms <= max(1.0, usable)
    assert budget.hard_ms <= max(1.0, usable * 0.5 + increment * 0.4)


def test_clock_budget_gives_the_hard_moves_more_than_an_even_split() -> None:
    """Just after the book (13 stones, 15 own moves to go) a move gets well over an
    even share of the clock: the late moves, solved at once, will not need theirs."""
    assert clock_budget(1000, 10, None, 13, 30).soft_ms > 2 * 1000 / 15


def test_moves_to_go_caps_the_horizon() -> None:
    """With one move to the time control the whole usable clock may be used."""
    assert clock_budget(1000, 0, 1, 20, 30).soft_ms == pytest.approx(485.0)


@pytest.mark.parametrize(("movetime", "expected"), [(1000, 990), (100, 90), (30, 20), (11, 1), (10, 0), (0, 0)])
def test_movetime_is_spent_but_the_margin(movetime: int, expected: float) -> None:
    """protocol.md's rule, as Stockfish's: the search stops at the movetime less the
    10 ms the answer needs to leave the process; Move Overhead does not come off it
    (the budget does not take it); soft and hard are the same."""
    budget = movetime_budget(movetime)
    assert budget.hard_ms == budget.soft_ms == expected


def test_time_limits_count_from_the_go() -> None:
    """Time spent before the search starts comes off both time limits, never below
    zero, and leaves the other limits alone."""
    limits = Limits(depth=4, soft_ms=20.0, hard_ms=50.0).after(30.0)
    assert (limits.depth, limits.soft_ms, limits.hard_ms) == (4, 0.0, 20.0)
    assert Limits(nodes=10).after(30.0) == Limits(nodes=10)


def test_limits_print_rounded_for_debug() -> None:
    text = str(Limits(depth=3, soft_ms=766.9, hard_ms=2300.7))
    assert text == "depth=3 nodes=None soft_ms=767 hard_ms=2301 mate=None"


def test_lateness_allows_for_the_latest_recent_answer() -> None:
    """A search that ran into its hard deadline tells how late the answer came; the
    next budget keeps the latest of the recent ones aside (one late answer loses
    the game), a search that ended sooner tells nothing, and on-time answers make
    it fade within the window."""
    lateness = Lateness()
    assert lateness.allowance_ms() == 0.0
    lateness.record(answered_ms=64.0, hard_ms=40.0)   # the timer woke 24 ms late
    lateness.record(answered_ms=45.0, hard_ms=40.0)
    lateness.record(answered_ms=12.0, hard_ms=40.0)   # solved at once: says nothing
    lateness.record(answered_ms=80.0, hard_ms=None)   # no deadline: says nothing
    assert lateness.allowance_ms() == 48.0  # as long again outside the engine
    assert movetime_budget(100, lateness.allowance_ms()).hard_ms == 42.0
    assert movetime_budget(30, 25.0).hard_ms == 0.0
    for _ in range(LATENESS_WINDOW):
        lateness.record(answered_ms=17.0, hard_ms=16.0)
    assert lateness.allowance_ms() == 2.0
