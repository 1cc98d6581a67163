"""One engine process spoken to over the protocol: the handshake, options, positions, searches, timeouts."""

from __future__ import annotations

import os
import queue
import shlex
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import IO

from ..geometry import STANDARD
from ..protocol.go_params import GoParams
from ..protocol.lines import MAX_LINE_BYTES
from ..rules.board import Board
from ..rules.variants import Variant, built_in
from .info import InfoDict, add_info
from .limits import HANDSHAKE_TIMEOUT, READY_TIMEOUT, SearchResult, hash_ready_seconds
from .process import (
    STDERR_LINES_KEPT,
    EngineDied,
    EngineError,
    EngineTimeout,
    Output,
    ProcessGroup,
    _OutputEnd,
    _pump,
    engine_argv,
    how_it_ended,
    spawn_arguments,
    start_failure,
)
from .uci import learn_uci_line, offers_variant, position_command, takes_board_variant

QUIT_TIMEOUT = 2.0


EXIT_GRACE = 0.2  # after the process ended, the last lines may still be in the pipe


POLL_SECONDS = 0.05  # how often a wait checks that the process still runs


QUEUED_LINES = 256  # output lines read ahead of the caller: 16 MiB at most
ERROR_PREFIX = "info string error "  # how c4engine refuses a command (protocol.md, Errors)


def is_c4engine(id_name: str | None) -> bool:
    """Whether an engine's ``id name`` is c4engine's."""
    return id_name is not None and id_name.split()[:1] == ["c4engine"]


