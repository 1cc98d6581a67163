"""The rules and the solver on boards other than 7x6, against independent references.

* ``tests/data/c4_scores_<W>x<H>.txt``: exact scores of random positions from
  Steininger's ``c4`` built for each size (the files' headers say how);
* ``tests/minimax_oracle.py``: a plain minimax on tiny boards, several row lengths;
* John Tromp's counts of reachable positions (``tests/data/tromp_table.txt``),
  walked through the rules' :class:`Board`.

Every board's kernel is compiled (or loaded) once for the module; the first time
on an installation that costs a few seconds per board.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import minimax_oracle
import pytest
from kernel_calls import compiled_caller
from positions import late_position

from c4engine.geometry import Geometry
from c4engine.kernel.specialise import kernel_for
from c4engine.rules.board import Board
from c4engine.rules.notation import parse_digits
from c4engine.rules.scores import to_pons, win_now
from c4engine.search.searcher import Searcher
from c4engine.search.thread import NO_MOVE_SCORE

DATA = Path(__file__).resolve().parent / "data"
C4_FILES = sorted(DATA.glob("c4_scores_*x*.txt"))
FAST_POSITIONS = 40  # per board in the default run; all of them under the slow marker
FAST_C4_BOARDS = {"4x4", "5x4", "4x5", "6x5"}  # each new board costs a compilation (seconds)


def board_of(path: Path) -> Geometry:
    match = re.fullmatch(r"c4_scores_(\d+)x(\d+)\.txt", path.name)
    assert match, path
    return Geometry(int(match[1]), int(match[2]))


def scored_lines(path: Path) -> list[tuple[str, int]]:
    lines = [line.split() for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return [(moves, int(score)) for moves, score in lines]


@pytest.fixture(scope="module")
def searchers() -> dict[Geometry, Searcher]:
    return {}


def searcher_for(searchers: dict[Geometry, Searcher], geometry: Geometry) -> Searcher:
    if geometry not in searchers:
        searchers[geometry] = Searcher(16, geometry=geometry)
    return searchers[geometry]


def test_the_data_files_are_there() -> None:
    assert len(C4_FILES) >= 5, "tests/data/c4_scores_*.txt are missing"


def check_scores(searcher: Searcher, geometry: Geometry, lines: list[tuple[str, int]]) -> None:
    wrong = []
    for moves, expected in lines:
        searcher.clear()
        score, _ = searcher.solve(parse_digits(moves, geometry))
        if score != expected:
            wrong.append((moves, expected, score))
    assert not wrong, f"{geometry}: {len(wrong)} of {len(lines)} wrong, e.g. {wrong[:5]}"


@pytest.mark.parametrize("path", [path for path in C4_FILES if board_of(path).name in FAST_C4_BOARDS],
                         ids=lambda path: path.stem)
def test_exact_scores_agree_with_c4(searchers: dict[Geometry, Searcher], path: Path) -> None:
    geometry = board_of(path)
    check_scores(searcher_for(searchers, geometry), geometry, scored_lines(path)[:FAST_POSITIONS])


@pytest.mark.slow
@pytest.mark.parametrize("path", C4_FILES, ids=[path.stem for path in C4_FILES])
def test_every_c4_score_agrees(searchers: dict[Geometry, Searcher], path: Path) -> None:
    geometry = board_of(path)
    check_scores(searcher_for(searchers, geometry), geometry, scored_lines(path))


ODD_HEIGHT_C4_BOARDS = ["4x5", "5x5", "6x5"]


def test_follow_up_bound_holds_on_odd_heights() -> None:
    """On an odd height the follower claims the odd rows (kernel/resolve.py's
    follow_up_bound): wherever the side to move has an even number of empty
    cells, the bound is at or above ``c4``'s exact score, and it fires, with
    losses among the bounds (a four of the follower's, not only "no four for
    either side").  Before, the bound held on even heights only."""
    fired = losses = 0
    for board in ODD_HEIGHT_C4_BOARDS:
        geometry = Geometry.parse(board)
        resolve = kernel_for(geometry, full=False).resolve
        bound_of = compiled_caller(resolve.follow_up_bound)
        for moves, score in scored_lines(DATA / f"c4_scores_{board}.txt"):
            pos = parse_digits(moves, geometry)
            if (geometry.cells - pos.stones) % 2 or pos.can_win_now():
                continue
            bound = int(bound_of(pos.current, pos.mask))
            if bound == resolve.NO_BOUND:
                continue
            fired += 1
            losses += bound < 0
            assert score <= to_pons(bound), (board, moves)
    assert fired >= 30 and losses >= 5, (fired, losses)


# ---------------------------------------------------------------- a plain minimax on tiny boards

MINIMAX_BOARDS = ["4x4k3", "4x4", "5x4k3", "5x4", "5x4k5", "4x5k3", "4x5", "4x5k5"]
SLOW_MINIMAX_BOARDS = {"5x4k3", "4x5k5"}  # more row lengths under the slow marker
MINIMAX_POSITIONS = 12  # per board
MINIMAX_EMPTY_CELLS = (5, 10)  # the oracle's cost grows fast with the empty cells


def random_open_position(rng: random.Random, geometry: Geometry, stones: int) -> Board | None:
    """A position after ``stones`` random moves, or None when the game ended first."""
    pos = Board(geometry=geometry)
    while pos.stones < stones:
        pos = pos.play(rng.choice(pos.legal_moves()))
        if pos.is_over():
            return None
    return pos


def minimax_positions(geometry: Geometry) -> list[Board]:
    rng = random.Random(geometry.name)
    out: list[Board] = []
    while len(out) < MINIMAX_POSITIONS:
        empty = rng.randint(*MINIMAX_EMPTY_CELLS)
        pos = random_open_position(rng, geometry, geometry.cells - empty)
        if pos is not None:
            out.append(pos)
    return out


def oracle_score(pos: Board) -> int:
    geometry = pos.geometry
    return minimax_oracle.solve(minimax_oracle.Board.from_moves(
        geometry.width, geometry.height, geometry.connect, [col + 1 for col in pos.history]))


@pytest.mark.parametrize("board", [pytest.param(board, marks=[pytest.mark.slow] if board in SLOW_MINIMAX_BOARDS else [])
                                   for board in MINIMAX_BOARDS])
def test_scores_agree_with_a_plain_minimax(searchers: dict[Geometry, Searcher], board: str) -> None:
    """The solver's score of a position, and of each of its moves (``solve --all``),
    equal a full-width minimax's (tests/minimax_oracle.py: no pruning, no table, no
    bitboards)."""
    geometry = Geometry.parse(board)
    searcher = searcher_for(searchers, geometry)
    for pos in minimax_positions(geometry):
        searcher.clear()
        moves = "".join(str(col + 1) for col in pos.history)
        assert searcher.solve(pos)[0] == oracle_score(pos), moves
        values, _ = searcher.solve_moves(pos)
        for col, value in enumerate(values):
            if not pos.can_play(col):
                assert value == NO_MOVE_SCORE
            elif pos.is_winning_move(col):
                assert value == win_now(pos.stones, geometry.cells)
            else:
                assert value == -oracle_score(pos.play(col)), (moves, col + 1)


LATE_BOARDS = ["8x7", "7x7", "9x6k5", "6x9k3", "16x3k5", "4x15k6"]  # 64-bit keys, two-word entries, long rows
LATE_EMPTY_CELLS = (6, 9)


@pytest.mark.slow
@pytest.mark.parametrize("board", LATE_BOARDS)
def test_late_positions_on_big_boards_agree_with_a_plain_minimax(searchers: dict[Geometry, Searcher],
                                                                 board: str) -> None:
    """Where the minimax can reach the end: boards whose keys fill 64 bits (8x7; the
    sign bit of int64 in the kernel), two-word table entries, rows of 3, 5 and 6."""
    geometry = Geometry.parse(board)
    searcher = searcher_for(searchers, geometry)
    rng = random.Random(geometry.name)
    for _ in range(MINIMAX_POSITIONS):
        pos = late_position(rng, geometry, rng.randint(*LATE_EMPTY_CELLS))
        searcher.clear()
        assert searcher.solve(pos)[0] == oracle_score(pos), "".join(str(col + 1) for col in pos.history)


# ---------------------------------------------------------------- Tromp's counts through the rules

def reachable_positions(geometry: Geometry) -> int:
    """Positions reachable in legal play from the empty board (it included), walked
    through :class:`Board` alone; a game stops at a line or a full board."""
    start = Board(geometry=geometry)
    seen = {start.key}
    frontier = [start]
    while frontier:
        pos = frontier.pop()
        for col in pos.legal_moves():
            child = pos.play(col)
            if child.key not in seen:
                seen.add(child.key)
                frontier.append(child)
    return len(seen)


def tromp_count(width: int, height: int) -> int:
    for line in (DATA / "tromp_table.txt").read_text().splitlines():
        fields = line.split()
        if fields[:3] == [str(width), str(height), "positions"]:
            return int(fields[3])
    raise LookupError(f"{width}x{height} has no count in tests/data/tromp_table.txt")


@pytest.mark.parametrize("width, height", [(4, 3), (5, 3), (4, 4)])
def test_reachable_positions_match_tromps_counts(width: int, height: int) -> None:
    assert reachable_positions(Geometry(width, height)) == tromp_count(width, height)


@pytest.mark.slow
def test_reachable_positions_on_5x4_match_tromps_count() -> None:
    assert reachable_positions(Geometry(5, 4)) == tromp_count(5, 4) == 3_945_711


# ---------------------------------------------------------------- Tromp's table of solved boards

RESULT_OF_SIGN = {1: "first", 0: "draw", -1: "second"}


def tromp_results() -> dict[tuple[int, int], str]:
    """Tromp's result of every board in his table, by (width, height)."""
    out = {}
    for line in (DATA / "tromp_table.txt").read_text().splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2] in RESULT_OF_SIGN.values():
            out[int(fields[0]), int(fields[1])] = fields[2]
    return out


def proven_boards() -> list[tuple[Geometry, str]]:
    """tests/data/tromp_proven.txt: the boards whose result the solver proves in under
    60 s here, with the result it proves."""
    lines = (DATA / "tromp_proven.txt").read_text().splitlines()
    return [(Geometry.parse(fields[0]), fields[1]) for fields in (line.split() for line in lines)
            if fields and not fields[0].startswith("#")]


def test_the_proven_boards_are_tromps() -> None:
    """Every board listed as proven is in Tromp's table with the same result."""
    table = tromp_results()
    assert len(proven_boards()) >= 20
    for geometry, result in proven_boards():
        assert table[geometry.width, geometry.height] == result, geometry


@pytest.mark.slow
@pytest.mark.parametrize("geometry, result", proven_boards(), ids=lambda value: str(value))
def test_tromps_result_is_reproduced(geometry: Geometry, result: str) -> None:
    """The empty board's weak solve (2 threads, 1 GB, as listed) gives Tromp's result."""
    searcher = Searcher(1024, threads=2, geometry=geometry)
    score, _ = searcher.solve(Board(geometry=geometry), weak=True)
    assert RESULT_OF_SIGN[score] == result
