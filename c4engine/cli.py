"""The ``c4engine`` command: the protocol process by default, and its tools.

Subcommands import what they need when they run, and the larger tools
(``match``, ``strength``) are only imported when named, so plain ``c4engine``
answers ``uci`` within a fraction of a second, long before the search kernel
is compiled or loaded.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import time
from typing import IO, TYPE_CHECKING, Callable, TypeVar

import click

from .geometry import STANDARD, Geometry, GeometryError
from .inputs import decode_line
from .protocol.options import find_spec
from .rules.board import Board, RulesError
from .rules.notation import is_digit_string, parse_board, parse_digits
from .version import __version__

if TYPE_CHECKING:
    from .search.kernel_build import InterpretedTier
    from .search.progress import SolveProgress
    from .search.searcher import Searcher

_IMPORTED = time.perf_counter()
T = TypeVar("T")


class LazyGroup(click.Group):
    """A group whose heavier subcommands are imported only when used (click's
    documented pattern for lazy subcommands)."""

    LAZY = {"match": "c4engine.referee.cli:match_command",
            "strength": "c4engine.referee.cli:strength_command",
            "gui": "c4engine.gui.cli:gui_command", "play": "c4engine.play:play_command",
            "review": "c4engine.reviewer.command:review_command", "book": "c4engine.books.cli:book_command",
            "serve": "c4engine.service.cli:serve_command",
            "connectx": "c4engine.kaggle.cli:connectx_command",
            "train": "c4engine.training.cli:train_command",
            "held-out": "c4engine.training.cli:held_out_command",
            "grade": "c4engine.grading.command:grade_command"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.LAZY))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY:
            module, attribute = self.LAZY[name].split(":")
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, name)


def hash_option(text: str) -> Callable[[click.decorators.FC], click.decorators.FC]:
    """``--hash``, with the range and default of the engine's ``Hash`` option."""
    spec = find_spec("Hash")
    return click.option("--hash", "hash_mb", type=click.IntRange(spec.low, spec.high),
                        default=spec.default, show_default=True, help=text)


MAX_DIGIT_COLUMNS = 9  # solve reads moves as column digits 1-9


def _parse_board(ctx: click.Context, param: click.Parameter, value: str) -> Geometry:
    try:
        return parse_board(value)
    except GeometryError as err:
        raise click.BadParameter(str(err), ctx, param) from None


def board_option(command: Callable[..., None]) -> Callable[..., None]:
    """``--board WxH`` or ``--board WxHkK``: the board and row length (default 7x6, four in a row)."""
    return click.option("--board", "geometry", default=STANDARD.name, show_default=True, callback=_parse_board,
                        help="Board WxH, or WxHkK for K in a row (e.g. 8x7, 9x6k5); "
                             "width x (height + 1) <= 128, K from 3 to the longer side.")(command)


@click.group(cls=LazyGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="c4engine")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """c4engine: a Connect-Four engine. Without a subcommand it speaks the
    UCI-style protocol on stdin/stdout (see protocol.md)."""
    if ctx.invoked_subcommand is None:
        from .protocol.process import run
        sys.exit(run())


@cli.command()
@click.argument("file", type=click.File("rb"), default="-")
@click.option("--weak", is_flag=True, help="Win/draw/loss only (scores -1, 0, 1): faster.")
@click.option("--all", "every_column", is_flag=True,
              help="Print the score of every column (-1000 for a full one) instead of the position's.")
@hash_option("Transposition table size in MB (the engine's default Hash: it also solves "
             "Pons' sets fastest, its table staying in the processor's caches).")
@click.option("--threads", type=click.IntRange(1, find_spec("Threads").high), default=1, show_default=True,
              help="Search threads sharing the table (as the Threads option).")
