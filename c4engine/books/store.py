"""A build's state in SQLite (stdlib ``sqlite3``, WAL mode): the positions to solve,
and for each one solved its value and node count.

Every change is one transaction, so a kill at any moment (Ctrl-C, ``kill -9``, a
power cut) leaves the database as it was before or after it: the enumeration
is committed whole with the count it found, and each batch of results with
``score IS NULL`` as a condition, so that a result that comes twice (a chunk
retried after its worker was lost) is written once.  Keys are stored as
signed 64-bit integers (SQLite's), the top bit of a 64-bit key as the sign.  A
board past 64 bits (8x8, ...) has longer keys: there a position's key is
stored as its stone code (:func:`stone_code`: each column bottom up, a stone
``1`` and its owner's bit, ``0`` closing the column, which fits 63 bits up to
``(63 - W) // 2`` stones: 27 on 8x8), and its bitboards past 63 bits as
16-byte blobs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..geometry import STANDARD, Geometry

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS positions (
    key INTEGER PRIMARY KEY, current INTEGER NOT NULL, mask INTEGER NOT NULL,
    hint INTEGER NOT NULL, score INTEGER, nodes INTEGER);
"""
SIGN = 1 << 63


class StoreError(RuntimeError):
    """A build database that does not fit the build asked for, or cannot be used."""


def to_signed(key: int) -> int:
    return key - (1 << 64) if key >= SIGN else key


def to_unsigned(key: int) -> int:
    return key + (1 << 64) if key < 0 else key


def stone_code(key: int, geometry: Geometry) -> int:
    """A position's key (Pons' ``current + mask``) as the code of its stones, column by
    column from the last, each from the bottom: a stone is a ``1`` and above it the
    bit of its owner (``1``: the side to move), a ``0`` closes the column.  A column
    of ``h`` stones holds ``current + 2**h - 1`` in its slice of the key, whose bit
    length gives ``h``."""
    code = 0
    for col in reversed(range(geometry.width)):
        column = (key >> (col * geometry.h1)) & ((1 << geometry.h1) - 1)
        height = (column + 1).bit_length() - 1
        mine = column + 1 - (1 << height)
        for row in range(height):
            code = (code << 2) | ((mine >> row & 1) << 1) | 1
        code <<= 1
    if code >= SIGN:
        raise StoreError(f"board {geometry}: a book past 64 bits holds at most {(63 - geometry.width) // 2} plies")
    return code


def key_of_code(code: int, geometry: Geometry) -> int:
    """The key that :func:`stone_code` wrote as ``code``: the first column in its
    lowest bits, each column's top stone first."""
    key = 0
    for col in range(geometry.width):
        code >>= 1  # the column's closing 0
        owners = []
        while code & 1:
            owners.append(code >> 1 & 1)
            code >>= 2
        mine = sum(owner << row for row, owner in enumerate(reversed(owners)))
        key |= (mine + (1 << len(owners)) - 1) << (col * geometry.h1)
    return key


def stored_bits(bits: int) -> int | bytes:
    """A bitboard as SQLite keeps it: an integer, or 16 bytes past 63 bits."""
    return bits if bits < SIGN else bits.to_bytes(16, "little")


def read_bits(value: int | bytes) -> int:
    return int.from_bytes(value, "little") if isinstance(value, bytes) else value


@dataclass(frozen=True)
class Row:
    """A position to solve, as the solver needs it."""

    key: int
    current: int
    mask: int


class BuildStore:
    """The database of one build (``geometry``, ``plies``, ``weak``)."""

    def __init__(self, path: Path, geometry: Geometry = STANDARD) -> None:
        self.path = path
        self.geometry = geometry
        self.wide = geometry.key_bits > 64
        try:
            self.db = sqlite3.connect(path, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")  # a committed batch survives a power cut
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as err:
            raise StoreError(f"build database {path}: {err}") from None

    def close(self) -> None:
        self.db.close()

    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT name, value FROM meta"))

    def check_build(self, geometry: Geometry, plies: int, weak: bool) -> None:
        """Refuse a database made for another build."""
        wanted = {"board": geometry.name, "plies": str(plies), "weak": str(int(weak))}
        found = self.meta()
        for name, value in wanted.items():
            if name in found and found[name] != value:
                raise StoreError(f"build database {self.path} holds a build with {name} {found[name]}, "
                                 f"not {value}: use another --out or remove it")

    @property
    def enumerated(self) -> bool:
        return "positions" in self.meta()

    def save_positions(self, geometry: Geometry, plies: int, weak: bool,
                       rows: Iterable[tuple[int, int, int, int]]) -> None:
        """The build's positions ``(key, current, mask, hint)`` and its description, in
        one transaction."""
        with self._transaction():
            count = 0
            for key, current, mask, hint in rows:
                self.db.execute("INSERT INTO positions (key, current, mask, hint) VALUES (?, ?, ?, ?)",
                                (self._stored_key(key), stored_bits(current), stored_bits(mask), hint))
                count += 1
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                [("board", geometry.name), ("plies", str(plies)), ("weak", str(int(weak))),
                                 ("positions", str(count))])

    def counts(self) -> tuple[int, int]:
        """(positions, positions solved)."""
        total, done = self.db.execute("SELECT COUNT(*), COUNT(score) FROM positions").fetchone()
        return int(total), int(done)

    def to_do(self) -> list[Row]:
        """The positions not solved yet, hardest first (largest hint)."""
        cursor = self.db.execute("SELECT key, current, mask FROM positions WHERE score IS NULL "
                                 "ORDER BY hint DESC, key")
        return [Row(self._key(key), read_bits(current), read_bits(mask)) for key, current, mask in cursor]

    def record(self, results: Sequence[tuple[int, int, int]]) -> int:
        """Store ``(key, score, nodes)`` of solved positions; how many were new (a result
        already stored is not written again)."""
        with self._transaction():
            written = 0
            for key, score, nodes in results:
                written += self.db.execute(
                    "UPDATE positions SET score = ?, nodes = ? WHERE key = ? AND score IS NULL",
                    (score, nodes, self._stored_key(key))).rowcount
        return written

    def solved(self) -> list[tuple[int, int]]:
        """Every ``(key, score)`` (None for a position not solved yet), in no particular
        order: the book's writer sorts them."""
        return [(self._key(key), score) for key, score in self.db.execute("SELECT key, score FROM positions")]

    def _stored_key(self, key: int) -> int:
        return stone_code(key, self.geometry) if self.wide else to_signed(key)

    def _key(self, stored: int) -> int:
        return key_of_code(stored, self.geometry) if self.wide else to_unsigned(stored)

    def total_nodes(self) -> int:
        return int(self.db.execute("SELECT COALESCE(SUM(nodes), 0) FROM positions").fetchone()[0])

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One transaction: committed at the end of the block, rolled back if it raises."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
