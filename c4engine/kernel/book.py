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

Kernel interface: both files are mapped read-only (``np.memmap``) and searched
where they lie, so that the book is held once per machine: every engine
process of a match shares the same pages of the operating system's file
cache, and none holds a private copy.  The kernel gets a book as the address
of its mapped bytes and its record count (two int64 in its context, see
:mod:`c4engine.kernel.layout`), because a memory map cannot join the one int64
array the kernel is passed.  :func:`book_score` (exact Pons scores,
12 stones) and :func:`book_outcome` (+1/0/-1, 8 stones) are ``numba.njit``
functions of ``(address, records, current, mask)``; both return
:data:`NOT_IN_BOOK` for any position they cannot answer.  The two are
separate functions so that a kernel never takes one encoding for the other:
a 12-stone answer is the score; an 8-stone answer only bounds it (+1:
score >= 1, 0: exactly 0, -1: score <= -1).  The search uses only the
12-stone file; the 8-stone one is mapped the first time it is probed.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic

from .constants import CELLS, H1, HEIGHT, WIDTH
from .jit import entry, has_line, jit, mirror, popcount

NOT_IN_BOOK = -128
"""What the probes return for a position the book cannot answer (no score reaches it)."""

OUTCOME_STONES = 8
SCORE_STONES = 12

SCORE_RECORD_BYTES = 5  # big-endian int32 key, signed byte value
OUTCOME_RECORD_BYTES = 3  # big-endian 24-bit key whose two low bits hold the value
CHECKED_RECORDS = 64  # records checked at load at each end of the 12-ply file, and between them
# A folder holding the book's files as <name>.dat, read instead of bitbully-databases'
# (a Kaggle submission carries them beside its main.py: c4engine.kaggle.bundle).
BOOK_DIR_ENV = "C4ENGINE_BOOK_DIR"
_DISTANCE_BASE = 100  # the 12-ply file stores +-(100 - plies to the winning stone)


class BookUnavailableError(RuntimeError):
    """The opening book cannot be loaded; the engine runs on without it."""


@jit
def _huffman_key(current: int, mask: int) -> int:
    """The file's key of ``(current, mask)`` as an unsigned number, for an even
    stone count (``current`` is then the first player's)."""
    key = 0
    for col in range(WIDTH):
        for row in range(HEIGHT):
            cell = 1 << (col * H1 + row)
            if not mask & cell:
                break
            key = (key << 2) | (2 if current & cell else 3)
        key <<= 1
    return key << 1