@board_option
def solve(file: IO[bytes], weak: bool, every_column: bool, hash_mb: int, threads: int, geometry: Geometry) -> None:
    """Solve positions exactly, one per line: `<moves> [<expected score>]`, the moves
    as column digits 1..W; an empty line is the empty board.

    Prints `<moves> <score> <nodes> <microseconds>` per line, as Pascal Pons'
    solver does (table cleared before each position, outside the timing), with
    `--all` one score per column in place of one, then a summary on stderr; exits
    1 if a score differs from the expected one or a line is bad.

    A solve that runs longer than 3 s shows its progress on stderr every 3 s:
    the null window being searched (`[s, s+1]`: is the score above s?), the
    nodes so far and the rate."""
    if geometry.width > MAX_DIGIT_COLUMNS:
        raise click.BadParameter(f"board {geometry}: solve reads moves as column digits, so at most "
                                 f"{MAX_DIGIT_COLUMNS} columns", param_hint="'--board'")
    started = time.perf_counter()
    from .search.progress import SolveProgress
    from .search.searcher import Searcher

    def ready_searcher() -> Searcher:
        searcher = Searcher(hash_mb, threads=threads, geometry=geometry, resident=True, solving_only=True,
                            huge_pages=True)
        searcher.warm_up(searching=False)
        click.echo(f"kernel ready in {time.perf_counter() - started:.2f} s", err=True)
        return searcher

    session = _KernelOnDemand(geometry, ready_searcher)
    tally = _SolveTally()
    with SolveProgress(session, lambda line: click.echo(line, err=True)) as progress:
        for number, raw in enumerate(file, start=1):
            _solve_line(session, number, raw, weak, every_column, tally, progress)
    click.echo(f"{tally.summary()}, {session.page_report()}", err=True)
    if tally.mismatches or tally.bad_lines:
        sys.exit(1)


class _KernelOnDemand:
    """``solve``'s searcher, made (its kernel loaded, or compiled on a new board, and
    warmed up) at the first position that needs a search: a position whose mover
    wins at once is scored by the rules as the kernel scores it, with no node
    (:func:`~c4engine.search.thread.settled_score`), so that a run of such
    positions waits for no kernel.  On a board whose kernel is not compiled yet,
    the kernel compiles in a child process while the interpreted tier
    (:mod:`~c4engine.search.interpreted`) tries each position: one it finishes
    first is answered at once (docs/design.md, "The interpreted tier")."""

    def __init__(self, geometry: Geometry, make: Callable[[], Searcher]) -> None:
        self.geometry = geometry
        self._make = make
        self._searcher: Searcher | None = None
        self._tier: InterpretedTier | None = None

    def searcher(self) -> Searcher:
        if self._searcher is None:
            if self._tier is not None:
                self._tier.wait_for_kernel()
            self._searcher = self._make()
        return self._searcher

    def tier(self) -> InterpretedTier:
        """The board's interpreted tier, made at the first position it is asked (the
        search machinery it imports is not needed by a run that never searches)."""
        if self._tier is None:
            from .search.kernel_build import InterpretedTier
            self._tier = InterpretedTier(self.geometry)
        return self._tier

    def interpreted(self, pos: Board, weak: bool, every_column: bool) -> tuple[list[int], int] | None:
        """``pos``'s score (or every column's) and nodes from the interpreted tier, while
        the kernel compiles in its child process; None once the kernel is ready."""
        if self._searcher is not None:
            return None
        if every_column:
            return self.tier().solve_moves(pos, weak)
        solved = self.tier().solve(pos, weak)
        return None if solved is None else _as_values(solved)

    def solve_progress(self) -> tuple[list[int], int]:
        """The running solve's windows and nodes (:meth:`Searcher.solve_progress`); none
        before the searcher is made."""
        return self._searcher.solve_progress() if self._searcher is not None else ([], 0)

    def page_report(self) -> str:
        if self._searcher is not None:
            return self._searcher.page_report()
        if self._tier is not None and self._tier.started:
            return "no table: the interpreted tier answered while the kernel compiled"
        return "no table: no position needed a search"


