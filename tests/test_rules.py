"""The rules layer (bits, board) against the rules of Connect Four as a person states them.

Everything else in the engine trusts ``has_four`` and ``winning_cells``: a four
missed or invented there turns into wrong scores everywhere, so they are
checked exhaustively on single lines and against a naive grid implementation
on thousands of positions from random games, in both runtimes (plain Python
and the numba build the kernel uses, where shifts wrap at 64 bits).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator

import pytest
from kernel_calls import compiled_caller

from c4engine.geometry import STANDARD
from c4engine.kernel import jit as jitbits
from c4engine.rules import bits
from c4engine.rules.board import Board, RulesError

SEED = 20240611
WIDTH, HEIGHT = 7, 6
DIRECTIONS = {"vertical": (0, 1), "horizontal": (1, 0), "diagonal /": (1, 1), "diagonal \\": (1, -1)}
# A 42-move game that fills the board with no four (found by random play).
DRAWN_GAME = "547125662261271266215743771576315353334444"
# The first player holds the two top cells of column 1 and the two bottom cells
# of column 2: four consecutive cells in a layout without the sentinel bit.
ACROSS_THE_SENTINEL = "31211721161"

Cell = tuple[int, int]  # (column, row), both 0-based, row 0 at the bottom
Grid = list[list[int]]  # grid[col][row]: 0 empty, 1 first player, 2 second player


def bit(cell: Cell) -> int:
    """The bitboard bit of a cell, written out from the documented layout."""
    col, row = cell
    return 1 << (col * (HEIGHT + 1) + row)


def board_of(cells: Iterable[Cell]) -> int:
    out = 0
    for cell in cells:
        out |= bit(cell)
    return out


def cells_of(board: int) -> set[Cell]:
    return {(c, r) for c in range(WIDTH) for r in range(HEIGHT) if board & bit((c, r))}


def lines_of(direction: tuple[int, int]) -> list[tuple[Cell, ...]]:
    """Every run of four cells on the board in ``direction``."""
    dc, dr = direction
    out = []
    for col in range(WIDTH):
        for row in range(HEIGHT):
            cells = tuple((col + i * dc, row + i * dr) for i in range(4))
            if all(0 <= c < WIDTH and 0 <= r < HEIGHT for c, r in cells):
                out.append(cells)
    return out


ALL_LINES = [line for direction in DIRECTIONS.values() for line in lines_of(direction)]

RUNTIMES: dict[str, tuple[Callable[[int], bool], Callable[[int, int], int]]] = {
    "python": (lambda stones: bits.has_line(stones, WIDTH, HEIGHT, 4),
               lambda stones, mask: bits.winning_cells(stones, mask, STANDARD.board_mask, WIDTH, HEIGHT, 4)),
    "numba": (compiled_caller(jitbits.has_line), compiled_caller(jitbits.winning_cells)),
}


# ---------------------------------------------------------------- naive rules

def naive_grid(moves: tuple[int, ...]) -> Grid:
    """The board after ``moves`` (0-based columns), by stacking stones in lists."""
    grid: Grid = [[0] * HEIGHT for _ in range(WIDTH)]
    heights = [0] * WIDTH
    for ply, col in enumerate(moves):
        grid[col][heights[col]] = 1 + ply % 2
        heights[col] += 1
    return grid


def grid_of(cells: list[Cell]) -> Grid:
    """A grid holding the first player's stones on ``cells`` (they may float)."""
    grid: Grid = [[0] * HEIGHT for _ in range(WIDTH)]
    for col, row in cells:
        grid[col][row] = 1
    return grid


def line_owners(grid: Grid) -> list[tuple[int, ...]]:
    """Who holds each cell of each of the 69 lines, in ``ALL_LINES`` order."""
    return [tuple(grid[c][r] for c, r in line) for line in ALL_LINES]


def naive_has_four(owners: list[tuple[int, ...]], player: int) -> bool:
    return (player,) * 4 in owners


def naive_winning_cells(owners: list[tuple[int, ...]], player: int) -> set[Cell]:
    """Empty cells that complete a line whose other three cells are ``player``'s."""
    out = set()
    for line, held in zip(ALL_LINES, owners):
        if held.count(player) == 3 and 0 in held:
            out.add(line[held.index(0)])
    return out


def random_game(rng: random.Random) -> tuple[int, ...]:
    """The moves of a random game played to its end."""
    pos = Board()
    while not pos.is_over():
        pos = pos.play(rng.choice(pos.legal_moves()))
    return pos.history


