"""The engine process's command thread: every command but ``quit``, carried out in order.

Kept apart from the thread that reads stdin, so that a slow command (``bench``,
a new table, a board compiled on its first use) never keeps the process from
hearing ``quit`` or the end of its input; and one thread, so that ``isready``
after a slow command is answered once that command is done, as UCI intends.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass

from .lines import is_command
from .server import Server


@dataclass(frozen=True)
class Refusal:
    """A line that could not be read (not UTF-8, too long), with why: queued like a
    command so that its error follows the answers to the commands sent before it."""

    why: str


class CommandThread:
    """Carries out the commands in order, apart from the thread that reads them."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._lines: queue.Queue[tuple[str, float] | Refusal | None] = queue.Queue()
        self._stop_at_end = False
        self._gos_read = 0  # ``go`` lines queued (written by the reading thread only) ...
        self._gos_done = 0  # ... and those carried out (by the command thread only)
        self.thread = threading.Thread(target=self._run, name="commands", daemon=True)
        self.thread.start()

    def put(self, line: str) -> None:
        """Queue a line just read, with the time it was read."""
        self._gos_read += is_command(line, "go")
        self._lines.put((line, time.perf_counter()))

    def refuse(self, refusal: Refusal) -> None:
        """Queue the error of a line that could not be read, to be written in its turn."""
        self._lines.put(refusal)

    def go_pending(self) -> bool:
        """Whether a ``go`` read is still to be answered: queued, or being carried out."""
        return self._gos_read > self._gos_done

    def finish(self, stop: bool) -> None:
        """No more commands: the last search is stopped (``quit``) or, at the end of
        input, treated as :meth:`Server.end_of_input` says."""
        self._stop_at_end = stop
        self._lines.put(None)

    def _run(self) -> None:
        while (item := self._lines.get()) is not None:
            if isinstance(item, Refusal):
                self.server.out.error(item.why)
                continue
            self.server.handle(*item)
            self._gos_done += is_command(item[0], "go")
        try:
            if self._stop_at_end:
                self.server.finish_search(stop=True)
            else:
                self.server.end_of_input()
        except Exception as exc:  # noqa: BLE001 - the process must still exit cleanly
            self.server.out.error(f"internal error at exit: {exc!r}")
