"""A client for one engine process that speaks our UCI-style protocol.

The referee (``c4engine match``), the tests and later tools drive engines through
this class.  An engine is another program and may hang, crash or babble, so every
read has a deadline: a reader thread moves the engine's output lines into a queue,
stamped with the time they arrived, and the client waits on the queue.  The stamp
(not the moment the caller gets round to reading) is what a move's time is
measured against, so a busy referee does not make an engine look slow.
"""

from __future__ import annotations

import os
import queue
import shlex
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field, fields, replace
from typing import IO
from collections.abc import Callable, Iterator, Sequence

HANDSHAKE_TIMEOUT = 35.0  # what cutechess allows for `uciok`
READY_TIMEOUT = 15.0  # ... and for `readyok`
STDERR_LINES_KEPT = 20


class EngineError(Exception):
    """The engine did not do what the protocol asks; the message names the engine."""


class EngineTimeout(EngineError):
    """The engine did not answer in time (it may still be running)."""


class EngineDied(EngineError):
    """The engine's process ended or closed its output."""


@dataclass(frozen=True)
class Score:
    """A score as the engine sends it: ``cp`` centipawn-like units or ``mate`` in N moves."""

    kind: str
    value: int


@dataclass(frozen=True)
class GoLimits:
    """What a ``go`` command asks for; fields left None are not sent."""

    wtime: int | None = None
    btime: int | None = None
    winc: int | None = None
    binc: int | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None

    def go_command(self) -> str:
        words = ["go"]
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                words += [f.name, str(value)]
        return " ".join(words)


@dataclass(frozen=True)
class SearchInfo:
    """What ``info`` lines said about a search; fields never sent stay None."""

    depth: int | None = None
    score: Score | None = None
    nodes: int | None = None
    time_ms: int | None = None
    pv: tuple[str, ...] = ()

    def merged(self, newer: SearchInfo) -> SearchInfo:
        """This info updated by the fields a later line carries (a last line often
        reports only nodes and time, which must not erase the score)."""
        changes = {f.name: getattr(newer, f.name) for f in fields(newer)
                   if getattr(newer, f.name) not in (None, ())}
        return replace(self, **changes)


@dataclass(frozen=True)
class SearchResult:
    """The answer to ``go``: the move, what the engine said on the way, and the
    seconds from sending ``go`` to receiving ``bestmove``."""

    bestmove: str
    info: SearchInfo = field(default_factory=SearchInfo)
    elapsed: float = 0.0


_INT_FIELDS = {"depth": "depth", "nodes": "nodes", "time": "time_ms"}
_IGNORED_WITH_VALUE = {"seldepth", "nps", "multipv", "hashfull", "tbhits", "sbhits",
                       "cpuload", "currmove", "currmovenumber"}


def parse_info(line: str) -> SearchInfo:
    """The fields of one ``info`` line; raises ValueError when a number is malformed.

    ``info string`` carries free text and yields an empty SearchInfo."""
    tokens = line.split()[1:]
    found: dict[str, object] = {}
    i = 0
    while i < len(tokens):
        key = tokens[i]
        if key == "string":
            break
        if key == "pv":
            found["pv"] = tuple(tokens[i + 1:])
            break
        if key == "score":
            if i + 2 >= len(tokens) or tokens[i + 1] not in ("cp", "mate"):
                raise ValueError(f"malformed score in {line!r}")
            found["score"] = Score(tokens[i + 1], int(tokens[i + 2]))
            i += 3
        elif key in _INT_FIELDS:
            found[_INT_FIELDS[key]] = int(tokens[i + 1]) if i + 1 < len(tokens) else None
            i += 2
        else:
            i += 2 if key in _IGNORED_WITH_VALUE else 1
    return SearchInfo(**found)  # type: ignore[arg-type]


def _pump(stream: IO[str], sink: Callable[[str | None], None]) -> None:
    """Feed each line of ``stream`` to ``sink``, then None at end of file."""
    with stream:
        for line in stream:
            sink(line.rstrip("\r\n"))
    sink(None)


