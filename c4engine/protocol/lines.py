"""How a line of the protocol is read, by the engine and by its clients alike.

A line is at most :data:`MAX_LINE_BYTES` bytes, its newline not counted.  A
longer one is dropped unread, so that whatever the other side writes (a line
of a gigabyte, one that never ends) costs the reader bounded memory."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

MAX_LINE_BYTES = 1 << 16


def bounded_lines(stream: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[bytes | None]:
    """The lines of ``stream`` as they come (the last may lack its newline), and
    None in place of each line over ``limit`` bytes.  That None comes as soon as
    the line is seen to be too long, since it may never end; the rest of it is
    then read and dropped ``limit`` bytes at a time."""
    while raw := stream.readline(limit + 1):
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield raw
            continue
        yield None
        while raw and not raw.endswith(b"\n"):
            raw = stream.readline(limit)


def is_command(line: str, name: str) -> bool:
    """Whether ``line`` is the command ``name``, with whatever words follow (those a
    command does not take are its handler's to refuse or ignore)."""
    return line.split()[:1] == [name]
