"""The engine's own book of the first 7x6 plies, probed beside bitbully's 12-stone one.

Through the 12-stone book alone, a search from a 1-stone position needs some
30,000 nodes to prove its best move, more than a move of 30 ms has: the first
plies are the furthest from that book.  ``book-7x6-4ply.book`` holds the exact
score of every 4-stone position (568 of them, one of each mirror pair; 5 KB),
so a search from up to 4 stones proves its move at once.  It is made by
``c4engine book build --board 7x6 --plies 4``, which proves each position
through the 12-stone book.
"""

from __future__ import annotations

import functools
from importlib.resources import files

from ..geometry import STANDARD
from ..kernel.built_book import BuiltBook

OWN_BOOK_FILE = "book-7x6-4ply.book"


@functools.cache
def own_built_book() -> BuiltBook:
    """The shipped 4-stone book, mapped once per process; BookFileError if the
    package's file is missing or broken (a packaging bug)."""
    return BuiltBook.load(str(files("c4engine").joinpath("data", OWN_BOOK_FILE)), STANDARD)