class EngineClient:
    """One engine process: start it, talk to it with deadlines, end it.

    Not thread-safe: one thread drives a client (the reader threads only fill
    the queue).  ``log``, if given, receives every line sent (``>name: ...``)
    and received (``<name: ...``); it is called from the reader thread too."""

    def __init__(self, command: str, name: str | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as err:
            raise EngineError(f"cannot parse engine command {command!r}: {err}") from None
        if not self.argv:
            raise EngineError("empty engine command")
        self.command = command
        self.name = name or os.path.basename(self.argv[0])
        self.id_name: str | None = None
        self.options: dict[str, str] = {}
        self._log = log
        self._process: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[tuple[float, str | None]] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
        self._eof = False
        self._stderr_reader: threading.Thread | None = None

    # -- life cycle -------------------------------------------------------

    def start(self, timeout: float = HANDSHAKE_TIMEOUT) -> None:
        """Start the process and complete the ``uci`` / ``uciok`` handshake.

        Calling it again restarts the engine: the old process is killed first."""
        self.kill()
        try:
            self._process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                bufsize=1)
        except OSError as err:
            raise EngineError(f"cannot start {self.command!r}: {err.strerror or err}") from None
        # Fresh containers per process: the old process' reader threads keep the
        # old ones, so its last lines cannot leak into the new session.
        lines: queue.Queue[tuple[float, str | None]] = queue.Queue()
        stderr: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
        self._lines, self._stderr, self._eof, self.options = lines, stderr, False, {}
        out, errors = self._process.stdout, self._process.stderr
        assert out is not None and errors is not None  # both were asked for as pipes
        self._spawn_reader(out, lambda line: self._on_stdout(lines, line))
        self._stderr_reader = self._spawn_reader(errors,
                                                 lambda line: self._on_stderr(stderr, line))
        self.send("uci")
        for _, line in self._read_until("uciok", timeout):
            self._learn(line)

    @property
    def alive(self) -> bool:
        """Whether the process runs and its output is still open."""
        return self._process is not None and self._process.poll() is None and not self._eof

    def quit(self, timeout: float = 2.0) -> None:
        """Ask the engine to quit; kill it if it has not gone after ``timeout`` seconds."""
        if self._process is None:
            return
        if self._process.poll() is None:
            try:
                self.send("quit")
                self._process.wait(timeout)
            except (EngineError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self) -> None:
        """End the process at once (it is ours: started by :meth:`start`)."""
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        if self._process.stdin:
            try:
                self._process.stdin.close()
            except OSError:
                pass

    # -- commands ---------------------------------------------------------

    def send(self, line: str) -> None:
        """Write one command line; a closed pipe means the engine died."""
        if self._process is None or self._process.stdin is None:
            raise EngineError(f"{self.name}: not started")
        if self._log:
            self._log(f">{self.name}: {line}")
        try:
            self._process.stdin.write(line + "\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._death() from None

    def set_option(self, name: str, value: str) -> None:
        self.send(f"setoption name {name} value {value}")

    def supports_variant(self, variant: str) -> bool:
        """Whether the engine lists ``variant`` among its ``UCI_Variant`` values."""
        words = self.options.get("UCI_Variant", "").split()
        return any(a == "var" and b == variant for a, b in zip(words, words[1:]))

    def is_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """``isready`` and wait for ``readyok``; anything else on the way (a late
        ``bestmove`` from an abandoned search) is dropped, which resynchronizes."""
        self.send("isready")
        for _ in self._read_until("readyok", timeout):
            pass

    def new_game(self) -> None:
        self.send("ucinewgame")

    def position(self, moves: Sequence[str] = (), fen: str | None = None) -> None:
        """``position startpos|fen ... [moves ...]``."""
        line = f"position fen {fen}" if fen else "position startpos"
        if moves:
            line += " moves " + " ".join(moves)
        self.send(line)

    def go(self, limits: GoLimits, timeout: float | None = None) -> SearchResult:
        """Search and wait for ``bestmove``; EngineTimeout after ``timeout`` seconds.

        After a timeout the engine may still be searching: send :meth:`stop` and
        :meth:`is_ready` before using it again.  A ``bestmove`` without a move gives
        an empty ``bestmove``, which the caller judges like any other illegal move."""
        sent = time.monotonic()  # the clock runs from sending, as in cutechess
        self.send(limits.go_command())
        *before, (arrived, last) = self._read_until("bestmove", timeout)
        info = SearchInfo()
        for _, line in before:
            if line.split()[:1] == ["info"]:
                try:
                    info = info.merged(parse_info(line))
                except ValueError:
                    pass  # one garbled info line does not void the move
        words = last.split()
        return SearchResult(words[1] if len(words) > 1 else "", info, arrived - sent)

    def stop(self) -> None:
        self.send("stop")

    # -- reading ----------------------------------------------------------

    def read_line(self, timeout: float | None = None) -> str:
        """The next output line; EngineTimeout or EngineDied when none comes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        return self._next(deadline, "output", timeout)[1]

    def _read_until(self, word: str, timeout: float | None) -> Iterator[tuple[float, str]]:
        """Stamped lines up to and including the first that starts with ``word``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            stamp, line = self._next(deadline, word, timeout)
            yield stamp, line
            if line.split()[:1] == [word]:
                return

    def _next(self, deadline: float | None, waiting_for: str,
              timeout: float | None) -> tuple[float, str]:
        if self._eof:
            raise self._death()
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            stamp, line = self._lines.get(timeout=wait)
        except queue.Empty:
            raise EngineTimeout(f"{self.name}: no {waiting_for} within {timeout:g} s") from None
        if line is None:
            self._eof = True
            raise self._death()
        return stamp, line

    def _learn(self, line: str) -> None:
        """Remember the engine's name and options from its ``uci`` reply."""
        words = line.split()
        if words[:2] == ["id", "name"]:
            self.id_name = " ".join(words[2:])
        elif words[:2] == ["option", "name"] and "type" in words:
            end = words.index("type")
            self.options[" ".join(words[2:end])] = " ".join(words[end:])

    def _death(self) -> EngineDied:
        """An EngineDied that says how the process ended and what it last wrote to stderr."""
        code = None
        if self._process is not None:
            try:
                code = self._process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        if code is not None and self._stderr_reader is not None:
            self._stderr_reader.join(timeout=1.0)  # let the last words reach the deque
        how = "closed its output" if code is None else f"exited with code {code}"
        tail = " | ".join(self._stderr)
        return EngineDied(f"{self.name} {how}" + (f" (stderr: {tail})" if tail else ""))

    def _spawn_reader(self, stream: IO[str],
                      sink: Callable[[str | None], None]) -> threading.Thread:
        thread = threading.Thread(target=_pump, args=(stream, sink), daemon=True,
                                  name=f"{self.name}-reader")
        thread.start()
        return thread

    def _on_stdout(self, lines: queue.Queue[tuple[float, str | None]], line: str | None) -> None:
        if line is not None and self._log:
            self._log(f"<{self.name}: {line}")
        lines.put((time.monotonic(), line))

    @staticmethod
    def _on_stderr(stderr: deque[str], line: str | None) -> None:
        if line is not None:
            stderr.append(line)