class EngineClient:
    """One engine process: start it, talk to it with deadlines, end it.

    ``log``, if given, receives every line sent (``>name: ...``) and received
    (``<name: ...``); it is called from the reader thread too.  ``dropped_lines``
    counts the output lines over :data:`MAX_LINE_BYTES` that were dropped."""

    def __init__(self, command: str | Sequence[str], name: str | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.argv = engine_argv(command)
        self.command = command if isinstance(command, str) else shlex.join(self.argv)
        self.name = name or os.path.basename(self.argv[0])
        self.id_name: str | None = None
        self.options: dict[str, str] = {}
        self.drops = False
        self.variant = built_in(STANDARD)
        self._searched: Board | None = None  # the position last sent, for reading its scores
        self.ready_timeout = READY_TIMEOUT
        self.stale_bestmoves = 0
        self.dropped_lines = 0
        self._log = log
        self._process: subprocess.Popen[str] | None = None
        self._group: ProcessGroup | None = None
        self._lines: queue.Queue[tuple[float, Output]] = queue.Queue(QUEUED_LINES)
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
        self._abandoned = threading.Event()  # set once the process' output is no longer read
        self._eof = False
        self._read_failure = ""
        self._stderr_reader: threading.Thread | None = None

    # -- life cycle -------------------------------------------------------

    def start(self, timeout: float = HANDSHAKE_TIMEOUT) -> None:
        """Start the process in its own process group and complete the ``uci`` /
        ``uciok`` handshake.  Calling it again restarts the engine."""
        self.kill()
        try:
            self._process = subprocess.Popen(
                self.argv, **spawn_arguments(), text=True, encoding="utf-8",
                errors="replace", bufsize=1)
        except OSError as err:
            raise EngineError(start_failure(self.command, err)) from None
        self._group = ProcessGroup(self._process.pid)
        # Fresh containers per process: the old process' reader threads keep the
        # old ones, so its last lines cannot leak into the new session.
        lines: queue.Queue[tuple[float, Output]] = queue.Queue(QUEUED_LINES)
        stderr: deque[str] = deque(maxlen=STDERR_LINES_KEPT)
        abandoned = threading.Event()
        self._lines, self._stderr, self._abandoned = lines, stderr, abandoned
        self._eof, self._read_failure, self.options = False, "", {}
        out, errors = self._process.stdout, self._process.stderr
        assert out is not None and errors is not None  # both were asked for as pipes
        self._spawn_reader(out.buffer, lambda item: self._on_stdout(lines, abandoned, item))
        self._stderr_reader = self._spawn_reader(errors.buffer,
                                                 lambda item: self._on_stderr(stderr, item))
        self.send("uci")
        for _, line in self._read_until("uciok", timeout):
            self._learn(line)

    def setup(self, options: Sequence[tuple[str, str]] = (),
              ready_timeout: float = READY_TIMEOUT,
              startup_timeout: float = HANDSHAKE_TIMEOUT,
              variant: Variant | None = None, variants_path: str | None = None) -> None:
        """After :meth:`start`: choose the variant, set ``options``, wait for ``readyok``.

        This first ``readyok`` ends the engine's start-up, which may take
        ``startup_timeout`` (plus the time a large ``Hash`` needs, as below): an
        engine may compile or load its data before it answers, as c4engine's
        first start after an install compiles its numba kernel (10-25 s on a
        busy 2-core machine).  c4engine answers that ``readyok`` at once on a board
        new to it and compiles meanwhile: its start-up ends with a first, untimed
        search instead (:meth:`_wait_for_the_search`).

        An engine that offers ``cfour`` gets it and speaks drops; one without a
        ``UCI_Variant`` option gets our digit moves; one with variants but not
        ``cfour`` would play some other game with our moves (Debian's
        Fairy-Stockfish 11.1 does) and is refused, as cutechess does.  Every later
        ``readyok`` may take ``ready_timeout`` plus the time a large ``Hash``
        needs to be allocated or cleared.

        Another ``variant`` (another board) must be played in drops: the engine gets
        ``VariantPath`` first when ``variants_path`` is given and it has the option,
        then ``UCI_Variant``; EngineError when it cannot offer the variant."""
        if variant is not None and variant.geometry != STANDARD:
            self._choose_variant(variant, variants_path)
        else:
            self.variant, self.drops = built_in(STANDARD), self.supports_variant("cfour")
            if self.drops:
                self.set_option("UCI_Variant", "cfour")
            elif "UCI_Variant" in self.options:
                raise EngineError(f"{self.name}: its UCI_Variant option offers no cfour")
        for name, value in options:
            self.set_option(name, value)
        self.ready_timeout = ready_timeout + hash_ready_seconds(options)
        self.check_refusals(self.is_ready(startup_timeout + hash_ready_seconds(options)))
        if is_c4engine(self.id_name):
            self._wait_for_the_search(startup_timeout)

    def _wait_for_the_search(self, timeout: float) -> None:
        """c4engine answers its first ``readyok`` on a board new to its installation at
        once, while its search compiles in another process, and answers a timed
        ``go`` meanwhile without it (protocol.md, ``isready``); an untimed ``go``
        waits for the search, so one of depth 1 ends the start-up when every move
        of a game can be searched, as a match, a review or a grade needs."""
        self.position()
        self.go(GoParams(depth=1), timeout)

    def check_refusals(self, refusals: list[str]) -> None:
        """EngineError with the first of the ``info string error`` lines :meth:`is_ready`
        returned, if any: a refused option must not leave the engine at its default unsaid."""
        if refusals:
            raise EngineError(f"{self.name}: {refusals[0].removeprefix(ERROR_PREFIX)}")

    @property
    def alive(self) -> bool:
        """Whether the process runs and its output is still open."""
        return self._process is not None and self._process.poll() is None and not self._eof

    def quit(self, timeout: float = QUIT_TIMEOUT) -> None:
        """Ask the engine to quit; end its process group after ``timeout`` seconds."""
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
        """End the process and anything it started in its process group, at once."""
        self._abandoned.set()
        if self._process is None:
            return
        if self._group is not None:
            self._group.end()
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

    def _choose_variant(self, variant: Variant, variants_path: str | None) -> None:
        """``UCI_Variant`` for a game on another board: listed by the engine, defined in
        the variants file it was given, or a built-in board name of an engine that
        lists such names (c4engine takes any ``cfour-WxH``)."""
        loaded = variants_path is not None and "VariantPath" in self.options
        if loaded:
            self.set_option("VariantPath", str(variants_path))
        if not (takes_board_variant(self.options, variant.name) or loaded):
            raise EngineError(f"{self.name}: its UCI_Variant option offers no {variant.name} "
                              f"(give it a variants file that defines it: --variants)")
        self.set_option("UCI_Variant", variant.name)
        self.variant, self.drops = variant, True

    def supports_variant(self, variant: str) -> bool:
        """Whether the engine lists ``variant`` among its ``UCI_Variant`` values."""
        return offers_variant(self.options, variant)

    def is_ready(self, timeout: float | None = None) -> list[str]:
        """``isready`` and wait for ``readyok`` (``ready_timeout`` by default); the
        ``info string error`` lines on the way, which :meth:`setup` must not pass
        over (a refused option would leave the engine at its default unsaid).
        Anything else (a late ``bestmove`` from an abandoned search) is dropped,
        which resynchronizes."""
        self.send("isready")
        return [line for _, line in self._read_until("readyok", self.ready_timeout if timeout is None else timeout)
                if line.startswith(ERROR_PREFIX)]

    def new_game(self) -> None:
        self.send("ucinewgame")

    def position(self, moves: Sequence[int] = (), start_fen: str | None = None) -> Board:
        """``position startpos|fen <start_fen> [moves ...]`` with ``moves`` as columns
        1-7, written in the engine's notation; the position they reach.  RulesError
        (before anything is sent) when the moves or the FEN are not legal."""
        line, board = position_command(moves, start_fen, self.drops, self.variant.geometry)
        self.send(line)
        self._searched = board
        return board

    def go(self, params: GoParams, timeout: float | None = None) -> SearchResult:
        """Search and wait for ``bestmove``; EngineTimeout after ``timeout`` seconds.

        ``isready`` goes just before ``go``, without waiting for the answer: an
        engine reads its commands in order, so whatever it writes before that
        ``readyok`` was written before it read the ``go`` and cannot answer it (a
        second ``bestmove``, one sent before any ``go``).  Such a ``bestmove`` is
        discarded and counted in ``stale_bestmoves``.  The time runs from before
        the ``isready``, so it is never negative.  After a timeout the engine may
        still be searching: send :meth:`stop` and :meth:`is_ready` before using it
        again.  A ``bestmove`` without a move gives an empty ``bestmove``, which the
        caller judges like any other illegal move."""
        sent = time.monotonic()  # the clock runs from sending, as in cutechess
        deadline = None if timeout is None else sent + timeout
        self.send("isready")
        self.send(params.command())
        for _, line in self._read_until("readyok", timeout, deadline):
            if line.split()[0] == "bestmove":
                self._discard(line)
        lines: dict[int, InfoDict] = {}  # merged as they come: a flood costs no memory
        for arrived, line in self._read_until("bestmove", timeout, deadline):
            words = line.split()
            if words[0] == "bestmove":
                move = words[1] if len(words) > 1 else ""
                return SearchResult(move, tuple(lines[n] for n in sorted(lines)),
                                    arrived - sent)
            if words[0] == "info":
                add_info(lines, line, self._searched)
        raise AssertionError("_read_until ends with the word it waits for")

    def stop(self) -> None:
        self.send("stop")

    # -- reading ----------------------------------------------------------

    def read_line(self, timeout: float | None = None) -> str:
        """The next output line; EngineTimeout or EngineDied when none comes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        return self._next(deadline, "output", timeout)[1]

    def _read_until(self, word: str, timeout: float | None,
                    deadline: float | None = None) -> Iterator[tuple[float, str]]:
        """Stamped non-empty lines up to and including the first that starts with
        ``word``; EngineTimeout at ``deadline`` (by default ``timeout`` from now)."""
        if deadline is None and timeout is not None:
            deadline = time.monotonic() + timeout
        while True:
            stamp, line = self._next(deadline, word, timeout)
            words = line.split()
            if words:
                yield stamp, line
                if words[0] == word:
                    return

    def _discard(self, line: str) -> None:
        self.stale_bestmoves += 1
        if self._log:
            self._log(f"!{self.name}: discarded a bestmove that answers no go: {line}")

    def _next(self, deadline: float | None, waiting_for: str,
              timeout: float | None) -> tuple[float, str]:
        """The next stamped line.  Waits in short slices so that the end of the
        process is noticed even when a child it left still holds the pipe open.

        Past the deadline, a line the reading thread stamped before it still counts:
        on a loaded machine this thread may wake after the deadline although the
        answer came in time, and it must not be judged by its own lateness."""
        exited_at: float | None = None
        while True:
            if self._eof:
                raise self._death()
            now = time.monotonic()
            if exited_at is None and self._process is not None and self._process.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                self._eof = True
                raise self._death()
            wait = POLL_SECONDS if deadline is None else min(POLL_SECONDS, deadline - now)
            try:
                stamp, item = self._lines.get(timeout=wait) if wait > 0 else self._lines.get_nowait()
            except queue.Empty:
                stamp, item = time.monotonic(), None
                if deadline is None or stamp < deadline:
                    continue
            if deadline is not None and stamp >= deadline:
                raise EngineTimeout(f"{self.name}: no {waiting_for} within {timeout:g} s")
            if isinstance(item, _OutputEnd):
                self._eof, self._read_failure = True, item.failure
                raise self._death()
            if item is None:
                self._count_dropped()
                continue
            return stamp, item

    def _count_dropped(self) -> None:
        self.dropped_lines += 1
        if self._log:
            self._log(f"!{self.name}: dropped a line over {MAX_LINE_BYTES} bytes")

    def _learn(self, line: str) -> None:
        """Remember the engine's name and options from its ``uci`` reply."""
        self.id_name = learn_uci_line(line, self.options) or self.id_name

    def _death(self) -> EngineDied:
        """An EngineDied that says how the process ended and what it last wrote to
        stderr; anything the process left running in its group is ended.  An output
        that could no longer be read ends the engine, which could not be heard."""
        if self._read_failure:
            self.kill()
            return EngineDied(f"{self.name}: {self._read_failure}; the engine was ended")
        code = None
        if self._process is not None:
            try:
                code = self._process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        if code is not None:
            self.kill()  # a child holding the pipes goes with it
            if self._stderr_reader is not None:
                self._stderr_reader.join(timeout=1.0)  # let the last words reach the deque
        return EngineDied(f"{self.name} {how_it_ended(code, self._stderr)}")

    def _spawn_reader(self, stream: IO[bytes],
                      sink: Callable[[Output], None]) -> threading.Thread:
        thread = threading.Thread(target=_pump, args=(stream, sink), daemon=True,
                                  name=f"{self.name}-reader")
        thread.start()
        return thread

    def _on_stdout(self, lines: queue.Queue[tuple[float, Output]], abandoned: threading.Event,
                   item: Output) -> None:
        """Stamp ``item`` with the time it arrived and queue it for the caller; while
        the queue is full the reader waits (and so does the engine, on its pipe),
        until the caller reads or the process is abandoned."""
        if isinstance(item, str) and self._log:
            self._log(f"<{self.name}: {item}")
        stamped = (time.monotonic(), item)
        while not abandoned.is_set():
            try:
                lines.put(stamped, timeout=POLL_SECONDS)
                return
            except queue.Full:
                continue

    @staticmethod
    def _on_stderr(stderr: deque[str], item: Output) -> None:
        if isinstance(item, str):
            stderr.append(item)
        elif item is None:
            stderr.append(f"(a line over {MAX_LINE_BYTES} bytes)")
