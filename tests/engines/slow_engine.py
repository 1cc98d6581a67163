#!/usr/bin/env python3
"""The simple engine, thinking ARG seconds (default 0.02) over every move: games that
last long enough for a test to interrupt one, without a real search."""

from __future__ import annotations

import sys
import time

from simple_engine import SimpleEngine


class SlowEngine(SimpleEngine):
    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def on_go(self, args: list[str]) -> None:
        time.sleep(self.seconds)
        super().on_go(args)


if __name__ == "__main__":
    SlowEngine(float(sys.argv[1]) if len(sys.argv) > 1 else 0.02).run()