class _SolveTally:
    """Counts and times of a ``solve`` run: wall time, and the CPU time of all the
    process's threads, which a machine busy with other work does not inflate
    (Pons' reference figures are CPU times)."""

    def __init__(self) -> None:
        self.positions = self.checked = self.mismatches = self.bad_lines = self.nodes = 0
        self.seconds = self.cpu_seconds = 0.0
        self.first_node: float | None = None  # seconds from the process's start to the first search

    def timed(self, job: Callable[[], T], progress: SolveProgress) -> tuple[T, float, float]:
        """``job``'s result, and the wall and CPU seconds it took; its progress shown
        while it runs, and the first node's time noted."""
        if self.first_node is None:
            self.first_node = process_age()
        progress.begin()
        began_cpu = time.process_time()  # first: its system call stays out of the wall time
        began = time.perf_counter()
        try:
            return job(), time.perf_counter() - began, time.process_time() - began_cpu
        finally:
            progress.end()

    def add(self, nodes: int, seconds: float, cpu_seconds: float) -> None:
        self.positions += 1
        self.nodes += nodes
        self.seconds += seconds
        self.cpu_seconds += cpu_seconds

    def summary(self) -> str:
        if not self.positions:
            return f"no positions solved ({self.bad_lines} bad lines)"
        mean_us = self.seconds / self.positions * 1e6
        nps = self.nodes / self.seconds if self.seconds > 0 else 0.0
        correct = f"{self.checked - self.mismatches}/{self.checked} correct, " if self.checked else ""
        return (f"{self.positions} positions, {correct}{self.bad_lines} bad lines, mean time "
                f"{mean_us:.1f} us (CPU {self.cpu_seconds / self.positions * 1e6:.1f} us), "
                f"mean nodes {self.nodes / self.positions:.0f}, {nps / 1e6:.2f} M nodes/s, "
                f"first node {self.first_node:.2f} s after the start")


