"""A real ``c4engine gui`` process for the page's tests (browser and WebSocket)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path


class GuiServer:
    """``c4engine gui --no-browser`` as a person starts it, on a free port, with the
    given options."""

    def __init__(self, *options: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "c4engine", "gui", "--no-browser", *options],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", first)
        assert found, f"no URL in {first!r}"
        self.url = found.group(0)

    def engines(self) -> list[int]:
        """Process ids of the engines the server started: its living children."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
            except (OSError, IndexError):
                continue  # the process ended while we looked
            if int(parent) == self.process.pid and state != "Z":
                found.append(int(stat.parent.name))
        return found

    def interrupt(self) -> int:
        """Ctrl-C, as a person stops it; the exit status."""
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=15)

    def close(self) -> None:
        if self.process.poll() is None:
            self.interrupt()
