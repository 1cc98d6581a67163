"""Reading input files (openings, test positions, positions to solve) line by line.

A file is decoded one line at a time, so that a stray byte that is not UTF-8
costs its own line, named with its number, rather than a UnicodeDecodeError
about the whole file; a UTF-8 byte-order mark (as some Windows editors write)
is not part of the first line.  The referee reports every bad line of an
openings or positions file at once and refuses the file: a match or a
measurement silently run on part of what the user gave would be worse than
none.  ``c4engine solve`` reads a stream (a pipe may feed it as it goes), so it
names each bad line as it comes, solves the others, and exits 1 at the end.

A line protocol is read the same way, with a bound: :func:`bounded_lines` is
how the engine reads its commands and how every client reads an engine.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from typing import IO

MAX_PROBLEMS_SHOWN = 10
MAX_LINE_BYTES = 1 << 16  # the longest protocol line, either way, its newline not counted


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


def bounded_lines(stream: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[bytes | None]:
    """The lines of ``stream`` as they come (the last may lack its line end), and
    None in place of each line over ``limit`` bytes.  That None comes as soon as
    the line is seen to be too long, since it may never end; the rest of it is
    then read and dropped ``limit`` bytes at a time, so memory stays bounded
    whatever the stream holds."""
    while raw := stream.readline(limit + 1):
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield raw
            continue
        yield None
        while raw and not raw.endswith(b"\n"):
            raw = stream.readline(limit)


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
