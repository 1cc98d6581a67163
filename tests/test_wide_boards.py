"""Boards past 64 bits (8x8, 9x7, 10x8, ...): the two-word kernel (docs/design.md,
"Boards past 64 bits") against a plain minimax and against the one-word kernel, its
table, and the interfaces that play them: the protocol, the Python API, ConnectX."""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import minimax_oracle
import numba
import numpy as np
import pytest
from engine_process import READY_TIMEOUT, EngineProcess, bestmoves, errors, infos, start_engine
from positions import late_position, late_positions

import c4engine
from c4engine import Position
from c4engine.connectx import agent
from c4engine.geometry import Geometry
from c4engine.kernel.int128 import Wide
from c4engine.kernel.layout import CTX_SIZE, GENERATION, KEEP_DEEPER
from c4engine.kernel.specialise import kernel_for
from c4engine.rules.board import Board
from c4engine.rules.notation import to_fen
from c4engine.search.limits import Limits
from c4engine.search.searcher import Searcher

EIGHT = Geometry(8, 8)
LATE_POSITIONS = 8
COMPILE_TIMEOUT = 300.0
LATE_EMPTY_CELLS = (6, 9)


def oracle_score(pos: Board) -> int:
    geometry = pos.geometry
    return minimax_oracle.solve(minimax_oracle.Board.from_moves(
        geometry.width, geometry.height, geometry.connect, [col + 1 for col in pos.history]))


def moves_of(pos: Board) -> str:
    return " ".join(str(col + 1) for col in pos.history)


def table_probes(table: ModuleType) -> tuple[Any, Any]:
    """Compiled calls into a kernel's table: ``store(mem, slot, key, depth)`` stores an
    exact entry of that depth, ``depth_of(mem, slot, key)`` reads its depth back (-1
    when the key is not there)."""

    @numba.njit
    def store(mem, slot, key, depth):  # type: ignore[no-untyped-def]
        table.tt_store(mem, slot, key, 0, depth, table.EXACT, 2, False)

    @numba.njit
    def depth_of(mem, slot, key):  # type: ignore[no-untyped-def]
        entry = table.tt_lookup(mem, slot, key)
        return table.entry_depth(entry) if entry != 0 else -1

    return store, depth_of


@pytest.mark.parametrize("board", ["8x8", pytest.param("9x7", marks=pytest.mark.slow),
                                   pytest.param("10x8", marks=pytest.mark.slow)])
def test_late_positions_agree_with_a_plain_minimax(board: str) -> None:
    """The solver's score and each move's (``solve --all``) equal a full-width minimax's
    (tests/minimax_oracle.py: no bitboards, no pruning, no table)."""
    geometry = Geometry.parse(board)
    searcher = Searcher(geometry=geometry, solving_only=True)
    rng = random.Random(geometry.name)
    for _ in range(LATE_POSITIONS):
        pos = late_position(rng, geometry, rng.randint(*LATE_EMPTY_CELLS))
        searcher.clear()
        assert searcher.solve(pos)[0] == oracle_score(pos), moves_of(pos)
        values, _ = searcher.solve_moves(pos)
        best = max(value for col, value in enumerate(values) if pos.can_play(col))
        assert best == oracle_score(pos), moves_of(pos)


def test_two_words_on_7x6_give_the_one_word_kernels_scores_and_nodes() -> None:
    """The two-word kernel run on 7x6 searches exactly as the one-word kernel: the same
    scores with the same node counts, position by position."""
    one, two = Searcher(solving_only=True), Searcher(solving_only=True, two_words=True)
    assert two.kernel.constants.BOARD_WORDS == 2 and one.kernel.constants.BOARD_WORDS == 1
    for pos in late_positions(random.Random(7), 30, 22):
        one.clear()
        two.clear()
        assert two.solve(pos) == one.solve(pos), moves_of(pos)


@pytest.mark.slow
def test_two_words_on_7x6_search_as_one_word_to_a_depth() -> None:
    """The depth-limited search too (the evaluation and the table in the two-word kernel)."""
    one, two = Searcher(), Searcher(two_words=True)
    for pos in late_positions(random.Random(6), 12, 10):
        one.clear()
        two.clear()
        a, b = one.search(pos, Limits(depth=8)), two.search(pos, Limits(depth=8))
        assert (a.move, a.nodes, a.report.best.score) == (b.move, b.nodes, b.report.best.score), moves_of(pos)


