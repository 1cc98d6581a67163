"""The engine process's stdout, owned by one writer thread.

Kept apart from the commands because every thread of the process (commands,
searches, the warm-up) writes through it: whichever thread writes, a reader
that stops reading blocks none of them, and at exit the process waits for the
lines to be written, but not for a reader that takes none.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import IO, Callable

from .lines import MAX_LINE_BYTES

CUT_MARK = "..."  # ends a line cut to the limit
STALLED_OUTPUT_S = 2.0  # at exit, a reader that takes no line for this long is not waited for
CONTROL_ESCAPES = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}


def within_line_limit(line: str) -> str:
    """``line`` cut to the protocol's :data:`MAX_LINE_BYTES` in UTF-8, ending in ``...``
    when cut: an error that quotes a long input line must not itself become a line
    that clients drop unread.  What the engine writes on purpose (the ``uci``
    reply's options included) is made to fit; this is the rule for the rest."""
    if len(line) <= MAX_LINE_BYTES // 4:  # at most 4 bytes a character: fits
        return line
    raw = line.encode("utf-8", "backslashreplace")
    if len(raw) <= MAX_LINE_BYTES:
        return line
    return raw[:MAX_LINE_BYTES - len(CUT_MARK)].decode("utf-8", "ignore") + CUT_MARK


def printable(line: str) -> str:
    """``line`` with its control characters (C0, DEL, C1) as ``\\xNN``: an error quoting
    its input must not carry a NUL (the end of a line to a C reader), a terminal's
    escape sequence or a character that some readers take for a line break."""
    return line.translate(CONTROL_ESCAPES)


class Output:
    """stdout, one flushed line at a time, written by a thread of its own.

    Every thread hands its lines over without waiting, so a reader that stops
    reading (a full pipe) cannot block the commands or the search; the lines
    keep their order.  When the reader is gone (a broken pipe), ``on_gone`` is
    called: the process has nobody left to answer."""

    def __init__(self, stream: IO[str], on_gone: Callable[[], None]) -> None:
        self._stream = stream
        self._on_gone = on_gone
        self._pending: deque[str] = deque()
        self._changed = threading.Condition()
        self._last_write = time.monotonic()
        threading.Thread(target=self._write_all, name="output", daemon=True).start()

    def __call__(self, line: str) -> None:
        line = within_line_limit(printable(line))
        with self._changed:
            if not self._pending:  # the writer was idle: a stall is timed from now
                self._last_write = time.monotonic()
            self._pending.append(line)
            self._changed.notify_all()

    def error(self, message: str) -> None:
        self(f"info string error {message}")

    def _write_all(self) -> None:
        while True:
            with self._changed:
                while not self._pending:
                    self._changed.wait()
                line = self._pending[0]
            try:
                self._stream.write(line + "\n")
                self._stream.flush()
            except (BrokenPipeError, ConnectionResetError):
                self._on_gone()
                return
            with self._changed:
                self._pending.popleft()
                self._last_write = time.monotonic()
                self._changed.notify_all()

    def drain(self) -> None:
        """Wait until every line is written, but not for a reader that took none for
        :data:`STALLED_OUTPUT_S` (it is not reading)."""
        with self._changed:
            while self._pending:
                stalled = time.monotonic() - self._last_write
                if stalled >= STALLED_OUTPUT_S:
                    return
                self._changed.wait(STALLED_OUTPUT_S - stalled)
