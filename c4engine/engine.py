"""``c4engine.engine``: a client for any engine that speaks our UCI-style protocol.

Two levels, in the shape and with the names of python-chess' ``chess.engine``:

- :class:`SimpleEngine` is the public client: ``SimpleEngine.popen(command)`` as a
  context manager, ``configure``, ``play(position, Limit(...)) -> PlayResult``,
  ``analyse(position, limit, multipv=N)`` and ``quit``.  Positions are read
  through two attributes only, ``moves`` (the columns 1-7 played since the start)
  and ``start_fen`` (None for the empty board), so :class:`c4engine.Position`
  or anything shaped like it will do.  Moves come back as columns 1-7.
- :class:`EngineClient` is one engine process line by line, with deadlines and
  the arrival time of each line.  The referee (``c4engine match``,
  ``c4engine strength``) uses it directly because it judges what the engine
  said, clocks included.  :func:`parse_info`, :func:`merge_info` and
  :func:`collect_lines` read ``info`` lines for any other client (they need no
  process).

An engine is another program and may hang, crash or babble, so every read has a
deadline: a reader thread moves the engine's output lines into a queue, stamped
with the time they arrived, and the client waits on the queue.  The stamp (not
the moment the caller gets round to reading) is what a move's time is measured
against, so a busy caller does not make an engine look slow.  What it trusts
nothing of:

- numbers: ASCII digits with an optional minus, at most :data:`MAX_NUMBER`;
  an ``info`` line with any other number is ignored as a whole;
- ``bestmove``: only one written after the engine read the ``go`` answers it
  (an ``isready`` sent just before ``go`` fences off older output); extra ones
  (printed twice, or before any ``go``) are discarded and counted in
  :attr:`EngineClient.stale_bestmoves`, and a move time is never negative;
- notation: after ``UCI_Variant cfour`` a move must be a drop ``P@d1``, before
  it a digit; the other notation is an illegal move, as in cutechess;
- output: a line over :data:`MAX_LINE_BYTES` is dropped (and counted in
  :attr:`EngineClient.dropped_lines`) as soon as it is seen to be one, and at
  most :data:`QUEUED_LINES` lines wait for the caller (an engine that writes
  faster than it is read waits on its pipe), so an engine's output costs
  bounded memory, and a reader that fails all the same ends the output with
  its reason, not the thread with a traceback;
- the process: it runs in its own process group, and ending the engine ends the
  whole group, so a child left holding the engine's output cannot keep the
  connection open or outlive it.  The engine's own exit is noticed even while a
  child keeps the pipe open.

Not thread-safe: one thread drives one engine.
"""

from __future__ import annotations

import math
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol, TypedDict

from .protocol.go_params import GoParams
from .geometry import STANDARD, Geometry
from .protocol.lines import MAX_LINE_BYTES, bounded_lines
from .rules.board import Board
from .rules.board import RulesError
from .rules.notation import DIGITS, FILES, format_line, parse_fen, parse_int, parse_move
from .rules.variants import BOARD_NAME_PREFIX, Variant, built_in

HANDSHAKE_TIMEOUT = 35.0  # what cutechess allows for `uciok`
READY_TIMEOUT = 15.0  # ... and for `readyok`
# An engine that touches every page of its transposition table before readyok is slow
# with a large Hash: c4engine did so until its tables were allocated lazily (9-18 s for
# Hash 8192 on this 2-core machine, 23.3 s for Hash 4096 with the load average at 7,
# 5.8 s per GiB).  A readyok after a large Hash gets this much longer per GiB asked
# for, rather than the referee refusing to start such an engine.
READY_SECONDS_PER_GIB = 8.0
SEARCH_GRACE = 5.0  # past its time limit, before a search counts as silent (SimpleEngine: stop included)
STOP_GRACE = 1.0  # of that, what is kept for a search given up on to answer stop and isready
SEARCH_TIMEOUT = 60.0  # for searches limited by depth or nodes only
QUIT_TIMEOUT = 2.0
EXIT_GRACE = 0.2  # after the process ended, the last lines may still be in the pipe
POLL_SECONDS = 0.05  # how often a wait checks that the process still runs
STDERR_LINES_KEPT = 20
QUEUED_LINES = 256  # output lines read ahead of the caller: 16 MiB at most
MAX_NUMBER = (1 << 63) - 1


class EngineError(Exception):
    """The engine did not do what the protocol asks; the message names the engine."""