def play(digits: str) -> Board:
    return Board().play_all([int(d) - 1 for d in digits])


# ---------------------------------------------------------------- single fours

def test_the_board_has_69_lines() -> None:
    """Guards the line enumeration the other tests rely on (21 + 24 + 12 + 12)."""
    assert [len(lines_of(d)) for d in DIRECTIONS.values()] == [21, 24, 12, 12]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_every_four_is_found_and_no_three_is(direction: str, runtime: str) -> None:
    """Each of the 69 fours, edges and corners included, is a four; any three of its
    stones are not, and the missing cell is among their winning cells (and every
    winning cell reported completes some line).  A vertical three only ever
    misses its top cell in a game: the others would float."""
    has_four, winning_cells = RUNTIMES[runtime]
    for line in lines_of(DIRECTIONS[direction]):
        assert has_four(board_of(line)), line
        candidates = line[-1:] if direction == "vertical" else line
        for missing in candidates:
            kept = [cell for cell in line if cell != missing]
            three = board_of(kept)
            assert not has_four(three), (line, missing)
            winning = winning_cells(three, three)
            assert winning & bit(missing), (line, missing)
            naive = naive_winning_cells(line_owners(grid_of(kept)), 1)
            assert cells_of(winning) <= naive, (line, missing)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_corner_fours(runtime: str) -> None:
    """Fours that touch the corners and the top edge, spelled out, since off-by-one
    errors live there (the exhaustive test would report them only as a line)."""
    has_four, _ = RUNTIMES[runtime]
    assert has_four(board_of([(0, 0), (1, 1), (2, 2), (3, 3)]))
    assert has_four(board_of([(6, 0), (5, 1), (4, 2), (3, 3)]))
    assert has_four(board_of([(0, 5), (1, 4), (2, 3), (3, 2)]))
    assert has_four(board_of([(6, 5), (5, 4), (4, 3), (3, 2)]))
    assert has_four(board_of([(6, 2), (6, 3), (6, 4), (6, 5)]))
    assert has_four(board_of([(3, 5), (4, 5), (5, 5), (6, 5)]))


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("col", range(WIDTH - 1))
def test_no_four_across_the_column_sentinel(col: int, runtime: str) -> None:
    """Top cells of one column followed by bottom cells of the next are consecutive
    bits but no line; neither a four nor a winning cell may come out of them."""
    has_four, winning_cells = RUNTIMES[runtime]
    for k in range(1, 4):
        top = [(col, HEIGHT - 1 - i) for i in range(k)]
        bottom = [(col + 1, i) for i in range(4 - k)]
        stones = board_of(top + bottom)
        assert not has_four(stones), (top, bottom)
    three_on_top = board_of([(col, 3), (col, 4), (col, 5)])
    assert winning_cells(three_on_top, three_on_top) == 0
    two_and_one = board_of([(col, 4), (col, 5), (col + 1, 0)])
    assert winning_cells(two_and_one, two_and_one) & bit((col + 1, 1)) == 0


def test_game_across_the_sentinel_is_not_over() -> None:
    """The same situation reached in a real game: no four, play goes on."""
    pos = play(ACROSS_THE_SENTINEL)
    assert all(pos.cell(c, r) == 1 for c, r in [(0, 4), (0, 5), (1, 0), (1, 1)])
    assert not pos.last_mover_won()
    assert not pos.is_over()
    assert pos.legal_moves() == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("digits, winner_cells", [
    ("1212121", [(0, 0), (0, 1), (0, 2), (0, 3)]),         # vertical, left edge
    ("7676767", [(6, 0), (6, 1), (6, 2), (6, 3)]),         # vertical, right edge
    ("1727374", [(0, 0), (1, 0), (2, 0), (3, 0)]),         # horizontal, bottom-left corner
    ("4151617", [(3, 0), (4, 0), (5, 0), (6, 0)]),         # horizontal, bottom-right corner
    ("12233434464", [(0, 0), (1, 1), (2, 2), (3, 3)]),     # diagonal /, from the corner
    ("76655454424", [(6, 0), (5, 1), (4, 2), (3, 3)]),     # diagonal \, from the corner
])
def test_fours_in_games(digits: str, winner_cells: list[Cell]) -> None:
    """A game ends the moment the mover completes a four, in every direction."""
    before, after = play(digits[:-1]), play(digits)
    assert not before.is_over()
    assert after.last_mover_won() and after.is_over()
    assert after.legal_moves() == []
    mover = 1 if len(digits) % 2 == 1 else 2
    assert all(after.cell(c, r) == mover for c, r in winner_cells)


