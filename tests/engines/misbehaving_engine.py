#!/usr/bin/env python3
"""An engine that breaks the rules on purpose, to test the referee and the client.

Usage: ``misbehaving_engine.py MODE [ARG]``.  Otherwise it plays like
:mod:`simple_engine` (the first column that is not full).  The modes:

- ``crash``: dies on ``go``, with a last word on stderr;
- ``illegal``: drops a stone above the lowest empty cell;
- ``stall``: never answers ``go``;
- ``deaf``: on ``go``, stops reading its input (no ``bestmove``, no ``readyok``);
- ``late``: answers after its time is up;
- ``silent``: never finishes the ``uci`` handshake;
- ``chess``: offers variants, but not cfour;
- ``digits``: offers no variants, so it is spoken to in digits;
- ``double``: prints every ``bestmove`` twice;
- ``early``: prints a ``bestmove`` that answers nothing before every ``readyok``;
- ``huge``: its last ``info`` carries a score of 400 nines, a depth beyond 64 bits;
- ``garbage``: sends malformed ``info`` lines around a good one;
- ``braces``: a name and engine text full of PGN's comment braces and quotes,
  and ``bestmove }1-0{`` (an illegal move);
- ``orphan``: on ``go`` it starts a child that keeps its stdout open, writes the
  child's pid to the file ARG, and exits;
- ``parent``: on ``go`` it starts a child (once) that would outlive it, writes
  the child's pid to the file ARG, and plays on;
- ``escape``: like ``parent``, but the child runs in a session of its own (out
  of reach of the engine's process group) and holds the engine's stderr;
- ``slowready``: answers ``isready`` after ARG seconds;
- ``compiling``: like ``slowready``, but calls itself c4engine, as c4engine
  does while it compiles a new board's kernel before its first ``readyok``;
- ``wrongnotation``: answers in digits after ``UCI_Variant cfour``, in drops
  without it;
- ``multipv``: with ``MultiPV`` N, sends N lines per depth, interleaved, each
  with its own score and PV (``multipv k`` scores ``-10 * k``, its PV starts in
  the k-th free column), then ``bestmove`` of line 1;
- ``babble``: on ``go``, writes ``info`` lines without end and reads nothing more;
- ``mate``: like ``multipv``, but every line scores ``mate ARG`` (a mate no game
  may have, such as 99999 or 0).
"""

from __future__ import annotations

import subprocess
import sys
import time

from simple_engine import FILES, HEIGHT, WIDTH, SimpleEngine

LATE_BY = 0.3  # seconds past the engine's own time
MIB = 1 << 20
HOSTILE = '}{ "1-0" \\ {'