class EngineTimeout(EngineError):
    """The engine did not answer in time (it may still be running)."""


class EngineDied(EngineError):
    """The engine's process ended or closed its output."""


@dataclass(frozen=True)
class Score:
    """A score as the engine sends it: ``cp`` (a heuristic value) or ``mate`` in N moves."""

    kind: str
    value: int


class InfoDict(TypedDict, total=False):
    """What ``info`` lines said about one line of the search (python-chess' keys).

    ``lowerbound`` / ``upperbound`` are present (True) when ``score`` is only a
    bound; ``time`` is in seconds; ``pv`` holds columns 1-7 (the engine's notation
    read without checking ranks: the referee judges only ``bestmove``)."""

    depth: int
    seldepth: int
    multipv: int
    score: Score
    lowerbound: bool
    upperbound: bool
    nodes: int
    nps: int
    hashfull: int
    tbhits: int
    time: float
    currmove: int
    currmovenumber: int
    pv: list[int]
    string: str


_INT_KEYS = ("depth", "seldepth", "multipv", "nodes", "nps", "hashfull", "tbhits",
             "currmovenumber")
_BOUNDS = ("lowerbound", "upperbound")


def parse_number(text: str) -> int:
    """An engine's integer: the protocol's one number syntax (:func:`parse_int`:
    ASCII digits, an optional leading minus) within :data:`MAX_NUMBER`; ValueError
    otherwise, so that ``+3``, ``1_0``, Arabic digits and numbers of any length
    never reach the caller."""
    value = parse_int(text)
    if abs(value) > MAX_NUMBER:
        raise ValueError(f"'{text[:30]}' is out of range")
    return value


def move_column(token: str) -> int:
    """The column 1.. a move token names, read from its notation alone (a digit, or
    the file of a drop, on any board); ValueError for anything else."""
    if len(token) == 1 and token in DIGITS[1:]:
        return int(token)
    if 4 <= len(token) <= 5 and token.startswith("P@") and token[2] in FILES and token[3:].isdigit():
        return FILES.index(token[2]) + 1
    raise ValueError(f"'{token[:30]}' is not a move")


def parse_info(line: str) -> InfoDict:
    """The fields of one ``info`` line; ValueError when a number is malformed or out of
    range, or a key lacks its value.  ``string`` takes the rest of the line; ``pv``
    stops at the first token that is not a move."""
    tokens = line.split()[1:]
    info: InfoDict = {}
    i = 0
    while i < len(tokens):
        key = tokens[i]
        if key == "string":
            info["string"] = " ".join(tokens[i + 1:])
            break
        if key == "pv":
            info["pv"] = _pv_columns(tokens[i + 1:])
            break
        if key == "score":
            i = _parse_score(tokens, i + 1, info, line)
            continue
        if i + 1 >= len(tokens) and key in (*_INT_KEYS, "time", "currmove"):
            raise ValueError(f"'{key}' without a value in {line[:80]!r}")
        if key in _INT_KEYS:
            info[key] = parse_number(tokens[i + 1])  # type: ignore[literal-required]
        elif key == "time":
            info["time"] = parse_number(tokens[i + 1]) / 1000
        elif key == "currmove":
            info["currmove"] = move_column(tokens[i + 1])
        else:
            i -= 1  # an unknown word: skipped alone
        i += 2
    return info


def _parse_score(tokens: list[str], i: int, info: InfoDict, line: str) -> int:
    """``score cp|mate N [lowerbound|upperbound]`` from ``tokens[i]``; the next index."""
    if i + 1 >= len(tokens) or tokens[i] not in ("cp", "mate"):
        raise ValueError(f"malformed score in {line[:80]!r}")
    info["score"] = Score(tokens[i], parse_number(tokens[i + 1]))
    if i + 2 < len(tokens) and tokens[i + 2] in _BOUNDS:
        info[tokens[i + 2]] = True  # type: ignore[literal-required]
        return i + 3
    return i + 2


def _pv_columns(tokens: list[str]) -> list[int]:
    columns = []
    for token in tokens:
        try:
            columns.append(move_column(token))
        except ValueError:
            break
    return columns


def merge_info(older: InfoDict, newer: InfoDict) -> InfoDict:
    """``older`` updated by what ``newer`` carries: a last line often reports only
    nodes and time, which must not erase the score; a new score replaces the old
    one with its bound (or lack of one)."""
    merged = dict(older)
    if "score" in newer:
        for bound in _BOUNDS:
            merged.pop(bound, None)
    merged.update(newer)
    return merged  # type: ignore[return-value]


