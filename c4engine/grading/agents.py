"""The agents ``c4engine grade`` asks for moves: a Python function in a child process,
an engine speaking the protocol, or a seeded random mover.

Each answers :meth:`Agent.move` with a 0-based column, or raises
:class:`AgentFailure` saying what went wrong in that position (it raised, it
hung past its time, it died, it gave a column that is no legal move or no whole
number); the grader counts the position as a failure and goes on, the agent
started again where it died or hung.
"""

from __future__ import annotations

import json
import os
import random
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Protocol

from ..engine.client import EngineClient, is_c4engine
from ..engine.info import engine_move
from ..engine.limits import HANDSHAKE_TIMEOUT, PREPARE_TIMEOUT, Limit
from ..engine.process import EngineError, EngineTimeout
from ..engine.simple import SimpleEngine
from ..geometry import Geometry
from ..position import Position
from ..rules.board import Board, RulesError
from ..rules.variants import built_in

DEFAULT_MOVE_SECONDS = 10.0
LOAD_SECONDS = 120.0  # importing an agent (Kaggle's environments take seconds)
SHAPES = ("kaggle", "position", "pettingzoo", "openspiel")


class AgentFailure(Exception):
    """An agent gave no legal move in a position; the message says why."""


class AgentUnusable(Exception):
    """An agent that cannot be used at all (it cannot be imported or started)."""


class Agent(Protocol):
    name: str

    def move(self, board: Board) -> int: ...

    def close(self) -> None: ...


def legal(board: Board, col: int, said: object) -> int:
    """``col`` if it is a legal move of ``board``, else AgentFailure quoting ``said``."""
    if not board.can_play(col):
        raise AgentFailure(f"illegal move {said!r}: column {col + 1} is "
                           f"{'full' if 0 <= col < board.geometry.width else 'off the board'}")
    return col


class RandomAgent:
    """A uniformly random legal column, drawn from ``seed`` and the position alone, so
    a position gets the same move whatever the order of the set."""

    def __init__(self, seed: int) -> None:
        self.seed, self.name = seed, f"random (seed {seed})"

    def move(self, board: Board) -> int:
        moves = "".join(str(col + 1) for col in board.history)
        return random.Random(f"{self.seed}:{board.geometry.name}:{moves}").choice(board.legal_moves())

    def close(self) -> None:
        """Nothing to end."""


class PythonAgent:
    """A Python function run in a child process (:mod:`.child`), ``move_seconds`` a move."""

    def __init__(self, spec: str, shape: str = "kaggle", move_seconds: float = DEFAULT_MOVE_SECONDS) -> None:
        self.spec, self.shape, self.move_seconds = spec, shape, move_seconds
        self.name = spec
        self.process: subprocess.Popen[bytes] | None = None
        self.buffer = b""
        self.log: IO[bytes] = tempfile.TemporaryFile()

    def start(self) -> None:
        """Start the child and wait for the agent to load; AgentUnusable if it cannot."""
        root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen([sys.executable, "-m", "c4engine.grading.child", self.spec, self.shape],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                        env=env, start_new_session=True)
        self.buffer = b""
        try:
            reply = self._reply(LOAD_SECONDS)
        except AgentFailure as err:
            self.close()
            raise AgentUnusable(f"{self.spec}: {err}") from None
        if "ready" not in reply:
            self.close()
            raise AgentUnusable(str(reply.get("error", reply)))

    def move(self, board: Board) -> int:
        if self.process is None or self.process.poll() is not None:
            self.start()
        assert self.process is not None and self.process.stdin is not None
        g = board.geometry
        request = {"moves": list(board.history), "width": g.width, "height": g.height, "connect": g.connect}
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
            reply = self._reply(self.move_seconds)
        except (AgentFailure, OSError) as err:
            self.close()
            raise AgentFailure(str(err)) from None
        if "error" in reply:
            raise AgentFailure(str(reply["error"]))
        return legal(board, int(reply["move"]), reply["move"] + (1 if self.shape == "position" else 0))

    def _reply(self, seconds: float) -> dict[str, object]:
        """The child's next line, within ``seconds``; AgentFailure if it hangs or dies."""
        assert self.process is not None and self.process.stdout is not None
        deadline = time.monotonic() + seconds
        stream = self.process.stdout
        with selectors.DefaultSelector() as selector:
            selector.register(stream, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise AgentFailure(f"no move within {seconds:g} s (the agent was ended)")
                chunk = os.read(stream.fileno(), 65536)
                if not chunk:
                    raise AgentFailure(f"the agent's process died ({self._death()})")
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        reply: dict[str, object] = json.loads(line)
        return reply

    def _death(self) -> str:
        assert self.process is not None
        code = self.process.wait()
        self.log.seek(0)
        last = [line for line in self.log.read().decode(errors="replace").splitlines() if line.strip()][-1:]
        how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        return how + (f": {last[0][:160]}" if last else "")

    def close(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream:
                    stream.close()
            self.process = None


class EngineAgent:
    """An engine process asked for one move per position with a fresh table
    (``ucinewgame``), as ``c4engine strength`` asks: the positions are unrelated."""

    def __init__(self, command: str, options: Sequence[tuple[str, str]], limit: Limit, geometry: Geometry) -> None:
        self.command, self.options, self.limit, self.geometry = command, list(options), limit, geometry
        self.engine: SimpleEngine | None = None
        self.name = command

    def start(self) -> None:
        client = EngineClient(self.command, name="agent")
        try:
            client.start()
            startup = PREPARE_TIMEOUT if is_c4engine(client.id_name) else HANDSHAKE_TIMEOUT
            client.setup(self.options, startup_timeout=startup, variant=built_in(self.geometry))
        except EngineError as err:
            client.kill()
            raise AgentUnusable(f"{self.command}: {err}") from None
        self.engine = SimpleEngine(client)
        self.name = client.id_name or self.command

    def move(self, board: Board) -> int:
        if self.engine is None or not self.engine.client.alive:
            self.start()
        assert self.engine is not None
        client = self.engine.client
        try:
            client.new_game()
            client.is_ready()
            g = board.geometry
            position = Position.from_moves([col + 1 for col in board.history], g.width, g.height, g.connect)
            searched, result = self.engine.search(position, self.limit)
        except EngineTimeout as err:
            raise AgentFailure(f"no move in time: {err}") from None
        except EngineError as err:
            client.kill()
            raise AgentFailure(f"the engine failed: {err}") from None
        try:
            return engine_move(result.bestmove, searched, client.drops)
        except RulesError as err:
            raise AgentFailure(f"illegal move {result.bestmove!r}: {err}") from None

    def close(self) -> None:
        if self.engine is not None:
            self.engine.quit()
            self.engine = None
