"""The persistent cache of exact answers: SQLite (standard library) in WAL mode.

One row per position and its mirror image: the key is the smaller of the two
bitboard keys (Pons' ``current + mask``), stored as a signed 64-bit INTEGER
when it fits 64 bits and as a BLOB of the board's key bytes when it does not
(boards of 72-128 bits, :func:`folded`), the value every column's exact score
(one signed byte each, :data:`~.answer.FULL_COLUMN` for a full column) as seen
from the position with that key, reversed when the other one is asked for.
Only exact answers are stored.

Reads run in the caller's thread on a connection of that thread; writes go
through one writer thread, which commits each batch in one transaction.  WAL
with ``synchronous=NORMAL`` makes a committed transaction survive the process
being killed (``kill -9``) at any point, and a transaction cut short is rolled
back when the file is next opened: nothing half-written is ever read.

The size bound is a number of rows derived from the bound in bytes; past it,
the oldest-written rows go first, whichever process wrote them (``--workers``
runs several, each with its own writer; SQLite lets one write at a time).  SQLite reuses the pages they free, so the
file stops growing at about the bound.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from pathlib import Path

from ..rules.bits import mirror
from ..rules.board import Board
from .answer import FULL_COLUMN, Analysis, Bounds

ROW_BYTES = 96  # a row and its index entry, measured at about 47 on 7x6, 83 on 26x3 (docs/service.md)
BATCH = 512  # rows per transaction at most
WAL_PAGES = 256  # checkpoint the log every 1 MB of pages (SQLite's default is 4 MB)
SCHEMA = """CREATE TABLE IF NOT EXISTS answers (
    seq INTEGER PRIMARY KEY,
    board TEXT NOT NULL,
    key INTEGER NOT NULL,
    scores BLOB NOT NULL,
    UNIQUE (board, key))"""


def folded(board: Board) -> tuple[int | bytes, bool]:
    """The cache key of ``board``, and whether ``board`` is the mirror image of the
    position stored under it.

    A key of at most 64 bits is the signed 64-bit integer the cache has always
    stored, so that files written before wide boards were served keep their rows;
    a wider one (boards of 72-128 bits: SQLite's INTEGER holds 64) is a BLOB in
    the same column, big-endian, as many bytes as the board's keys have bits
    (9 on 8x8, 16 on 16x7: a row of 26x3 takes some 83 bytes, within
    :data:`ROW_BYTES`).  The column's INTEGER affinity keeps a
    BLOB as it is, and SQLite never takes an integer and a BLOB for equal, so the
    two kinds of key cannot meet."""
    geometry = board.geometry
    key, image = board.key, mirror(board.key, geometry.width, geometry.height)
    smaller = min(key, image)
    if smaller >= 1 << 64:
        return smaller.to_bytes((geometry.key_bits + 7) // 8, "big"), image < key
    return smaller - (1 << 64) if smaller >= 1 << 63 else smaller, image < key


def encode(columns: tuple[Bounds | None, ...], mirrored: bool) -> bytes:
    scores = [FULL_COLUMN if bounds is None else bounds.low for bounds in columns]
    return bytes(score & 0xFF for score in (reversed(scores) if mirrored else scores))


def decode(blob: bytes, mirrored: bool) -> tuple[Bounds | None, ...]:
    scores = [byte - 256 if byte > 127 else byte for byte in blob]
    if mirrored:
        scores.reverse()
    return tuple(None if score == FULL_COLUMN else Bounds.exact(score) for score in scores)


def connect(path: Path, shared: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit); ``shared`` lets
    another thread than its maker use it (the writer's, made before its thread)."""
    connection = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=not shared)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute(f"PRAGMA wal_autocheckpoint={WAL_PAGES}")
    connection.execute(f"PRAGMA journal_size_limit={WAL_PAGES * 4096}")
    return connection


def prepare_cache(path: Path) -> None:
    """Make the file, its table and its WAL mode, before several processes open it at
    once (``--workers``): switching a new file to WAL takes a lock that SQLite's busy
    handler does not wait for, so two processes doing it together failed one start
    in twelve with "database is locked".  On a file already in WAL mode, opening it
    changes nothing."""
    connection = connect(path)
    try:
        connection.execute(SCHEMA)
    finally:
        connection.close()


