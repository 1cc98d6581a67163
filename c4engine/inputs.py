"""Reading input files (openings, test positions, positions to solve) line by line.

A file is decoded one line at a time, so that a stray byte that is not UTF-8
costs its own line, named with its number, rather than a UnicodeDecodeError
about the whole file; a UTF-8 byte-order mark (as some Windows editors write)
is not part of the first line.  The referee reports every bad line of an
openings or positions file at once and refuses the file: a match or a
measurement silently run on part of what the user gave would be worse than
none.  ``c4engine solve`` reads a stream (a pipe may feed it as it goes), so it
names each bad line as it comes, solves the others, and exits 1 at the end.

A file named in an option the engine reads (a variants file, a book) is opened
with :func:`open_regular`: a named pipe or a device would block the reading
command, or never end.
"""

from __future__ import annotations

import codecs
import os
import stat
from typing import BinaryIO

MAX_PROBLEMS_SHOWN = 10


Problem = tuple[int, str]  # a line number and what is wrong with the line
NOT_REGULAR = "not a regular file"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading in binary; OSError (its strerror
    :data:`NOT_REGULAR`) for a named pipe, a device, a directory or a socket.
    Opened without blocking, so a pipe with no writer is refused at once rather
    than waited on, then checked on the open file, which nothing can swap."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, NOT_REGULAR, str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def decode_line(raw: bytes, number: int) -> str:
    """The text of line ``number`` (from 1) of an input file, without the UTF-8
    byte-order mark some editors put first; ValueError naming the first byte that
    is not UTF-8 (``not UTF-8 text (byte 0xe9 at column 5)``)."""
    if number == 1:
        raw = raw.removeprefix(codecs.BOM_UTF8)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 text (byte 0x{raw[err.start]:02x} "
                         f"at column {err.start + 1})") from None


def numbered_lines(data: bytes) -> tuple[list[tuple[int, str]], list[Problem]]:
    """The lines of ``data`` as (number from 1, text), and a problem per line that is
    not UTF-8 (:func:`decode_line`)."""
    lines: list[tuple[int, str]] = []
    problems: list[Problem] = []
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            lines.append((number, decode_line(raw, number)))
        except ValueError as err:
            problems.append((number, str(err)))
    return lines, problems


def summary(where: str, problems: list[Problem]) -> str:
    """``where:line: problem``, one per line in line order, the first few only when
    there are many."""
    ordered = sorted(problems)
    shown = [f"{where}:{number}: {what}" for number, what in ordered[:MAX_PROBLEMS_SHOWN]]
    more = len(ordered) - len(shown)
    return "\n".join(shown + ([f"... and {more} more bad lines"] if more else []))
