"""Reading a training run's checkpoint while its writer may still be making it."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path


def checkpoint_count(checkpoint: Path, query: str) -> int:
    """The number ``query`` selects from the checkpoint (0 when it gives none), or 0 when
    the file, its tables or a lock keep it from being read yet."""
    if not checkpoint.exists():
        return 0
    try:
        with closing(sqlite3.connect(checkpoint)) as db:
            row = db.execute(query).fetchone()
            return 0 if row is None else int(row[0])
    except sqlite3.OperationalError:  # the tables are not made yet, or the writer holds a lock
        return 0
