"""The engine process: a UCI-style line protocol on stdin and stdout.

Four kinds of thread, so that nothing slow can keep the process from hearing
``quit`` or the end of its input:

- the main thread only reads lines; ``quit`` and end of input it acts on itself;
- one command thread carries out every other command, in order (so ``isready``
  after a slow command, ``bench`` or a new table, is answered once it is done,
  as UCI intends, while the main thread still reads);
- a search runs in a worker thread, so ``stop``, ``isready`` and ``ponderhit``
  are answered while it thinks;
- one writer thread owns stdout, so a reader that does not read blocks nobody.

numba's first compilation can take several seconds, so the search machinery
is imported and warmed up in a background thread started with the process:
``uci`` is answered at once, and ``isready`` (like any command that needs the
search) waits until the warm-up is done.  ``protocol.md`` is the contract for
every command handled here.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Callable, Iterator, NoReturn

from ..geometry import STANDARD, Geometry, GeometryError
from ..rules.board import Board, RulesError
from ..rules.notation import (
    format_line,
    format_move,
    parse_fen,
    parse_int,
    play_moves,
    render,
    to_fen,
)
from ..version import __version__
from .go_params import GoParams, GoParamsError
from .lines import MAX_LINE_BYTES, bounded_lines
from .options import OptionError, Options

if TYPE_CHECKING:
    from .backend import Backend

MAX_PERFT_DEPTH = 10
# applied to the searcher at once
SEARCH_OPTIONS = ("Hash", "Threads", "Clear Hash", "Evaluation", "OwnBook", "BookFile")
STALLED_OUTPUT_S = 2.0  # at exit, a reader that takes no line for this long is not waited for


class CommandError(ValueError):
    """A command the engine refuses; the message says why."""


def parse_position(tokens: list[str], geometry: Geometry = STANDARD) -> tuple[Board, Board]:
    """``position startpos|fen <FEN> [moves ...]`` on the board of ``geometry``: the
    set-up position and the one after the moves."""
    if not tokens:
        raise CommandError("position: expected 'startpos' or 'fen <FEN>'")
    moves_at = tokens.index("moves") if "moves" in tokens else len(tokens)
    head, moves = tokens[:moves_at], tokens[moves_at + 1:]
    if not head:
        raise CommandError("position: 'moves' must follow 'startpos' or 'fen <FEN>'")
    if head[0] == "startpos" and len(head) == 1:
        pos = Board(geometry=geometry)
    elif head[0] == "fen" and len(head) > 1:
        pos = parse_fen(" ".join(head[1:]), geometry)
    else:
        raise CommandError(f"position: expected 'startpos' or 'fen <FEN>', got '{' '.join(head)}'")
    return pos, play_moves(pos, moves)


class Output:
    """stdout, one flushed line at a time, written by a thread of its own.

    Every thread hands its lines over without waiting, so a reader that stops
    reading (a full pipe) cannot block the commands or the search; the lines
    keep their order.  When the reader is gone (a broken pipe), ``on_gone`` is
    called: the process has nobody left to answer."""

    def __init__(self, stream: IO[str], on_gone: Callable[[], None]) -> None:
        self._stream = stream
        self._on_gone = on_gone
        self._pending: deque[str] = deque()
        self._changed = threading.Condition()
        self._last_write = time.monotonic()
        threading.Thread(target=self._write_all, name="output", daemon=True).start()

    def __call__(self, line: str) -> None:
        with self._changed:
            if not self._pending:  # the writer was idle: a stall is timed from now
                self._last_write = time.monotonic()
            self._pending.append(line)
            self._changed.notify_all()

    def error(self, message: str) -> None:
        self(f"info string error {message}")

    def _write_all(self) -> None:
        while True:
            with self._changed:
                while not self._pending:
                    self._changed.wait()
                line = self._pending[0]
            try:
                self._stream.write(line + "\n")
                self._stream.flush()
            except (BrokenPipeError, ConnectionResetError):
                self._on_gone()
                return
            with self._changed:
                self._pending.popleft()
                self._last_write = time.monotonic()
                self._changed.notify_all()

    def drain(self) -> None:
        """Wait until every line is written, but not for a reader that took none for
        :data:`STALLED_OUTPUT_S` (it is not reading)."""
        with self._changed:
            while self._pending:
                stalled = time.monotonic() - self._last_write
                if stalled >= STALLED_OUTPUT_S:
                    return
                self._changed.wait(STALLED_OUTPUT_S - stalled)


class Server:
    """The protocol's state and its command handlers."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.options = Options()
        self.variant = self.options.variant(self.options.text("UCI_Variant"))
        self.base = self.variant.start()
        self.position = self.base
        self.drops = False
        self.debug = False
        self.backend: Backend | None = None
        self._ready = threading.Event()
        self._job: SearchJob | None = None
        self.quitting = threading.Event()
        self.busy = False  # a command that nothing interrupts runs: bench, setting up a table
        self.read_at = time.perf_counter()  # when the command being carried out was read
        self.searchable_at = self.read_at  # since when the search can run (see _setting_up)
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
            self.searchable_at = time.perf_counter()
            self._ready.set()

    @contextmanager
    def _setting_up(self) -> Iterator[None]:
        """A table or a board being set up: nothing interrupts it (``busy``), and a ``go``
        read meanwhile starts its clock when it is done, as one read during the
        start-up does (a pipe may hold the ``go`` long before the engine can search;
        a GUI sends it after ``readyok``, and then its clock starts when it is read)."""
        self.busy = True
        try:
            yield
        finally:
            self.busy = False
            self.searchable_at = time.perf_counter()

    def backend_ready(self) -> Backend:
        self._ready.wait()
        if self.backend is None:
            raise CommandError("the search is not available (see the error at start-up)")
        return self.backend

    # -- dispatch ---------------------------------------------------------
    def handle(self, line: str, read_at: float) -> None:
        """Run one command line, read at ``read_at`` (``time.perf_counter()``: a ``go``'s
        time counts from then); ``quit`` and end of input are the caller's."""
        self.read_at = read_at
        tokens = line.split()
        if not tokens:
            self.out.error("empty line")
            return
        name, args = tokens[0], tokens[1:]
        if name == "quit":
            self.out.error("quit: takes no arguments")
            return
        handler = self.handlers.get(name)
        if handler is None:
            self.out.error(f"unknown command '{name}'")
            return
        try:
            handler(args)
        except (CommandError, RulesError, OptionError, GoParamsError, GeometryError) as err:
            self.out.error(str(err))
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the process
            self.out.error(f"internal error on '{name}': {exc!r}")

    def finish_search(self, stop: bool) -> None:
        """Wait for a running search to print its bestmove, stopping it first if asked."""
        job = self._job
        if job is None:
            return
        if stop:
            job.stop()
        job.thread.join()
        self._job = None

    def interrupt(self) -> None:
        """``quit`` was read: stop the running search now, from the reading thread,
        and every search the commands queued before it start."""
        self.quitting.set()
        job = self._job
        if job is not None:
            job.stop()

    def end_of_input(self) -> None:
        """A search that a limit will end (depth, nodes, movetime, a running clock) is
        allowed to finish, so that a shell pipe gets its answer; one that nothing
        but ``stop`` would end (infinite, pondering, or no limit at all) is stopped."""
        job = self._job
        self.finish_search(stop=job is not None and not job.bounded())

    # -- commands ---------------------------------------------------------
    def cmd_uci(self, args: list[str]) -> None:
        self.out(f"id name c4engine {__version__}")
        self.out("id author the c4engine developers")
        for line in self.options.announce():
            self.out(line)
        self.out("uciok")

    def cmd_isready(self, args: list[str]) -> None:
        self._ready.wait()
        self.out("readyok")

    def cmd_debug(self, args: list[str]) -> None:
        if args not in (["on"], ["off"]):
            raise CommandError("debug: expected 'on' or 'off'")
        self.debug = args == ["on"]

    def cmd_setoption(self, args: list[str]) -> None:
        """Checked before anything changes: a refused value leaves a running search
        alone.  A table that cannot be allocated leaves the old one and the old value;
        a refused variants file leaves the variants as they were."""
        if not args or args[0] != "name":
            raise CommandError("setoption: expected 'setoption name <name> [value <value>]'")
        value_at = args.index("value") if "value" in args else len(args)
        name = " ".join(args[1:value_at])
        raw = " ".join(args[value_at + 1:]) if value_at < len(args) else None
        spec, value = self.options.check(name, raw)
        if spec.name == "VariantPath":
            variants = self.options.with_variants_file(str(value))
        self.finish_search(stop=True)
        if spec.name == "UCI_Variant":
            self.set_variant(str(value))
        elif spec.name == "VariantPath":
            self.options.variants = variants
        backend = self.backend_ready() if spec.name in SEARCH_OPTIONS else None
        old = self.options[spec.name]
        self.options.store(spec.name, value)
        if backend is not None:
            try:
                with self._setting_up():
                    backend.apply(spec.name)
            except MemoryError:
                self.options.store(spec.name, old)
                kept = f"the table of {old} MB" if spec.name == "Hash" else f"the value {old}"
                wanted = f"{value} MB" if spec.name == "Hash" else f"{spec.name} {value}"
                raise CommandError(f"option {spec.name}: not enough memory for {wanted}; keeping {kept}") from None
            except OptionError:  # a book file refused: the old one stays
                self.options.store(spec.name, old)
                raise

    def set_variant(self, name: str) -> None:
        """Play the variant ``name`` from now on, in drops; on another board the search
        is rebuilt for it (compiled on its first use) and the position is its start."""
        variant = self.options.variant(name)
        if variant.geometry != self.variant.geometry:
            backend = self.backend_ready()
            try:
                with self._setting_up():
                    backend.set_geometry(variant.geometry)
            except MemoryError:
                raise CommandError(f"option UCI_Variant: not enough memory for the {variant.geometry} "
                                   f"board; keeping {self.variant.name}") from None
            self.base = self.position = variant.start()
        self.variant = variant
        self.drops = True

    def cmd_ucinewgame(self, args: list[str]) -> None:
        self.finish_search(stop=True)
        self.backend_ready().apply("Clear Hash")

    def cmd_position(self, args: list[str]) -> None:
        base, position = parse_position(args, self.variant.geometry)
        self.finish_search(stop=True)
        self.base, self.position = base, position

    def cmd_go(self, args: list[str]) -> None:
        params = GoParams.parse(args)
        self.finish_search(stop=True)
        backend = self.backend_ready()
        if self.position.is_over():
            self.out.error("go: the game is already over")
            self.out("bestmove (none)")
            return
        self._job = SearchJob(self, backend, self.position, params, max(self.read_at, self.searchable_at))
        if self.quitting.is_set():
            self._job.stop()
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
        try:
            depth = parse_int(args[0]) if len(args) == 1 else 0
        except ValueError:
            depth = 0
        if not 1 <= depth <= MAX_PERFT_DEPTH:
            raise CommandError(f"perft: expected a depth from 1 to {MAX_PERFT_DEPTH}")
        for line in self.backend_ready().perft(self.position, depth, self.drops):
            self.out(line)

    def cmd_bench(self, args: list[str]) -> None:
        if args:
            raise CommandError("bench: takes no arguments")
        self.finish_search(stop=True)
        backend = self.backend_ready()
        self.busy = True
        try:
            lines = backend.bench()
        finally:
            self.busy = False
        for line in lines:
            self.out(line)