def test_the_table_keeps_whole_keys_past_64_bits() -> None:
    """Two keys with the same low word in the same slot are told apart: an entry is
    found under its own key only (the high word is checked too)."""
    table = kernel_for(EIGHT, full=False).table

    @numba.njit
    def store_then_probe(mem, slot, stored, probed):  # type: ignore[no-untyped-def]
        table.tt_store(mem, slot, stored, 5, 3, table.EXACT, 2, False)
        return table.tt_lookup(mem, slot, probed)

    mem = np.zeros(CTX_SIZE + 64, dtype=np.int64)
    low = (1 << 40) | 12345
    for high in (1, 1 << 7, 255):
        mem[:] = 0
        own, other = Wide((high << 64) | low), Wide(((high ^ 1) << 64) | low)
        assert store_then_probe(mem, 8, own, own) != 0
        assert store_then_probe(mem, 8, own, other) == 0
        assert store_then_probe(mem, 8, Wide(low), own) == 0


def test_threads_and_a_larger_table_give_the_same_scores() -> None:
    one = Searcher(16, geometry=EIGHT, solving_only=True)
    two = Searcher(64, geometry=EIGHT, solving_only=True, threads=2)
    rng = random.Random(88)
    for _ in range(6):
        pos = late_position(rng, EIGHT, rng.randint(14, 18))
        one.clear()
        two.clear()
        assert one.solve(pos)[0] == two.solve(pos)[0], moves_of(pos)


# ---------------------------------------------------------------- the interfaces

@pytest.fixture(scope="module")
def wide_engine() -> EngineProcess:
    proc = start_engine()
    yield proc
    proc.close()


def switch(proc: EngineProcess, variant: str) -> list[str]:
    """Set the variant; the lines before ``readyok`` (a new board compiles first: on a
    cold cache and a busy machine, longer than READY_TIMEOUT allows)."""
    proc.send(f"setoption name UCI_Variant value {variant}")
    return proc.sync(COMPILE_TIMEOUT)


def test_the_protocol_plays_8x8_from_drops_and_a_fen(wide_engine: EngineProcess) -> None:
    """``UCI_Variant cfour-8x8``, a position by FEN and by drops, and ``go``: near the end
    a best move with a proven score (a plain minimax's), early a legal drop; and a FEN
    with two-digit empty runs on 10x8, as Fairy-Stockfish writes them."""
    assert not errors(switch(wide_engine, "cfour-8x8"))
    pos = late_position(random.Random(8), EIGHT, 8)
    wide_engine.send(f"position fen {to_fen(pos)}")
    wide_engine.send("go movetime 5000")
    lines = wide_engine.read_until("bestmove", READY_TIMEOUT)
    move = bestmoves(lines)[0].group("move")
    col = "abcdefgh".index(move[2])
    assert pos.can_play(col) and move == f"P@{move[2]}{pos.column_height(col) + 1}"
    best = oracle_score(pos)
    child = pos.play(col)
    assert (pos.is_winning_move(col) and best > 0) or -oracle_score(child) == best, to_fen(pos)
    last = infos(lines)[-1]
    assert last.group("kind") == "mate" if best else last.group("value") == "0"
    wide_engine.send("position startpos moves P@d1 P@e1 P@d2")
    wide_engine.send("go depth 4")
    assert bestmoves(wide_engine.read_until("bestmove", READY_TIMEOUT))[0].group("move").startswith("P@")
    assert not errors(switch(wide_engine, "cfour-10x8"))
    fen = "10/10/10/10/10/10/10/4P5[" + "P" * 39 + "p" * 40 + "] b - - 0 1"
    lines = wide_engine.command(f"position fen {fen}") + wide_engine.command("d")
    assert not errors(lines) and any(fen.split()[0] in line for line in lines)


def test_the_python_api_solves_8x8() -> None:
    pos = late_position(random.Random(64), EIGHT, 8)
    api_position = Position.from_moves([col + 1 for col in pos.history], width=8, height=8)
    assert api_position.board == "8x8"
    assert c4engine.solve(api_position) == oracle_score(pos)
    assert c4engine.best_move(api_position, depth=2) in api_position.legal_moves()


