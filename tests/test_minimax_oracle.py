"""The plain minimax oracle (tests/minimax_oracle.py) checked before anything is checked against it.

Three independent sources vouch for it: John Tromp's counts of reachable
positions (tests/data/tromp_table.txt), the exact scores Steininger's c4 gave on
random positions (tests/data/c4_scores_WxH.txt), and, for row lengths other
than four, hand-worked positions, mirror symmetry and a line finder written
here that scans every window of the grid instead of walking from the last stone.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from minimax_oracle import Board, OracleError, count_positions, solve, win_score

DATA = Path(__file__).parent / "data"
SEED = 20240618
# Positions with at most this many empty cells are solved in the default run
# (a few seconds in all); the slow run takes every position up to SLOW_EMPTY_CELLS.
FAST_EMPTY_CELLS = {(4, 4): 9, (5, 4): 8, (4, 5): 8}
SLOW_EMPTY_CELLS = 11


def tromp_counts() -> dict[tuple[int, int], int]:
    """Tromp's counts of reachable positions, by (width, height)."""
    counts = {}
    for line in (DATA / "tromp_table.txt").read_text().splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] == "positions":
            counts[int(fields[0]), int(fields[1])] = int(fields[3])
    return counts


def c4_scores(width: int, height: int) -> list[tuple[str, int]]:
    """(moves, score) lines of c4's data file for one board."""
    text = (DATA / f"c4_scores_{width}x{height}.txt").read_text()
    return [(moves, int(score)) for moves, score in
            (line.split() for line in text.splitlines() if line and not line.startswith("#"))]


def c4_boards() -> list[tuple[int, int]]:
    found = (re.fullmatch(r"c4_scores_(\d+)x(\d+)\.txt", path.name) for path in DATA.iterdir())
    return sorted((int(m[1]), int(m[2])) for m in found if m)


def mirrored(moves: str, width: int) -> str:
    return "".join(str(width + 1 - int(ch)) for ch in moves)


def has_line(board: Board, player: int) -> bool:
    """Whether ``player`` holds ``connect`` cells in a row anywhere: every window is scanned."""
    def owner(col: int, row: int) -> int:
        stack = board.columns[col]
        return stack[row] if row < len(stack) else 0

    k = board.connect
    for col in range(board.width):
        for row in range(board.height):
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                end_col, end_row = col + (k - 1) * dc, row + (k - 1) * dr
                if not (end_col < board.width and 0 <= end_row < board.height):
                    continue
                if all(owner(col + i * dc, row + i * dr) == player for i in range(k)):
                    return True
    return False


# Counting ----------------------------------------------------------------------------

# Every count up to 50,000 and 4x4 run by default; the rest up to 4 million are slow.
COUNT_CASES = [
    (width, height) if n <= 50_000 or (width, height) == (4, 4)
    else pytest.param(width, height, marks=pytest.mark.slow)
    for (width, height), n in sorted(tromp_counts().items()) if n <= 4_000_000
]


def test_tromp_table_lines_are_results_or_counts() -> None:
    """Every data line is ``W H first|draw|second`` or ``W H positions N``; sizes never repeat."""
    results: dict[tuple[int, int], str] = {}
    for line in (DATA / "tromp_table.txt").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) == 3:
            assert fields[2] in ("first", "draw", "second"), line
            assert (int(fields[0]), int(fields[1])) not in results, line
            results[int(fields[0]), int(fields[1])] = fields[2]
        else:
            assert len(fields) == 4 and fields[2] == "positions" and fields[3].isdigit(), line
    assert len(results) == 37
    assert (results[7, 6], results[6, 6], results[4, 4], results[8, 8]) == ("first", "second",
                                                                            "draw", "second")
    counts = tromp_counts()
    assert (counts[4, 4], counts[5, 4], counts[7, 6]) == (161_029, 3_945_711, 4_531_985_219_092)


@pytest.mark.parametrize("width, height", COUNT_CASES)
def test_count_matches_tromp(width: int, height: int) -> None:
    assert count_positions(width, height) == tromp_counts()[width, height]


def test_count_depends_on_the_row_length() -> None:
    """A shorter row ends games sooner: fewer positions; a row that cannot fit ends none."""
    assert count_positions(4, 3, connect=3) < count_positions(4, 3, connect=4)
    assert count_positions(3, 3, connect=4) == count_positions(3, 3, connect=9)


# Scores against c4 ---------------------------------------------------------------------

