"""Opening book: exact scores for 12-stone positions, win/draw/loss for 8-stone ones.

The data are the databases of the MIT-licensed package ``bitbully-databases``;
this module is our own reader of their files (the rival ``bitbully`` solver is
never used at run time).  The first plies are the costly ones to solve (a
strong solver without a book needs minutes from 4 stones, tens of
milliseconds on average from 12), so the search kernel looks them up here.

The file format, as found in the package's reference reader and checked
against an independent solver (see ``tests/test_book.py``):

* A position's key is a prefix code written most significant bit first:
  columns left to right, each column bottom up, a stone as ``10`` (first
  player) or ``11`` (second player), then a ``0`` that closes the column (a full
  column too), then one last ``0``.  That is ``2 * stones + 8`` bits: 24 for
  8 stones, read as an unsigned number; 32 for 12 stones, read as a signed
  int32 (the files are sorted in that order).
* Both books hold an even number of stones, so the first player is the side
  to move: ``10`` marks our ``current`` stones, and every value is already
  from the side to move.
* A position and its mirror image have the same value and the files do not
  pick one of the pair by any rule, so a reader must try both.
* ``book_8ply.dat``: 3-byte records.  The last two bits of every key are zero
  (the close of column 7 and the final ``0``), so the value lives there:
  0 draw, 1 loss.  Wins are left out: a legal 8-stone position that is not
  over and not in the file is a win for the side to move.
* ``book_12ply_distances.dat``: 5-byte records, a big-endian int32 key and a
  signed byte ``v``: 0 draw, otherwise ``+-(100 - d)`` where ``d`` counts the
  plies up to and including the winning stone, positive when the side to move
  wins.  Positions where the side to move wins with its next stone are left
  out: the search sees those by itself.

Kernel interface: :func:`book_score` (exact Pons scores, 12 stones) and
:func:`book_outcome` (+1/0/-1, 8 stones) are ``numba.njit`` functions of
``(keys, values, current, mask)``; both return :data:`NOT_IN_BOOK` for any
position they cannot answer.  The two are separate functions so that a
kernel never takes one encoding for the other: a 12-stone answer is the
score; an 8-stone answer only bounds it (+1: score >= 1, 0: exactly 0,
-1: score <= -1).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import bits
from .jitbits import has_four, jit, mirror, popcount

NOT_IN_BOOK = -128
"""What the probes return for a position the book cannot answer (no score reaches it)."""

OUTCOME_STONES = 8
SCORE_STONES = 12

_KEY12_RECORD = np.dtype([("key", ">i4"), ("value", "u1")])
_DISTANCE_BASE = 100  # the 12-ply file stores +-(100 - plies to the winning stone)



class BookUnavailableError(RuntimeError):
    """The opening book cannot be loaded; the engine runs on without it."""


@jit
def _huffman_key(current: int, mask: int) -> int:
    """The file's key of ``(current, mask)`` as an unsigned number, for an even
    stone count (``current`` is then the first player's)."""
    key = 0
    for col in range(bits.WIDTH):
        for row in range(bits.HEIGHT):
            cell = 1 << (col * bits.H1 + row)
            if not mask & cell:
                break
            key = (key << 2) | (2 if current & cell else 3)
        key <<= 1
    return key << 1


def pack(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """One int64 per record, ``key << 8`` plus the value's byte: sorted as the keys
    are, and a single array, so that the kernel can keep the book in the same
    array as everything else it is passed (see :mod:`c4engine.kernel`)."""
    return (keys.astype(np.int64) << 8) | (values.astype(np.int64) & 0xFF)


@jit
def _search(table: np.ndarray, start: int, n: int, key: int) -> int:
    """The value packed with ``key`` among ``table[start:start + n]``, or NOT_IN_BOOK.

    Branch-free halving (a conditional move, no unpredictable jump): measured
    10-30 % faster here than ``np.searchsorted`` or a classic lo/hi loop.
    """
    if n == 0:
        return NOT_IN_BOOK
    base = start
    while n > 1:
        half = n >> 1
        base = base + half if (table[base + half] >> 8) <= key else base
        n -= half
    if (table[base] >> 8) != key:
        return NOT_IN_BOOK
    return ((table[base] & 0xFF) ^ 0x80) - 0x80  # the low byte, sign-extended


@jit
def _search_both(table: np.ndarray, start: int, n: int, current: int, mask: int,
                 signed32: bool) -> int:
    """Look the position up, then its mirror image: the files keep either."""
    for flip in range(2):
        cur = mirror(current) if flip else current
        key = _huffman_key(cur, mirror(mask) if flip else mask)
        if signed32 and key >= 1 << 31:
            key -= 1 << 32
        value = _search(table, start, n, key)
        if value != NOT_IN_BOOK:
            return value
    return NOT_IN_BOOK


@jit
def book_score(table: np.ndarray, start: int, n: int, current: int, mask: int) -> int:
    """Exact Pons score (side to move) of a 12-stone position, else NOT_IN_BOOK.

    The records are ``table[start:start + n]``, as :attr:`OpeningBook.table12`
    holds them.  Positions whose side to move wins with its next stone are not
    in the book.
    """
    if popcount(mask) != SCORE_STONES:
        return NOT_IN_BOOK
    return _search_both(table, start, n, current, mask, True)


@jit
def book_outcome(table: np.ndarray, start: int, n: int, current: int, mask: int) -> int:
    """+1 win, 0 draw, -1 loss for the side to move of an 8-stone position, else NOT_IN_BOOK.

    The records are ``table[start:start + n]``, as :attr:`OpeningBook.table8`
    holds them.  The file leaves wins out, so "not found" means a win; that
    inference needs a real table and a game not over yet, hence the two guards.
    """
    if popcount(mask) != OUTCOME_STONES or n == 0 or has_four(current ^ mask):
        return NOT_IN_BOOK
    found = _search_both(table, start, n, current, mask, False)
    return 1 if found == NOT_IN_BOOK else found


def _read_8ply(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Sorted keys (int32) and outcomes (int8: 0 draw, -1 loss) of the 8-ply file."""
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size % 3:
        raise BookUnavailableError(f"{path}: size {raw.size} is not a whole number of 3-byte records")
    octets = raw.reshape(-1, 3).astype(np.int32)
    word = (octets[:, 0] << 16) | (octets[:, 1] << 8) | octets[:, 2]
    return word & ~3, (-(word & 3)).astype(np.int8)


def _distance_to_score(v: int) -> int:
    """Pons score of a 12-stone position from the file's byte ``v = +-(100 - d)``.

    The winner's stone is stone ``12 + d``, placed on ``11 + d`` stones, so it
    scores ``(43 - (11 + d)) // 2``.  A byte no position can have (a distance
    out of range, or a win on the wrong player's turn) gives NOT_IN_BOOK.
    """
    if v == 0:
        return 0
    plies = _DISTANCE_BASE - abs(v)
    winner_moves_first = plies % 2 == 1  # the side to move places the odd-numbered stones from here
    if not 1 <= plies <= bits.CELLS - SCORE_STONES or winner_moves_first != (v > 0):
        return NOT_IN_BOOK
    magnitude = (bits.CELLS + 1 - (SCORE_STONES - 1 + plies)) // 2
    return magnitude if v > 0 else -magnitude


_SCORE_OF_BYTE = np.array([_distance_to_score(int(v)) for v in np.arange(256, dtype=np.uint8).view(np.int8)],
                          dtype=np.int8)
"""Indexed by the stored byte as unsigned: converting 4.2 M values is one gather, no temporaries."""


def _read_12ply(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Sorted keys (int32) and exact scores (int8) of the 12-ply distance file.

    The file is mapped rather than read, so that only the two native arrays
    the search needs are ever allocated.
    """
    size = path.stat().st_size
    if size % _KEY12_RECORD.itemsize:
        raise BookUnavailableError(f"{path}: size {size} is not a whole number of 5-byte records")
    records = np.memmap(path, dtype=_KEY12_RECORD, mode="r")
    keys = records["key"].astype(np.int32)
    scores = _SCORE_OF_BYTE[records["value"]]
    del records
    if np.any(scores == NOT_IN_BOOK):
        raise BookUnavailableError(f"{path}: values out of the format's range")
    return keys, scores


def _check_sorted(name: str, keys: np.ndarray) -> None:
    """Refuse a file the binary search would misread (a format change, a bad copy)."""
    if keys.size == 0 or not np.all(keys[1:] > keys[:-1]):
        raise BookUnavailableError(f"opening book {name}: keys are empty or not strictly increasing")


def _database_path(name: str) -> Path:
    """Where ``bitbully-databases`` keeps a file, or a clear error if it is missing."""
    try:
        import bitbully_databases  # type: ignore[import-untyped]
    except ImportError as exc:
        raise BookUnavailableError(
            "opening book unavailable: the package bitbully-databases is not installed"
        ) from exc
    path = Path(bitbully_databases.BitBullyDatabases.get_database_path(name))
    if not path.is_file():
        raise BookUnavailableError(f"opening book unavailable: {path} is missing")
    return path


@dataclass(frozen=True, eq=False)  # compared and hashed by identity, not array by array
class OpeningBook:
    """The two tables as numpy arrays, ready to hand to the numba kernel.

    ``table8`` goes to :func:`book_outcome`, ``table12`` to :func:`book_score`:
    sorted int64 records packed by :func:`pack`.
    """

    table8: np.ndarray
    table12: np.ndarray

    @classmethod
    @functools.cache
    def load(cls) -> OpeningBook:
        """Read both files once per process (later calls return the same book).

        Raises :class:`BookUnavailableError` with the reason when the package or
        a file is missing or malformed.
        """
        keys8, outcomes8 = _read_8ply(_database_path("8-ply"))
        keys12, scores12 = _read_12ply(_database_path("12-ply-dist"))
        _check_sorted("8-ply", keys8)
        _check_sorted("12-ply-dist", keys12)
        return cls(pack(keys8, outcomes8), pack(keys12, scores12))

    @classmethod
    def empty(cls) -> OpeningBook:
        """A book that knows nothing: same array types, so the kernel compiles once."""
        return cls(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))

    @property
    def has_scores(self) -> bool:
        """Whether the 12-stone table is loaded (``empty()`` has none)."""
        return self.table12.size > 0

    @property
    def nbytes(self) -> int:
        """Memory held by the two tables."""
        return self.table8.nbytes + self.table12.nbytes

    def probe(self, current: int, mask: int) -> int | None:
        """Exact Pons score of a 12-stone position, or None."""
        score = book_score(self.table12, 0, self.table12.size, current, mask)
        return None if score == NOT_IN_BOOK else int(score)

    def probe_outcome(self, current: int, mask: int) -> int | None:
        """+1/0/-1 (win/draw/loss for the side to move) of an 8-stone position, or None."""
        outcome = book_outcome(self.table8, 0, self.table8.size, current, mask)
        return None if outcome == NOT_IN_BOOK else int(outcome)
