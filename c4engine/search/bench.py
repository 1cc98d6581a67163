"""``bench``: a fixed set of positions searched to a fixed depth.

As in Stockfish, the total node count is a signature of the search: it
changes when, and only when, the search changes, so a commit that claims to
change nothing can be checked with one command.  The positions cover the
opening (searched heuristically), the middle game (where the exact solver
takes over part way) and endgames (solved at once).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

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


@dataclass(frozen=True)
class BenchResult:
    nodes: int
    seconds: float
    per_position: tuple[tuple[str, int, int], ...]  # moves, best column (1-7), nodes

    @property
    def nodes_per_second(self) -> int:
        return int(self.nodes / self.seconds) if self.seconds > 0 else 0


def run_bench(searcher: Searcher, depth: int = BENCH_DEPTH) -> BenchResult:
    """Search every bench position from an empty table to ``depth`` plies."""
    total_nodes, total_seconds, rows = 0, 0.0, []
    for moves in BENCH_POSITIONS:
        searcher.clear()
        pos = parse_digits(moves)
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
