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
  smaller of the position's and its mirror image's; on a board past 64 bits
  (8x8, ...) a key takes two uint64, its low word first;
* the values, one int8 each, in the keys' order: the Pons score from the side
  to move, or in a weak book its sign (1 win, 0 draw, -1 loss).

The kernel probes a book where it is mapped (:func:`built_book_value`), by its
keys' address and entry count, like the bitbully book (:mod:`.book`); keys of
up to 64 bits are compared with their top bit flipped, so that numba's signed
int64 order is the file's unsigned order; longer ones (at most 127 bits) as
``int128``.
"""

from __future__ import annotations

import bisect
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..geometry import Geometry, GeometryError
from ..inputs import open_regular
from ..rules.bits import mirror as mirror_bits
from .book import NOT_IN_BOOK, bytes_at
from .constants import KEY_BITS
from .jit import entry, jit, join_words, low_word, mirror

MAGIC = b"C4BOOK1\0"
HEADER = struct.Struct("<8s4HBB6xQ")
WORD_BYTES = 8
CHECKED_KEYS = 4096  # keys checked for order when a book is loaded, spread over the file
_TOP_BIT = np.int64(-(1 << 63))
_WORD = (1 << 64) - 1


def key_words(geometry: Geometry) -> int:
    """The uint64 words a key of ``geometry`` takes in a book file."""
    return 1 if geometry.key_bits <= 64 else 2


KEY_WORDS = 1 if KEY_BITS <= 64 else 2  # this kernel's board's
KEY_BYTES = WORD_BYTES * KEY_WORDS


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


def write_book(path: Path, header: BookHeader, entries: list[tuple[int, int]]) -> None:
    """Write a book of ``(key, value)`` entries atomically (a temporary file renamed
    into place, after fsync)."""
    entries = sorted(entries)
    keys = [key for key, _ in entries]
    if len(keys) != header.entries or any(a == b for a, b in zip(keys, keys[1:])):
        raise BookFileError(f"{path}: {len(keys)} keys for {header.entries} entries, or a key twice")
    words = np.empty((len(keys), key_words(header.geometry)), dtype="<u8")
    for word in range(words.shape[1]):
        words[:, word] = [(key >> (64 * word)) & _WORD for key in keys]
    values = np.array([value for _, value in entries], dtype=np.int8)
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(staging, "wb") as out:
        out.write(header.pack())
        out.write(words.tobytes())
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
    if weak > 1 or value_bytes != 1 or size != HEADER.size + entries * (WORD_BYTES * key_words(geometry) + 1):
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
        picks = np.unique(np.linspace(0, max(0, book.entries - 1), CHECKED_KEYS).astype(np.int64))
        keys = [book.key(int(at)) for at in picks]
        if not all(a < b for a, b in zip(keys, keys[1:])):
            raise BookFileError(f"book {path}: keys are not in increasing order")
        return book

    @property
    def _key_bytes(self) -> int:
        return WORD_BYTES * key_words(self.header.geometry)

    def key(self, at: int) -> int:
        """The key of entry ``at``."""
        start = HEADER.size + at * self._key_bytes
        return int.from_bytes(self._data[start:start + self._key_bytes].tobytes(), "little")

    @property
    def values(self) -> np.ndarray:
        return self._data[HEADER.size + self.header.entries * self._key_bytes:].view(np.int8)

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
        at = bisect.bisect_left(range(self.entries), key, key=self.key)
        if at < self.entries and self.key(at) == key:
            return int(self.values[at])
        return None


@jit
def ordered_key(key: int) -> int:
    """A key as numba orders it like the file: the top bit of a one-word key flipped,
    a longer one (at most 127 bits, so positive) as its ``int128``."""
    if KEY_WORDS == 1:
        return low_word(key) ^ _TOP_BIT
    return key


@jit
def stored_key(keys: np.ndarray, at: int) -> int:
    """Entry ``at``'s key in the book's words, as :func:`ordered_key` gives it."""
    if KEY_WORDS == 1:
        return keys[at] ^ _TOP_BIT
    return join_words(keys[2 * at], keys[2 * at + 1])


@entry
def built_book_value(address: int, entries: int, current: int, mask: int) -> int:
    """The book's value of ``(current, mask)`` (which must have the book's plies), else
    NOT_IN_BOOK.  Branch-free halving, as in :mod:`.book`."""
    if entries == 0:
        return NOT_IN_BOOK
    key = ordered_key(current + mask)
    other = ordered_key(mirror(current) + mirror(mask))
    if other < key:
        key = other
    data = bytes_at(address, entries * (KEY_BYTES + 1))
    keys = data[:entries * KEY_BYTES].view(np.int64)  # little-endian, as x86-64 and the file
    base, n = 0, entries
    while n > 1:
        half = n >> 1
        base = base + half if stored_key(keys, base + half) <= key else base
        n -= half
    if stored_key(keys, base) != key:
        return NOT_IN_BOOK
    value = data[entries * KEY_BYTES + base]
    return int(value) - 256 if value > 127 else int(value)