# ---------------------------------------------------------------- draw and refusals

def test_full_board_draw() -> None:
    """42 moves with no four: the game is over, nobody won, nothing is legal."""
    moves = [int(d) - 1 for d in DRAWN_GAME]
    pos = Board()
    for col in moves:
        assert not pos.is_over()
        pos = pos.play(col)
    assert pos.stones == 42 and pos.mask == STANDARD.board_mask
    assert pos.is_over()
    assert not pos.last_mover_won()
    has_four = RUNTIMES["python"][0]
    assert not has_four(pos.current) and not has_four(pos.opponent)
    assert pos.legal_moves() == []
    with pytest.raises(RulesError, match="column 4"):
        pos.play(3)


def test_legal_moves_and_full_columns() -> None:
    """A full column drops out of the legal moves and is refused by name."""
    pos = play("444444")
    assert pos.column_height(3) == HEIGHT
    assert not pos.can_play(3)
    assert pos.legal_moves() == [0, 1, 2, 4, 5, 6]
    with pytest.raises(RulesError, match=r"column 4 is full"):
        pos.play(3)
    assert Board().legal_moves() == list(range(WIDTH))


@pytest.mark.parametrize("col, shown", [(-1, "column 0"), (7, "column 8"), (100, "column 101")])
def test_columns_off_the_board_are_refused(col: int, shown: str) -> None:
    with pytest.raises(RulesError, match=f"{shown} is not on the board"):
        Board().play(col)


@pytest.mark.parametrize("col", range(WIDTH))
def test_moves_after_a_win_are_refused(col: int) -> None:
    """Once a side has four, no move is accepted, and the error names the move."""
    won = play("1212121")
    with pytest.raises(RulesError, match=f"column {col + 1}: the game is already over"):
        won.play(col)


# ---------------------------------------------------------------- against the naive grid

def random_positions(count_games: int) -> Iterator[tuple[Board, tuple[int, ...]]]:
    """Every position of ``count_games`` random games, with its move list."""
    rng = random.Random(SEED)
    for _ in range(count_games):
        game = random_game(rng)
        pos = Board()
        yield pos, ()
        for i, col in enumerate(game):
            pos = pos.play(col)
            yield pos, game[:i + 1]


def test_rules_agree_with_a_naive_grid() -> None:
    """Stones, fours, winning cells, legal moves, winning moves and the end of the
    game, on thousands of positions from random games, both runtimes."""
    checked = 0
    grids_by_key: dict[int, tuple[tuple[int, ...], ...]] = {}
    for pos, moves in random_positions(200):
        grid = naive_grid(moves)
        assert [[pos.cell(c, r) for r in range(HEIGHT)] for c in range(WIDTH)] == grid
        first = pos.first_player_stones()
        second = pos.mask ^ first
        owners = line_owners(grid)
        naive_fours = {player: naive_has_four(owners, player) for player in (1, 2)}
        naive_wins = {player: naive_winning_cells(owners, player) for player in (1, 2)}
        for player, stones in ((1, first), (2, second)):
            for has_four, winning_cells in RUNTIMES.values():
                assert has_four(stones) == naive_fours[player], moves
                assert cells_of(winning_cells(stones, pos.mask)) == naive_wins[player], moves
        full = all(grid[c][HEIGHT - 1] for c in range(WIDTH))
        over = naive_fours[1] or naive_fours[2] or full
        assert pos.is_over() == over, moves
        assert pos.last_mover_won() == naive_fours[2 - len(moves) % 2], moves
        heights = [sum(1 for r in range(HEIGHT) if grid[c][r]) for c in range(WIDTH)]
        naive_legal = [] if over else [c for c in range(WIDTH) if heights[c] < HEIGHT]
        assert pos.legal_moves() == naive_legal, moves
        mover = 1 + len(moves) % 2
        for col in naive_legal:
            wins = (col, heights[col]) in naive_wins[mover]
            assert pos.is_winning_move(col) == wins, (moves, col)
        frozen = tuple(tuple(column) for column in grid)
        assert grids_by_key.setdefault(pos.key, frozen) == frozen, "two boards share a key"
        checked += 1
    assert len(set(grids_by_key.values())) == len(grids_by_key)
    assert checked > 3000
