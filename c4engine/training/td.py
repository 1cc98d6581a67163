"""``c4engine train --method self-play``: an n-tuple network from its own games, by TD(lambda).

The games and the learning are :mod:`c4engine.training.selfplay`'s, compiled;
this module runs them in chunks of ``GAMES_PER_CHUNK`` and keeps the run:

* **Seeded:** chunk ``i`` plays from a generator seeded by ``(seed, i)``, and the
  tables it starts from are the ones the chunks before it left, so the same
  command makes the same tables, whether it ran at once or stopped and went on.
* **The step** falls linearly from ``rate`` in the first chunk to a tenth of it
  in the last, shared among the entries an afterstate reads, as the solver
  method's does over its epochs (:func:`~c4engine.training.network.epoch_step`),
  so that the tables settle: at a constant step, 30 M games of 8x7 scored
  worse on the held-out set than 10 M (docs/guides/evaluation.md).
* **Resumable:** the tables and the games played are saved in the checkpoint
  (:class:`c4engine.training.store.TrainingStore`) every ``checkpoint_seconds``
  and when the run stops, always between two chunks.
* **The draw margin** of the ordinal model (:mod:`c4engine.training.linear`) is
  fitted, after the last chunk, to ``CALIBRATION_GAMES`` more games played
  without learning: one afterstate of each and the game's result.  Self-play
  has no exact labels, so its accuracy is measured on a held-out set
  (``c4engine held-out make``), which the run needs.
* **Units:** the value is ``tanh`` of the sum, the ordinal model's expected
  result at a margin of 0 when the side to move's value in logits is twice the
  sum; so the file's tables are the sums' entries doubled, and a hybrid's
  threat terms in centipawns are ``CP_PER_UNIT`` to a unit of the sum.

The games are not spread over a cluster: each one learns from the tables the
games before it left, so they are not independent work (and a chunk of
100,000 takes seconds here).
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np

from ..books.build import Progress
from ..kernel.evaluation import N_LINEAR, THREAT_WEIGHTS
from ..kernel.ntuple import STATES, TUPLE_LENGTH
from ..kernel.specialise import kernel_for
from .data import Dataset
from .linear import log_loss
from .network import (
    HeldOutAccuracy, Network, cell_rows, epoch_step, judge_network, random_walk_tuples, write_network,
)
from .pipeline import TUPLE_STREAM, ChunkedSpec, Run, Stopped
from .selfplay import cell_pairs, play_games
from .store import TrainingStore

GAMES_PER_CHUNK = 100_000  # games between two chances to save: seconds of play
CALIBRATION_GAMES = 20_000
PLAY_STREAM, CALIBRATION_STREAM = 5, 6  # the seeds' second words, beside pipeline's (1-4)
MARGINS = np.linspace(0.02, 4.0, 200)  # the draw margins tried, in logits


@dataclass(frozen=True)
class SelfPlaySpec(ChunkedSpec):
    """What a self-play run makes: the same spec, the same network."""

    tuples: int
    rate: float
    lam: float
    epsilon: float
    random_plies: int
    hybrid: bool
    games_per_chunk: ClassVar[int] = GAMES_PER_CHUNK

    def settings(self) -> str:
        return json.dumps({"method": "self-play", **asdict(self)}, sort_keys=True)

    def command(self, held_out: str) -> str:
        """The ``c4engine train`` options that make this network (what its file records)."""
        words = ["c4engine", "train", "--method", "self-play", "--board", self.board, "--seed", str(self.seed),
                 "--games", str(self.games), "--tuples", str(self.tuples), "--rate", repr(self.rate),
                 "--lambda", repr(self.lam), "--epsilon", repr(self.epsilon), "--random-plies",
                 str(self.random_plies)]
        return shlex.join(words + ["--hybrid"] * self.hybrid + ["--held-out", held_out])


class SelfPlayer:
    """A run's tuples and its board's compiled player, and the games it plays with them."""

    def __init__(self, spec: SelfPlaySpec) -> None:
        geometry = spec.geometry
        self.spec = spec
        tuples = random_walk_tuples(geometry, spec.tuples, TUPLE_LENGTH, np.random.default_rng([spec.seed, TUPLE_STREAM]))
        self.cells = cell_rows(tuples, geometry)
        self.pairs = cell_pairs(self.cells, geometry.width * geometry.h1)
        self.shape = (geometry.width, geometry.height, geometry.connect)
        self.linear = kernel_for(geometry).evaluation.linear_score
        self.weights = THREAT_WEIGHTS.copy()

    def play(self, tables: np.ndarray, games: int, seed: list[int], step: float) -> np.ndarray:
        """``games`` games from a generator seeded by ``seed``, learning with ``step``
        per entry (none at 0); their samples (value, result)."""
        samples = np.zeros((games, 2))
        spec = self.spec
        play_games(tables, self.pairs, self.shape, games, int(np.random.SeedSequence(seed).generate_state(1)[0]),
                   step, spec.lam, spec.epsilon, spec.random_plies, samples, self.linear, self.weights,
                   spec.hybrid)
        return samples

    def network(self, tables: np.ndarray, margin: float) -> Network:
        """The engine's network of ``tables`` (sums' entries): in logits, twice the sum."""
        linear = self.weights[:N_LINEAR].copy() if self.spec.hybrid else None
        return Network(self.spec.geometry, self.cells, 2 * tables, margin, linear)


def fitted_margin(samples: np.ndarray) -> float:
    """The draw margin that best explains the samples' results from their values (the
    first ``CALIBRATION_GAMES`` of them)."""
    values, results = 2 * samples[:CALIBRATION_GAMES, 0], samples[:CALIBRATION_GAMES, 1].astype(np.int64)
    losses = [log_loss(values, margin, results) for margin in MARGINS]
    return float(MARGINS[int(np.argmin(losses))])


def train_self_play(run: Run, held_out: Dataset) -> HeldOutAccuracy:
    """Play (or go on playing) the games of ``run.spec`` (a :class:`SelfPlaySpec`),
    learning, then write its network to ``run.out``; its accuracy on ``held_out``.
    ``Stopped`` when ``run.minutes`` are spent first, the checkpoint saved."""
    spec = run.spec
    assert isinstance(spec, SelfPlaySpec)
    player = SelfPlayer(spec)
    store = TrainingStore(run.checkpoint)
    try:
        store.claim(spec.settings())
        tables = played(run, store, player, held_out)
    finally:
        store.close()
    calibration = player.play(tables, CALIBRATION_GAMES, [spec.seed, CALIBRATION_STREAM], 0.0)
    network = player.network(tables, fitted_margin(calibration))
    score = judge_network(network, held_out, np.arange(len(held_out)))
    found = HeldOutAccuracy(score.accuracy, len(held_out), "an independent held-out set (c4engine held-out make)")
    write_network(run.out, network, run.made_by, [], spec.games, found)
    return found


def played(run: Run, store: TrainingStore, player: SelfPlayer, held_out: Dataset) -> np.ndarray:
    """The tables after every chunk of the run's games, from the checkpoint's; saved
    every ``run.checkpoint_seconds``, when the run's time is out (``Stopped``) and
    at the end."""
    spec = player.spec
    games, tables = store.saved_play() or (0, np.zeros((spec.tuples, STATES ** TUPLE_LENGTH)))
    progress = Progress(spec.games, games, run.stream or sys.stderr, "games")
    saved = time.monotonic()
    try:
        while games < spec.games:
            chunk = games // spec.games_per_chunk
            samples = player.play(tables, spec.chunk_games(chunk), [spec.seed, PLAY_STREAM, chunk],
                                  epoch_step(spec.rate, chunk, spec.chunks, spec.tuples))
            games += samples.shape[0]
            progress.note = chunk_note(player, tables, samples, held_out)
            progress.advance(samples.shape[0])
            if games < spec.games and (run.out_of_time() or time.monotonic() - saved >= run.checkpoint_seconds):
                store.save_play(games, tables)
                saved = time.monotonic()
                if run.out_of_time():
                    raise Stopped
    finally:
        progress.close()
    store.save_play(games, tables)
    return tables


def chunk_note(player: SelfPlayer, tables: np.ndarray, samples: np.ndarray, held_out: Dataset) -> str:
    """The progress bar's note after a chunk: how its games ended, and the held-out
    accuracy of the tables with the margin fitted to them."""
    network = player.network(tables, fitted_margin(samples))
    score = judge_network(network, held_out, np.arange(len(held_out)))
    first, draws = np.mean(samples[:, 1] > 0), np.mean(samples[:, 1] == 0)
    return f"first player won {first:.0%}, drew {draws:.0%}; held-out accuracy {score.accuracy:.4f}"