@intrinsic
def _byte_pointer(typingctx, address):  # type: ignore[no-untyped-def]
    """An int64 address as a ``uint8*`` (numba has no cast from integers to pointers)."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.uint8)))
    return types.CPointer(types.uint8)(types.int64), codegen


@jit
def bytes_at(address: int, size: int) -> np.ndarray:
    """The ``size`` bytes mapped at ``address`` as an array."""
    return numba.carray(_byte_pointer(address), size)  # type: ignore[call-arg]  # numba adds typingctx


@jit
def _ordered(word: int, key_bytes: int, low_bits: int) -> int:
    """A key in the file's order, compared as unsigned: a 4-byte key gets its top bit
    flipped (the 12-ply file is sorted as signed int32), and the ``low_bits`` that
    hold a value (8-ply file) are dropped."""
    return (word ^ (1 << 31) if key_bytes == 4 else word) >> low_bits


@jit
def _record_key(data: np.ndarray, record: int, record_bytes: int, key_bytes: int, low_bits: int) -> int:
    """The key of ``record``, read big-endian, as :func:`_ordered` compares it."""
    word = numba.int64(0)  # not a literal 0, for which numba would compile _ordered twice
    for i in range(key_bytes):
        word = (word << 8) | data[record * record_bytes + i]
    return _ordered(word, key_bytes, low_bits)


@jit
def _value_byte(address: int, records: int, record_bytes: int, key_bytes: int, low_bits: int,
                current: int, mask: int) -> int:
    """The last byte (where both files keep the value) of the position's record, else
    of its mirror image's (the files keep either), else -1.  Branch-free halving (a
    conditional move, no unpredictable jump), faster than ``np.searchsorted`` or a
    classic lo/hi loop."""
    if records == 0:
        return -1
    data = bytes_at(address, records * record_bytes)
    for flip in range(2):
        key = _huffman_key(mirror(current) if flip else current, mirror(mask) if flip else mask)
        key = _ordered(key, key_bytes, low_bits)
        base, n = 0, records
        while n > 1:
            half = n >> 1
            base = base + half if _record_key(data, base + half, record_bytes, key_bytes, low_bits) <= key else base
            n -= half
        if _record_key(data, base, record_bytes, key_bytes, low_bits) == key:
            return int(data[base * record_bytes + record_bytes - 1])
    return -1


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
    if not 1 <= plies <= CELLS - SCORE_STONES or winner_moves_first != (v > 0):
        return NOT_IN_BOOK
    magnitude = (CELLS + 1 - (SCORE_STONES - 1 + plies)) // 2
    return magnitude if v > 0 else -magnitude


_SCORE_OF_BYTE = np.array([_distance_to_score(int(v)) for v in np.arange(256, dtype=np.uint8).view(np.int8)],
                          dtype=np.int8)
"""Indexed by the stored byte as unsigned: a probe's conversion is one load, and
checking the whole file is one gather."""


@entry
def book_score(address: int, records: int, current: int, mask: int) -> int:
    """Exact Pons score (side to move) of a 12-stone position, else NOT_IN_BOOK.

    ``address`` and ``records`` are :attr:`OpeningBook.score_address` and
    :attr:`OpeningBook.score_records`.  Positions whose side to move wins with
    its next stone are not in the book.
    """
    if popcount(mask) != SCORE_STONES:
        return NOT_IN_BOOK
    value = _value_byte(address, records, SCORE_RECORD_BYTES, 4, 0, current, mask)
    return NOT_IN_BOOK if value < 0 else _SCORE_OF_BYTE[value]


@entry
def book_outcome(address: int, records: int, current: int, mask: int) -> int:
    """+1 win, 0 draw, -1 loss for the side to move of an 8-stone position, else NOT_IN_BOOK.

    The file leaves wins out, so "not found" means a win; that inference
    needs a real table and a game not over yet, hence the two guards.  The
    key's two low bits are always zero, so the file keeps the value there and
    the search compares keys without them.
    """
    if popcount(mask) != OUTCOME_STONES or records == 0 or has_line(current ^ mask):
        return NOT_IN_BOOK
    value = _value_byte(address, records, OUTCOME_RECORD_BYTES, 3, 2, current, mask)
    return 1 if value < 0 else -(value & 3)


def _address(data: np.ndarray) -> int:
    """Where a mapped file's bytes start in memory (0 for none), for the jitted probes."""
    return int(data.ctypes.data) if data.size else 0


def _map(path: Path, record_bytes: int) -> np.ndarray:
    """The file as read-only bytes shared with every process that maps it."""
    size = path.stat().st_size
    if size == 0 or size % record_bytes:
        raise BookUnavailableError(f"{path}: size {size} is not a whole number of {record_bytes}-byte records")
    return np.memmap(path, dtype=np.uint8, mode="r")


def _check_scores(path: Path, data: np.ndarray) -> None:
    """Refuse a 12-ply file the binary search would misread (a format change, a bad
    copy): keys strictly increasing, every value a possible score.

    Checked on a sample (the first and last CHECKED_RECORDS records and as many
    spread evenly between them): reading every record would make all 21 MB of
    the file resident in every engine process at every start, a tenth of its
    memory, for a check that ``tests/test_book.py`` makes record by record
    against the package's own reader.  (Each page read also maps its
    neighbours already in the page cache, so even a sample of a few hundred
    spread records maps most of the file.)"""
    records = data.view(np.dtype([("key", ">i4"), ("value", "u1")]))
    count = records.size
    picks = np.unique(np.concatenate([np.arange(min(count, CHECKED_RECORDS)),
                                      np.linspace(0, count - 1, CHECKED_RECORDS).astype(np.int64),
                                      np.arange(max(0, count - CHECKED_RECORDS), count)]))
    sample = records[picks]
    if not np.all(sample["key"][1:] > sample["key"][:-1]):
        raise BookUnavailableError(f"opening book {path.name}: keys are not strictly increasing")
    if np.any(_SCORE_OF_BYTE[sample["value"]] == NOT_IN_BOOK):
        raise BookUnavailableError(f"opening book {path.name}: values out of the format's range")


