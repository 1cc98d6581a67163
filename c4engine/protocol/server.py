"""The engine process's commands: the protocol's state and a handler per command.

The handlers run on the command thread (:mod:`.command_thread`), one at a time;
a ``go`` hands its search to a :class:`~.search_job.SearchJob` and returns.
The search machinery (numba and the kernel's modules) is imported in a background
thread started with the server, so that ``uci`` is answered at once.  The search
itself is built by the first command that needs it (``isready``, ``go``, a search
option...), for the board in play then: a ``setoption name UCI_Variant`` read
before it only picks the board, so that a first start on a new board compiles that
board's kernel alone, not 7x6's first (numba's first compilation of a kernel takes
seconds).  The build runs on a thread of its own: a timed ``go`` read before it
is done waits for it as long as its time allows, and is answered by the quick
tier (:mod:`c4engine.search.quick`) if it is not done by then, never late.

On a board new to the installation the build first has the kernel compiled in a
child process (:mod:`c4engine.search.kernel_build`), and until then the engine
does not wait for it: ``isready`` is answered at once (a match runner that hears
no ``readyok`` for 15 s, as cutechess, kills the engine and scores the game lost,
and a compile on a busy machine takes longer), a search option is stored for the
build to apply, ``ucinewgame`` has no table to clear, and a timed ``go`` is
answered by the interpreter's exact solve when it finds one in time (the child
has a core of its own), else by the quick tier.
``protocol.md`` is the contract for every command handled here.
"""

from __future__ import annotations

import subprocess
import threading
import time
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Callable, Iterator

from ..geometry import STANDARD, Geometry, GeometryError
from ..rules.board import Board, RulesError
from ..rules.notation import format_line, format_move, parse_fen, parse_int, play_moves, render, to_fen
from ..search.quick import quick_move
from ..version import __version__
from .budget import go_budget
from .go_params import GoParams, GoParamsError
from .options import STRENGTH_OPTIONS, OptionError, Options
from .output import Output

if TYPE_CHECKING:
    from ..search.kernel_build import InterpretedTier
    from .backend import Backend
    from .search_job import SearchJob, WaitingJob

QUICK_ANSWER_MS = 20.0  # what a quick answer keeps of a go's time, to be written and read
QUICK_MOVE = "a quick move by the rules"  # how a quick tier's move was found, as a go's answer says
PERFT_LEAF_BOUND = 7 ** 10  # move sequences perft may have to count: 7x6's cap, 10 plies
# applied to the searcher at once
SEARCH_OPTIONS = ("Hash", "Threads", "Large Pages", "Clear Hash", "Evaluation", "OwnBook", "BookFile", *STRENGTH_OPTIONS)
# stored for the search to take while it compiles; not a book file, which is checked
# when set, by the search that loads it
STORED_WHILE_COMPILING = tuple(name for name in SEARCH_OPTIONS if name != "BookFile")


class CommandError(ValueError):
    """A command the engine refuses; the message says why."""


def could_not_start(exc: Exception) -> str:
    """The error for a search that could not be imported or built."""
    return f"the search could not start: {exc!r}"


