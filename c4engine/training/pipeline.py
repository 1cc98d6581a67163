"""``c4engine train``: an n-tuple network from nothing but the engine's own commands.

Two stages, both resumable from the run's checkpoint (:mod:`c4engine.training.store`):

1. **Data.**  Seeded noisy games (:func:`c4engine.training.data.noisy_game`: the
   engine plays with the hand-written weights at a fixed node count, 15% of the
   moves at random), and every position of them with ``stones`` stones solved
   by the engine's solver (one it cannot prove within ``node_limit`` nodes is
   skipped); with ``leaves`` and ``playouts``, after each game so many positions
   a search from it evaluates and random playout positions are solved too (the
   shipped 7x6 network's data had all three kinds).  The games come in chunks of ``GAMES_PER_CHUNK``; chunk ``i``
   draws from its own generator, seeded by ``(seed, i)``, and starts from
   empty tables, so its positions are the same whichever process solves it
   and whenever: here, or in Ray tasks (``--cluster``), where a chunk lost with
   its worker is solved again; and whatever the run's number of games, so a
   checkpoint of the same run with another ``--games`` or fit keeps its whole
   chunks (:func:`claim`).  Only this process writes the checkpoint.
2. **Fit.**  The tables are fitted by SGD (:mod:`c4engine.training.network`),
   epoch ``e`` shuffling with a generator seeded by ``(seed, e)``, so an epoch
   depends only on the tables before it; they are saved every
   ``checkpoint_seconds`` and when the run stops.  With ``hybrid`` the value
   is the tables' plus the linear threat evaluation's
   (:mod:`c4engine.kernel.evaluation`): its weights are fitted alone first
   (full batch, on at most ``LINEAR_SAMPLE`` positions, the same on a resumed
   run), rounded to the centipawns the engine adds, and held fixed while the
   tables learn what they miss.  Fitting both together in the SGD instead
   scored no better on the 7x7 held-out set (docs/guides/evaluation.md).

On 7x6 the 12-stone distance book's 4.2 M positions join the solved ones
(``book``), and the others are seen ``REPEAT_OTHERS`` times an epoch.  A tenth
of the positions, by a hash of their key or their mirror image's, is held out
and scored after each epoch; a held-out set made apart
(:mod:`c4engine.training.held_out`) is left out of the training data, key by
key, and the network's accuracy on it is what its file records.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, ClassVar

import numpy as np

from ..books.build import Progress
from ..geometry import Geometry
from ..kernel.ntuple import STATES, TUPLE_LENGTH, network_values
from .data import Dataset, game_leaves, game_searchers, noisy_game, playout, prove
from .linear import CP_PER_LOGIT, accuracy
from .network import (
    HeldOutAccuracy, Network, canonical_keys, cell_rows, epoch_step, feature_counts, fitted_linear, judge_network,
    merged_dataset, random_walk_tuples, sgd_pass, write_network,
)
from .packing import data_cells, pack, stone_counts
from .store import CheckpointError, Positions, TrainingStore

GAMES_PER_CHUNK = 4  # games per task: what a lost worker loses, and a committed batch
REPEAT_OTHERS = 4  # times an epoch a position beside the 7x6 book's is seen
TUPLE_STREAM, EPOCH_STREAM, LINEAR_STREAM = 1, 2, 4  # the seeds' second words, so that no two draws share a stream
ADDED_LATER = ("leaves", "playouts", "hybrid")  # TrainSpec's fields that a run without them does not record
FIT_FIELDS = ("tuples", "epochs", "rate", "book", "hybrid")  # the fields that the games and their solving ignore


@dataclass(frozen=True)
class ChunkedSpec:
    """What a run of either method starts from: a board, a seed, and its games,
    played in chunks of ``games_per_chunk``, chunk ``i`` seeded by ``(seed, i)``."""

    board: str
    seed: int
    games: int
    games_per_chunk: ClassVar[int] = GAMES_PER_CHUNK

    @property
    def geometry(self) -> Geometry:
        return Geometry.parse(self.board)

    @property
    def chunks(self) -> int:
        return -(-self.games // self.games_per_chunk)

    def chunk_games(self, chunk: int) -> int:
        """The games chunk ``chunk`` plays (none past the run's end)."""
        return max(0, min(self.games_per_chunk, self.games - chunk * self.games_per_chunk))


@dataclass(frozen=True)
class TrainSpec(ChunkedSpec):
    """What a run makes: the same spec, the same network."""

    stones: tuple[int, int]
    node_limit: int
    tuples: int
    epochs: int
    rate: float
    book: bool
    leaves: int = 0
    playouts: int = 0
    hybrid: bool = False

    def settings(self) -> str:
        """The spec as the checkpoint keeps it; ``leaves``, ``playouts`` and ``hybrid``
        only when asked for, so that a checkpoint made before they existed goes on."""
        fields = asdict(self)
        for name in ADDED_LATER:
            if not fields[name]:
                del fields[name]
        return json.dumps(fields, sort_keys=True)

    @classmethod
    def from_settings(cls, settings: str) -> TrainSpec:
        """The spec of a checkpoint's settings; CheckpointError if they are a self-play
        run's (:mod:`c4engine.training.td`)."""
        fields = json.loads(settings)
        if "method" in fields:
            raise CheckpointError(f"the checkpoint holds a {fields['method']} run ({settings})")
        return cls(**fields | {"stones": tuple(fields["stones"])})

    def command(self, held_out: str | None) -> str:
        """The ``c4engine train`` options that make this network (what its file records:
        not where it is written, nor how the work was spread or stopped)."""
        words = ["c4engine", "train", "--board", self.board, "--seed", str(self.seed), "--games", str(self.games),
                 "--stones", *map(str, self.stones), "--nodes", str(self.node_limit), "--tuples", str(self.tuples),
                 "--epochs", str(self.epochs), "--rate", repr(self.rate), "--book" if self.book else "--no-book"]
        words += [word for name in ("leaves", "playouts") if getattr(self, name)
                  for word in (f"--{name}", str(getattr(self, name)))]
        words += ["--hybrid"] if self.hybrid else []
        return shlex.join(words + (["--held-out", held_out] if held_out else []))


class Stopped(Exception):
    """The run's time was spent; the checkpoint holds what was done."""


def chunk_positions(spec: TrainSpec, chunk: int) -> tuple[int, Positions]:
    """Chunk ``chunk``'s games' positions with ``spec.stones`` stones, each once, and
    their results (those proven within ``spec.node_limit`` nodes); after each game,
    ``spec.leaves`` positions a search from it evaluates (:func:`game_leaves`) and
    ``spec.playouts`` random playout positions join them.  Its searchers are
    new (their tables fill as they are used), so nothing solved before leaks in."""
    geometry = spec.geometry
    rng = np.random.default_rng([spec.seed, chunk])
    solver, player = game_searchers(geometry)
    found: dict[int, tuple[int, int, int]] = {}
    for _ in range(spec.chunk_games(chunk)):
        game = noisy_game(geometry, spec.stones[1], rng, solver, player)
        boards = [board for board in game if board.stones >= spec.stones[0]]
        boards += game_leaves(game, spec.leaves, spec.stones, rng, player)
        boards += [board for board in (playout(geometry, int(rng.integers(spec.stones[0], spec.stones[1] + 1)), rng)
                                       for _ in range(spec.playouts)) if board is not None]
        for board in boards:
            if board.key not in found:
                result = prove(solver, board, spec.node_limit)
                if result is not None:
                    found[board.key] = (pack(board.current, geometry), pack(board.mask, geometry), result)
    rows = list(found.values())
    return chunk, (np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64),
                   np.array([r[2] for r in rows], dtype=np.int8))