def _check_outcomes(path: Path, data: np.ndarray) -> None:
    """Refuse an 8-ply file whose keys are not strictly increasing or whose values are
    not 0 (draw) or 1 (loss)."""
    octets = data.reshape(-1, OUTCOME_RECORD_BYTES).astype(np.int32)
    word = (octets[:, 0] << 16) | (octets[:, 1] << 8) | octets[:, 2]
    keys = word & ~3
    if not np.all(keys[1:] > keys[:-1]) or np.any((word & 3) > 1):
        raise BookUnavailableError(f"opening book {path.name}: keys not increasing or values out of range")


def database_path(name: str) -> Path:
    """Where the book file ``name`` is: ``$C4ENGINE_BOOK_DIR/<name>.dat`` when that is
    set, else where ``bitbully-databases`` keeps it; a clear error if it is missing."""
    if os.environ.get(BOOK_DIR_ENV):
        path = Path(os.environ[BOOK_DIR_ENV]) / f"{name}.dat"
        if not path.is_file():
            raise BookUnavailableError(f"opening book unavailable: {path} is missing")
        return path
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


class OpeningBook:
    """The two files mapped read-only, with what the kernel needs to search them.

    Compared and hashed by identity.  The 12-stone file is mapped and checked
    when the book is loaded; the 8-stone one, which the search does not use,
    on the first :meth:`probe_outcome`.
    """

    def __init__(self, scores: np.ndarray, outcomes_path: Path | None) -> None:
        self._scores = scores
        self._outcomes_path = outcomes_path
        self._outcomes: np.ndarray | None = None

    @classmethod
    @functools.cache
    def load(cls) -> OpeningBook:
        """Map the 12-stone file once per process (later calls return the same book).

        Raises :class:`BookUnavailableError` with the reason when the package or
        the file is missing or malformed.
        """
        path = database_path("12-ply-dist")
        scores = _map(path, SCORE_RECORD_BYTES)
        _check_scores(path, scores)
        return cls(scores, database_path("8-ply"))

    @classmethod
    def empty(cls) -> OpeningBook:
        """A book that knows nothing."""
        return cls(np.empty(0, dtype=np.uint8), None)

    @classmethod
    def load_or_empty(cls, tell: Callable[[str], None]) -> OpeningBook:
        """:meth:`load`, or an empty book and a message to ``tell`` why: without its
        book the engine is slower in the opening, not wrong, so it goes on."""
        try:
            return cls.load()
        except BookUnavailableError as err:
            tell(f"no opening book, searching without it: {err}")
            return cls.empty()

    @property
    def has_scores(self) -> bool:
        """Whether the 12-stone table is there (``empty()`` has none)."""
        return self.score_records > 0

    @property
    def score_address(self) -> int:
        """Where the 12-stone records start in memory (0 for none), for :func:`book_score`."""
        return _address(self._scores)

    @property
    def score_records(self) -> int:
        return self._scores.size // SCORE_RECORD_BYTES

    @property
    def outcomes(self) -> np.ndarray:
        """The 8-stone file's bytes, mapped and checked on first use (empty without a file)."""
        if self._outcomes is None:
            if self._outcomes_path is None:
                self._outcomes = np.empty(0, dtype=np.uint8)
            else:
                data = _map(self._outcomes_path, OUTCOME_RECORD_BYTES)
                _check_outcomes(self._outcomes_path, data)
                self._outcomes = data
        return self._outcomes

    @property
    def outcomes_mapped(self) -> bool:
        """Whether the 8-stone file has been mapped (it is, at its first probe)."""
        return self._outcomes is not None

    @property
    def outcome_address(self) -> int:
        """Where the 8-stone records start in memory (0 for none), for :func:`book_outcome`."""
        return _address(self.outcomes)

    @property
    def outcome_records(self) -> int:
        return self.outcomes.size // OUTCOME_RECORD_BYTES

    def probe(self, current: int, mask: int) -> int | None:
        """Exact Pons score of a 12-stone position, or None."""
        score = book_score(self.score_address, self.score_records, current, mask)
        return None if score == NOT_IN_BOOK else int(score)

    def probe_outcome(self, current: int, mask: int) -> int | None:
        """+1/0/-1 (win/draw/loss for the side to move) of an 8-stone position, or None."""
        outcome = book_outcome(self.outcome_address, self.outcome_records, current, mask)
        return None if outcome == NOT_IN_BOOK else int(outcome)
