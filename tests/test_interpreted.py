"""The interpreted tier (c4engine/search/interpreted.py and kernel_build.py): exact
scores in plain Python, checked against a plain minimax and Pons' scores, its
giving up when told, and its giving way to the kernel once it is compiled."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import minimax_oracle as oracle
from c4engine.geometry import Geometry
from c4engine.rules.board import Board
from c4engine.rules.notation import parse_digits
from c4engine.search import kernel_build
from c4engine.search.interpreted import GivenUp, InterpretedSolve, interpreted_score
from c4engine.search.kernel_build import InterpretedTier
from c4engine.search.thread import NO_MOVE_SCORE

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


@pytest.fixture()
def compiling(monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen[bytes]]:
    """A stand-in for the child compiling a kernel: it runs until the test ends, and
    every tier made meanwhile is given it."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    monkeypatch.setattr(kernel_build, "start_kernel_build", lambda geometry, whole, standard=False: child)
    yield child
    child.kill()
    child.wait()


def oracle_columns(geometry: Geometry, moves: list[int]) -> list[int]:
    """Every column's score by plain minimax, as the searcher's ``solve_moves`` gives them."""
    board = oracle.Board.from_moves(geometry.width, geometry.height, geometry.connect, [col + 1 for col in moves])
    values = []
    for col in range(geometry.width):
        if not board.can_play(col):
            values.append(NO_MOVE_SCORE)
        elif board.completes_line(col):
            values.append(oracle.win_score(board))
        else:
            board.play(col)
            values.append(0 if board.is_full() else -oracle.solve(board))
            board.undo(col)
    return values


@pytest.mark.parametrize(("geometry", "played"), SMALL_BOARDS[:4], ids=lambda value: str(value))
def test_the_tier_scores_each_column_as_the_minimax_does(geometry: Geometry, played: int,
                                                         compiling: subprocess.Popen[bytes]) -> None:
    rng = random.Random(f"columns-{geometry}")
    tier = InterpretedTier(geometry)
    for moves in random_positions(geometry, played + 1, 6, rng):
        pos = Board(geometry=geometry).play_all(moves)
        values = oracle_columns(geometry, moves)
        assert (tier.solve_moves(pos, False) or ([], 0))[0] == values, moves
        assert (tier.solve_moves(pos, True) or ([], 0))[0] == [
            value if value == NO_MOVE_SCORE else (value > 0) - (value < 0) for value in values], moves
    assert tier.started


def test_the_tier_scores_a_win_at_once_by_the_rules(compiling: subprocess.Popen[bytes]) -> None:
    """The mover completes a row with its next stone (the interpreted solve assumes it
    cannot): Pons' score of that win, no node, as the kernel's solve gives it."""
    eight = Geometry(8, 8)
    assert InterpretedTier(eight).solve(parse_digits("4455667", eight), False) == (29, 0)
    assert InterpretedTier(eight).solve(parse_digits("445566", eight), False) == (29, 0)
    assert InterpretedTier(eight).solve(parse_digits("445566", eight), True) == (1, 0)


def test_the_tier_gives_way_to_a_kernel_compiled_or_just_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    """No child (the kernel is compiled): the tier answers nothing and starts nothing; a
    child that has ended: nothing either, and waiting for the kernel returns."""
    pos = parse_digits("44445555", Geometry(8, 8))
    monkeypatch.setattr(kernel_build, "start_kernel_build", lambda geometry, whole, standard=False: None)
    compiled = InterpretedTier(Geometry(8, 8))
    assert compiled.solve(pos, False) is None and compiled.solve_moves(pos, False) is None
    assert not compiled.started
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    monkeypatch.setattr(kernel_build, "start_kernel_build", lambda geometry, whole, standard=False: ended)
    tier = InterpretedTier(Geometry(8, 8))
    tier.wait_for_kernel()  # nothing started yet: returns at once
    ended.wait()
    assert tier.solve(pos, False) is None and tier.started
    tier.wait_for_kernel()


def test_the_tier_leaves_a_position_it_has_not_solved_in_its_time_to_the_kernel(
        compiling: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    """The empty 7x6 board needs millions of the interpreter's nodes: given 0.2 s, the
    tier gives up at about that time, its child still compiling."""
    monkeypatch.setattr(kernel_build, "INTERPRETED_SECONDS", 0.2)
    tier = InterpretedTier(Geometry(7, 6))
    began = time.monotonic()
    assert tier.solve(Board(), False) is None and tier.solve_moves(Board(), False) is None
    assert time.monotonic() - began < 2.0 and compiling.poll() is None


def test_waiting_for_the_kernel_waits_for_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    monkeypatch.setattr(kernel_build, "start_kernel_build", lambda geometry, whole, standard=False: child)
    tier = InterpretedTier(Geometry(8, 8))
    assert tier.solve(parse_digits("44445555", Geometry(8, 8)), False) == (27, 3)
    tier.wait_for_kernel()
    assert child.poll() == 0


def test_boards_beside_the_first_new_one_compile_in_children(monkeypatch: pytest.MonkeyPatch) -> None:
    """Of the boards that need compiling (not 7x6, which ships, nor a compiled one),
    all but the first get a child each; the caller compiles the first meanwhile."""
    compiled = {Geometry(8, 7)}
    started: list[tuple[Geometry, bool]] = []
    monkeypatch.setattr(kernel_build, "is_compiled", lambda geometry, full: geometry in compiled)
    monkeypatch.setattr(kernel_build, "_launch",
                        lambda geometry, whole: started.append((geometry, whole)) or f"child {geometry}")
    boards = [Geometry(7, 6), Geometry(8, 7), Geometry(6, 5), Geometry(8, 8), Geometry(6, 5), Geometry(5, 4)]
    children = kernel_build.start_kernel_builds_beside(boards, whole=True)
    assert children == {Geometry(8, 8): "child 8x8", Geometry(5, 4): "child 5x4"}
    assert started == [(Geometry(8, 8), True), (Geometry(5, 4), True)]
    assert kernel_build.start_kernel_builds_beside([Geometry(6, 5), Geometry(8, 7)], whole=True) == {}


@pytest.mark.parametrize("executable", ["", "/nonexistent/python"])
def test_no_child_to_be_had_leaves_the_compile_to_the_caller(executable: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """An interpreter that cannot start a child (no ``sys.executable``, or one that
    cannot be run): no tier, no error; the caller's kernel compiles in-process."""
    monkeypatch.setattr(kernel_build, "is_compiled", lambda geometry, full: False)
    monkeypatch.setattr(kernel_build.sys, "executable", executable)
    assert kernel_build.start_kernel_build(Geometry(8, 8), whole=True) is None
    tier = InterpretedTier(Geometry(8, 8))
    assert tier.solve(parse_digits("44445555", Geometry(8, 8)), False) is None and not tier.started


def test_a_frozen_application_starts_no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a frozen application (PyInstaller sets ``sys.frozen``) ``sys.executable`` is
    the application: no child is started, which would start the application again."""
    started: list[list[str]] = []
    monkeypatch.setattr(kernel_build, "is_compiled", lambda geometry, full: False)
    monkeypatch.setattr(kernel_build.sys, "frozen", True, raising=False)
    monkeypatch.setattr(kernel_build.subprocess, "Popen", lambda argv, **_options: started.append(argv))
    assert kernel_build.start_kernel_build(Geometry(8, 8), whole=True) is None
    assert started == []