def max_perft_depth(geometry: Geometry) -> int:
    """The deepest ``perft`` on ``geometry``: the most plies N with W^N (what N plies
    could count at most) within :data:`PERFT_LEAF_BOUND`, and no more than the board
    has cells: 10 on 7x6, 9 on 8x7, 7 on 16x3, all 9 plies of 3x3.  Every board's
    deepest perft then takes about as long as 7x6's ``perft 10``."""
    depth = 1
    while depth < geometry.cells and geometry.width ** (depth + 1) <= PERFT_LEAF_BOUND:
        depth += 1
    return depth


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
        self._building: threading.Thread | None = None  # building the search for the board in play
        self._build_error: str | None = None  # why the last build failed
        self._tuner: subprocess.Popen[bytes] | None = None  # compiling the host's code (see _build)
        self._tier: InterpretedTier | None = None  # the first build's kernel compiling in a child
        self._planned = threading.Event()  # the build knows whether a child compiles its kernel
        self._constructing = threading.Lock()  # held while the build reads the options into the search
        self._stored: dict[str, int | bool | str | None] = {}  # search options stored while compiling: old values
        self._ready = threading.Event()  # the search machinery is imported
        self._import_error: str | None = None  # the error the search machinery's import gave
        self._job: SearchJob | WaitingJob | None = None
        self.quitting = threading.Event()
        self.busy = False  # a command that nothing interrupts runs (see _uninterruptible)
        self.stops_read = 0  # ``stop`` lines the reading thread has read ...
        self.stops_done = 0  # ... and those the command thread has carried out
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
        """Import the search machinery (numba's import takes a second or so), off the
        command thread; the search is built by :meth:`backend_ready`."""
        try:
            from . import backend  # noqa: F401 - deferred: it imports numba and the kernel
        except Exception as exc:  # noqa: BLE001 - the process must keep answering
            self._import_error = could_not_start(exc)
            self.out.error(self._import_error)
        finally:
            self._ready.set()

    @contextmanager
    def _uninterruptible(self) -> Iterator[None]:
        """A step that nothing can interrupt (``busy``): a table or a board set up, the
        bench, a variants file read, the wait for the start-up.  ``quit`` does not wait
        for it (see :func:`.process.run`)."""
        was_busy = self.busy
        self.busy = True
        try:
            yield
        finally:
            self.busy = was_busy

    @contextmanager
    def _setting_up(self) -> Iterator[None]:
        """A table or a board being set up: nothing interrupts it, and a ``go`` read
        meanwhile starts its clock when it is done, as one read during the start-up
        does (a pipe may hold the ``go`` long before the engine can search; a GUI
        sends it after ``readyok``, and then its clock starts when it is read)."""
        try:
            with self._uninterruptible():
                yield
        finally:
            self.searchable_at = time.perf_counter()

    def backend_ready(self) -> Backend:
        """The search, built by the first call for the board in play (on a board's first
        use this loads or compiles its kernel), its set-up uninterruptible (as a
        ``go``'s clock then knows: :meth:`_setting_up`); CommandError, with the
        reason, when it cannot be built, and the next call tries again."""
        if self.backend is None:
            building = self._start_building()
            with self._setting_up():
                building.join()
            self._building = None
            if self.backend is None:
                raise CommandError(self._build_error or could_not_start(RuntimeError("no search")))
        return self.backend

    def _start_building(self) -> threading.Thread:
        """The thread building the search for the board in play, started unless it runs:
        a ``go`` that cannot wait for it leaves it running (:meth:`_move_before_the_search`)."""
        if self._building is None:
            self._build_error = None
            self._planned.clear()
            self._building = threading.Thread(target=self._build, name="build", daemon=True)
            self._building.start()
        return self._building

    def _build(self) -> None:
        """Build the search, after the child compiling a new board's kernel, if one does
        (:meth:`_compile_in_a_child`); on the portable kernel, have the host's code
        compiled in the background for the next starts (:mod:`c4engine.kernel.portable`)."""
        self._ready.wait()
        try:
            self._compile_in_a_child()
            with self._constructing:
                self.backend = self._backend_with_stored_options()
        except CommandError as err:
            self._build_error = str(err)
        else:
            from ..kernel.portable import tune_in_background  # loaded with the search by now
            self._tuner = tune_in_background()
        finally:
            self._tier = None
            self._planned.set()

    def _compile_in_a_child(self) -> None:
        """On a board new to the installation, have its whole kernel compiled in a child
        process, say so, and wait for it: the search is then built from the caches it
        filled.  Elsewhere (a compiled board, 7x6, no child to be had, or a failed
        import, which the build reports) nothing to wait for."""
        if self._import_error is None:
            from ..search.kernel_build import InterpretedTier  # imported with the search by now
            tier = InterpretedTier(self.variant.geometry, whole=True, standard=True)
            if tier.compiling():
                self.out(f"info string compiling the search for the {tier.geometry} board, new to this "
                         "installation, in another process: until it is ready a timed go is answered by "
                         "the interpreter's exact solve or by the rules")
                self._tier = tier
        self._planned.set()
        if self._tier is not None:
            self._tier.wait_for_kernel()

    def _backend_with_stored_options(self) -> Backend:
        """The search, with the options stored while its kernel compiled
        (:meth:`_store_while_compiling`); when it cannot be had with them (a table too
        large), they are refused as a ``setoption`` would have been, and take back
        their values from before."""
        stored, self._stored = self._stored, {}
        try:
            return self._new_backend()
        except CommandError as err:
            if not stored:
                raise
            for name, old in stored.items():
                self.options.store(name, old)
            self.out.error(f"options {', '.join(stored)}, set while the search compiled, refused: {err}; "
                           "keeping their values from before")
            return self._new_backend()

    def _compiling(self) -> bool:
        """Whether the search is not built because the board's kernel compiles in a
        child; starts the first build, and waits for it to know (the search
        machinery's import, a second at most)."""
        if self.backend is not None:
            return False
        self._start_building()
        with self._uninterruptible():
            self._planned.wait()
        tier = self._tier
        return tier is not None and tier.compiling()

    def _store_while_compiling(self, name: str, value: int | bool | str | None) -> bool:
        """Store the search option ``name`` for the build to apply, if the search waits
        for its kernel's compile (:meth:`_compiling`), keeping its old value should
        the build refuse it; whether it was."""
        with self._constructing:
            if not self._compiling():
                return False
            self._stored.setdefault(name, self.options[name])
            self.options.store(name, value)
            return True

    def _move_before_the_search(self, params: GoParams) -> tuple[int, str] | None:
        """For a timed ``go`` read before the search is built, the move it is answered
        with, and how it was found, when the search is not built by the ``go``'s
        hard deadline less :data:`QUICK_ANSWER_MS`: the interpreter's, should it
        solve the position in time while the kernel compiles in a child, else the
        quick tier's.  None when the search is built in time, or the ``go`` has no
        time limit (it waits, as before its clock starts)."""
        if self.backend is not None or params.infinite or params.ponder:
            return None
        budget = go_budget(self.position, params, float(self.options.number("Move Overhead")))
        if budget is None:
            return None
        deadline = self.read_at + (budget.hard_ms - QUICK_ANSWER_MS) / 1000.0
        building = self._start_building()
        with self._uninterruptible():
            self._planned.wait(max(0.0, deadline - time.perf_counter()))
            tier = self._tier
            solved = tier.best_move(self.position, deadline - time.perf_counter()) if tier is not None else None
            if solved is not None:
                return solved[0], f"a move the interpreter solved (score {solved[1]})"
            building.join(max(0.0, deadline - time.perf_counter()))
        return (quick_move(self.position), QUICK_MOVE) if building.is_alive() else None

    def _new_backend(self) -> Backend:
        """The search for the board in play."""
        if self._import_error is not None:
            raise CommandError(self._import_error)
        from .backend import Backend  # imported by the warm-up
        geometry = self.variant.geometry
        try:
            return Backend(self.options, self.out, geometry)
        except MemoryError:
            raise CommandError(f"not enough memory for the search on the {geometry} board") from None
        except Exception as exc:  # noqa: BLE001 - the process must keep answering
            raise CommandError(could_not_start(exc)) from None

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

    def stop_read(self) -> None:
        """``stop`` was read (it is carried out in its turn too): a ``perft`` running
        now, necessarily read before it, ends at once (see :meth:`_perft_stopped`)."""
        self.stops_read += 1

    def _perft_stopped(self) -> bool:
        """Whether the running ``perft`` is to end: ``quit``, or a ``stop`` read and not
        yet carried out, so read after the ``perft`` (commands run in order)."""
        return self.quitting.is_set() or self.stops_read > self.stops_done

    def interrupt(self) -> None:
        """``quit`` was read: stop the running search (or perft) now, from the reading
        thread, and every search the commands queued before it start."""
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
        if self._compiling():
            self.out("readyok")
            return
        try:
            self.backend_ready()
        except CommandError as err:  # readyok all the same: the engine still answers
            self.out.error(str(err))
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
            with self._uninterruptible():
                variants = self.options.with_variants_file(str(value))
        self.finish_search(stop=True)
        if spec.name == "UCI_Variant":
            self.set_variant(str(value))
        elif spec.name == "VariantPath":
            self.options.variants = variants
        if spec.name in STORED_WHILE_COMPILING and self._store_while_compiling(spec.name, value):
            return
        backend = self.backend_ready() if spec.name in SEARCH_OPTIONS else None
        old = self.options[spec.name]
        self.options.store(spec.name, value)
        if backend is not None:
            self._apply_to_search(backend, spec.name, old)

    def _apply_to_search(self, backend: Backend, name: str, old: int | bool | str | None) -> None:
        """Make the option ``name``, just stored, take effect in the search; when the
        search refuses it, ``old`` is stored again."""
        try:
            with self._setting_up():
                backend.apply(name)
        except MemoryError:
            value = self.options[name]
            self.options.store(name, old)
            kept = f"the table of {old} MB" if name == "Hash" else f"the value {old}"
            wanted = f"{value} MB" if name == "Hash" else f"{name} {value}"
            raise CommandError(f"option {name}: not enough memory for {wanted}; keeping {kept}") from None
        except OptionError:  # a book file refused: the old one stays
            self.options.store(name, old)
            raise

    def set_variant(self, name: str) -> None:
        """Play the variant ``name`` from now on, in drops; on another board the search,
        once built, is rebuilt for it (compiled on its first use; before, it is built for
        the new board when first needed) and the position is its start."""
        variant = self.options.variant(name)
        if variant.geometry != self.variant.geometry:
            if self._building is not None:  # built for the board in play, then changed below
                with suppress(CommandError):
                    self.backend_ready()
            if self.backend is not None:
                try:
                    with self._setting_up():
                        self.backend.set_geometry(variant.geometry)
                except MemoryError:
                    raise CommandError(f"option UCI_Variant: not enough memory for the {variant.geometry} "
                                       f"board; keeping {self.variant.name}") from None
            self.base = self.position = variant.start()
        self.variant = variant
        self.drops = True

    def cmd_ucinewgame(self, args: list[str]) -> None:
        self.finish_search(stop=True)
        if not self._compiling():  # else the search, once built, starts with an empty table
            self.backend_ready().apply("Clear Hash")

    def cmd_position(self, args: list[str]) -> None:
        base, position = parse_position(args, self.variant.geometry)
        self.finish_search(stop=True)
        self.base, self.position = base, position

    def cmd_go(self, args: list[str]) -> None:
        params = GoParams.parse(args)
        self.finish_search(stop=True)
        waited = self.backend is None
        early = None if self.position.is_over() else self._move_before_the_search(params)
        if early is not None:
            self._early_answer(self.position, *early)
            return
        if not self.position.is_over() and self._compiling():
            self._wait_for_the_search(params)
            return
        try:
            backend = self.backend_ready()
        except CommandError as err:
            self._no_search(str(err))
            return
        if self.position.is_over():
            self._no_search("go: the game is already over")
            return
        from .search_job import SearchJob  # deferred: it imports the search, loaded by now
        timed_from = self.read_at if waited else max(self.read_at, self.searchable_at)
        self._job = SearchJob(self.out, backend, self.position, params, timed_from, self.drops, self.debug)
        if self.quitting.is_set():
            self._job.stop()
        self._job.thread.start()

    def _early_answer(self, position: Board, column: int, how: str) -> None:
        """A ``go`` the search would answer too late, still being built: the move found
        without it (:meth:`_move_before_the_search`), said so."""
        self.out(f"info string the search is not ready yet: {how}")
        self.out(f"bestmove {format_move(column, position, self.drops)}")

    def _wait_for_the_search(self, params: GoParams) -> None:
        """A ``go`` without a time limit while the kernel compiles in a child: a job
        that waits for the build without holding the commands up, then searches
        (:class:`~.search_job.WaitingJob`)."""
        from .search_job import SearchJob, WaitingJob  # the search is imported by now (_compiling)
        position, read_at, drops, debug = self.position, self.read_at, self.drops, self.debug

        def begin() -> SearchJob | None:
            backend = self.backend
            return None if backend is None else SearchJob(self.out, backend, position, params, read_at, drops, debug)
        self._job = WaitingJob(self._start_building(), begin,
                               lambda: self._early_answer(position, quick_move(position), QUICK_MOVE),
                               params, position)
        if self.quitting.is_set():
            self._job.stop()
        self._job.thread.start()

    def _no_search(self, why: str) -> None:
        """A ``go`` that cannot search: the reason, and its one ``bestmove`` all the same."""
        self.out.error(why)
        self.out("bestmove (none)")

    def cmd_stop(self, args: list[str]) -> None:
        self.stops_done += 1
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
        """Counted here, in order with the other commands, so its lines never mix with
        theirs; a ``stop`` or ``quit`` read meanwhile ends it at once."""
        try:
            depth = parse_int(args[0]) if len(args) == 1 else 0
        except ValueError:
            depth = 0
        geometry = self.variant.geometry
        if not 1 <= depth <= max_perft_depth(geometry):
            raise CommandError(f"perft: expected a depth from 1 to {max_perft_depth(geometry)} "
                               f"on the {geometry} board")
        for line in self.backend_ready().perft(self.position, depth, self.drops, self._perft_stopped):
            self.out(line)

    def cmd_bench(self, args: list[str]) -> None:
        if args:
            raise CommandError("bench: takes no arguments")
        self.finish_search(stop=True)
        backend = self.backend_ready()
        with self._uninterruptible():
            lines = backend.bench()
        for line in lines:
            self.out(line)