def claim(store: TrainingStore, spec: TrainSpec) -> None:
    """Make the checkpoint ``spec``'s run.  One of a run that differs only in its
    number of games or in what the fit takes (:data:`FIT_FIELDS`) is taken over: a
    chunk's positions depend on its index and its number of games, not on the
    run's total, so the chunks that hold the games ``spec`` gives them are kept
    (and those past its end, for a longer run), the others and the saved fit go.
    CheckpointError for any other run's."""
    held = store.settings()
    if held is not None and held != spec.settings():
        before = TrainSpec.from_settings(held)
        if replace(before, games=spec.games, **{name: getattr(spec, name) for name in FIT_FIELDS}) == spec:
            refilled = [chunk for chunk in store.chunks_done() if filled(before, chunk) != filled(spec, chunk)]
            store.take_over(spec.settings(), refilled)
    store.claim(spec.settings())


def filled(spec: TrainSpec, chunk: int) -> int:
    """The games a recorded chunk ``chunk`` holds in ``spec``'s checkpoint: its own,
    or all of a chunk's past the run's end (only a longer run records those)."""
    return spec.chunk_games(chunk) or GAMES_PER_CHUNK


def solve_here(spec: TrainSpec, chunks: Iterable[int]) -> Iterator[tuple[int, Positions]]:
    for chunk in chunks:
        yield chunk_positions(spec, chunk)


