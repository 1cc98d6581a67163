"""End-to-end tests of the protocol process, the extras: `d`, `eval`, `perft`, `bench`, debug.

The real ``c4engine`` process driven with pexpect (``engine_process.py``); the
shared process and its reset are the ``engine`` fixtures of ``conftest.py``;
``protocol.md`` is the contract checked."""

from __future__ import annotations

import re

import pytest
from engine_process import MID_FEN, EngineProcess, errors, infos

from c4engine.geometry import Geometry
from c4engine.protocol.server import max_perft_depth

# ------------------------------------------------------------------ extras

def test_d_shows_board_fen_side_and_moves(engine: EngineProcess) -> None:
    """``d`` after 4453 prints exactly the protocol.md example."""
    engine.send("position startpos moves 4453")
    assert engine.command("d") == [
        ". . . . . . .", ". . . . . . .", ". . . . . . .", ". . . . . . .",
        ". . . O . . .", ". . O X X . .", "1 2 3 4 5 6 7",
        f"Fen: {MID_FEN}", "Side to move: first player (X)", "Moves: 4 4 5 3",
    ]


@pytest.mark.parametrize("moves", ["4453", "44534", "3344556"])
def test_eval_terms_add_up_to_the_total(engine: EngineProcess, moves: str) -> None:
    """``eval``: the header, the terms of protocol.md with each player's weight and
    count, weighted totals that are the weighted sums, and the side to move's total
    X - O (or O - X), with the hand-written weights."""
    engine.send("setoption name Evaluation value threats")
    engine.send(f"position startpos moves {moves}")
    lines = engine.command("eval")
    assert re.fullmatch(r"term +X weight +X \(first\) +O weight +O \(second\)", lines[0])
    names = ["good-parity threats", "other threats", "dead threats", "stacked threat pairs", "first player",
             r"threat cells \(weighed\)", "stones 0 from edge", "stones 1 from edge", "stones 2 from edge",
             "stones 3 from edge"]
    sums = [0, 0]
    for name, line in zip(names, lines[1:11]):
        m = re.fullmatch(rf"{name} +(-?\d+) +(-?\d+) +(-?\d+) +(-?\d+)", line)
        assert m, line
        sums[0] += int(m[1]) * int(m[2])
        sums[1] += int(m[3]) * int(m[4])
    assert re.fullmatch(rf"weighted total +{sums[0]} +{sums[1]}", lines[11]), (lines[11], sums)
    sign = 1 if len(moves) % 2 == 0 else -1
    assert lines[12] == f"Evaluation (side to move): {sign * (sums[0] - sums[1])} cp"
    assert len(lines) == 13


def test_eval_of_an_ntuple_network_is_its_size_and_total(engine: EngineProcess) -> None:
    """With ``Evaluation ntuple`` there are no terms to list: the network's size, then a
    total that changes sign with the side to move only through the position."""
    engine.command("setoption name Evaluation value ntuple")
    try:
        engine.send("position startpos moves 443")
        lines = engine.command("eval")
        assert re.fullmatch(r"n-tuple network: \d+ tuples of 8 cells, each read on the mirror image too", lines[0])
        assert re.fullmatch(r"Evaluation \(side to move\): -?\d+ cp", lines[1]) and len(lines) == 2
        engine.send("position startpos moves 4")
        opening = engine.command("eval")[1]
        assert opening != "Evaluation (side to move): 0 cp"  # the network, not the zero linear weights
    finally:
        engine.command("setoption name Evaluation value threats")


def test_perft_3_from_the_start(engine: EngineProcess) -> None:
    """``perft 3`` from the start: 49 per first move, a blank line, 343 in all."""
    assert engine.command("perft 3") == [f"{c}: 49" for c in range(1, 8)] + ["", "Nodes searched: 343"]


def test_perft_counts_only_unfinished_games(engine: EngineProcess) -> None:
    """Perft after 121212 (the first player threatens column 1): the sequences through
    the winning move 1 end early and count for nothing at depth 2; every other first move
    has 7 replies (the second player's win in column 2 ends the game on the last ply)."""
    engine.send("position startpos moves 121212")
    lines = engine.command("perft 2")
    assert lines[:7] == ["1: 0"] + [f"{c}: 7" for c in range(2, 8)]
    assert lines[7:] == ["", "Nodes searched: 42"]


@pytest.mark.parametrize("board, cap", [("7x6", 10), ("8x7", 9), ("16x3k5", 7), ("3x3k3", 9), ("1x5k3", 5),
                                        ("26x1k3", 5)])
def test_perft_depth_has_a_cap_on_every_board(board: str, cap: int) -> None:
    """At most W^N sequences, as on 7x6 at depth 10, and no more plies than cells:
    ``perft 9`` on 16x3k5 (16^9 sequences) ran for minutes with nothing answered."""
    assert max_perft_depth(Geometry.parse(board)) == cap


def test_bench_prints_nodes_searched(engine: EngineProcess) -> None:
    """``bench`` searches its positions and prints the node total (Stockfish's form)."""
    engine.send("bench")
    lines = engine.sync(90.0)
    assert errors(lines) == [], lines
    assert any(re.fullmatch(r"Nodes searched *: \d+", line) for line in lines)


def test_debug_mode_reports_the_limits(engine: EngineProcess) -> None:
    """``debug on``/``off`` are accepted silently; in debug mode a ``go`` writes one
    ``info string debug`` line with its limits (here the depth), and no more once off."""
    assert engine.command("debug on") == []
    engine.send("go depth 3")
    lines = engine.read_until("bestmove")
    debug = [line for line in lines if line.startswith("info string debug ")]
    assert len(debug) == 1 and "depth=3" in debug[0], lines
    assert len(infos(lines)) == len(lines) - 2
    assert engine.command("debug off") == []
    engine.send("go depth 3")
    assert not [line for line in engine.read_until("bestmove") if "debug" in line]