class MisbehavingEngine(SimpleEngine):
    def __init__(self, mode: str, arg: str | None) -> None:
        super().__init__()
        self.mode = mode
        self.arg = arg
        self.multipv = 1
        self.child: subprocess.Popen[bytes] | None = None

    def on_uci(self, args: list[str]) -> None:
        if self.mode == "silent":
            return
        if self.mode == "braces":
            self.name = f"brace{HOSTILE}"
        if self.mode == "compiling":
            self.name = "c4engine stand-in"
        super().on_uci(args)

    def on_isready(self, args: list[str]) -> None:
        if self.mode == "early":
            self.reply(f"bestmove {self.notation(self.choose())}")
        if self.mode in ("slowready", "compiling"):
            time.sleep(float(self.arg or 0))
        if self.mode == "compiling":
            self.arg = None  # compiled: its later answers come at once
        super().on_isready(args)

    def on_setoption(self, args: list[str]) -> None:
        super().on_setoption(args)
        if args[:2] == ["name", "MultiPV"]:
            self.multipv = int(args[3])

    def variants(self) -> str:
        if self.mode == "chess":
            return "option name UCI_Variant type combo default chess var chess var shogi"
        return "" if self.mode == "digits" else super().variants()

    def notation(self, col: int) -> str:
        if self.mode == "wrongnotation":
            return str(col + 1) if self.drops else f"P@{FILES[col]}{self.heights[col] + 1}"
        return super().notation(col)

    def on_go(self, args: list[str]) -> None:
        special = getattr(self, f"go_{self.mode}", None)
        if special:
            special(args)
            return
        if self.mode == "late":
            time.sleep(self.time_budget(args) + LATE_BY)
        super().on_go(args)

    def go_crash(self, _args: list[str]) -> None:
        print("crashing on purpose", file=sys.stderr, flush=True)
        sys.exit(3)

    def go_stall(self, _args: list[str]) -> None:
        pass

    def go_deaf(self, _args: list[str]) -> None:
        time.sleep(600)  # until it is killed

    def go_illegal(self, _args: list[str]) -> None:
        col = self.choose()
        self.reply(f"bestmove P@{FILES[col]}{self.heights[col] + 2}")

    def go_double(self, args: list[str]) -> None:
        super().on_go(args)
        self.reply(f"bestmove {self.notation(self.choose())}")

    def go_huge(self, _args: list[str]) -> None:
        move = self.notation(self.choose())
        self.reply(f"info depth 3 score cp 25 nodes 10 pv {move}")
        self.reply(f"info depth {'9' * 25} score cp {'9' * 400} nodes 11 pv {move}")
        self.reply(f"bestmove {move}")

    def go_garbage(self, _args: list[str]) -> None:
        move = self.notation(self.choose())
        self.reply("info depth")
        self.reply("info depth 2 score cp")
        self.reply("info depth 2 score furlongs 3")
        self.reply(f"info depth 4 score mate 2 lowerbound nodes 40 time 7 pv {move} 9 x")
        self.reply("info depth +5 score cp 1_0")
        self.reply("info nodes ٣٣")
        self.reply(f"bestmove {move}")

    def go_braces(self, _args: list[str]) -> None:
        print(f"stderr {HOSTILE}", file=sys.stderr, flush=True)
        self.reply(f"info string {HOSTILE}")
        self.reply("bestmove }1-0{")

    def go_orphan(self, _args: list[str]) -> None:
        child = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
        with open(self.arg or "orphan.pid", "w", encoding="ascii") as out:
            out.write(str(child.pid))
        sys.stdout.flush()
        sys.exit(3)

    def go_parent(self, args: list[str]) -> None:
        self.start_child(args, own_session=False)

    def go_escape(self, args: list[str]) -> None:
        self.start_child(args, own_session=True)

    def start_child(self, args: list[str], own_session: bool) -> None:
        if self.child is None:
            self.child = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL,
                                          start_new_session=own_session)
            with open(self.arg or "parent.pid", "w", encoding="ascii") as out:
                out.write(str(self.child.pid))
        super().on_go(args)

    def go_multipv(self, _args: list[str]) -> None:
        free = [col for col in range(WIDTH) if self.heights[col] < HEIGHT]
        lines = min(self.multipv, len(free))
        for depth in (1, 2):
            for k in range(1, lines + 1):
                first = self.notation(free[k - 1])
                self.reply(f"info depth {depth} multipv {k} score cp {-10 * k} "
                           f"nodes {depth * 10 + k} pv {first}")
        self.reply("info nodes 99 time 12")
        self.reply(f"bestmove {self.notation(free[0])}")

    def go_babble(self, _args: list[str]) -> None:
        line = "info depth 1 score cp 0 nodes 1 pv " + self.notation(self.choose()) + "\n"
        while True:
            sys.stdout.write(line * 1000)

    def go_mate(self, _args: list[str]) -> None:
        free = [col for col in range(WIDTH) if self.heights[col] < HEIGHT]
        for k in range(1, min(self.multipv, len(free)) + 1):
            self.reply(f"info depth 40 multipv {k} score mate {self.arg} nodes 5 pv {self.notation(free[k - 1])}")
        self.reply(f"bestmove {self.notation(free[0])}")

    def go_longline(self, args: list[str]) -> None:
        self.mode = "played"  # once only: later moves are played as usual
        for _ in range(int(self.arg or 1)):
            sys.stdout.write("x" * MIB)
        sys.stdout.write("\n")
        super().on_go(args)

    def go_endless(self, _args: list[str]) -> None:
        while True:
            sys.stdout.write("x" * MIB)

    def go_flood(self, args: list[str]) -> None:
        line = "info depth 1 score cp 0 nodes 1 pv " + self.notation(self.choose()) + "\n"
        sys.stdout.write(line * (int(float(self.arg or 1) * MIB) // len(line)))
        super().on_go(args)

    @staticmethod
    def time_budget(args: list[str]) -> float:
        """The most time ``go`` grants (movetime or either clock), in seconds."""
        values = [int(value) for key, value in zip(args, args[1:])
                  if key in ("movetime", "wtime", "btime")]
        return max(values, default=0) / 1000


if __name__ == "__main__":
    MisbehavingEngine(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None).run()