def engine_move(token: str, board: Board, drops: bool) -> int:
    """The 0-based column of ``bestmove``'s move in ``board``, in the notation the
    engine was told to speak; RulesError (an illegal move) otherwise."""
    if token in ("", "(none)", "0000"):
        raise RulesError("no move given")
    is_drop = len(token) >= 4 and token[1] == "@"
    if drops and not is_drop:
        raise RulesError(f"move '{token}': after UCI_Variant a move is a drop like P@d1")
    if not drops and is_drop:
        raise RulesError(f"move '{token}': without UCI_Variant a move is a column "
                         f"1-{board.geometry.width}")
    col = parse_move(token, board)
    board.play(col)  # raises on a full column or a finished game
    return col


# -- limits -----------------------------------------------------------------


@dataclass(frozen=True)
class Limit:
    """How long to search, python-chess' ``Limit``: seconds for times and clocks."""

    time: float | None = None
    depth: int | None = None
    nodes: int | None = None
    mate: int | None = None
    white_clock: float | None = None
    black_clock: float | None = None
    white_inc: float | None = None
    black_inc: float | None = None
    remaining_moves: int | None = None

    def go_params(self) -> GoParams:
        """The ``go`` command that asks for this; ValueError (GoParamsError) when a
        value is out of range or a time is not a finite number."""
        def ms(seconds: float | None) -> int | None:
            if seconds is None:
                return None
            if not math.isfinite(seconds):
                raise ValueError(f"Limit: {seconds} is not a finite number of seconds")
            return max(0, round(seconds * 1000))
        return GoParams(wtime=ms(self.white_clock), btime=ms(self.black_clock),
                        winc=ms(self.white_inc), binc=ms(self.black_inc),
                        movetime=ms(self.time), depth=self.depth, nodes=self.nodes,
                        mate=self.mate, movestogo=self.remaining_moves)

    def timeout(self, side_to_move: int) -> float:
        """How long a search with this limit may take, all told, before the engine
        counts as silent."""
        clock = (self.white_clock, self.black_clock)[side_to_move]
        times = [t for t in (self.time, clock) if t is not None]
        return min(times) + SEARCH_GRACE if times else SEARCH_TIMEOUT


@dataclass(frozen=True)
class SearchResult:
    """The answer to ``go``: the move as sent, the last info of each MultiPV line
    (``lines[0]`` is ``multipv 1``), and the seconds from ``go`` to ``bestmove``."""

    bestmove: str
    lines: tuple[InfoDict, ...] = ()
    elapsed: float = 0.0

    @property
    def info(self) -> InfoDict:
        """The best line's info (``multipv 1``, or lines that name no MultiPV number)."""
        return next((info for info in self.lines if info.get("multipv", 1) == 1), InfoDict())


def add_info(lines: dict[int, InfoDict], line: str) -> None:
    """Merge one ``info`` line into ``lines``, the MultiPV lines by number (a line
    without a number is about ``multipv 1``).  A line with a malformed number is
    ignored, and so is ``info string``: one garbled line does not void a move."""
    try:
        info = parse_info(line)
    except ValueError:
        return
    if "string" not in info:
        number = info.get("multipv", 1)
        lines[number] = merge_info(lines.get(number, {}), info)


def collect_lines(info_lines: Iterable[str]) -> tuple[InfoDict, ...]:
    """Each MultiPV line's info, merged over the ``info`` lines that carry its
    number (see :func:`add_info`), in MultiPV order."""
    lines: dict[int, InfoDict] = {}
    for line in info_lines:
        add_info(lines, line)
    return tuple(lines[n] for n in sorted(lines))


# -- one process ------------------------------------------------------------


@dataclass(frozen=True)
class _OutputEnd:
    """The end of an engine's output; ``failure`` says why it could not be read on,
    when the reading failed before the end."""

    failure: str = ""


Output = str | None | _OutputEnd  # a line, a line over MAX_LINE_BYTES (dropped), the end