SCORE_CASES = [
    (width, height, FAST_EMPTY_CELLS[width, height]) if (width, height) in FAST_EMPTY_CELLS
    else pytest.param(width, height, SLOW_EMPTY_CELLS, marks=pytest.mark.slow)
    for width, height in c4_boards()
] + [pytest.param(width, height, SLOW_EMPTY_CELLS, marks=pytest.mark.slow)
     for width, height in sorted(FAST_EMPTY_CELLS)]


@pytest.mark.parametrize("width, height, max_empty", SCORE_CASES)
def test_scores_match_c4(width: int, height: int, max_empty: int) -> None:
    """c4's score of every position in its file with at most ``max_empty`` empty cells."""
    cases = [(m, s) for m, s in c4_scores(width, height) if width * height - len(m) <= max_empty]
    assert len(cases) >= 20
    for moves, score in cases:
        assert solve(Board.from_moves(width, height, 4, moves)) == score, moves


# Any row length ------------------------------------------------------------------------

@pytest.mark.parametrize("width, height, connect, moves, score", [
    (4, 4, 4, "121212", 5),   # three stacked in column 1: the 7th stone wins, (16 + 1 - 6) // 2
    (3, 1, 2, "", 1),         # b, then whichever of a or c is left: the 3rd stone wins
    (3, 1, 2, "2", -1),
    (3, 1, 2, "1", 0),        # a taken: the second player takes b and nobody can pair up
    (2, 2, 3, "", 0),         # no line of 3 fits
    (5, 1, 1, "", 3),         # the first stone wins: (5 + 1 - 0) // 2
    (1, 5, 3, "", 0),         # one column alternates colours: never three alike
])
def test_hand_worked_scores(width: int, height: int, connect: int, moves: str, score: int) -> None:
    assert solve(Board.from_moves(width, height, connect, moves)) == score


def test_win_score_is_pons_convention_on_7x6() -> None:
    """Pons: winning with the next stone after n stones scores (42 + 1 - n) // 2."""
    assert win_score(Board.from_moves(7, 6, 4, "")) == 21
    assert win_score(Board.from_moves(7, 6, 4, "1" * 6 + "2" * 6)) == 15
    assert win_score(Board.from_moves(7, 6, 4, "1" * 6 + "2" * 6 + "3")) == 15


@pytest.mark.parametrize("width, height, connect", [
    (4, 4, 3), (5, 4, 3), (4, 5, 3), (5, 3, 5), (4, 5, 5), (3, 4, 3), (3, 3, 2),
])
def test_mirror_images_score_alike(width: int, height: int, connect: int) -> None:
    rng = random.Random(SEED + width * 100 + height * 10 + connect)
    checked = 0
    for _ in range(2000):
        board, moves = Board(width, height, connect), ""
        while width * height - board.stones > min(8, width * height - 2) and not board.is_over():
            col = rng.choice(board.legal_columns())
            board.play(col)
            moves += str(col + 1)
        if board.is_over():
            continue
        flipped = Board.from_moves(width, height, connect, mirrored(moves, width))
        assert solve(board) == solve(flipped), moves
        checked += 1
        if checked == 15:
            return
    pytest.fail(f"only {checked} unfinished positions found")


@pytest.mark.parametrize("width, height, connect", [
    (4, 4, 4), (5, 4, 3), (4, 5, 2), (6, 5, 5), (7, 6, 4), (5, 5, 3), (8, 7, 6),
])
def test_win_detection_matches_a_full_scan(width: int, height: int, connect: int) -> None:
    rng = random.Random(SEED + width * 100 + height * 10 + connect)
    for _ in range(100):
        board = Board(width, height, connect)
        while not board.is_over():
            mover = board.to_move
            board.play(rng.choice(board.legal_columns()))
            assert (board.winner == mover) == has_line(board, mover)
            assert not has_line(board, 3 - mover)


# Refusals ------------------------------------------------------------------------------

@pytest.mark.parametrize("width, height, connect, moves", [
    (4, 4, 4, "11111"),      # column 1 holds four stones
    (4, 4, 4, "5"),          # no column 5
    (4, 4, 4, "0"),
    (4, 4, 4, "1212121" + "3"),  # the game ended with the 7th stone
])
def test_illegal_sequences_are_refused(width: int, height: int, connect: int, moves: str) -> None:
    with pytest.raises(OracleError):
        Board.from_moves(width, height, connect, moves)


def test_finished_games_and_bad_sizes_are_refused() -> None:
    with pytest.raises(OracleError):
        solve(Board.from_moves(4, 4, 4, "1212121"))
    with pytest.raises(OracleError):
        solve(Board.from_moves(2, 2, 3, "1122"))
    with pytest.raises(OracleError):
        Board(0, 4, 4)
    with pytest.raises(OracleError):
        Board(4, 4, 0)
