"""Our own opening books (``c4engine book build``): the file format, its reader, the probe.

A book holds every position at one ply count that the game can reach and that
is not over, less those whose side to move wins with its next stone (the
search sees those by itself), a position and its mirror image once.  The file:

* a 32-byte header, little-endian: the magic ``C4BOOK1\\0``; the board's width,
  height and row length and the book's plies (four uint16); a flag, 1 when the
  values are win/draw/loss only (``--weak``); the bytes per value (1); six zero
  bytes; the number of entries (uint64);
* the keys, one uint64 each (little-endian), strictly increasing: a position's
  key is Pons' ``current + mask`` (side to move's stones plus all stones), the
  smaller of the position's and its mirror image's;
* the values, one int8 each, in the keys' order: the Pons score from the side
  to move, or in a weak book its sign (1 win, 0 draw, -1 loss).

The kernel probes a book where it is mapped (:func:`built_book_value`), by its
keys' address and entry count, like the bitbully book (:mod:`.book`); keys of
up to 64 bits are compared with their top bit flipped, so that numba's signed
int64 order is the file's unsigned order.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..geometry import Geometry, GeometryError
from ..inputs import open_regular
from ..rules.bits import mirror as mirror_bits
from .book import NOT_IN_BOOK, bytes_at
from .jit import entry, jit, mirror

MAGIC = b"C4BOOK1\0"
HEADER = struct.Struct("<8s4HBB6xQ")
KEY_BYTES = 8
CHECKED_KEYS = 4096  # keys checked for order when a book is loaded, spread over the file
_TOP_BIT = np.int64(-(1 << 63))


class BookFileError(ValueError):
    """A book file that cannot be used: unreadable, malformed, or for another board."""


@dataclass(frozen=True)
class BookHeader:
    geometry: Geometry
    plies: int
    weak: bool
    entries: int

    def pack(self) -> bytes:
        g = self.geometry
        return HEADER.pack(MAGIC, g.width, g.height, g.connect, self.plies, int(self.weak), 1, self.entries)

    @property
    def describe(self) -> str:
        return f"{self.geometry} {self.plies}-ply {'weak' if self.weak else 'strong'}"


def canonical_key(current: int, mask: int, geometry: Geometry) -> int:
    """A position's key in a book: the smaller of its own and its mirror image's."""
    key = current + mask
    return min(key, mirror_bits(key, geometry.width, geometry.height))


def write_book(path: Path, header: BookHeader, keys: np.ndarray, values: np.ndarray) -> None:
    """Write a book atomically (a temporary file renamed into place, after fsync)."""
    order = np.argsort(keys.astype(np.uint64), kind="stable")
    keys, values = keys.astype("<u8")[order], values.astype(np.int8)[order]
    if len(keys) != header.entries or np.any(keys[1:] == keys[:-1]):
        raise BookFileError(f"{path}: {len(keys)} keys for {header.entries} entries, or a key twice")
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(staging, "wb") as out:
        out.write(header.pack())
        out.write(keys.tobytes())
        out.write(values.tobytes())
        out.flush()
        os.fsync(out.fileno())
    staging.replace(path)


def read_header(path: Path) -> BookHeader:
    """The header of a book file, checked against the file's size."""
    try:
        with open_regular(path) as source:
            raw = source.read(HEADER.size)
        size = path.stat().st_size
    except OSError as err:
        raise BookFileError(f"book {path}: {err.strerror or err}") from None
    if len(raw) < HEADER.size or raw[:len(MAGIC)] != MAGIC:
        raise BookFileError(f"book {path}: not a c4engine book (no {MAGIC[:-1].decode()} header)")
    _, width, height, connect, plies, weak, value_bytes, entries = HEADER.unpack(raw)
    try:
        geometry = Geometry(width, height, connect)
    except GeometryError as err:
        raise BookFileError(f"book {path}: {err}") from None
    if weak > 1 or value_bytes != 1 or size != HEADER.size + entries * (KEY_BYTES + 1):
        raise BookFileError(f"book {path}: corrupt header or truncated file")
    return BookHeader(geometry, plies, bool(weak), entries)


class BuiltBook:
    """A book file mapped read-only, with what the kernel needs to probe it."""

    def __init__(self, path: Path, header: BookHeader, data: np.ndarray) -> None:
        self.path, self.header, self._data = path, header, data

    @classmethod
    def load(cls, path: Path | str, geometry: Geometry | None = None) -> BuiltBook:
        """Map ``path``; BookFileError if it is no sound book or (given ``geometry``)
        a book for another board."""
        path = Path(path)
        header = read_header(path)
        if geometry is not None and header.geometry != geometry:
            raise BookFileError(f"book {path} is for the {header.geometry} board, not {geometry}")
        data = np.memmap(path, dtype=np.uint8, mode="r")
        book = cls(path, header, data)
        keys = book.keys
        picks = np.unique(np.linspace(0, max(0, len(keys) - 1), CHECKED_KEYS).astype(np.int64))
        if len(keys) > 1 and not np.all(keys[picks[1:]] > keys[picks[:-1]]):
            raise BookFileError(f"book {path}: keys are not in increasing order")
        return book

    @property
    def keys(self) -> np.ndarray:
        return self._data[HEADER.size:HEADER.size + self.header.entries * KEY_BYTES].view("<u8")

    @property
    def values(self) -> np.ndarray:
        return self._data[HEADER.size + self.header.entries * KEY_BYTES:].view(np.int8)

    @property
    def address(self) -> int:
        """Where the keys start in memory; the values follow them."""
        return int(self._data.ctypes.data) + HEADER.size

    @property
    def entries(self) -> int:
        return self.header.entries

    def probe(self, current: int, mask: int) -> int | None:
        """The stored value of a position at the book's plies, or None."""
        key = canonical_key(current, mask, self.header.geometry)
        at = int(np.searchsorted(self.keys, np.uint64(key)))
        if at < self.entries and int(self.keys[at]) == key:
            return int(self.values[at])
        return None


@entry
def built_book_value(address: int, entries: int, current: int, mask: int) -> int:
    """The book's value of ``(current, mask)`` (which must have the book's plies), else
    NOT_IN_BOOK.  Branch-free halving, as in :mod:`.book`."""
    if entries == 0:
        return NOT_IN_BOOK
    key = current + mask
    other = mirror(current) + mirror(mask)
    key, other = key ^ _TOP_BIT, other ^ _TOP_BIT
    key = min(key, other)
    data = bytes_at(address, entries * (KEY_BYTES + 1))
    keys = data[:entries * KEY_BYTES].view(np.int64)  # little-endian, as x86-64 and the file
    base, n = 0, entries
    while n > 1:
        half = n >> 1
        base = base + half if keys[base + half] ^ _TOP_BIT <= key else base
        n -= half
    if keys[base] ^ _TOP_BIT != key:
        return NOT_IN_BOOK
    value = data[entries * KEY_BYTES + base]
    return int(value) - 256 if value > 127 else int(value)
