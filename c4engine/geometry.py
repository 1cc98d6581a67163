"""The board's shape: width, height and row length, the single source of every board constant.

A :class:`Geometry` is chosen at run time (``--board 8x7``, ``--board 9x6k5``, the
``UCI_Variant`` option, the API's ``Position(width=..., height=..., connect=...)``)
and passed explicitly down the layers; nothing keeps a board size as a global.

The bitboard is Pascal Pons' layout (docs/design.md, "Board layout"): column ``c``
owns bits ``c*(H+1) .. c*(H+1)+H``, the top one a sentinel that stays empty.  The
whole board must fit two 64-bit words, ``W*(H+1) <= 128``: a board of up to 64
bits is searched in one word, a wider one (8x8, 9x7, ... 11x10) in two (numba's
widest integer is 64 bits; docs/design.md, "Boards past 64 bits").  The row
length runs from 3 to ``max(W, H)``, so that a line of K cells fits on the board.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

WORD_BITS = 64
MAX_WORDS = 2  # a board past one word is searched in two
MAX_BITS = MAX_WORDS * WORD_BITS
MAX_WIDTH = WORD_BITS // 2  # MultiPV's ceiling: more than the 26 columns a board can name (file letters)
MIN_CONNECT = 3
BOARD_PATTERN = re.compile(r"([0-9]{1,3})x([0-9]{1,3})(?:k([0-9]{1,3}))?")  # ASCII digits: ``\d`` takes ``７``


class GeometryError(ValueError):
    """A board the engine cannot play; the message names the limit it breaks."""


@dataclass(frozen=True)
class Geometry:
    """Width (columns), height (rows) and row length (``connect``, K in a row)."""

    width: int = 7
    height: int = 6
    connect: int = 4

    def __post_init__(self) -> None:
        for name in ("width", "height", "connect"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise GeometryError(f"board {name} {value!r}: expected a whole number")
        if self.width < 1 or self.height < 1:
            raise GeometryError(f"board {self.width}x{self.height}: width and height must be at least 1")
        if self.width * (self.height + 1) > MAX_BITS:
            raise GeometryError(
                f"board {self.width}x{self.height}: needs width x (height + 1) <= {MAX_BITS} bits "
                f"(here {self.width * (self.height + 1)}); the bitboard is at most {MAX_WORDS} "
                f"{WORD_BITS}-bit words")
        if not MIN_CONNECT <= self.connect <= max(self.width, self.height):
            raise GeometryError(
                f"board {self.name}: row length {self.connect} is out of range "
                f"({MIN_CONNECT}-{max(self.width, self.height)} on a {self.width}x{self.height} board)")

    @classmethod
    def parse(cls, text: str) -> Geometry:
        """A board written ``WxH`` (four in a row) or ``WxHkK``: ``7x6``, ``8x7``, ``9x6k5``,
        in ASCII digits only (``７x６`` and ``٧x٦`` are malformed, as ``protocol.md`` says)."""
        match = BOARD_PATTERN.fullmatch(text.strip().lower())
        if match is None:
            raise GeometryError(f"board '{text}': expected WxH or WxHkK, e.g. 7x6 or 9x6k5")
        width, height, connect = match.groups()
        return cls(int(width), int(height), int(connect) if connect else 4)

    @property
    def name(self) -> str:
        """The board as ``parse`` reads it: ``7x6``, or ``9x6k5`` for another row length."""
        suffix = "" if self.connect == 4 else f"k{self.connect}"
        return f"{self.width}x{self.height}{suffix}"

    def __str__(self) -> str:
        return self.name

    @property
    def h1(self) -> int:
        """Bits per column: the cells and the sentinel above them."""
        return self.height + 1

    @property
    def cells(self) -> int:
        return self.width * self.height

    @property
    def key_bits(self) -> int:
        """Bits of a position's key ``current + mask``: every column's slice, sentinel included."""
        return self.width * self.h1

    @cached_property
    def bottom_mask(self) -> int:
        """The lowest cell of every column."""
        return sum(1 << (col * self.h1) for col in range(self.width))

    @cached_property
    def board_mask(self) -> int:
        """Every playable cell."""
        return self.bottom_mask * ((1 << self.height) - 1)

    def off_centre(self, col: int) -> int:
        """How far column ``col`` is from the board's centre, in half columns (an
        integer on boards of even width too): what "the most central" means for
        the moves chosen without the kernel."""
        return abs(2 * col - self.width + 1)

    @property
    def is_standard(self) -> bool:
        """The 7x6 four-in-a-row game, the only one the shipped opening book covers."""
        return self == STANDARD


STANDARD = Geometry()