ChunkSolver = Callable[[TrainSpec, list[int]], Iterator[tuple[int, Positions]]]


@dataclass
class Run:
    """One invocation of ``c4engine train``: where it writes, and its limits (a self-play
    run's spec is :class:`c4engine.training.td.SelfPlaySpec`; it takes no ``solver``)."""

    spec: ChunkedSpec
    out: Path
    checkpoint: Path
    made_by: str
    held_out: Dataset | None = None
    minutes: float | None = None
    checkpoint_seconds: float = 300.0
    solver: ChunkSolver = solve_here
    stream: IO[str] | None = None

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + 60 * self.minutes if self.minutes is not None else float("inf")

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.deadline


def train(run: Run) -> HeldOutAccuracy:
    """Make (or go on making) the run's network and write it to ``run.out``; its
    held-out accuracy.  Stopped when ``run.minutes`` are spent first."""
    spec = run.spec
    assert isinstance(spec, TrainSpec)
    store = TrainingStore(run.checkpoint)
    try:
        claim(store, spec)
        make_data(run, store)
        data = merged_dataset(spec.geometry, [stored_dataset(spec, store)], spec.book)
        return fit(run, store, data)
    finally:
        store.close()


def trained_keys(checkpoint: Path) -> tuple[Geometry, np.ndarray]:
    """The board of the run in ``checkpoint`` and the canonical keys of the positions
    its fit trains on: its solved positions (and the 7x6 book's, if it takes them),
    less the tenth held out by key.  A set passed to ``--held-out`` is left out of
    the fit as well, which the checkpoint does not record.  CheckpointError if the
    file holds no run."""
    store = TrainingStore(checkpoint, read_only=True)
    try:
        settings = store.settings()
        if settings is None:
            raise CheckpointError(f"{checkpoint} holds no training run")
        spec = TrainSpec.from_settings(settings)
        data = merged_dataset(spec.geometry, [stored_dataset(spec, store)], spec.book)
    finally:
        store.close()
    rows = ~data.held_out
    return spec.geometry, canonical_keys(data.current[rows], data.mask[rows], spec.geometry)


def stored_dataset(spec: TrainSpec, store: TrainingStore) -> Dataset:
    current, mask, result = store.positions(spec.chunks)
    return Dataset(spec.geometry, current, mask, stone_counts(mask), result, np.zeros(current.size, dtype=bool))


def make_data(run: Run, store: TrainingStore) -> None:
    """Every chunk's positions into the checkpoint, as each ends."""
    done = store.chunks_done() & set(range(run.spec.chunks))
    progress = Progress(run.spec.games, sum(run.spec.chunk_games(chunk) for chunk in done), _stream(run), "games")
    try:
        to_do = [chunk for chunk in range(run.spec.chunks) if chunk not in done]
        solved = store.position_count(run.spec.chunks)
        for chunk, positions in run.solver(run.spec, to_do):
            store.record_chunk(chunk, positions)
            solved += positions[0].size
            progress.note = f"{solved} positions solved"
            progress.advance(run.spec.chunk_games(chunk))
            if run.out_of_time():
                raise Stopped
    finally:
        progress.close()


