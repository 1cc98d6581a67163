"""Learning an n-tuple network evaluation from exactly scored positions (a developer tool).

The network (:mod:`c4engine.kernel.ntuple`) sums table entries picked by the
contents of a few cells per tuple.  Its tuples are seeded random walks over
neighbouring cells; its tables are fitted to positions with a known result by
the same ordinal logistic model as the linear evaluation's
(:mod:`c4engine.training.linear`): ``P(win) = sigmoid(e - margin)``, ``P(loss) =
sigmoid(-e - margin)``, with ``e`` the side to move's value in logits.  The fit
is plain stochastic gradient descent over shuffled positions (each step touches
only the entries the position reads), compiled with the kernel's look-ups
(:func:`c4engine.kernel.ntuple.sgd_epoch`).

Data: on 7x6 every position of the 12-stone distance book, plus solved
positions of other stone counts (:func:`c4engine.training.data.make_dataset` files).
The strength set's positions (and their mirror images) are left out, and a
position is held out by a hash of its key or its mirror image's, whichever is
smaller, so a position and its mirror image are never on both sides, whatever
file they come from.

``tools/train_ntuple.py`` fits a network and writes
``c4engine/data/ntuple-<board>.npz``, where ``Evaluation ntuple`` finds it.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..geometry import STANDARD, Geometry
from ..kernel.ntuple import FRACTION_BITS, HEADER, ROWS, STATES, TUPLE_LENGTH, block_value, sgd_epoch, sides
from ..search.weights import checked_network, open_network
from .data import Dataset, strength_keys
from .linear import CP_PER_LOGIT, accuracy, feature_matrix, fit, full_model, integer_weights, judge, log_loss
from .packing import data_cells, mirrored, mixed, position_keys, stone_counts

HELD_OUT_IN = 10  # one position in ten is held out
_BOOK_STONES = 12


# -- tuples ---------------------------------------------------------------------


def random_walk_tuples(geometry: Geometry, count: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct tuples of ``length`` cells (bit indices), each a random walk
    from a random cell to any of its eight neighbours until it has ``length`` cells."""
    width, height = geometry.width, geometry.height
    if length > geometry.cells:
        raise ValueError(f"no tuple of {length} cells on the {geometry} board")
    found: dict[tuple[int, ...], None] = {}
    for _ in range(1000 * count + 1):
        if len(found) == count:
            return np.array(list(found), dtype=np.int32)
        col, row = int(rng.integers(width)), int(rng.integers(height))
        cells = {(col, row)}
        while len(cells) < length:
            step_col, step_row = rng.integers(-1, 2, size=2)
            if 0 <= col + step_col < width and 0 <= row + step_row < height:
                col, row = col + int(step_col), row + int(step_row)
                cells.add((col, row))
        found.setdefault(tuple(sorted(c * geometry.h1 + r for c, r in cells)), None)
    raise ValueError(f"no {count} distinct tuples of {length} cells found on the {geometry} board")


def mirrored_cells(cells: np.ndarray, geometry: Geometry) -> np.ndarray:
    """The same cells on the mirror image (column ``c`` becomes ``W - 1 - c``)."""
    col, row = np.divmod(cells, geometry.h1)
    return ((geometry.width - 1 - col) * geometry.h1 + row).astype(np.int32)


def cell_rows(tuples: np.ndarray, geometry: Geometry) -> np.ndarray:
    """The block's cell rows: each tuple, then its mirror image, flattened."""
    rows = np.empty((2 * len(tuples), tuples.shape[1]), dtype=np.int32)
    rows[0::2], rows[1::2] = tuples, mirrored_cells(tuples, geometry)
    return rows.ravel()


# -- data -----------------------------------------------------------------------


