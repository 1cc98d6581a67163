#!/usr/bin/env python3
"""The simple engine, writing every command it receives to the file named by its
argument (one line each, as it came): for tests of what a client sends.

Usage: ``recording_engine.py FILE``.
"""

from __future__ import annotations

import sys

from simple_engine import SimpleEngine


class RecordingEngine(SimpleEngine):
    def __init__(self, path: str) -> None:
        super().__init__()
        self.record = open(path, "a", encoding="utf-8", buffering=1)

    def received(self, line: str) -> None:
        self.record.write(line + "\n")


if __name__ == "__main__":
    RecordingEngine(sys.argv[1]).run()
