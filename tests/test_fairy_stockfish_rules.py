"""One variants file means the same game to c4engine and to Fairy-Stockfish on the
boards past 64 bits (issue 28): Fairy-Stockfish's own move generator, through
pyffish (its Python binding, a wheel on PyPI, in the test extra), is the oracle.

The matches against Fairy-Stockfish itself (docs/figures.md) need its builds,
which CI cannot fetch; these checks hold the part of them that can fail without
a search: the start position, the legal drops, the FEN after every move (stones
in hand included) and where the game ends, on 8x8 and 9x7 loaded from
tests/data/variants-8x8-9x7.ini."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from c4engine.geometry import Geometry
from c4engine.rules.board import Board
from c4engine.rules.notation import format_move, to_fen
from c4engine.rules.variants import VariantSet

pyffish = pytest.importorskip("pyffish", reason="Fairy-Stockfish's binding (test oracle): pip install pyffish")

VARIANTS_FILE = Path(__file__).resolve().parent / "data" / "variants-8x8-9x7.ini"
BOARDS = {"c4_8x8": Geometry(8, 8), "c4_9x7": Geometry(9, 7)}
GAMES = 8  # half random, half filling the board with no line (draws); 8 ms a pyffish call


@pytest.fixture(scope="module")
def variants() -> VariantSet:
    pyffish.load_variant_config(VARIANTS_FILE.read_text())
    return VariantSet().with_file(str(VARIANTS_FILE))


@pytest.mark.parametrize("name", BOARDS)
def test_both_read_the_same_board_from_the_file(variants: VariantSet, name: str) -> None:
    assert name in pyffish.variants()
    variant = variants.find(name)
    assert variant.geometry == BOARDS[name]
    assert to_fen(variant.start()) == pyffish.start_fen(name)


def random_game(start: Board, rng: random.Random) -> list[int]:
    """Columns of a game of random legal moves, played to its end."""
    pos, cols = start, []
    while not pos.is_over():
        cols.append(rng.choice(pos.legal_moves()))
        pos = pos.play(cols[-1])
    return cols


def drawn_game(start: Board, rng: random.Random) -> list[int]:
    """Columns of a game that fills the board with no line: the first player's stone
    on (col, row) exactly where row + (col // 2) is even.  Columns, rows and both
    diagonals then change colour at least every second cell, so no four are alike;
    any order of drops that gives each player its own cells is such a game (here
    a random one of the columns whose next cell is the mover's, each turn)."""
    pos, cols = start, []
    while pos.legal_moves():
        own = [col for col in pos.legal_moves()
               if (pos.column_height(col) + col // 2) % 2 == pos.stones % 2]
        if not own:
            return drawn_game(start, rng)  # a dead end: the other player's cells only
        cols.append(rng.choice(own))
        pos = pos.play(cols[-1])
    return cols


def fairy_stockfish_sees(name: str, start_fen: str, moves: list[str]) -> tuple[str, set[str], int | None]:
    """Fairy-Stockfish's FEN after ``moves``, its legal moves (none once a line is
    made or the board full), and then its result for the side to move (None before)."""
    legal = set(pyffish.legal_moves(name, start_fen, moves))
    result = None if legal else pyffish.game_result(name, start_fen, moves)
    return pyffish.get_fen(name, start_fen, moves), legal, result


@pytest.mark.parametrize("name", BOARDS)
def test_every_move_of_whole_games_agrees_with_fairy_stockfish(variants: VariantSet, name: str) -> None:
    start = variants.find(name).start()
    start_fen = pyffish.start_fen(name)
    rng = random.Random(28)
    ends = {"won": 0, "drawn": 0}
    for game in range(GAMES):
        pos, moves = start, []
        for col in (drawn_game if game % 2 else random_game)(start, rng):
            moves.append(format_move(col, pos, drops=True))
            pos = pos.play(col)
            fen, legal, result = fairy_stockfish_sees(name, start_fen, moves)
            assert fen == to_fen(pos), moves
            if not pos.is_over():
                assert legal == {format_move(c, pos, drops=True) for c in pos.legal_moves()}, moves
        assert result == (-pyffish.VALUE_MATE if pos.last_mover_won() else pyffish.VALUE_DRAW), moves
        ends["won" if pos.last_mover_won() else "drawn"] += 1
    assert ends == {"won": GAMES // 2, "drawn": GAMES // 2}