@pytest.mark.parametrize("shape", [(8, 8), (10, 8)])
def test_connectx_plays_8x8_and_10x8(shape: tuple[int, int]) -> None:
    columns, rows = shape
    board = [0] * (columns * rows)
    board[-1 - columns // 2] = 1  # the first player's stone in a central column, bottom row
    column = agent({"board": board, "mark": 2}, {"columns": columns, "rows": rows, "inarow": 4,
                                                 "actTimeout": 2})
    assert 0 <= column < columns


def test_a_store_keeps_another_positions_much_deeper_entry() -> None:
    """In an exact solve the table favours costly entries: a store leaves another
    position's entry of this generation searched more than KEEP_DEPTH plies
    deeper, and replaces one less deep, its own position's, and an older
    generation's; a depth-limited search always replaces."""
    table = kernel_for(Geometry(), full=False).table
    store, depth_of = table_probes(table)
    mem = np.zeros(CTX_SIZE + 8, dtype=np.int64)
    slot, deep, other, deepest = CTX_SIZE, 0x12345, 0x54321, 30
    store(mem, slot, deep, deepest)
    store(mem, slot, other, deepest - table.KEEP_DEPTH - 1)
    assert depth_of(mem, slot, other) == deepest - table.KEEP_DEPTH - 1  # a depth-limited search replaces
    store(mem, slot, deep, deepest)
    mem[KEEP_DEEPER] = 1
    store(mem, slot, other, deepest - table.KEEP_DEPTH - 1)
    assert depth_of(mem, slot, deep) == deepest and depth_of(mem, slot, other) == -1
    store(mem, slot, other, deepest - table.KEEP_DEPTH)
    assert depth_of(mem, slot, other) == deepest - table.KEEP_DEPTH
    store(mem, slot, deep, deepest)
    store(mem, slot, deep, 1)
    assert depth_of(mem, slot, deep) == 1
    store(mem, slot, deep, deepest)
    mem[GENERATION] = 1
    store(mem, slot, other, 1)
    assert depth_of(mem, slot, other) == 1


def test_a_bucket_keeps_two_positions_and_gives_up_the_shallower() -> None:
    """A whole-key table (boards past 49 bits: 8x6, 7x7, here 8x8) keeps two positions
    in one bucket, where one entry a slot kept the last stored; an exact solve's
    store takes the shallower entry of the two, a depth-limited search's the
    first."""
    table = kernel_for(EIGHT, full=False).table
    store, depth_of = table_probes(table)
    assert table.WAYS == 2
    mem = np.zeros(CTX_SIZE + 8, dtype=np.int64)
    slot, deep, shallow, new = CTX_SIZE, Wide(0x12345), Wide((3 << 64) | 0x54321), Wide(0x6789A)
    mem[KEEP_DEEPER] = 1
    store(mem, slot, deep, 20)
    store(mem, slot, shallow, 10)
    assert depth_of(mem, slot, deep) == 20 and depth_of(mem, slot, shallow) == 10
    store(mem, slot, new, 12)
    assert depth_of(mem, slot, deep) == 20 and depth_of(mem, slot, new) == 12 and depth_of(mem, slot, shallow) == -1
    store(mem, slot, new, 5)  # its own entry, whatever its depth
    assert depth_of(mem, slot, new) == 5 and depth_of(mem, slot, deep) == 20
    mem[KEEP_DEEPER] = 0
    store(mem, slot, shallow, 3)
    assert depth_of(mem, slot, shallow) == 3 and depth_of(mem, slot, deep) == -1 and depth_of(mem, slot, new) == 5


def open_position(rng: random.Random, geometry: Geometry, stones: int) -> Board:
    """A position after ``stones`` random moves that neither win nor let the opponent
    win at once: still open, so that solving it takes a real search."""
    while True:
        pos = Board(geometry=geometry)
        while pos.stones < stones:
            quiet = [col for col in pos.legal_moves()
                     if not pos.is_winning_move(col) and not pos.play(col).can_win_now()]
            if not quiet:
                break
            pos = pos.play(rng.choice(quiet))
        if pos.stones == stones:
            return pos


def test_the_smallest_two_way_table_gives_a_large_tables_scores() -> None:
    """Under pressure (the smallest table, where positions share buckets all the time
    and the store's choice of entry decides what stays) the scores are a large
    table's: more nodes, the same answers."""
    small = Searcher(2, geometry=EIGHT, solving_only=True)
    large = Searcher(64, geometry=EIGHT, solving_only=True)
    rng = random.Random(2026)
    small_nodes = large_nodes = 0
    for stones in (29, 30, 30, 31):
        pos = open_position(rng, EIGHT, stones)
        small.clear()
        large.clear()
        (score, nodes), (expected, fewer) = small.solve(pos), large.solve(pos)
        assert score == expected, moves_of(pos)
        small_nodes, large_nodes = small_nodes + nodes, large_nodes + fewer
    assert small_nodes > large_nodes
