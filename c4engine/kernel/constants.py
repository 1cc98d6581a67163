"""The board constants this copy of the kernel compiles in.

numba freezes a module's globals into the machine code (and into its on-disk
cache, whose key ignores them), so a board size cannot be changed under a
compiled kernel.  This file is the 7x6 four-in-a-row kernel's; for any other
board :mod:`c4engine.kernel.specialise` writes a copy of the kernel's modules
into a folder of its own with the ``GEOMETRY`` line below rewritten, and numba
caches each copy on its own (docs/design.md, "One kernel per board").
Everything else here is derived from ``GEOMETRY``.
"""

from __future__ import annotations

from ..geometry import Geometry
from .int128 import Wide

GEOMETRY = Geometry(7, 6, 4)
# The whole kernel: depth-limited searches, which evaluate their leaves, and the
# opening books, bitbully's and those built by ``c4engine book build``.  A copy made
# for exact solves alone (``c4engine solve``, which takes no book) leaves them out,
# and so never compiles them (docs/design.md, "One kernel per board").
FULL = True

WIDTH = GEOMETRY.width
HEIGHT = GEOMETRY.height
H1 = GEOMETRY.h1
CONNECT = GEOMETRY.connect
CELLS = GEOMETRY.cells
KEY_BITS = GEOMETRY.key_bits
# A board past 64 bits (8x8, 9x7, ... up to 128 bits) holds its bitboards in numba's
# ``int128`` (:mod:`.int128`): its constants are ``Wide`` so that numba types them so,
# and the kernel's one array keeps a bitboard in two words (docs/design.md, "Boards
# past 64 bits").
BOARD_WORDS = 1 if KEY_BITS <= 64 else 2


def board_bits(value: int) -> int:
    """A bitboard constant as this kernel compiles it: ``int64``, or ``int128`` on a
    board past 64 bits."""
    return value if BOARD_WORDS == 1 else Wide(value)


BOTTOM_MASK = board_bits(GEOMETRY.bottom_mask)
BOARD_MASK = board_bits(GEOMETRY.board_mask)
COLUMN_MASK = board_bits((1 << HEIGHT) - 1)  # the cells of column 0
HAS_BOOK = FULL and GEOMETRY.is_standard and BOARD_WORDS == 1  # the opening book covers 7x6, four in a row, only

# Centre first (central columns take part in more lines), alternating sides:
# (3, 2, 4, 1, 5, 0, 6) on seven columns, Pons' order.
COLUMN_ORDER = tuple(WIDTH // 2 + (1 - 2 * (i % 2)) * ((i + 1) // 2) for i in range(WIDTH))