class AnswerCache:
    """Exact answers kept across restarts, at most ``max_bytes`` worth of rows."""

    def __init__(self, path: Path | str, max_bytes: int) -> None:
        self.path = Path(path)
        self.max_rows = max(1, max_bytes // ROW_BYTES)
        writer = connect(self.path, shared=True)
        writer.execute(SCHEMA)
        self._rows = int(writer.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
        self._readers = threading.local()
        self._pending: queue.Queue[tuple[str, int | bytes, bytes] | None] = queue.Queue(maxsize=100_000)
        self.dropped = self.written = self.failed = 0
        self._writer = threading.Thread(target=self._write_loop, args=(writer,), name="c4engine-cache-writer",
                                        daemon=True)
        self._writer.start()

    @property
    def rows(self) -> int:
        return self._rows

    def _reader(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._readers, "connection", None)
        if connection is None:
            connection = self._readers.connection = connect(self.path)
        return connection

    def get(self, board: Board) -> Analysis | None:
        key, mirrored = folded(board)
        row = self._reader().execute("SELECT scores FROM answers WHERE board = ? AND key = ?",
                                     (board.geometry.name, key)).fetchone()
        if row is None or len(row[0]) != board.geometry.width:
            return None
        return Analysis(board, decode(row[0], mirrored), "cache")

    async def lookup(self, board: Board) -> Analysis | None:
        """:meth:`get`, in the event loop's thread: a read of the local file is short."""
        return self.get(board)

    def put(self, analysis: Analysis) -> None:
        """Queue an exact analysis to be written; dropped (and counted) when the writer
        is that far behind, since the cache only saves work."""
        if not analysis.is_exact:
            raise ValueError("only exact answers are cached")
        key, mirrored = folded(analysis.board)
        try:
            self._pending.put_nowait((analysis.board.geometry.name, key, encode(analysis.columns, mirrored)))
        except queue.Full:
            self.dropped += 1

    def _write_loop(self, connection: sqlite3.Connection) -> None:
        while (first := self._pending.get()) is not None:
            batch = [first]
            while len(batch) < BATCH and (item := self._next_waiting()) is not None:
                batch.append(item)
            try:
                self._write(connection, batch)
            except sqlite3.Error:  # a full disk, say: the service goes on without these rows
                self.failed += len(batch)
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
            finally:
                for _ in batch:
                    self._pending.task_done()
        self._pending.task_done()
        connection.close()

    def _next_waiting(self) -> tuple[str, int | bytes, bytes] | None:
        """The next queued row if one is waiting; the end mark is put back for the loop."""
        try:
            item = self._pending.get_nowait()
        except queue.Empty:
            return None
        if item is None:
            self._pending.task_done()
            self._pending.put(None)
        return item

    def _write(self, connection: sqlite3.Connection, batch: list[tuple[str, int | bytes, bytes]]) -> None:
        """One transaction: the new rows, then the oldest ones past the bound out.

        The rows are counted from their sequence numbers, which have no gaps (a new
        row takes the largest plus one, and only the oldest are deleted), inside the
        transaction: right however many processes write to the file."""
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany("INSERT OR IGNORE INTO answers (board, key, scores) VALUES (?, ?, ?)", batch)
        oldest, newest = connection.execute("SELECT MIN(seq), MAX(seq) FROM answers").fetchone()
        rows = 0 if newest is None else newest - oldest + 1
        if rows > self.max_rows:
            connection.execute("DELETE FROM answers WHERE seq <= ?", (newest - self.max_rows,))
            rows = self.max_rows
        connection.execute("COMMIT")
        self._rows = rows
        self.written += len(batch)

    def flush(self) -> None:
        """Wait until every queued row is committed."""
        self._pending.join()

    def close(self) -> None:
        """Commit what is queued and stop the writer."""
        self._pending.put(None)
        self._writer.join()
