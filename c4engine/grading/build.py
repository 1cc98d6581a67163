"""Making a grading set: positions reached by random and by imperfect play, scored
exactly once, classed as Pons' sets are.

The rules (docs/reference/formats.md, "How a set is made"), all driven by one
``random.Random`` seeded with ``c4engine-grade:<board>:<seed>`` (a string seed:
the same on every platform and Python version), so that a seed makes the same set:

- the classes are filled in turn: the first of the stones' bands (L1, L2, L3)
  that still has a class to fill is drawn, then a number of stones in that band;
- attempts alternate between the two players: *random* (any legal column) and
  *imperfect* (wins at once when it can, stops the opponent's win at once, never
  lets the opponent win with its next stone when it need not, else any column);
  a game that ends before the number of stones is given up;
- a position met before is skipped; the others are scored, every column, by
  c4engine's solver (with the opening book on 7x6), each column's solve capped
  at ``node_limit`` nodes: a position past the cap is *unknown* (``L1_R?``),
  never guessed, and each band keeps at most ``per_class`` of those;
- a position joins its class while the class has fewer than ``per_class``;
- a band is drawn no more once its classes are full, or once it has given
  ``per_class`` unknown positions: its positions are then out of reach, and
  its classes are left short rather than filled at any cost.

Nodes, not seconds, cap a solve: the same seed then gives the same set on a
slower machine.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..geometry import Geometry
from ..rules.bits import column_cells
from ..rules.board import Board
from .sets import GradeSet, SetPosition, band, class_of

CLASSES = ("L1_R1", "L1_R2", "L1_R3", "L2_R1", "L2_R2", "L3_R1")  # the only ones a board can have
DEFAULT_NODE_LIMIT = 2_000_000
ATTEMPTS_PER_POSITION = 200  # past this many attempts per position wanted, the set is left short


@dataclass(frozen=True)
class BuildReport:
    """What making the set cost: seconds, positions solved, attempts."""

    seconds: float
    solved: int
    attempts: int


def exact_scores(board: Board, node_limit: int | None) -> tuple[int | None, ...] | None:
    """The Pons score of each column of ``board`` (None for a full one), or None when
    a column's solve needs more than ``node_limit`` nodes (None: no limit)."""
    from .. import api
    from ..position import Position
    geometry = board.geometry
    position = Position.from_moves([col + 1 for col in board.history], geometry.width, geometry.height,
                                   geometry.connect)
    try:
        scores = api.analyse(position, nodes=node_limit)
    except api.SolveLimitReached:
        return None
    return tuple(scores.values())


def random_move(board: Board, rng: random.Random) -> int:
    return rng.choice(board.legal_moves())


def imperfect_move(board: Board, rng: random.Random) -> int:
    """A one-ply player: its win at once, else the opponent's win at once blocked,
    else any move that does not hand the opponent a win at once (any at all if none)."""
    legal = board.legal_moves()
    playable = board.playable_cells()
    for stones in (board.current, board.opponent):  # own win first, then the opponent's
        cells = board.winning_cells(stones) & playable
        for col in legal:
            if cells & column_cells(col, board.geometry.height):
                return col
    safe = [col for col in legal if not board.play(col).can_win_now()]
    return rng.choice(safe or legal)


PLAYERS: dict[str, Callable[[Board, random.Random], int]] = {"random": random_move,
                                                             "imperfect": imperfect_move}


def play_to(geometry: Geometry, stones: int, kind: str, rng: random.Random) -> Board | None:
    """A game of ``kind`` play from the empty board to ``stones`` stones, or None when
    it ends sooner."""
    board = Board(geometry=geometry)
    player = PLAYERS[kind]
    while board.stones < stones:
        board = board.play(player(board, rng))
        if board.is_over():
            return None
    return board


def build_set(geometry: Geometry, seed: int, per_class: int, node_limit: int = DEFAULT_NODE_LIMIT,
              progress: Callable[[int, int], None] | None = None) -> tuple[GradeSet, BuildReport]:
    """A set of up to ``per_class`` positions in each of :data:`CLASSES` (and up to as
    many unknown ones per band) on ``geometry``'s board; ``progress`` hears the
    positions kept and wanted after each one kept."""
    rng = random.Random(f"c4engine-grade:{geometry.name}:{seed}")
    wanted = {label: per_class for label in CLASSES} | {f"L{b}_R?": per_class for b in (1, 2, 3)}
    kept: dict[str, list[SetPosition]] = {label: [] for label in wanted}
    seen: set[str] = set()
    began, solved, attempts = time.perf_counter(), 0, 0
    goal = per_class * len(CLASSES)
    while attempts < ATTEMPTS_PER_POSITION * goal:
        open_bands = [b for b in (1, 2, 3)
                      if _any_known_open(b, kept, wanted) and len(kept[f"L{b}_R?"]) < wanted[f"L{b}_R?"]]
        if not open_bands:
            break
        level = open_bands[attempts % len(open_bands)]
        kind = ("random", "imperfect")[attempts % 2]
        attempts += 1
        low, high = _stones_in_band(level, geometry)
        board = play_to(geometry, rng.randint(low, high), kind, rng)
        moves = None if board is None else "".join(str(col + 1) for col in board.history)
        if board is None or moves in seen:
            continue
        seen.add(moves)
        scores = exact_scores(board, node_limit)
        solved += 1
        best = None if scores is None else max(s for s in scores if s is not None)
        label = class_of(board.stones, best, geometry)
        if len(kept[label]) < wanted[label]:
            kept[label].append(SetPosition(moves, scores, label, kind))
            if progress:
                progress(sum(len(kept[c]) for c in CLASSES), goal)
    positions = tuple(p for label in wanted for p in kept[label])
    header = {"seed": str(seed), "per-class": str(per_class), "node-limit": str(node_limit),
              "generator": "c4engine-grade-1"}
    report = BuildReport(time.perf_counter() - began, solved, attempts)
    return GradeSet(f"{geometry.name}-seed{seed}", geometry, positions, header), report


def _stones_in_band(level: int, geometry: Geometry) -> tuple[int, int]:
    """The fewest and most stones of band ``level`` (a position still to be played)."""
    counts = [n for n in range(1, geometry.cells) if band(n, geometry) == level]
    return counts[0], counts[-1]


def _any_known_open(level: int, kept: dict[str, list[SetPosition]], wanted: dict[str, int]) -> bool:
    return any(len(kept[c]) < wanted[c] for c in CLASSES if c[1] == str(level))