def decode_book_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`c4engine.training.data.decode_book_key` over a whole file at once (12 stones,
    7 columns): ``current`` and ``mask`` of each key."""
    pos = np.full(keys.size, 2 * _BOOK_STONES + 7)
    current, mask = np.zeros_like(keys), np.zeros_like(keys)
    for col in range(STANDARD.width):
        open_column = np.ones(keys.size, dtype=bool)
        for row in range(STANDARD.height + 1):
            stone = open_column & ((keys >> np.maximum(pos, 0)) & 1 == 1)
            cell = np.int64(1) << (col * STANDARD.h1 + row)
            mask |= np.where(stone, cell, 0)
            current |= np.where(stone & ((keys >> np.maximum(pos - 1, 0)) & 1 == 0), cell, 0)
            pos -= np.where(stone, 2, 0)
            open_column &= stone
        pos -= 1
    return current, mask


def book_positions() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every position of the 12-stone distance book: ``current``, ``mask`` and the
    result for the side to move (-1, 0, +1; the byte's sign)."""
    import bitbully_databases  # type: ignore[import-untyped]

    path = bitbully_databases.BitBullyDatabases.get_database_path("12-ply-dist")
    records = np.fromfile(path, dtype=np.dtype([("key", ">i4"), ("value", "i1")]))
    current, mask = decode_book_keys(records["key"].astype(np.int64) & 0xFFFFFFFF)
    return current, mask, np.sign(records["value"]).astype(np.int8)


def canonical_keys(current: np.ndarray, mask: np.ndarray, geometry: Geometry) -> np.ndarray:
    """The smaller of each position's key and its mirror image's (the training's words,
    :mod:`c4engine.training.packing`)."""
    return np.minimum(position_keys(current, mask, geometry),
                      position_keys(mirrored(current, geometry), mirrored(mask, geometry), geometry))


def held_out_by_key(keys: np.ndarray) -> np.ndarray:
    """One position in ``HELD_OUT_IN``, by a hash of its canonical key (splitmix64's mixer)."""
    return mixed(keys) % np.uint64(HELD_OUT_IN) == 0


def merged_dataset(geometry: Geometry, parts: list[Dataset], with_book: bool) -> Dataset:
    """The book (7x6, if asked) and ``parts`` as one dataset: each position once (by its
    canonical key, the first file's result kept), the strength set left out, the
    held-out split by key (:func:`held_out_by_key`), the files' own split ignored."""
    columns: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    if with_book and geometry.is_standard:
        columns.append(book_positions())
    columns += [(part.current, part.mask, part.result) for part in parts]
    current = np.concatenate([c[0] for c in columns])
    mask = np.concatenate([c[1] for c in columns])
    result = np.concatenate([c[2] for c in columns]).astype(np.int8)
    keys = canonical_keys(current, mask, geometry)
    _, first = np.unique(keys, return_index=True)
    keep = np.zeros(keys.size, dtype=bool)
    keep[first] = True
    if geometry.is_standard:  # a position's canonical key is its key or its mirror image's
        keep &= ~np.isin(keys, np.array(sorted(strength_keys()), dtype=np.int64))
    return Dataset(geometry, current[keep], mask[keep], stone_counts(mask[keep]), result[keep],
                   held_out_by_key(keys[keep]))


# -- fitting ----------------------------------------------------------------------