def _pump(stream: IO[bytes], sink: Callable[[Output], None]) -> None:
    """Feed ``sink`` each line of ``stream`` as text (None for a line too long,
    :func:`~c4engine.inputs.bounded_lines`), then the end.  Whatever stops the
    reading (a MemoryError under a memory cap, say) ends the output with its
    reason: the thread itself never dies of it."""
    failure = ""
    try:
        with stream:
            for raw in bounded_lines(stream):
                sink(None if raw is None else raw.decode("utf-8", "replace").rstrip("\r\n"))
    except Exception as err:  # noqa: BLE001 - reported to the caller as the end of output
        failure = f"its output could not be read ({err!r})"
    sink(_OutputEnd(failure))


def hash_ready_seconds(options: Sequence[tuple[str, str]]) -> float:
    """Extra ``readyok`` time for a large ``Hash`` option (see READY_SECONDS_PER_GIB)."""
    for name, value in options:
        if name.lower() == "hash":
            try:
                return max(0, parse_number(value.strip())) / 1024 * READY_SECONDS_PER_GIB
            except ValueError:
                return 0.0
    return 0.0


def learn_uci_line(line: str, options: dict[str, str]) -> str | None:
    """One line of an engine's ``uci`` reply: an ``option`` goes into ``options``
    (its name -> the rest of the line from ``type`` on); an ``id name`` is returned."""
    words = line.split()
    if words[:2] == ["id", "name"]:
        return " ".join(words[2:])
    if words[:2] == ["option", "name"] and "type" in words:
        end = words.index("type")
        options[" ".join(words[2:end])] = " ".join(words[end:])
    return None


def offers_variant(options: dict[str, str], variant: str) -> bool:
    """Whether the options an engine announced list ``variant`` as a ``UCI_Variant``
    value (a whole word after ``var``: ``cfourx`` is not ``cfour``)."""
    words = options.get("UCI_Variant", "").split()
    return any(a == "var" and b == variant for a, b in zip(words, words[1:]))


def takes_board_variant(options: dict[str, str], variant: str) -> bool:
    """Whether an engine may be given ``variant``, the built-in name of a board
    (``cfour-8x7``): it lists it, or it lists such names at all (c4engine lists a few
    and takes any ``cfour-WxH``)."""
    return offers_variant(options, variant) or (variant.startswith(BOARD_NAME_PREFIX) and any(
        word.startswith(BOARD_NAME_PREFIX) for word in options.get("UCI_Variant", "").split()))


