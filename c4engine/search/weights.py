"""The evaluation's weight vectors by name, and the learned ones shipped per board.

``learned`` weights were fitted to exactly scored positions of one board
(``tools/train_evaluation.py``, :mod:`c4engine.training.linear`) and live in
``c4engine/data/evaluation-<W>x<H>k<K>.json``; ``ntuple`` is an n-tuple network
(:mod:`c4engine.kernel.ntuple`, ``tools/train_ntuple.py``) in
``c4engine/data/ntuple-<W>x<H>k<K>.npz``, which the kernel reads through the
address its weight vector carries (a hybrid's file, ``c4engine train --hybrid``,
holds linear threat weights too, which its value adds).  A board without such a file has none, and
its engine falls back to the hand-written threat weights.  ``ntuple`` is the
default (:data:`DEFAULT`): the engine's, the API's and ``bench``'s.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import IO

import numpy as np

from ..geometry import Geometry
from ..kernel.evaluation import (
    CENTRE_ONLY, N_LINEAR, N_WEIGHTS, NTUPLE_ADDRESS, NTUPLE_LINEAR, NTUPLE_WORDS, THREAT_WEIGHTS,
)
from ..kernel.ntuple import HEADER, LENGTH, MAX_ROWS, ROWS, STATES, TABLE_SIZE, TUPLE_LENGTH, block_address

LEARNED = "learned"
NTUPLE = "ntuple"
HAND_WRITTEN = {"threats": THREAT_WEIGHTS, "centre": CENTRE_ONLY}
NAMES = (LEARNED, NTUPLE, *HAND_WRITTEN)
DEFAULT = NTUPLE  # the strongest where a board has a network: +200 Elo on 7x6 at equal time


def _board_file_name(kind: str, suffix: str, geometry: Geometry) -> str:
    return f"{kind}-{geometry.width}x{geometry.height}k{geometry.connect}.{suffix}"


def weights_file_name(geometry: Geometry) -> str:
    return _board_file_name("evaluation", "json", geometry)


def ntuple_file_name(geometry: Geometry) -> str:
    return _board_file_name("ntuple", "npz", geometry)


def source_data_path(file_name: str) -> Path:
    """Where the source tree keeps the package's data file ``file_name`` (training writes there)."""
    return Path(__file__).resolve().parent.parent / "data" / file_name


@functools.cache
def learned_weights(geometry: Geometry) -> np.ndarray | None:
    """The weights learned for ``geometry``'s board, or None when it has none.
    A file that is there but unreadable is a packaging bug: ValueError."""
    resource = files("c4engine").joinpath("data", weights_file_name(geometry))
    if not resource.is_file():
        return None
    document = json.loads(resource.read_text())
    linear = np.array(document["weights"], dtype=np.int64)
    if document.get("board") != geometry.name or linear.shape != (N_LINEAR,):
        raise ValueError(f"{weights_file_name(geometry)}: not {N_LINEAR} weights for the {geometry} board")
    weights = np.zeros(N_WEIGHTS, dtype=np.int64)
    weights[:N_LINEAR] = linear
    weights.flags.writeable = False
    return weights


def check_block(block: np.ndarray, geometry: Geometry) -> None:
    """ValueError unless ``block`` is an n-tuple block the kernel can read on
    ``geometry``'s board: a consistent size, and cells on the board."""
    if block.dtype != np.int32 or block.ndim != 1 or block.size < HEADER:
        raise ValueError("an n-tuple block is a 1-d int32 array with a header")
    rows, length, size = (int(block[at]) for at in (ROWS, LENGTH, TABLE_SIZE))
    if rows <= 0 or rows % 2 or length != TUPLE_LENGTH or size != STATES ** length:
        raise ValueError(f"n-tuple header {rows, length, size} is inconsistent")
    if rows > MAX_ROWS:
        raise ValueError(f"n-tuple network of {rows // 2} tuples: the search has room for {MAX_ROWS // 2}")
    if block.size != HEADER + rows * length + rows // 2 * size:
        raise ValueError(f"n-tuple block of {block.size} words, not the header's")
    cells = block[HEADER:HEADER + rows * length]
    if not all(0 <= cell < geometry.width * geometry.h1 and (geometry.board_mask >> int(cell)) & 1 for cell in cells):
        raise ValueError(f"n-tuple cells off the {geometry} board")