@dataclass(frozen=True)
class Network:
    """Tuples (cell rows as in the block) and their tables in logits, with the draw margin;
    a hybrid's linear weights too, whose value the tables' adds to."""

    geometry: Geometry
    cells: np.ndarray
    tables: np.ndarray
    margin: float
    linear: np.ndarray | None = None  # a hybrid's linear weights in centipawns (N_LINEAR), None for none

    def block(self) -> np.ndarray:
        """The kernel's int32 block (:mod:`c4engine.kernel.ntuple`)."""
        scale = CP_PER_LOGIT * (1 << FRACTION_BITS)
        entries = np.round(self.tables * scale).astype(np.int32)
        header = np.array([self.cells.size // TUPLE_LENGTH, TUPLE_LENGTH, STATES ** TUPLE_LENGTH], dtype=np.int32)
        return np.concatenate([header, self.cells, entries.ravel()])


def fit_network(data: Dataset, rows: np.ndarray, tuples: int, epochs: int, seed: int, rate: float = 0.5,
                decay: float = 1e-4, report: Callable[[int, float], None] | None = None) -> Network:
    """Tables for ``tuples`` random-walk tuples of ``TUPLE_LENGTH`` cells fitted to ``rows`` of
    ``data``; ``rate`` is the step in logits per unit gradient of the whole value,
    shared among the entries one position reads, and falls linearly to a tenth."""
    rng = np.random.default_rng(seed)
    cells = cell_rows(random_walk_tuples(data.geometry, tuples, TUPLE_LENGTH, rng), data.geometry)
    tables = np.zeros((tuples, STATES ** TUPLE_LENGTH))
    margin = 0.5
    current, mask = data.current[rows], data.mask[rows]
    stones, result = data.stones[rows].astype(np.int64), data.result[rows].astype(np.int64)
    for epoch in range(epochs):
        order = rng.permutation(rows.size)
        margin = sgd_pass(data_cells(cells, data.geometry), tables, (current, mask, stones, result), order,
                          epoch_step(rate, epoch, epochs, tuples), margin, decay)
        if report:
            report(epoch, margin)
    return Network(data.geometry, cells, tables, margin)


def epoch_step(rate: float, epoch: int, epochs: int, tuples: int) -> float:
    """The step of ``epoch``: ``rate`` shared among the entries one position reads,
    falling linearly to a tenth by the last epoch."""
    return rate * (1 - 0.9 * epoch / max(epochs - 1, 1)) / (2 * tuples)


NO_FEATURES = np.zeros((0, 0), dtype=np.int8)
NO_LINEAR = np.zeros(0)


def sgd_pass(cells: np.ndarray, tables: np.ndarray, rows: tuple[np.ndarray, ...], order: np.ndarray, step: float,
             margin: float, decay: float = 1e-4, features: np.ndarray = NO_FEATURES,
             linear: np.ndarray = NO_LINEAR) -> float:
    """One epoch over ``rows`` (current, mask, stones, result) in ``order``, the tables
    changed in place; the new margin.  A hybrid's ``features`` (:func:`feature_counts` of
    the rows) and fixed ``linear`` weights add the linear model's value."""
    margin_gradient = sgd_epoch(cells, tables, *rows, order, step, margin, decay, features, linear)
    return max(margin - 0.5 * margin_gradient, 0.01)


LINEAR_SAMPLE = 200_000  # positions a hybrid's linear weights are fitted to, at most (full batch)


def fitted_linear(data: Dataset, rows: np.ndarray, seed: list[int], steps: int = 1000) -> tuple[np.ndarray, float]:
    """A hybrid's linear weights in whole centipawns (the full model of
    :mod:`c4engine.training.linear`, fitted alone to ``rows``, or to a seeded sample of
    ``LINEAR_SAMPLE`` of them), and their draw margin, where the tables' fit starts."""
    if rows.size > LINEAR_SAMPLE:
        rows = np.sort(np.random.default_rng(seed).choice(rows, size=LINEAR_SAMPLE, replace=False))
    found = fit(feature_matrix(_subset(data, rows)), data.result[rows].astype(np.int64), full_model(), steps)
    return integer_weights(found), found.margin


def feature_counts(data: Dataset, rows: np.ndarray) -> np.ndarray:
    """The linear model's counts of ``rows`` of ``data`` as int8 (each fits: a count of a
    board's threats or stones), a hybrid's input to :func:`sgd_pass`."""
    parts = np.array_split(rows, max(1, rows.size // 50_000))
    return np.concatenate([feature_matrix(_subset(data, part)).astype(np.int8) for part in parts])


# -- judging ----------------------------------------------------------------------


@dataclass(frozen=True)
class Judged:
    name: str
    accuracy: float
    log_loss: float


def judge_network(network: Network, data: Dataset, rows: np.ndarray) -> Judged:
    """Held-out accuracy and log-loss of the network as the engine runs it: integer
    centipawns from the block, with the logits per centipawn fitted in training."""
    return judge_block(network.block(), network.margin, data, rows, network.linear)


def judge_block(block: np.ndarray, margin: float, data: Dataset, rows: np.ndarray,
                linear: np.ndarray | None = None) -> Judged:
    """:func:`judge_network` for a network's block, draw margin and linear weights (as a
    file keeps them), each value in whole centipawns as the kernel adds them."""
    block = data_block(block, data.geometry)
    values = np.array([block_value(block, *sides(int(c), int(m), int(s))[:2]) >> FRACTION_BITS
                       for c, m, s in zip(data.current[rows], data.mask[rows], data.stones[rows])], dtype=np.float64)
    values *= np.where(data.stones[rows] % 2 == 0, 1.0, -1.0)
    if linear is not None:
        values += feature_matrix(_subset(data, rows)) @ linear.astype(np.float64)
    values /= CP_PER_LOGIT
    result = data.result[rows].astype(np.int64)
    return Judged("n-tuple", accuracy(values, margin, result), log_loss(values, margin, result))


def judge_linear(name: str, weights: np.ndarray, data: Dataset, train_rows: np.ndarray, test_rows: np.ndarray,
                 sample: int = 100_000) -> Judged:
    """Linear evaluation weights (the hand-written threats, the linear learned ones)
    judged as :func:`c4engine.training.linear.judge` does, calibrated on a sample of the
    training rows."""
    rng = np.random.default_rng(0)
    calibration = rng.choice(train_rows, size=min(sample, train_rows.size), replace=False)
    tx, hx = feature_matrix(_subset(data, calibration)), feature_matrix(_subset(data, test_rows))
    score = judge(name, weights, tx, data.result[calibration].astype(np.int64), hx,
                  data.result[test_rows].astype(np.int64))
    return Judged(score.name, score.accuracy, score.log_loss)


def data_block(block: np.ndarray, geometry: Geometry) -> np.ndarray:
    """A block (the kernel's cells) with its cells in the training's words' layout."""
    cells = slice(HEADER, HEADER + int(block[ROWS]) * TUPLE_LENGTH)
    out = block.copy()
    out[cells] = data_cells(block[cells], geometry)
    return out


def _subset(data: Dataset, rows: np.ndarray) -> Dataset:
    return Dataset(data.geometry, data.current[rows], data.mask[rows], data.stones[rows], data.result[rows],
                   data.held_out[rows])


@dataclass(frozen=True)
class HeldOutAccuracy:
    """A network's win/draw/loss accuracy on positions it never trained on, and which."""

    accuracy: float
    positions: int
    source: str


def write_network(path: Path, network: Network, made_by: str, scores: list[Judged], trained_on: int,
                  held_out: HeldOutAccuracy | None = None) -> None:
    """The network file the engine reads (:func:`c4engine.search.weights.ntuple_block`),
    with what made it and how it scored, and a hybrid's linear weights (``linear``);
    the same network gives the same bytes."""
    arrays = {"board": np.array(network.geometry.name), "block": network.block(),
              "margin": np.array(network.margin), "made_by": np.array(made_by),
              "trained_on": np.array(trained_on),
              "held_out": np.array([(s.name, f"{s.accuracy:.4f}", f"{s.log_loss:.4f}") for s in scores])}
    if network.linear is not None:
        arrays["linear"] = network.linear.astype(np.int64)
    if held_out is not None and held_out.positions:  # none measured on no positions (a tiny run)
        arrays |= accuracy_arrays(held_out)
    save_npz(path, arrays)


def accuracy_arrays(held_out: HeldOutAccuracy) -> dict[str, np.ndarray]:
    """The arrays that record a network's held-out accuracy in its file, which the
    engine names at set-up (:func:`c4engine.search.weights.network_note`).
    ValueError for an accuracy measured on no positions, which means nothing."""
    if held_out.positions < 1:
        raise ValueError(f"no accuracy to record: it was measured on {held_out.positions} positions")
    return {"accuracy": np.array(round(held_out.accuracy, 4)), "accuracy_positions": np.array(held_out.positions),
            "accuracy_set": np.array(held_out.source)}


def record_accuracy(path: Path, held_out: HeldOutAccuracy) -> None:
    """Write ``held_out`` into the network file at ``path`` as its held-out accuracy,
    which the engine names at set-up, keeping every other array: for a network
    made before ``c4engine train`` recorded one, or measured again on another set."""
    with open_network(path, path.name) as document:
        arrays = {name: document[name] for name in document.files}
    save_npz(path, arrays | accuracy_arrays(held_out))


def read_network_file(path: Path, geometry: Geometry) -> tuple[np.ndarray, np.ndarray | None, float]:
    """A file of :func:`write_network` for ``geometry``'s board: its block and linear
    weights read as the engine reads them (:func:`c4engine.search.weights.checked_network`,
    which checks them), and the draw margin of its fit, to judge it as the fit did.
    ValueError if it is unsound or for another board."""
    with open_network(path, path.name) as document:
        block, linear = checked_network(document, path.name, geometry)
        return block, linear, float(document["margin"])


def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez_compressed``, but with every member's date fixed, so that equal
    arrays make equal files (numpy stamps the time of writing)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(member, "w", force_zip64=True) as stream:
                np.lib.format.write_array(stream, np.asanyarray(array), allow_pickle=False)