class SearchJob:
    """One ``go``: a worker thread that searches, then writes the one ``bestmove``.

    Under ``go infinite`` or ``go ponder`` the bestmove waits, even when the
    search ends by itself, until ``stop`` (or ``ponderhit`` for ponder), as UCI
    requires."""

    def __init__(self, server: Server, backend: Backend, position: Board, params: GoParams,
                 read_at: float) -> None:
        from ..search.pool import (
            StopSignal,  # the backend is loaded, so this import is free
        )
        self.server = server
        self.read_at = read_at
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
        """Also ends pondering: a ``ponderhit`` after ``stop`` is an error."""
        self.pondering = False
        self.signal.fire()
        self.release.set()

    def bounded(self) -> bool:
        """Whether a limit will end the search without ``stop``: a depth, a node count,
        a movetime, or a clock that runs (not while pondering)."""
        params = self.params
        if params.infinite or self.pondering:
            return False
        if params.depth is not None or params.nodes is not None or params.movetime is not None:
            return True
        return params.clock(self.position.side_to_move == 0)[0] is not None

    def ponderhit(self) -> None:
        """The opponent played the move we pondered on: now the clock runs."""
        self.pondering = False
        budget = self.backend.budget(self.position, self.params)
        if budget is not None:
            self._timer = threading.Timer(budget.soft_ms / 1000.0, self.signal.fire)
            self._timer.daemon = True
            self._timer.start()
        if not self.params.infinite:
            self.release.set()

    def _run(self) -> None:
        from .backend import bestmove_line
        timed = not (self.params.infinite or self.params.ponder)
        drops = self.server.drops
        try:
            spent_ms = (time.perf_counter() - self.read_at) * 1000.0
            limits = self.backend.limits(self.position, self.params, timed, spent_ms)
            if self.server.debug:
                self.server.out(f"info string debug {limits}")
            result = self.backend.search(self.position, limits, self.signal, drops)
            line = bestmove_line(self.position, result, drops)
        except Exception as exc:  # noqa: BLE001 - a bestmove must follow every go
            self.server.out.error(f"internal error in the search: {exc!r}")
            line = self._fallback_bestmove(drops)
        self.release.wait()
        if self._timer is not None:
            self._timer.cancel()
        self.server.out(line)

    def _fallback_bestmove(self, drops: bool) -> str:
        moves = self.position.legal_moves()
        if not moves:
            return "bestmove (none)"
        return f"bestmove {format_move(moves[len(moves) // 2], self.position, drops)}"


