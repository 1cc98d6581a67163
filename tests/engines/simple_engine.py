#!/usr/bin/env python3
"""A tiny engine for the referee's tests: it plays the first column that is not full
(or the last, with the argument ``last``).

It tracks column heights only and knows nothing of fours: the referee must end
the games.  Being free of c4engine's own code, it tests the referee against an
independent reading of the protocol, and it starts in a few milliseconds.
"""

from __future__ import annotations

import sys

FILES = "abcdefg"
WIDTH, HEIGHT = 7, 6


class SimpleEngine:
    """Answers uci/isready/setoption/position/go on stdin; subclasses change ``on_go``."""

    def __init__(self, pick_last: bool = False) -> None:
        self.name = "simple"
        self.heights = [0] * WIDTH
        self.drops = False
        self.pick_last = pick_last

    def run(self) -> None:
        for line in sys.stdin:
            self.received(line.rstrip("\n"))
            words = line.split()
            if words == ["quit"]:
                return
            handler = getattr(self, f"on_{words[0]}", None) if words else None
            if handler:
                handler(words[1:])

    def received(self, line: str) -> None:
        """Called with every command line as it comes (a hook for tests' engines)."""

    @staticmethod
    def reply(text: str) -> None:
        print(text, flush=True)

    def on_uci(self, _args: list[str]) -> None:
        self.reply(f"id name {self.name}")
        if self.variants():
            self.reply(self.variants())
        self.reply("uciok")

    def on_isready(self, _args: list[str]) -> None:
        self.reply("readyok")

    def on_setoption(self, args: list[str]) -> None:
        if args[:2] == ["name", "UCI_Variant"]:
            self.drops = args[3:] == ["cfour"]

    def variants(self) -> str:
        return "option name UCI_Variant type combo default cfour var cfour"

    def on_position(self, args: list[str]) -> None:
        self.heights = [0] * WIDTH
        moves = args[args.index("moves") + 1:] if "moves" in args else []
        for move in moves:
            col = int(move) - 1 if move.isdigit() else FILES.index(move[2])
            self.heights[col] += 1

    def choose(self) -> int:
        legal = [col for col in range(WIDTH) if self.heights[col] < HEIGHT]
        return legal[-1] if self.pick_last else legal[0]

    def notation(self, col: int) -> str:
        return f"P@{FILES[col]}{self.heights[col] + 1}" if self.drops else str(col + 1)

    def on_go(self, _args: list[str]) -> None:
        move = self.notation(self.choose())
        self.reply(f"info depth 1 score cp 0 nodes 1 time 0 pv {move}")
        self.reply(f"bestmove {move}")


if __name__ == "__main__":
    SimpleEngine(pick_last=sys.argv[1:] == ["last"]).run()
