"""Mate distances on odd and even boards (issue 47, item 8), against an independent count.

The distance a score stands for (``mate N``, the service's ``distance``, ``book
solve``'s "ends on move N", the reviewer's and ``play``'s words) is checked
against :func:`minimax_oracle.plies_to_end`, which plays the game out by plain
minimax and counts the plies to the winning stone, with no score formula at
all.  On a board of an odd number of cells the first player has one stone more
to play than the second: there the old formula said one move too few.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import minimax_oracle as oracle
import pytest

from c4engine.geometry import Geometry
from c4engine.play import verdict as play_verdict
from c4engine.reviewer.verdict_text import score_words
from c4engine.reviewer.verdicts import Value, mate_of_pons, pons_of_mate
from c4engine.rules.board import Board
from c4engine.rules.scores import mate_distance, to_internal
from c4engine.service.answer import Bounds
from engine_process import EngineProcess, bestmoves, infos, start_engine

# (width, height, connect): odd cell counts first, then even ones
BOARDS = [(5, 5, 4), (7, 7, 4), (9, 7, 4), (5, 3, 3), (3, 3, 3), (7, 6, 4), (6, 5, 4), (4, 4, 3)]
EMPTY_CELLS = 8  # few enough for the oracle's plain minimax
POSITIONS_PER_BOARD = 12


def decided_positions(width: int, height: int, connect: int, count: int) -> list[list[int]]:
    """Random games' positions ``EMPTY_CELLS`` from the end, still open and won by one side
    (0-based columns), both sides to move among them."""
    rng = random.Random(f"{width}x{height}k{connect}")
    found: list[list[int]] = []
    while len(found) < count:
        board, moves = oracle.Board(width, height, connect), []
        empty = min(EMPTY_CELLS, width * height - 2) - len(found) % 2  # either side to move
        while width * height - board.stones > empty and not board.is_over():
            col = rng.choice(board.legal_columns())
            board.play(col)
            moves.append(col)
        if not board.is_over() and oracle.plies_to_end(board) != 0:
            found.append(moves)
    return found


def counted(moves: list[int], width: int, height: int, connect: int) -> tuple[int, int]:
    """The oracle's Pons score and plies to the end of the position after ``moves``."""
    board = oracle.Board.from_moves(width, height, connect, [col + 1 for col in moves])
    return oracle.solve(board), oracle.plies_to_end(board)


def mate_of_plies(plies: int) -> int:
    """``mate N`` for a game won ``plies`` plies from now (negative: lost)."""
    return (plies + 1) // 2 if plies > 0 else plies // 2


@pytest.mark.parametrize("width, height, connect", BOARDS, ids=[f"{w}x{h}k{k}" for w, h, k in BOARDS])
def test_every_distance_read_from_a_score_is_the_counted_one(width: int, height: int, connect: int) -> None:
    geometry = Geometry(width, height, connect)
    for moves in decided_positions(width, height, connect, POSITIONS_PER_BOARD):
        score, plies = counted(moves, width, height, connect)
        stones, mate = len(moves), mate_of_plies(plies)
        assert mate_distance(to_internal(score), stones, geometry.cells) == mate, (moves, score, plies)
        assert mate_of_pons(score, stones, geometry) == mate
        assert pons_of_mate(mate, stones, geometry) == score
        assert Bounds(score, score).distance(stones, geometry.cells) == abs(plies)
        pos = Board(geometry=geometry).play_all(moves)
        said = play_verdict(to_internal(score), True, pos, 0)
        winning_stone = stones + abs(plies)
        assert said == (f"it wins by move {winning_stone}" if plies > 0 else f"it loses by move {winning_stone}")
        assert score_words(Value(score, score), stones, geometry) == f"{'wins' if mate > 0 else 'loses'} in {abs(mate)}"


def test_a_win_with_the_next_stone_is_mate_1_on_every_board() -> None:
    for width, height, connect in BOARDS:
        geometry = Geometry(width, height, connect)
        for stones in (0, 1, 2, 3):
            win_next = (geometry.cells + 1 - stones) // 2
            assert mate_distance(to_internal(win_next), stones, geometry.cells) == 1, (geometry, stones)
            lose_next = -((geometry.cells - stones) // 2)
            assert mate_distance(to_internal(lose_next), stones, geometry.cells) == -1, (geometry, stones)


@pytest.fixture(scope="module")
def process() -> Iterator[EngineProcess]:
    proc = start_engine()
    yield proc
    proc.close()


@pytest.mark.parametrize("variant, width, height", [("cfour-9x7", 9, 7), ("cfour-7x7", 7, 7), ("cfour", 7, 6)])
def test_the_protocol_says_the_counted_mate(process: EngineProcess, variant: str, width: int, height: int) -> None:
    process.send(f"setoption name UCI_Variant value {variant}")
    process.sync(60.0)
    for moves in decided_positions(width, height, 4, 4):
        _score, plies = counted(moves, width, height, 4)
        process.send("ucinewgame")
        process.send("position startpos moves " + "".join(str(col + 1) for col in moves))
        process.send("go")
        lines = process.read_until("bestmove", 60.0)
        assert bestmoves(lines), lines
        last = infos(lines)[-1]
        assert (last["kind"], int(last["value"])) == ("mate", mate_of_plies(plies)), (variant, moves, lines)