def read_lines(stream: IO[bytes], out: Output) -> Iterator[str]:
    """Lines of input as text; an over-long or non-UTF-8 line is reported and skipped."""
    for raw in bounded_lines(stream):
        if raw is None:
            out.error(f"line longer than {MAX_LINE_BYTES} bytes ignored")
            continue
        try:
            yield raw.decode("utf-8").strip("\r\n")
        except UnicodeDecodeError:
            out.error("line is not valid UTF-8; ignored")


class CommandThread:
    """Carries out the commands in order, apart from the thread that reads them."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._lines: queue.Queue[tuple[str, float] | None] = queue.Queue()
        self._stop_at_end = False
        self.thread = threading.Thread(target=self._run, name="commands", daemon=True)
        self.thread.start()

    def put(self, line: str) -> None:
        """Queue a line just read, with the time it was read."""
        self._lines.put((line, time.perf_counter()))

    def finish(self, stop: bool) -> None:
        """No more commands: the last search is stopped (``quit``) or, at the end of
        input, treated as :meth:`Server.end_of_input` says."""
        self._stop_at_end = stop
        self._lines.put(None)

    def _run(self) -> None:
        while (item := self._lines.get()) is not None:
            self.server.handle(*item)
        try:
            if self._stop_at_end:
                self.server.finish_search(stop=True)
            else:
                self.server.end_of_input()
        except Exception as exc:  # noqa: BLE001 - the process must still exit cleanly
            self.server.out.error(f"internal error at exit: {exc!r}")


def is_quit(line: str) -> bool:
    return line.split() == ["quit"]


def run(stdin: IO[bytes] | None = None, stdout: IO[str] | None = None) -> NoReturn:
    """The protocol loop; it ends the process with status 0.

    ``quit`` ends the process at once: the running search is stopped and its
    bestmove written, the commands read before it are carried out (a ``go``
    among them is answered as if stopped at once), but a command that cannot
    be interrupted (``bench``, a table being set up) is not waited for.  At the
    end of input the commands already read are carried out (see
    :meth:`Server.end_of_input`).  Either way the output is written out unless
    the reader has stopped reading; a reader that is gone ends the process
    quietly with status 0."""
    stream = stdout or sys.stdout
    if hasattr(stream, "reconfigure"):  # echoed input must never fail to encode
        stream.reconfigure(errors="backslashreplace")
    out = Output(stream, on_gone=_exit_quietly)
    server = Server(out)
    commands = CommandThread(server)
    quit_read = False
    for line in read_lines(stdin or sys.stdin.buffer, out):
        if is_quit(line):
            quit_read = True
            server.interrupt()
            break
        commands.put(line)
    commands.finish(stop=quit_read)
    while commands.thread.is_alive():
        commands.thread.join(0.05)
        if quit_read and server.busy:
            break
    out.drain()
    _exit_quietly()


def _exit_quietly() -> NoReturn:
    """Exit with status 0 at once, without the interpreter's shutdown: that takes
    most of a second (numba's and numpy's clean-up) when quit is meant to be
    prompt, and it would block on, or complain about, a stdout that cannot be
    flushed because its reader is gone or not reading.  Every line the reader
    could take has been written and flushed by then."""
    sys.stderr.flush()
    os._exit(0)
