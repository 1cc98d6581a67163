"""Training positions as one 64-bit word each, on every board of at most 64 cells.

The kernel gives each column ``height + 1`` bits (a free bit above the top), so
on 8x8, 9x7 or 10x6 its bitboards pass 64 bits and a position is two words.
The training's positions live in numpy ``int64`` arrays (its checkpoints,
held-out sets and compiled fits), so on such a board they are *packed*: column
``c``, row ``r`` is bit ``c * height + r``.  On a board whose bitboard fits,
they keep the kernel's layout (bit ``c * (height + 1) + r``): the same words as
before packing existed, so older checkpoints and sets read unchanged.

A network's cells are the kernel's bit indices in its file and in
:class:`~c4engine.training.network.Network`; the compiled fits and judges,
which read the data's words, get them in the data's layout
(:func:`data_cells`).  A packed position has no free bit, so ``current +
mask`` is no key there: :func:`position_keys` mixes the two words into one
(splitmix64's finaliser), a hash whose chance of any collision among a million
positions is about 3 in 10^8.
"""

from __future__ import annotations

import numpy as np

from ..geometry import Geometry

WORD_BITS = 64


def packs(geometry: Geometry) -> bool:
    """Whether the training's words are packed on ``geometry``'s board (its bitboard passes 64 bits)."""
    return geometry.width * geometry.h1 > WORD_BITS


def fits(geometry: Geometry) -> bool:
    """Whether a position of the board fits one word, packed if need be."""
    return geometry.cells <= WORD_BITS


def column_stride(geometry: Geometry) -> int:
    """Bits a column takes in the training's words."""
    return geometry.height if packs(geometry) else geometry.h1


def pack(bits: int, geometry: Geometry) -> int:
    """A kernel bitboard as the training's word (an int64's value: bit 63 is the sign)."""
    if not packs(geometry):
        return bits
    word = restrided(bits, geometry, geometry.h1, geometry.height)
    return word - (1 << WORD_BITS) if word >> (WORD_BITS - 1) else word


def unpack(word: int, geometry: Geometry) -> int:
    """The kernel bitboard of one of the training's words."""
    if not packs(geometry):
        return word
    return restrided(word & ((1 << WORD_BITS) - 1), geometry, geometry.height, geometry.h1)


def restrided(bits: int, geometry: Geometry, source: int, target: int) -> int:
    """``bits`` with each column's cells moved from ``source`` bits a column to ``target``."""
    column, out = (1 << geometry.height) - 1, 0
    for col in range(geometry.width):
        out |= ((bits >> (col * source)) & column) << (col * target)
    return out


def data_cells(cells: np.ndarray, geometry: Geometry) -> np.ndarray:
    """Kernel bit indices as bits of the training's words."""
    col, row = np.divmod(cells, geometry.h1)
    return (col * column_stride(geometry) + row).astype(cells.dtype)


def stone_counts(mask: np.ndarray) -> np.ndarray:
    """The stones of each word of ``mask`` (a packed word may have its sign bit set)."""
    return np.bitwise_count(mask.astype(np.uint64)).astype(np.int8)


def mirrored(words: np.ndarray, geometry: Geometry) -> np.ndarray:
    """The words of the positions' mirror images (column ``c`` becomes ``W - 1 - c``)."""
    stride = column_stride(geometry)
    column = np.uint64((1 << stride) - 1)
    bits, out = words.astype(np.uint64), np.zeros(words.size, dtype=np.uint64)
    for col in range(geometry.width):
        out |= ((bits >> np.uint64(col * stride)) & column) << np.uint64((geometry.width - 1 - col) * stride)
    return out.astype(np.int64)


def position_keys(current: np.ndarray, mask: np.ndarray, geometry: Geometry) -> np.ndarray:
    """Each position's key: ``current + mask`` where a column has its free bit (the
    kernel's own key), a hash of the two words where the data are packed."""
    if not packs(geometry):
        return current + mask
    return mixed(current.astype(np.uint64) ^ mixed(mask.astype(np.uint64))).astype(np.int64)


def mixed(words: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser of each uint64: every bit of the result depends on every bit."""
    z = words.astype(np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))
