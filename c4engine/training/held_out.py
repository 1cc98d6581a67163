"""Held-out sets: positions made apart from any training data, labelled by the solver,
to measure an evaluation on positions it never saw.

The generator differs from the training data's (:mod:`c4engine.training.pipeline`
plays noisy engine games): seeded random playouts
(:func:`c4engine.training.data.playout`: a win taken, a threat blocked,
otherwise a random move that hands over no win), with an equal share of
positions in each phase, a band of stone counts (:func:`phases`).  Each
position is solved exactly (win/draw/loss); one the solver cannot prove
within the node cap is skipped, so the hardest are under-represented, and each
position is kept once with its mirror image.  ``c4engine train --held-out``
leaves these positions and their mirror images out of its data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..geometry import Geometry
from ..kernel.evaluation import N_LINEAR, THREAT_WEIGHTS
from ..search.searcher import proving_searcher
from .data import PROVING_HASH_MB, Dataset, playout, prove
from .linear import accuracy, feature_matrix, fit_scale
from .network import canonical_keys, judge_block
from .packing import pack

PHASES = 4
HELD_OUT_STREAM = 3  # the seed's second word: not a stream the training draws from


def phases(geometry: Geometry) -> list[tuple[int, int]]:
    """Four bands of stone counts (both ends) that cover the game."""
    edges = np.linspace(0, geometry.cells, PHASES + 1).astype(int)
    return [(int(low), int(high) - 1) for low, high in zip(edges[:-1], edges[1:])]


def make_held_out(geometry: Geometry, per_phase: int, seed: int, node_limit: int,
                  solved: Callable[[int, bool], None] = lambda phase, proven: None) -> Dataset:
    """Up to ``per_phase`` solved playout positions in each phase (20 tries each at most);
    ``solved(phase, proven)`` after each solve, so that a caller can tell how many
    positions of a phase the node cap left out."""
    rng = np.random.default_rng([seed, HELD_OUT_STREAM])
    solver = proving_searcher(geometry, PROVING_HASH_MB)
    keys: set[int] = set()
    boards, results = [], []
    for phase, (low, high) in enumerate(phases(geometry)):
        found = 0
        for _ in range(20 * per_phase):
            if found == per_phase:
                break
            board = playout(geometry, int(rng.integers(low, high + 1)), rng)
            if board is None or board.stones < low:
                continue
            words = np.array([pack(board.current, geometry)]), np.array([pack(board.mask, geometry)])
            key = int(canonical_keys(*words, geometry)[0])
            if key in keys:
                continue
            result = prove(solver, board, node_limit)
            solved(phase, result is not None)
            if result is not None:
                keys.add(key)
                boards.append(board)
                results.append(result)
                found += 1
    return Dataset.of_boards(geometry, boards, results, np.ones(len(boards), dtype=bool))


@dataclass(frozen=True)
class Overlap:
    """How many positions of a band of stone counts the training saw (or their mirror images)."""

    phase: tuple[int, int]
    positions: int
    trained_on: int


def overlap(positions: Dataset, trained_keys: np.ndarray, bands: list[tuple[int, int]]) -> list[Overlap]:
    """Per band of ``bands`` and over all (the last row): the positions, and how many of
    them are among ``trained_keys`` (canonical keys: a mirror image counts)."""
    keys = canonical_keys(positions.current, positions.mask, positions.geometry)
    seen = np.isin(keys, trained_keys)
    rows = []
    for low, high in [*bands, (0, positions.geometry.cells - 1)]:
        at = (positions.stones >= low) & (positions.stones <= high)
        rows.append(Overlap((low, high), int(at.sum()), int(np.sum(seen & at))))
    return rows


@dataclass(frozen=True)
class PhaseAccuracy:
    phase: tuple[int, int]
    positions: int
    network: float
    threats: float


def phase_accuracy(block: np.ndarray, margin: float, held_out: Dataset,
                   linear: np.ndarray | None = None) -> list[PhaseAccuracy]:
    """Per phase, and over all (the last row, phase ``(0, cells - 1)``): the network's
    win/draw/loss accuracy as the engine runs it (a hybrid's ``linear`` weights added), and the hand-written threat
    weights', whose scale and draw margin (two numbers) are fitted on the set itself."""
    threats = feature_matrix(held_out) @ THREAT_WEIGHTS[:N_LINEAR].astype(np.float64)
    result = held_out.result.astype(np.int64)
    calibration = fit_scale(threats, result)
    threat_values = threats * calibration.weights[0]
    rows = []
    for low, high in [*phases(held_out.geometry), (0, held_out.geometry.cells - 1)]:
        at = np.flatnonzero((held_out.stones >= low) & (held_out.stones <= high))
        if at.size:
            network = judge_block(block, margin, held_out, at, linear).accuracy
            rows.append(PhaseAccuracy((low, high), int(at.size), network,
                                      accuracy(threat_values[at], calibration.margin, result[at])))
    return rows
