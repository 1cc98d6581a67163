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
import math
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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


# What a network file's members may be, checked in each member's .npy header before any
# of its data is read, so that a small file cannot ask for gigabytes: the block is at most
# as big as the search has room for; anything else is a name, a number or a small table.
BLOCK_WORDS = HEADER + MAX_ROWS * TUPLE_LENGTH + MAX_ROWS // 2 * STATES ** TUPLE_LENGTH
OTHER_MEMBER_BYTES = 1 << 16


class NetworkFile(Mapping[str, np.ndarray]):
    """The arrays of a network file (an ``.npz``), each read when asked for, and only
    once its ``.npy`` header has declared a type and a size that a network file
    holds (:data:`BLOCK_WORDS` int32 words for ``block``, :data:`OTHER_MEMBER_BYTES`
    for any other member, never Python objects).  ValueError naming the file for
    a member that declares more, or that is missing or unreadable."""

    def __init__(self, archive: zipfile.ZipFile, name: str) -> None:
        self._archive, self.name = archive, name
        self.files = [member[:-len(".npy")] for member in archive.namelist() if member.endswith(".npy")]

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def __contains__(self, member: object) -> bool:
        return member in self.files

    def __getitem__(self, member: str) -> np.ndarray:
        if member not in self.files:
            raise KeyError(member)
        try:
            with self._archive.open(f"{member}.npy") as stream:
                self._check_header(member, stream)
            with self._archive.open(f"{member}.npy") as stream:
                return np.lib.format.read_array(stream, allow_pickle=False)
        except (OSError, EOFError, zipfile.BadZipFile) as err:
            raise ValueError(f"{self.name}: {member} unreadable ({err})") from None

    def _check_header(self, member: str, stream: IO[bytes]) -> None:
        version = np.lib.format.read_magic(stream)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"{self.name}: {member} is in .npy format {version}, not 1.0 or 2.0")
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) \
            else np.lib.format.read_array_header_2_0
        shape, _fortran, dtype = read_header(stream)
        if dtype.hasobject:
            raise ValueError(f"{self.name}: {member} holds Python objects")
        declared = math.prod(shape) * dtype.itemsize
        if member == "block":
            if dtype != np.int32 or len(shape) != 1 or shape[0] > BLOCK_WORDS:
                raise ValueError(f"{self.name}: the block is declared {dtype} {shape}; a network's block "
                                 f"is at most {BLOCK_WORDS} int32 words")
        elif declared > OTHER_MEMBER_BYTES:
            raise ValueError(f"{self.name}: {member} is declared {declared} bytes, past "
                             f"{OTHER_MEMBER_BYTES} for anything but the block")


@contextmanager
def open_network(source: str | Path | IO[bytes], name: str) -> Iterator[NetworkFile]:
    """The network file at ``source`` (a path or a binary stream), ``name`` in messages;
    the one reader of network files, the engine's and the training's.  ValueError
    for what is no zip archive."""
    try:
        archive = zipfile.ZipFile(source)
    except zipfile.BadZipFile:
        raise ValueError(f"{name}: not an .npz archive") from None
    with archive:
        yield NetworkFile(archive, name)


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
    with open_network(stream, name) as document:
        return checked_network(document, name, geometry)


def checked_network(document: Mapping[str, np.ndarray], name: str,
                    geometry: Geometry) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`read_network` of a network file already open as ``document``."""
    board = str(document["board"])
    if board != geometry.name:
        raise ValueError(f"{name}: a network for {board}, not {geometry}")
    block = np.ascontiguousarray(document["block"])
    linear = np.array(document["linear"], dtype=np.int64) if "linear" in document else None
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
    with open_network(stream, name) as document:
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
