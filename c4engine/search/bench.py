"""``bench``: a fixed set of positions searched to a fixed depth.

As in Stockfish, the total node count is a signature of the search: it
changes when, and only when, the search changes, so a commit that claims to
change nothing can be checked with one command.  The positions cover the
opening (searched heuristically), the middle game (where the exact solver
takes over part way) and endgames (solved at once).  On another board than
7x6 the positions are the empty board and the openings of a few fixed
pseudo-random games (:func:`bench_positions`).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from ..geometry import STANDARD, Geometry
from ..rules.board import Board
from ..rules.notation import parse_digits
from .limits import Limits
from .searcher import Searcher

BENCH_DEPTH = 14
BENCH_POSITIONS = (
    "",
    "4",
    "44",
    "4453",
    "3344",
    "445566",
    "4444445",
    "3452163",
    "44444432",
    "1234567",
    "3455433",
    "32164625",
    "6146",
    "44553312",
    "243335424257",
    "2252576253462244111563365343671351441",
    "7422341735647741166133573473242566",
    "23163416124767223154467471272416755633",
)


OTHER_BOARD_POSITIONS = 12


def bench_positions(geometry: Geometry) -> list[Board]:
    """The bench's positions on ``geometry``: :data:`BENCH_POSITIONS` on 7x6; elsewhere
    the empty board and games of random moves (seeded by the board's name, so the
    same on every run) cut at lengths spread over the game, never a finished one
    or one the side to move wins at once."""
    if geometry == STANDARD:
        return [parse_digits(moves) for moves in BENCH_POSITIONS]
    rng = random.Random(geometry.name)
    positions = [Board(geometry=geometry)]
    for i in range(1, OTHER_BOARD_POSITIONS):
        length = i * geometry.cells // OTHER_BOARD_POSITIONS
        pos = Board(geometry=geometry)
        while pos.stones < length and not pos.can_win_now():
            pos = pos.play(rng.choice(pos.legal_moves()))
            if pos.is_over():
                break
        if not pos.is_over():
            positions.append(pos)
    return positions


@dataclass(frozen=True)
class BenchResult:
    nodes: int
    seconds: float
    per_position: tuple[tuple[str, int, int], ...]  # moves, best column (from 1), nodes

    @property
    def nodes_per_second(self) -> int:
        return int(self.nodes / self.seconds) if self.seconds > 0 else 0


def run_bench(searcher: Searcher, depth: int = BENCH_DEPTH) -> BenchResult:
    """Search every bench position from an empty table to ``depth`` plies."""
    total_nodes, total_seconds, rows = 0, 0.0, []
    for pos in bench_positions(searcher.geometry):
        searcher.clear()
        moves = "".join(str(col + 1) for col in pos.history)
        started = time.perf_counter()
        result = searcher.search(pos, Limits(depth=depth))
        total_seconds += time.perf_counter() - started
        total_nodes += result.nodes
        rows.append((moves, -1 if result.move is None else result.move + 1, result.nodes))
    return BenchResult(total_nodes, total_seconds, tuple(rows))


def bench_lines(result: BenchResult) -> list[str]:
    """The report, in the form Stockfish's ``bench`` prints."""
    lines = [f"Position {i + 1:2}/{len(result.per_position)} {moves or '(start)':<40} "
             f"bestmove {best} nodes {nodes}"
             for i, (moves, best, nodes) in enumerate(result.per_position)]
    lines += ["", f"Total time (ms) : {int(result.seconds * 1000)}",
              f"Nodes searched  : {result.nodes}",
              f"Nodes/second    : {result.nodes_per_second}"]
    return lines