@functools.cache
def ntuple_network(geometry: Geometry) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The n-tuple network shipped for ``geometry``'s board (:func:`read_network`), or
    None when the board has none; read once and kept for the process (searches read
    the block by address)."""
    resource = files("c4engine").joinpath("data", ntuple_file_name(geometry))
    if not resource.is_file():
        return None
    with resource.open("rb") as stream:
        return read_network(stream, ntuple_file_name(geometry), geometry)


def read_network(stream: IO[bytes], name: str, geometry: Geometry) -> tuple[np.ndarray, np.ndarray | None]:
    """The block of the network file ``name`` (read from ``stream``) for ``geometry``'s
    board, read-only, and a hybrid's linear weights (None for a network without).
    ValueError if it is unsound."""
    with np.load(stream) as document:
        return checked_network(document, name, geometry)


def checked_network(document: Mapping[str, np.ndarray], name: str,
                    geometry: Geometry) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`read_network` of a network file already open as ``document``."""
    board, block = str(document["board"]), np.ascontiguousarray(document["block"])
    linear = np.array(document["linear"], dtype=np.int64) if "linear" in document else None
    if board != geometry.name:
        raise ValueError(f"{name}: a network for {board}, not {geometry}")
    check_block(block, geometry)
    if linear is not None and linear.shape != (N_LINEAR,):
        raise ValueError(f"{name}: {linear.size} linear weights, not {N_LINEAR}")
    block.flags.writeable = False
    return block, linear


def ntuple_block(geometry: Geometry) -> np.ndarray | None:
    """The block of :func:`ntuple_network`, or None."""
    network = ntuple_network(geometry)
    return None if network is None else network[0]


@functools.cache
def ntuple_note(geometry: Geometry) -> str | None:
    """What the engine says of ``geometry``'s network at set-up (:func:`network_note`),
    or None when the board has none."""
    resource = files("c4engine").joinpath("data", ntuple_file_name(geometry))
    if not resource.is_file():
        return None
    with resource.open("rb") as stream:
        return network_note(stream, ntuple_file_name(geometry))


def network_note(stream: IO[bytes], name: str) -> str:
    """The network file ``name`` (read from ``stream``), its board and its held-out
    accuracy, which ``c4engine train`` records in the file."""
    with np.load(stream) as document:
        if "accuracy" in document:
            found = (f"held-out accuracy {float(document['accuracy']):.4f} on "
                     f"{int(document['accuracy_positions'])} positions")
        else:
            found = "held-out accuracy not recorded (made before c4engine train)"
        beside = ", tuples beside the threat terms" if "linear" in document else ""
        return f"{name} for the {document['board']} board{beside}, {found}"


@functools.cache
def ntuple_weights(geometry: Geometry) -> np.ndarray | None:
    """The weight vector that points the kernel at ``geometry``'s n-tuple network, or
    None; a hybrid's carries its linear weights, and says to add them."""
    network = ntuple_network(geometry)
    if network is None:
        return None
    block, linear = network
    weights = np.zeros(N_WEIGHTS, dtype=np.int64)
    weights[NTUPLE_ADDRESS], weights[NTUPLE_WORDS] = block_address(block), block.size
    if linear is not None:
        weights[:N_LINEAR], weights[NTUPLE_LINEAR] = linear, 1
    weights.flags.writeable = False
    return weights


def weights_named(name: str, geometry: Geometry) -> tuple[np.ndarray, bool]:
    """The weights ``name`` stands for on ``geometry``'s board, and whether they are
    the hand-written threats standing in for learned weights the board lacks."""
    if name in (LEARNED, NTUPLE):
        found = learned_weights(geometry) if name == LEARNED else ntuple_weights(geometry)
        return (THREAT_WEIGHTS, True) if found is None else (found, False)
    return HAND_WRITTEN[name], False


def default_weights(geometry: Geometry) -> np.ndarray:
    """The weights of the default evaluation on ``geometry``'s board: its n-tuple
    network where it has one, else the hand-written threats."""
    return weights_named(DEFAULT, geometry)[0]
