"""The engine process: a UCI-style line protocol on stdin and stdout.

The main thread reads commands; a search runs in a worker thread, so ``stop``,
``isready``, ``ponderhit`` and ``quit`` are answered while it thinks.  numba's
first compilation can take several seconds, so the search machinery is
imported and warmed up in a background thread started with the process:
``uci`` is answered at once, and ``isready`` (like any command that needs the
search) waits until the warm-up is done.  ``protocol.md`` is the contract for
every command handled here.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Callable, Iterator

from . import __version__
from .board import Position, RulesError
from .notation import format_line, format_move, is_digit_string, parse_fen, play_moves, render, to_fen
from .options import SPECS, OptionError, Options

if TYPE_CHECKING:
    from .backend import Backend

MAX_LINE_BYTES = 1 << 16
INT_GO_KEYS = ("depth", "nodes", "movetime", "wtime", "btime", "winc", "binc", "movestogo", "mate")
FLAG_GO_KEYS = ("infinite", "ponder")
SIGNED_GO_KEYS = ("wtime", "btime", "winc", "binc")  # GUIs may send a negative clock
MAX_PERFT_DEPTH = 10


class CommandError(ValueError):
    """A command the engine refuses; the message says why."""


@dataclass(frozen=True)
class GoParams:
    """The parameters of one ``go`` command."""

    values: dict[str, int] = field(default_factory=dict)
    infinite: bool = False
    ponder: bool = False


def parse_go(tokens: list[str]) -> GoParams:
    """``go`` parameters in any order; a malformed one refuses the whole command."""
    values: dict[str, int] = {}
    flags = set()
    i = 0
    while i < len(tokens):
        key = tokens[i]
        if key in FLAG_GO_KEYS:
            flags.add(key)
            i += 1
            continue
        if key not in INT_GO_KEYS:
            raise CommandError(f"go: unknown parameter '{key}'")
        if i + 1 >= len(tokens):
            raise CommandError(f"go: '{key}' needs a value")
        values[key] = _go_number(key, tokens[i + 1])
        i += 2
    if "depth" in values and values["depth"] < 1:
        raise CommandError("go: depth must be at least 1")
    return GoParams(values, "infinite" in flags, "ponder" in flags)


def _go_number(key: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise CommandError(f"go: {key} '{raw}' is not a whole number") from None
    if value < 0 and key not in SIGNED_GO_KEYS:
        raise CommandError(f"go: {key} must not be negative")
    if value > 1 << 40:
        raise CommandError(f"go: {key} {value} is too large")
    return value


def parse_position(tokens: list[str]) -> tuple[Position, Position]:
    """``position startpos|fen <FEN> [moves ...]``: the set-up position and the one
    after the moves."""
    if not tokens:
        raise CommandError("position: expected 'startpos' or 'fen <FEN>'")
    moves_at = tokens.index("moves") if "moves" in tokens else len(tokens)
    head, moves = tokens[:moves_at], tokens[moves_at + 1:]
    if head[0] == "startpos" and len(head) == 1:
        pos = Position()
    elif head[0] == "fen" and len(head) > 1:
        pos = parse_fen(" ".join(head[1:]))
    else:
        raise CommandError(f"position: expected 'startpos' or 'fen <FEN>', got '{' '.join(head)}'")
    return pos, play_moves(pos, moves)


class Output:
    """stdout, one flushed line at a time, shared by the reader and the search thread."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def error(self, message: str) -> None:
        self(f"info string error {message}")


