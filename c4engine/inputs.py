"""Reading input files (openings, test positions, positions to solve) line by line.

A file is decoded one line at a time, so that a stray byte that is not UTF-8
costs its own line, named with its number, rather than a UnicodeDecodeError
about the whole file; a UTF-8 byte-order mark (as some Windows editors write)
is not part of the first line.  The referee reports every bad line of an
openings or positions file at once and refuses the file: a match or a
measurement silently run on part of what the user gave would be worse than
none.  ``c4engine solve`` reads a stream (a pipe may feed it as it goes), so it
names each bad line as it comes, solves the others, and exits 1 at the end.
"""

from __future__ import annotations

import codecs

MAX_PROBLEMS_SHOWN = 10


Problem = tuple[int, str]  # a line number and what is wrong with the line


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
