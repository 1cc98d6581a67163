"""The checkpoint of ``c4engine train``: an SQLite file that survives a killed run.

It holds the run's settings (a resumed run must ask for the same, but for the
number of games and the fit: :func:`c4engine.training.pipeline.claim`), the solved
positions of each chunk of games as the chunk ends (one transaction each, so a
chunk is there whole or not at all), and the network's tables after the last
saved epoch.  Only the head process writes it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

Positions = tuple[np.ndarray, np.ndarray, np.ndarray]  # current, mask, result


class CheckpointError(RuntimeError):
    """The checkpoint belongs to another run, or cannot be read."""


class TrainingStore:
    """A run's checkpoint file."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        """Open (or create) the checkpoint at ``path``.  ``read_only`` is for commands
        that only read it: a file given by mistake (empty, text) is then refused and
        left as it was, where opening it for writing would make it an empty
        checkpoint; CheckpointError if it holds no run's tables."""
        self.path = path
        if not read_only:
            self.db = sqlite3.connect(path)
            self._create_tables()
            return
        self.db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            tables = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.Error:
            self.close()
            raise
        if not {"run", "chunks"} <= tables:
            self.close()
            raise CheckpointError(f"{path} holds no training run")

    def _create_tables(self) -> None:
        with self.db:
            self.db.execute("CREATE TABLE IF NOT EXISTS run (id INTEGER PRIMARY KEY CHECK (id = 0), settings TEXT)")
            self.db.execute("CREATE TABLE IF NOT EXISTS chunks (chunk INTEGER PRIMARY KEY, current BLOB, "
                            "mask BLOB, result BLOB)")
            self.db.execute("CREATE TABLE IF NOT EXISTS fit (id INTEGER PRIMARY KEY CHECK (id = 0), "
                            "epochs INTEGER, margin REAL, tables BLOB, shape TEXT)")
            self.db.execute("CREATE TABLE IF NOT EXISTS play (id INTEGER PRIMARY KEY CHECK (id = 0), "
                            "games INTEGER, tables BLOB, shape TEXT)")

    def close(self) -> None:
        self.db.close()

    def claim(self, settings: str) -> None:
        """Make the file this run's (``settings`` describes it); CheckpointError if it
        holds another run's."""
        held = self.settings()
        if held is None:
            with self.db:
                self.db.execute("INSERT INTO run VALUES (0, ?)", (settings,))
        elif held != settings:
            raise CheckpointError(f"{self.path} holds another run ({held}); remove it or name another "
                                  "--checkpoint")

    def take_over(self, settings: str, dropped: list[int]) -> None:
        """Make the file the run of ``settings``, which differs from the one it holds
        in what its data keep (the chunks ``dropped``) and so in its fit."""
        with self.db:
            self.db.execute("UPDATE run SET settings = ?", (settings,))
            self.db.executemany("DELETE FROM chunks WHERE chunk = ?", [(chunk,) for chunk in dropped])
            self.db.execute("DELETE FROM fit")

    def settings(self) -> str | None:
        """The settings of the run the file holds, None if it holds none yet."""
        row = self.db.execute("SELECT settings FROM run").fetchone()
        return None if row is None else str(row[0])

    def chunks_done(self) -> set[int]:
        return {chunk for (chunk,) in self.db.execute("SELECT chunk FROM chunks")}

    def record_chunk(self, chunk: int, positions: Positions) -> None:
        """One chunk's positions; a chunk recorded before is kept as it was."""
        current, mask, result = positions
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO chunks VALUES (?, ?, ?, ?)",
                            (chunk, current.astype(np.int64).tobytes(), mask.astype(np.int64).tobytes(),
                             result.astype(np.int8).tobytes()))

    def position_count(self, chunks: int) -> int:
        """How many positions the chunks below ``chunks`` hold (a result is one byte)."""
        row = self.db.execute("SELECT COALESCE(SUM(LENGTH(result)), 0) FROM chunks WHERE chunk < ?",
                              (chunks,)).fetchone()
        return int(row[0])

    def positions(self, chunks: int) -> Positions:
        """The positions of the chunks below ``chunks``, in chunk order (whatever order
        they were solved in)."""
        rows = self.db.execute("SELECT chunk, current, mask, result FROM chunks WHERE chunk < ? ORDER BY chunk",
                               (chunks,)).fetchall()
        read = [self._chunk(*row) for row in rows]
        return (np.concatenate([r[0] for r in read] or [np.zeros(0, np.int64)]),
                np.concatenate([r[1] for r in read] or [np.zeros(0, np.int64)]),
                np.concatenate([r[2] for r in read] or [np.zeros(0, np.int8)]))

    def _chunk(self, chunk: int, current: object, mask: object, result: object) -> Positions:
        """One chunk's arrays; CheckpointError naming the file and the chunk for a row
        that is damaged (cut, overwritten, of another type)."""
        where = f"chunk {chunk}"
        arrays = (self._array(current, np.int64, where), self._array(mask, np.int64, where),
                  self._array(result, np.int8, where))
        if not arrays[0].size == arrays[1].size == arrays[2].size:
            raise CheckpointError(f"{self.path} is damaged: {where} holds {arrays[0].size} stones, "
                                  f"{arrays[1].size} masks and {arrays[2].size} results")
        return arrays

    def _array(self, blob: object, dtype: type[np.generic], where: str) -> np.ndarray:
        """``blob`` as an array of ``dtype``; CheckpointError naming the file and ``where``
        unless it is bytes of whole ``dtype`` values."""
        size = np.dtype(dtype).itemsize
        if not isinstance(blob, bytes) or len(blob) % size:
            length = f"{len(blob)} bytes" if isinstance(blob, bytes) else f"a {type(blob).__name__}"
            raise CheckpointError(f"{self.path} is damaged: {where} holds {length}, not whole "
                                  f"{np.dtype(dtype).name} values")
        return np.frombuffer(blob, dtype=dtype)

    def save_fit(self, epochs: int, margin: float, tables: np.ndarray) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO fit VALUES (0, ?, ?, ?, ?)",
                            (epochs, margin, tables.astype(np.float64).tobytes(),
                             ",".join(str(n) for n in tables.shape)))

    def saved_fit(self) -> tuple[int, float, np.ndarray] | None:
        """The epochs done, the margin and the tables of the last saved fit, if any."""
        row = self.db.execute("SELECT epochs, margin, tables, shape FROM fit").fetchone()
        if row is None:
            return None
        return int(row[0]), float(row[1]), self._tables(row[2], row[3], "the saved fit")

    def save_play(self, games: int, tables: np.ndarray) -> None:
        """A self-play run's tables after ``games`` games (:mod:`c4engine.training.td`)."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO play VALUES (0, ?, ?, ?)",
                            (games, tables.astype(np.float64).tobytes(), ",".join(str(n) for n in tables.shape)))

    def saved_play(self) -> tuple[int, np.ndarray] | None:
        """The games played and the tables of a self-play run's last save, if any."""
        row = self.db.execute("SELECT games, tables, shape FROM play").fetchone()
        if row is None:
            return None
        return int(row[0]), self._tables(row[1], row[2], "the saved self-play")

    def _tables(self, blob: object, shape: object, where: str) -> np.ndarray:
        """Tables saved as float64 bytes and their shape ("rows,columns"), writable;
        CheckpointError naming the file and ``where`` if they do not match."""
        tables = self._array(blob, np.float64, where)
        try:
            dims = tuple(int(n) for n in str(shape).split(","))
            return tables.reshape(dims).copy()
        except ValueError:
            raise CheckpointError(f"{self.path} is damaged: {where} holds {tables.size} values, "
                                  f"not the shape {shape!r}") from None