def process_age() -> float:
    """Seconds since this process started, to the system clock's tick (Linux's record
    of the start, what a user waits from the command's launch); elsewhere since
    this module was imported."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            started_ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return time.perf_counter() - _IMPORTED


def _solved(session: _KernelOnDemand, pos: Board, weak: bool, every_column: bool, tally: _SolveTally,
            progress: SolveProgress) -> tuple[tuple[list[int], int], float, float]:
    """``pos``'s score (or every column's) and nodes, with the wall and CPU seconds they
    took: by the rules when they settle it; by the interpreted tier when it
    finishes while the kernel compiles; else by the kernel, its table cleared and
    the kernel made outside the timing."""
    from .search.thread import settled_score
    settled = None if every_column else settled_score(pos, weak)
    if settled is not None:
        return tally.timed(lambda: ([settled], 0), progress)
    interpreted, seconds, cpu_seconds = tally.timed(lambda: session.interpreted(pos, weak, every_column), progress)
    if interpreted is not None:
        return interpreted, seconds, cpu_seconds
    searcher = session.searcher()
    searcher.clear()
    searcher.fit_table(pos)
    if every_column:
        return tally.timed(lambda: searcher.solve_moves(pos, weak), progress)
    return tally.timed(lambda: _as_values(searcher.solve(pos, weak)), progress)


def _as_values(solved: tuple[int, int]) -> tuple[list[int], int]:
    score, nodes = solved
    return [score], nodes


def _solve_line(session: _KernelOnDemand, number: int, raw: bytes, weak: bool, every_column: bool,
                tally: _SolveTally, progress: SolveProgress) -> None:
    """Solve one input line and print its result, or report why it is bad."""
    try:
        fields = decode_line(raw, number).split()
        if len(fields) > 2 or (len(fields) == 2 and not is_digit_string(fields[1].removeprefix("-"))):
            raise RulesError("expected '<moves> [<expected score>]'")
        moves = fields[0] if fields else ""
        pos = parse_digits(moves, session.geometry)
        if pos.is_over():
            raise RulesError(f"'{moves}': the game is already over")
    except ValueError as err:  # a RulesError too
        tally.bad_lines += 1
        click.echo(f"line {number}: {err}", err=True)  # stderr escapes what its encoding cannot show
        return
    (values, nodes), seconds, cpu_seconds = _solved(session, pos, weak, every_column, tally, progress)
    score = max(values)
    tally.add(nodes, seconds, cpu_seconds)
    click.echo(f"{moves} {' '.join(map(str, values))} {nodes} {int(seconds * 1e6)}")
    if len(fields) == 2:
        expected = int(fields[1])
        if weak:
            expected = (expected > 0) - (expected < 0)
        tally.checked += 1
        if score != expected:
            tally.mismatches += 1
            click.echo(f"line {number}: {moves} expected {expected}, got {score}", err=True)


@cli.command()
@click.option("--depth", type=click.IntRange(1, 64), default=None,
              help="Search depth (default: the built-in bench depth).")
@hash_option("Transposition table size in MB (the engine's default Hash).")
@board_option
def bench(depth: int | None, hash_mb: int, geometry: Geometry) -> None:
    """Search a fixed set of positions to a fixed depth; print nodes, nodes/s, time."""
    from .search.bench import BENCH_DEPTH, bench_lines, run_bench
    from .search.searcher import Searcher
    searcher = Searcher(hash_mb, geometry=geometry)
    searcher.warm_up()
    for line in bench_lines(run_bench(searcher, depth or BENCH_DEPTH)):
        click.echo(line)


NUMBA_EXTRAS_UNUSED = ("scipy", "cffi")


def _parse_boards(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[Geometry]:
    return [_parse_board(ctx, param, value) for value in values]


@cli.command("warm-up")
@click.option("--board", "boards", multiple=True, callback=_parse_boards,
              help="A board to compile, WxH or WxHkK (as --board elsewhere); repeat for several.")
@click.option("--shipped", is_flag=True,
              help="The boards whose kernels the wheel carries compiled: 7x6 and those with a network.")
def warm_up(boards: list[Geometry], shipped: bool) -> None:
    """Compile the search kernel of each board named, ahead of its first use.

    numba compiles a board's kernel the first time the board is used on an
    installation, seconds of CPU that the first game, search or solve on it would
    otherwise wait for; later starts load it from the cache.  The wheel carries
    the kernels of 7x6 and the boards with a network compiled for a baseline CPU
    (``--shipped``), and the engine has them compiled for this CPU in the
    background."""
    from .kernel.portable import SHIPPED_BOARDS, warmed_up
    from .search.searcher import Searcher
    if shipped:
        boards = [*boards, *(Geometry.parse(name) for name in SHIPPED_BOARDS if Geometry.parse(name) not in boards)]
    if not boards:
        raise click.UsageError("name a board (--board) or --shipped")
    for number, geometry in enumerate(boards, start=1):
        click.echo(f"[{number}/{len(boards)}] {geometry}: compiling or loading...", err=True)
        started = time.process_time()
        Searcher(2, threads=2, geometry=geometry).warm_up()
        click.echo(f"[{number}/{len(boards)}] {geometry}: ready ({time.process_time() - started:.1f} s of CPU)",
                   err=True)
    warmed_up(every_shipped_board=shipped)


def skip_unused_numba_extras() -> None:
    """Mark scipy and cffi absent in this process.  numba imports them, when they are
    installed, at the first function it compiles or loads from its cache, to offer
    linear algebra and C calls that the kernel never uses: scipy alone is about
    0.2 s of CPU, a third of the start-up of ``solve``.  No c4engine command uses
    either; the library (``import c4engine``) leaves them alone."""
    for name in NUMBA_EXTRAS_UNUSED:
        sys.modules.setdefault(name, None)


def main() -> None:
    """Entry point of the ``c4engine`` script.

    At the end the process's objects are frozen out of the garbage collector: the
    interpreter's last collections would otherwise walk every object numba made
    while loading the kernel, about 0.2 s of CPU on the way out, as long as solving
    a small board."""
    skip_unused_numba_extras()
    try:
        cli()
    finally:
        gc.freeze()
