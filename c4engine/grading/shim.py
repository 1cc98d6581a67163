"""A Python agent as a protocol engine, so that the referee can play it: the ladder's
way to match a Kaggle agent, an OpenSpiel bot or a PettingZoo policy against
c4engine's levels.

``python -m c4engine.grading.shim SHAPE SPEC`` answers the part of the protocol a
match uses on 7x6 (``uci``, ``isready``, ``setoption``, ``ucinewgame``,
``position startpos [moves ...]`` in column digits, ``go``, ``quit``): it offers
no option, so the referee sends digits, and each ``go`` is answered with the
agent's column (:func:`c4engine.grading.child.answer`), at once.  An agent that
fails in a position answers ``info string error ...`` and ``bestmove 0000``,
which loses that game, as any illegal move does; one that crashes the process
loses it too ("abandoned"), and the referee starts the shim again.
"""

from __future__ import annotations

import sys
from typing import TextIO

from ..geometry import STANDARD
from .child import agent_of, answer, seed_global_randomness


def serve(shape: str, spec: str, commands: TextIO, replies: TextIO) -> None:
    agent = agent_of(spec, shape)
    moves: list[int] = []

    def say(text: str) -> None:
        replies.write(text + "\n")
        replies.flush()

    for line in commands:
        words = line.split()
        if not words:
            continue
        if words[0] == "uci":
            say(f"id name {spec}")
            say("uciok")
        elif words[0] == "isready":
            say("readyok")
        elif words[0] == "position":
            moves = [int(d) - 1 for d in words[words.index("moves") + 1:]] if "moves" in words else []
        elif words[0] == "go":
            request = {"moves": moves, "width": STANDARD.width, "height": STANDARD.height,
                       "connect": STANDARD.connect}
            reply = answer(agent, shape, request)
            if "error" in reply:
                say(f"info string error {reply['error']}")
            say(f"bestmove {reply['move'] + 1}" if "move" in reply else "bestmove 0000")
        elif words[0] == "quit":
            return


def main() -> None:
    seed_global_randomness()
    replies = sys.stdout
    sys.stdout = sys.stderr  # the agent's prints go to standard error
    serve(sys.argv[1], sys.argv[2], sys.stdin, replies)


if __name__ == "__main__":
    main()