def fit(run: Run, store: TrainingStore, data: Dataset) -> HeldOutAccuracy:
    """The epochs not yet done, from the saved tables; then the network file.  A
    hybrid's linear weights are fitted first, on their own, every time (full-batch,
    so a resumed run finds the same), and then stay fixed: the tables learn the rest."""
    spec = run.spec
    excluded = excluded_rows(data, run.held_out)
    train_rows = np.flatnonzero(~data.held_out & ~excluded)
    check_rows = np.flatnonzero(data.held_out & ~excluded)
    trained_on = int(train_rows.size)
    linear, margin = None, 0.5
    if spec.hybrid:
        _stream(run).write(f"fitting the threat terms to {train_rows.size} positions first\n")
        linear, margin = fitted_linear(data, train_rows, [spec.seed, LINEAR_STREAM])
    if spec.book and spec.geometry.is_standard:
        others = train_rows[data.stones[train_rows] != 12]
        train_rows = np.sort(np.concatenate([train_rows, *[others] * (REPEAT_OTHERS - 1)]))
    cells = cell_rows(random_walk_tuples(spec.geometry, spec.tuples, TUPLE_LENGTH,
                                         np.random.default_rng([spec.seed, TUPLE_STREAM])), spec.geometry)
    epoch, margin, tables = store.saved_fit() or (0, margin, np.zeros((spec.tuples, STATES ** TUPLE_LENGTH)))
    rows = (data.current[train_rows], data.mask[train_rows], data.stones[train_rows].astype(np.int64),
            data.result[train_rows].astype(np.int64))
    offset = {} if linear is None else {"features": feature_counts(data, train_rows), "linear": linear / CP_PER_LOGIT}
    checked = (data, check_rows) if run.held_out is None else (run.held_out, np.arange(len(run.held_out)))
    progress = Progress(spec.epochs, epoch, _stream(run), "epochs")
    saved = time.monotonic()
    try:
        while epoch < spec.epochs:
            order = np.random.default_rng([spec.seed, EPOCH_STREAM, epoch]).permutation(train_rows.size)
            margin = sgd_pass(data_cells(cells, spec.geometry), tables, rows, order,
                              epoch_step(spec.rate, epoch, spec.epochs, spec.tuples), margin, **offset)
            epoch += 1
            progress.note = f"held-out accuracy {float_accuracy(cells, tables, margin, *checked, linear):.4f}"
            progress.advance(1)
            if epoch < spec.epochs and (run.out_of_time() or time.monotonic() - saved >= run.checkpoint_seconds):
                store.save_fit(epoch, margin, tables)
                saved = time.monotonic()
                if run.out_of_time():
                    raise Stopped
    finally:
        progress.close()
    store.save_fit(epoch, margin, tables)
    network = Network(spec.geometry, cells, tables, margin, linear)
    held_out = judged(network, data, check_rows, run.held_out)
    write_network(run.out, network, run.made_by, [], trained_on, held_out)
    return held_out


def excluded_rows(data: Dataset, held_out: Dataset | None) -> np.ndarray:
    """The rows of ``data`` that are positions of the held-out set, or their mirror images."""
    if held_out is None:
        return np.zeros(len(data), dtype=bool)
    keys = canonical_keys(data.current, data.mask, data.geometry)
    return np.isin(keys, canonical_keys(held_out.current, held_out.mask, held_out.geometry))


def float_accuracy(cells: np.ndarray, tables: np.ndarray, margin: float, data: Dataset, rows: np.ndarray,
                   linear: np.ndarray | None = None) -> float:
    """The float network's accuracy on ``rows`` of ``data`` (for the progress bar:
    the held-out set's, or the tenth of the data held out by key), a hybrid's
    ``linear`` weights (centipawns) added."""
    values = network_values(data_cells(cells, data.geometry), tables, data.current[rows], data.mask[rows],
                            data.stones[rows].astype(np.int64))
    if linear is not None:
        values += feature_counts(data, rows) @ linear / CP_PER_LOGIT
    return accuracy(values, margin, data.result[rows].astype(np.int64)) if rows.size else float("nan")


def judged(network: Network, data: Dataset, own_rows: np.ndarray, held_out: Dataset | None) -> HeldOutAccuracy:
    """The network's accuracy as the engine runs it: on the held-out set if there is
    one, else on the tenth of its own data held out by key."""
    if held_out is None:
        own = judge_network(network, data, own_rows).accuracy if own_rows.size else float("nan")
        return HeldOutAccuracy(own, int(own_rows.size), "a tenth of its data, held out by key")
    rows = np.arange(len(held_out))
    score = judge_network(network, held_out, rows)
    return HeldOutAccuracy(score.accuracy, int(rows.size), "an independent held-out set (c4engine held-out make)")


def _stream(run: Run) -> IO[str]:
    return run.stream or sys.stderr