def engine_argv(command: str | Sequence[str]) -> list[str]:
    """The arguments of an engine command, a shell-quoted string or a list already;
    EngineError when the string cannot be parsed or the command is empty."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as err:
            raise EngineError(f"cannot parse engine command {command!r}: {err}") from None
    else:
        argv = list(command)
    if not argv:
        raise EngineError("empty engine command")
    return argv


def own_engine_argv() -> list[str]:
    """c4engine itself, run by the Python that runs the caller: the engine a tool
    measures or shows when it is given none."""
    return [sys.executable, "-m", "c4engine"]


def spawn_arguments() -> dict[str, Any]:
    """How an engine process is started, by :class:`EngineClient` (threads) and by
    the web board (asyncio) alike: its three streams as pipes, and a session of its
    own, whose process group :class:`ProcessGroup` ends with everything the engine
    started in it."""
    return {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
            "start_new_session": True}


class ProcessGroup:
    """The process group of an engine started with :func:`spawn_arguments` (its id
    is the engine's pid).  It is signalled once only: once the group is gone, its
    id may be reused by an unrelated process."""

    def __init__(self, leader: int) -> None:
        self._id: int | None = leader

    def end(self) -> None:
        """Kill the engine and anything it started in its group, at once."""
        if self._id is None:
            return
        try:
            os.killpg(self._id, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # the group is gone already
        self._id = None


def start_failure(command: str, err: OSError) -> str:
    """What to say when ``command`` could not be started."""
    return f"cannot start {command!r}: {err.strerror or err}"


def how_it_ended(code: int | None, stderr: Iterable[str]) -> str:
    """How an engine's process ended, for a message: its exit status (None: it
    closed its output and may still run) and its last lines on stderr."""
    how = "closed its output" if code is None else f"exited with code {code}"
    tail = " | ".join(stderr)
    return how + (f" (stderr: {tail})" if tail else "")


def position_command(moves: Sequence[int], start_fen: str | None,
                     drops: bool, geometry: Geometry = STANDARD) -> tuple[str, Board]:
    """``position startpos|fen <start_fen> [moves ...]`` on the board of ``geometry``
    with ``moves`` as columns 1..W written as drops or digits (``drops``), and the
    position they reach; RulesError when the moves or the FEN are not legal."""
    start = parse_fen(start_fen, geometry) if start_fen else Board(geometry=geometry)
    cols = [col - 1 for col in moves]
    tokens = format_line(start, cols, drops)
    line = f"position fen {start_fen}" if start_fen else "position startpos"
    return line + (" moves " + " ".join(tokens) if tokens else ""), start.play_all(cols)


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
        busy 2-core machine).

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
            self.drops = self.supports_variant("cfour")
            if self.drops:
                self.set_option("UCI_Variant", "cfour")
            elif "UCI_Variant" in self.options:
                raise EngineError(f"{self.name}: its UCI_Variant option offers no cfour")
        for name, value in options:
            self.set_option(name, value)
        self.ready_timeout = ready_timeout + hash_ready_seconds(options)
        self.is_ready(startup_timeout + hash_ready_seconds(options))

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

    def is_ready(self, timeout: float | None = None) -> None:
        """``isready`` and wait for ``readyok`` (``ready_timeout`` by default);
        anything else on the way (a late ``bestmove`` from an abandoned search) is
        dropped, which resynchronizes."""
        self.send("isready")
        for _ in self._read_until("readyok", self.ready_timeout if timeout is None else timeout):
            pass

    def new_game(self) -> None:
        self.send("ucinewgame")

    def position(self, moves: Sequence[int] = (), start_fen: str | None = None) -> Board:
        """``position startpos|fen <start_fen> [moves ...]`` with ``moves`` as columns
        1-7, written in the engine's notation; the position they reach.  RulesError
        (before anything is sent) when the moves or the FEN are not legal."""
        line, board = position_command(moves, start_fen, self.drops, self.variant.geometry)
        self.send(line)
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
                add_info(lines, line)
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
        process is noticed even when a child it left still holds the pipe open."""
        exited_at: float | None = None
        while True:
            if self._eof:
                raise self._death()
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise EngineTimeout(f"{self.name}: no {waiting_for} within {timeout:g} s")
            if exited_at is None and self._process is not None and self._process.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                self._eof = True
                raise self._death()
            wait = POLL_SECONDS if deadline is None else min(POLL_SECONDS, deadline - now)
            try:
                stamp, item = self._lines.get(timeout=wait)
            except queue.Empty:
                continue
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


# -- the public client --------------------------------------------------------


class PositionLike(Protocol):
    """What the client reads of a position (:class:`c4engine.Position` has both)."""

    @property
    def moves(self) -> tuple[int, ...]: ...

    @property
    def start_fen(self) -> str | None: ...


@dataclass(frozen=True)
class PlayResult:
    """The engine's move (a column 1-7) and what it said about its best line."""

    move: int
    info: InfoDict = field(default_factory=lambda: InfoDict())


