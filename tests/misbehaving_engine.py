#!/usr/bin/env python3
"""An engine that breaks the rules on purpose, to test the referee.

Usage: ``misbehaving_engine.py MODE`` where MODE is
``crash`` (dies on ``go``), ``illegal`` (drops a stone above the lowest empty
cell), ``stall`` (never answers ``go``), ``late`` (answers after its time is
up), ``silent`` (never finishes the ``uci`` handshake), ``chess`` (offers
variants, but not cfour) or ``digits`` (offers no variants: digit moves).  Otherwise it plays
like :mod:`simple_engine`.
"""

from __future__ import annotations

import sys
import time

from simple_engine import FILES, SimpleEngine

LATE_BY = 0.3  # seconds past the engine's own time


class MisbehavingEngine(SimpleEngine):
    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def on_uci(self, args: list[str]) -> None:
        if self.mode != "silent":
            super().on_uci(args)

    def variants(self) -> str:
        if self.mode == "chess":
            return "option name UCI_Variant type combo default chess var chess var shogi"
        return "" if self.mode == "digits" else super().variants()

    def on_go(self, args: list[str]) -> None:
        if self.mode == "crash":
            print("crashing on purpose", file=sys.stderr, flush=True)
            sys.exit(3)
        if self.mode == "stall":
            return
        if self.mode == "illegal":
            col = self.choose()
            self.reply(f"bestmove P@{FILES[col]}{self.heights[col] + 2}")
            return
        if self.mode == "late":
            time.sleep(self.time_budget(args) + LATE_BY)
        super().on_go(args)

    @staticmethod
    def time_budget(args: list[str]) -> float:
        """The most time ``go`` grants (movetime or either clock), in seconds."""
        values = [int(value) for key, value in zip(args, args[1:])
                  if key in ("movetime", "wtime", "btime")]
        return max(values, default=0) / 1000


if __name__ == "__main__":
    MisbehavingEngine(sys.argv[1]).run()
