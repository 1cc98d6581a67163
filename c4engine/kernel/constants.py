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

GEOMETRY = Geometry(7, 6, 4)
# The whole kernel: depth-limited searches, which evaluate their leaves, and books
# built by ``c4engine book build``.  A copy made for exact solves alone (``c4engine
# solve``) leaves both out, and so never compiles them (docs/design.md, "One kernel
# per board").
FULL = True

WIDTH = GEOMETRY.width
HEIGHT = GEOMETRY.height
H1 = GEOMETRY.h1
CONNECT = GEOMETRY.connect
CELLS = GEOMETRY.cells
KEY_BITS = GEOMETRY.key_bits
BOTTOM_MASK = GEOMETRY.bottom_mask
BOARD_MASK = GEOMETRY.board_mask
HAS_BOOK = GEOMETRY.is_standard  # the opening book covers 7x6, four in a row, only

# Centre first (central columns take part in more lines), alternating sides:
# (3, 2, 4, 1, 5, 0, 6) on seven columns, Pons' order.
COLUMN_ORDER = tuple(WIDTH // 2 + (1 - 2 * (i % 2)) * ((i + 1) // 2) for i in range(WIDTH))