class Engine:
    """The protocol's state and its command handlers."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.options = Options()
        self.base = Position()
        self.position = Position()
        self.drops = False
        self.debug = False
        self.backend: Backend | None = None
        self._ready = threading.Event()
        self._job: SearchJob | None = None
        threading.Thread(target=self._warm_up, name="warm-up", daemon=True).start()
        self.handlers: dict[str, Callable[[list[str]], None]] = {
            "uci": self.cmd_uci, "isready": self.cmd_isready, "setoption": self.cmd_setoption,
            "ucinewgame": self.cmd_ucinewgame, "position": self.cmd_position, "go": self.cmd_go,
            "stop": self.cmd_stop, "ponderhit": self.cmd_ponderhit, "debug": self.cmd_debug,
            "d": self.cmd_d, "eval": self.cmd_eval, "perft": self.cmd_perft, "bench": self.cmd_bench,
        }

    # -- start-up ---------------------------------------------------------
    def _warm_up(self) -> None:
        """Import (and on a first start, compile) the search, then load the book."""
        try:
            from .backend import Backend  # deferred: importing it compiles the kernel
            self.backend = Backend(self.options, self.out)
        except Exception as exc:  # noqa: BLE001 - the process must keep answering
            self.out.error(f"the search could not start: {exc!r}")
        finally:
            self._ready.set()

    def backend_ready(self) -> Backend:
        self._ready.wait()
        if self.backend is None:
            raise CommandError("the search is not available (see the error at start-up)")
        return self.backend

    # -- dispatch ---------------------------------------------------------
    def handle(self, line: str) -> bool:
        """Run one command line; False once the engine should exit."""
        tokens = line.split()
        if not tokens:
            self.out.error("empty line")
            return True
        name, args = tokens[0], tokens[1:]
        if name == "quit":
            self.finish_search(stop=True)
            return False
        handler = self.handlers.get(name)
        if handler is None:
            self.out.error(f"unknown command '{name}'")
            return True
        try:
            handler(args)
        except (CommandError, RulesError, OptionError) as err:
            self.out.error(str(err))
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the process
            self.out.error(f"internal error on '{name}': {exc!r}")
        return True

    def finish_search(self, stop: bool) -> None:
        """Wait for a running search to print its bestmove, stopping it first if asked."""
        job = self._job
        if job is None:
            return
        if stop:
            job.stop()
        job.thread.join()
        self._job = None

    def end_of_input(self) -> None:
        job = self._job
        self.finish_search(stop=job is not None and not job.release.is_set())

    # -- commands ---------------------------------------------------------
    def cmd_uci(self, args: list[str]) -> None:
        self.out(f"id name c4engine {__version__}")
        self.out("id author the c4engine developers")
        for spec in SPECS:
            self.out(spec.announce())
        self.out("uciok")

    def cmd_isready(self, args: list[str]) -> None:
        self._ready.wait()
        self.out("readyok")

    def cmd_debug(self, args: list[str]) -> None:
        if args not in (["on"], ["off"]):
            raise CommandError("debug: expected 'on' or 'off'")
        self.debug = args == ["on"]

    def cmd_setoption(self, args: list[str]) -> None:
        if not args or args[0] != "name":
            raise CommandError("setoption: expected 'setoption name <name> [value <value>]'")
        value_at = args.index("value") if "value" in args else len(args)
        name = " ".join(args[1:value_at])
        raw = " ".join(args[value_at + 1:]) if value_at < len(args) else None
        self.finish_search(stop=True)
        spec = self.options.set(name, raw)
        if spec.name == "UCI_Variant":
            self.drops = True
        if spec.name in ("Hash", "Threads", "Clear Hash", "Evaluation", "OwnBook"):
            self.backend_ready().apply(spec.name)

    def cmd_ucinewgame(self, args: list[str]) -> None:
        self.finish_search(stop=True)
        self.backend_ready().apply("Clear Hash")

    def cmd_position(self, args: list[str]) -> None:
        base, position = parse_position(args)
        self.finish_search(stop=True)
        self.base, self.position = base, position

    def cmd_go(self, args: list[str]) -> None:
        params = parse_go(args)
        self.finish_search(stop=True)
        backend = self.backend_ready()
        if self.position.is_over():
            self.out.error("go: the game is already over")
            self.out("bestmove (none)")
            return
        self._job = SearchJob(self, backend, self.position, params)
        self._job.thread.start()

    def cmd_stop(self, args: list[str]) -> None:
        if self._job is not None:
            self._job.stop()

    def cmd_ponderhit(self, args: list[str]) -> None:
        if self._job is None or not self._job.pondering:
            raise CommandError("ponderhit: no ponder search is running")
        self._job.ponderhit()

    def cmd_d(self, args: list[str]) -> None:
        pos = self.position
        for line in render(pos).splitlines():
            self.out(line)
        self.out(f"Fen: {to_fen(pos)}")
        self.out(f"Side to move: {'first player (X)' if pos.side_to_move == 0 else 'second player (O)'}")
        moves = format_line(self.base, list(pos.history), self.drops)
        self.out(f"Moves: {' '.join(moves) if moves else '(none)'}")

    def cmd_eval(self, args: list[str]) -> None:
        for line in self.backend_ready().describe_eval(self.position):
            self.out(line)

    def cmd_perft(self, args: list[str]) -> None:
        if len(args) != 1 or not is_digit_string(args[0]) or not 1 <= int(args[0]) <= MAX_PERFT_DEPTH:
            raise CommandError(f"perft: expected a depth from 1 to {MAX_PERFT_DEPTH}")
        for line in self.backend_ready().perft(self.position, int(args[0]), self.drops):
            self.out(line)

    def cmd_bench(self, args: list[str]) -> None:
        if args:
            raise CommandError("bench: takes no arguments")
        self.finish_search(stop=True)
        for line in self.backend_ready().bench():
            self.out(line)


class SearchJob:
    """One ``go``: a worker thread that searches, then writes the one ``bestmove``.

    Under ``go infinite`` or ``go ponder`` the bestmove waits, even when the
    search ends by itself, until ``stop`` (or ``ponderhit`` for ponder), as UCI
    requires."""

    def __init__(self, engine: Engine, backend: Backend, position: Position, params: GoParams) -> None:
        from .search import StopSignal  # the backend is loaded, so this import is free
        self.engine = engine
        self.backend = backend
        self.position = position
        self.params = params
        self.signal = StopSignal()
        self.pondering = params.ponder
        self.release = threading.Event()
        if not (params.infinite or params.ponder):
            self.release.set()
        self._timer: threading.Timer | None = None
        self.thread = threading.Thread(target=self._run, name="search", daemon=True)

    def stop(self) -> None:
        self.signal.fire()
        self.release.set()

    def ponderhit(self) -> None:
        """The opponent played the move we pondered on: now the clock runs."""
        self.pondering = False
        budget = self.backend.budget(self.position, self.params.values)
        if budget is not None:
            self._timer = threading.Timer(budget.soft_ms / 1000.0, self.signal.fire)
            self._timer.daemon = True
            self._timer.start()
        if not self.params.infinite:
            self.release.set()

    def _run(self) -> None:
        from .backend import bestmove_line
        timed = not (self.params.infinite or self.params.ponder)
        drops = self.engine.drops
        try:
            limits = self.backend.limits(self.position, self.params.values, timed)
            if self.engine.debug:
                self.engine.out(f"info string debug {limits}")
            result = self.backend.search(self.position, limits, self.signal, drops)
            line = bestmove_line(self.position, result, drops)
        except Exception as exc:  # noqa: BLE001 - a bestmove must follow every go
            self.engine.out.error(f"internal error in the search: {exc!r}")
            line = self._fallback_bestmove(drops)
        self.release.wait()
        if self._timer is not None:
            self._timer.cancel()
        self.engine.out(line)

    def _fallback_bestmove(self, drops: bool) -> str:
        moves = self.position.legal_moves()
        if not moves:
            return "bestmove (none)"
        return f"bestmove {format_move(moves[len(moves) // 2], self.position, drops)}"


def read_lines(stream: IO[bytes], out: Output) -> Iterator[str]:
    """Lines of input as text; an over-long or non-UTF-8 line is reported and skipped."""
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = stream.readline(MAX_LINE_BYTES)
            out.error(f"line longer than {MAX_LINE_BYTES} bytes ignored")
            continue
        try:
            yield raw.decode("utf-8").strip("\r\n")
        except UnicodeDecodeError:
            out.error("line is not valid UTF-8; ignored")


def run(stdin: IO[bytes] | None = None, stdout: IO[str] | None = None) -> int:
    """The protocol loop; returns the exit status.  At the end of input a search with
    a finite limit is allowed to finish (so a shell pipe gets its answer), an
    infinite or ponder search is stopped."""
    out = Output(stdout or sys.stdout)
    engine = Engine(out)
    for line in read_lines(stdin or sys.stdin.buffer, out):
        if not engine.handle(line):
            return 0
    engine.end_of_input()
    return 0