class SimpleEngine:
    """An engine process driven one call at a time, python-chess' ``SimpleEngine``.

    ``SimpleEngine.popen("c4engine")`` starts it, completes the handshake, chooses
    the ``cfour`` variant when offered and waits for ``readyok``.  A search call
    lasts at most as long as its limit allows plus :data:`SEARCH_GRACE`, or
    :data:`SEARCH_TIMEOUT` for depth and node limits, stopping a silent search
    included: a crashed engine raises EngineDied at once, a silent one
    EngineTimeout, never a hang.  After an EngineTimeout the search has been
    stopped and the engine may be used again; one that does not answer the stop
    either has been ended (EngineDied)."""

    def __init__(self, client: EngineClient) -> None:
        self.client = client
        self.configured: dict[str, str] = {}

    @classmethod
    def popen(cls, command: str | Sequence[str], *, timeout: float = HANDSHAKE_TIMEOUT,
              ready_timeout: float = READY_TIMEOUT,
              options: Mapping[str, object] | None = None,
              startup_timeout: float | None = None) -> SimpleEngine:
        """Start ``command`` (a shell-quoted string or an argument list).  ``timeout``
        is the wait for ``uciok``, and for the first ``readyok`` unless
        ``startup_timeout`` is given (an engine that compiles or loads its data
        before that ``readyok`` may need much longer: see :meth:`EngineClient.setup`)."""
        client = EngineClient(command)
        pairs = [(name, _option_text(value)) for name, value in (options or {}).items()]
        try:
            client.start(timeout)
            client.setup(pairs, ready_timeout,
                         startup_timeout=timeout if startup_timeout is None else startup_timeout)
        except BaseException:
            client.kill()
            raise
        engine = cls(client)
        engine.configured.update(pairs)
        return engine

    def __enter__(self) -> SimpleEngine:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.quit()

    @property
    def id(self) -> dict[str, str]:
        """``{"name": ...}`` from the engine's ``id name`` line."""
        return {"name": self.client.id_name} if self.client.id_name else {}

    @property
    def options(self) -> dict[str, str]:
        """The engine's options as it listed them: name -> ``type ... default ...``."""
        return dict(self.client.options)

    def configure(self, options: Mapping[str, object]) -> None:
        """``setoption`` for each of ``options`` (True/False as ``true``/``false``),
        then wait for ``readyok``."""
        pairs = [(name, _option_text(value)) for name, value in options.items()]
        for name, value in pairs:
            self.client.set_option(name, value)
        self.configured.update(pairs)
        self.client.ready_timeout = max(self.client.ready_timeout,
                                        READY_TIMEOUT + hash_ready_seconds(pairs))
        self.client.is_ready()

    def play(self, position: PositionLike, limit: Limit, *,
             timeout: float | None = None) -> PlayResult:
        """The engine's move in ``position``; EngineError when it plays an illegal one.
        ``timeout`` replaces the wait that ``limit`` implies (:meth:`Limit.timeout`)."""
        board, result = self.search(position, limit, timeout=timeout)
        try:
            col = engine_move(result.bestmove, board, self.client.drops)
        except RulesError as err:
            raise EngineError(f"{self.client.name}: illegal bestmove: {err}") from None
        return PlayResult(col + 1, _checked(result.info, board))

    def analyse(self, position: PositionLike, limit: Limit, multipv: int | None = None, *,
                timeout: float | None = None) -> InfoDict | list[InfoDict]:
        """What the engine found in ``position``: one InfoDict, or with ``multipv``
        a list of the best lines, best first, each with its own score and PV."""
        if multipv is None:
            board, result = self.search(position, limit, timeout=timeout)
            return _checked(result.info, board)
        self.client.set_option("MultiPV", str(multipv))
        try:
            board, result = self.search(position, limit, timeout=timeout)
        finally:
            self.client.set_option("MultiPV", self.configured.get("MultiPV", "1"))
        return [_checked(info, board) for info in result.lines][:multipv]

    def quit(self) -> None:
        """Ask the engine to quit and end its process group."""
        self.client.quit()

    def search(self, position: PositionLike, limit: Limit, *,
               timeout: float | None = None) -> tuple[Board, SearchResult]:
        """The engine's answer to ``go`` in ``position`` as it came, with the position
        searched: for a referee that judges the move itself (an illegal one is
        returned, not raised).  EngineTimeout as in :meth:`play`, with the search
        stopped; EngineError when the position cannot be sent.

        The whole call fits in the wait (``timeout``, or what ``limit`` implies):
        the search is given up :data:`STOP_GRACE` before its end (half the wait at
        most), which is left for the engine to answer ``stop`` and ``isready``."""
        try:
            board = self.client.position(position.moves, position.start_fen)
        except RulesError as err:
            raise EngineError(f"cannot send the position: {err}") from None
        wait = limit.timeout(board.side_to_move) if timeout is None else timeout
        deadline = time.monotonic() + wait
        try:
            return board, self.client.go(limit.go_params(), wait - min(STOP_GRACE, wait / 2))
        except EngineTimeout:
            self._recover(deadline)
            raise

    def _recover(self, deadline: float) -> None:
        """After a search given up on: stop it and wait, until ``deadline``, for the
        engine to be ready, so that it can be used again.  An engine that does not
        answer that either is ended, and EngineDied raised: a caller must not take
        it for a slow move."""
        try:
            self.client.stop()
            self.client.is_ready(max(0.0, deadline - time.monotonic()))
        except EngineError as err:
            self.client.kill()
            raise EngineDied(f"{err} (after a search was stopped; the engine was ended)") \
                from None


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _checked(info: InfoDict, board: Board) -> InfoDict:
    """``info`` with its PV cut at the first move that is not legal where it is played."""
    if "pv" not in info:
        return info
    legal = []
    pos = board
    for col in info["pv"]:
        if not pos.can_play(col - 1) or pos.is_over():
            break
        legal.append(col)
        pos = pos.play(col - 1)
    return {**info, "pv": legal}  # type: ignore[typeddict-item]
