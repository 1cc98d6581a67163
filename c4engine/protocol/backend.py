"""The search as the protocol uses it: options applied, limits chosen, info lines written.

Importing this module compiles (or loads from numba's cache) the search
kernel, which is why :mod:`c4engine.protocol.server` imports it in a background
thread; everything here may take its time to build.
"""

from __future__ import annotations

import random
from typing import Callable

import numpy as np

from ..geometry import STANDARD, Geometry
from ..kernel.book import OpeningBook
from ..kernel.built_book import BookFileError, BuiltBook
from ..kernel.evaluation import (
    COLUMN_STONES, FIRST_PLAYER_BONUS, FIRST_THREATS, NTUPLE_ADDRESS, NTUPLE_LINEAR, SECOND_THREATS, THREAT_NAMES,
)
from ..kernel.ntuple import ROWS, TUPLE_LENGTH
from ..rules.bits import column_cells, popcount
from ..rules.board import Board
from ..rules.notation import format_line, format_move
from ..rules.scores import is_proven, mate_distance
from ..search.bench import bench_lines, run_bench
from ..search.levels import FULL_STRENGTH, Strength, level_for_elo
from ..search.limits import Budget, Lateness, Limits
from ..search.pool import StopSignal
from ..search.report import Report, Result
from ..search.own_book import own_built_book
from ..search.searcher import Searcher
from ..search.weights import NTUPLE, ntuple_block, ntuple_note, weights_named
from .budget import go_budget
from .go_params import GoParams
from .options import NO_PATH, STRENGTH_OPTIONS, OptionError, Options

PERFT_PIECE_LEAVES = 1 << 20  # the most move sequences one kernel call of perft may count


class Backend:
    """The engine's searcher for the board in play, configured from the protocol's options."""

    def __init__(self, options: Options, write: Callable[[str], None],
                 geometry: Geometry = STANDARD) -> None:
        self.options = options
        self.write = write
        self.geometry = geometry
        self._book: OpeningBook | None = None
        self._rng = random.Random()
        self.lateness = Lateness()  # kept across games and boards: it is the machine's
        self.searcher = self._new_searcher(geometry)
        self._books_at_full_strength = self._full_strength()

    def _new_searcher(self, geometry: Geometry) -> Searcher:
        """A searcher for ``geometry`` with the options' table, threads, evaluation and book,
        warmed up (on a board's first use this compiles its kernel)."""
        book = self._wanted_book(geometry)
        searcher = Searcher(self.options.number("Hash"), self._weights(geometry, tell=True), book,
                            self.options.number("Threads"), geometry=geometry,
                            huge_pages=bool(self.options["Large Pages"]))
        searcher.set_built_book(self._wanted_built_book(geometry))
        searcher.warm_up()
        self._tell_pages(searcher)
        return searcher

    def _tell_pages(self, searcher: Searcher, asked: bool = False) -> None:
        """Say what pages the table has, as the system reports them: whenever it is
        (re)allocated with ``Large Pages`` on, and whenever the option is set."""
        if searcher.huge_pages or asked:
            self.write(f"info string {searcher.page_report()}")

    def set_geometry(self, geometry: Geometry) -> None:
        """Search on the board of ``geometry`` from now on, with a new searcher (the old
        one, its table and its helper threads go once it is replaced); MemoryError,
        with the old searcher kept, when the new one's table cannot be had."""
        if geometry != self.geometry:
            self.searcher = self._new_searcher(geometry)
            self.geometry = geometry
            self._books_at_full_strength = self._full_strength()

    def apply(self, option: str) -> None:
        """Make an option that was just set take effect.  ``Hash``, ``Threads`` and
        ``Large Pages`` raise MemoryError, with the searcher unchanged, when the new
        table cannot be had."""
        if option == "Hash":
            self.searcher.resize(self.options.number("Hash"))
            self._tell_pages(self.searcher)
        elif option == "Threads":
            self.searcher.set_threads(self.options.number("Threads"))
            self._tell_pages(self.searcher)
        elif option == "Large Pages":
            self.searcher.set_huge_pages(bool(self.options["Large Pages"]))
            self._tell_pages(self.searcher, asked=True)
        elif option == "Clear Hash":
            self.searcher.clear()
        elif option == "OwnBook":
            self.searcher.set_book(self._wanted_book(self.geometry))
            self.searcher.set_built_book(self._wanted_built_book(self.geometry))
        elif option == "BookFile":
            built_book = self._loaded_built_book(self.geometry)  # a refused file raises here
            self.searcher.set_built_book(built_book if self._full_strength() else None)
        elif option == "Evaluation":
            self.searcher.set_weights(self._weights(self.geometry, tell=True))
            self.searcher.clear()
        elif option in STRENGTH_OPTIONS:
            self._follow_strength()

    def _full_strength(self) -> bool:
        return wanted_strength(self.options) is None

    def _follow_strength(self) -> None:
        """A level knows no book (see :mod:`c4engine.search.levels`): the books go when
        the options first ask for a level and come back at full strength; each change
        empties the table, whose entries hold the books' scores."""
        full_strength = self._full_strength()
        if full_strength != self._books_at_full_strength:
            self.searcher.set_book(self._wanted_book(self.geometry))
            self.searcher.set_built_book(self._wanted_built_book(self.geometry))
            self._books_at_full_strength = full_strength

    def _weights(self, geometry: Geometry, tell: bool = False) -> np.ndarray:
        """The weights the ``Evaluation`` option names on ``geometry``'s board; with
        ``tell``, say so when the board has no learned weights and the hand-written
        ones stand in, or name the network that plays."""
        name = self.options.text("Evaluation")
        weights, stand_in = weights_named(name, geometry)
        if stand_in and tell:
            self.write(f"info string no learned evaluation for the {geometry} board: "
                       "using the hand-written threat weights")
        elif name == NTUPLE and tell:
            self.write(f"info string evaluation ntuple: {ntuple_note(geometry)}")
        return weights

    def _wanted_book(self, geometry: Geometry) -> OpeningBook:
        """The book if ``OwnBook`` is on, at full strength, on the board it covers (7x6,
        four in a row), and if it can be had; else none, said once per board change."""
        if not self.options["OwnBook"] or not self._full_strength():
            return OpeningBook.empty()
        if geometry != STANDARD:
            self.write(f"info string no opening book for the {geometry} board (the book covers 7x6)")
            return OpeningBook.empty()
        return self._loaded_book()

    def _loaded_built_book(self, geometry: Geometry) -> BuiltBook | None:
        """The ``BookFile`` book for ``geometry``; for ``<empty>``, the engine's own
        4-stone book on 7x6 if ``OwnBook`` is on, else none.  OptionError when the
        file is no sound book or is for another board."""
        path = self.options.text("BookFile")
        if path == NO_PATH:
            return own_built_book() if self.options["OwnBook"] and geometry == STANDARD else None
        try:
            return BuiltBook.load(path, geometry)
        except BookFileError as err:
            raise OptionError(f"option BookFile: {err}") from None

    def _wanted_built_book(self, geometry: Geometry) -> BuiltBook | None:
        """The ``BookFile`` book at full strength (as :meth:`_built_book_for`), none at a level."""
        return self._built_book_for(geometry) if self._full_strength() else None

    def _built_book_for(self, geometry: Geometry) -> BuiltBook | None:
        """On a board change: the ``BookFile`` book if it is for the new board, else none,
        said in an ``info string``."""
        try:
            return self._loaded_built_book(geometry)
        except OptionError as err:
            self.write(f"info string searching the {geometry} board without a book file: {err}")
            return None

    def _loaded_book(self) -> OpeningBook:
        """The opening book, loaded on first use; without it, say so once and go on."""
        if self._book is None:
            self._book = OpeningBook.load_or_empty(lambda message: self.write(f"info string {message}"))
        return self._book

    def limits(self, pos: Board, params: GoParams, timed: bool, spent_ms: float = 0.0) -> Limits:
        """Limits for a ``go`` read ``spent_ms`` ago; without ``timed`` (infinite, ponder)
        no clock applies."""
        budget = self.budget(pos, params) if timed else None
        return Limits(depth=params.depth, nodes=params.nodes, mate=params.mate,
                      soft_ms=budget.soft_ms if budget else None,
                      hard_ms=budget.hard_ms if budget else None).after(spent_ms)

    def budget(self, pos: Board, params: GoParams) -> Budget | None:
        """Thinking time from ``movetime`` (which wins over a clock) or the side to
        move's clock, if any."""
        return go_budget(pos, params, float(self.options.number("Move Overhead")), self.lateness.allowance_ms())

    def search(self, pos: Board, limits: Limits, stop: StopSignal, drops: bool, result_first: bool = False) -> Result:
        """Search and write an ``info`` line per ``MultiPV`` line of every finished
        iteration; below full strength, choose the move as the level does.
        ``result_first``: a game's move, see :meth:`Searcher.search`."""
        shown = self.options.number("MultiPV")

        def report(rep: Report) -> None:
            for index in range(min(shown, len(rep.lines))):
                self.write(info_line(pos, rep, index, drops))
        strength = wanted_strength(self.options)
        if strength is None:
            return self.searcher.search(pos, limits, report, stop, shown, result_first=result_first)
        result = self.searcher.search(pos, strength.cap(limits), report, stop, pos.geometry.width,
                                      solve_early=False)
        return strength.weakened(result, self._rng)

    def describe_eval(self, pos: Board) -> list[str]:
        """The evaluation's terms for each player with their weights (each player has
        its own threat weights), the weighted totals and the total from the side to
        move's view.  The weights of live threats by their cells are shown summed, as a
        count of weight 1.  An n-tuple network has no terms to show: its size, a hybrid's
        threat terms' value, and the total."""
        weights = self._weights(self.geometry)
        evaluation = self.searcher.kernel.evaluation
        if weights[NTUPLE_ADDRESS] != 0:
            total = evaluation.evaluate(pos.current, pos.mask, pos.stones, weights)
            block = ntuple_block(self.geometry)  # what the weights point at
            tuples = 0 if block is None else int(block[ROWS]) // 2
            lines = [f"n-tuple network: {tuples} tuples of {TUPLE_LENGTH} cells, each read on the mirror image too"]
            if weights[NTUPLE_LINEAR] != 0:
                linear = evaluation.linear_score(pos.current, pos.mask, pos.stones, weights)
                lines.append(f"threat terms beside it (side to move): {linear} cp")
            return lines + [f"Evaluation (side to move): {total} cp"]
        first, second = pos.first_player_stones(), pos.mask ^ pos.first_player_stones()
        rows = [(name, weights[FIRST_THREATS + i], x, weights[SECOND_THREATS + i], o)
                for i, (name, x, o) in enumerate(zip(THREAT_NAMES, evaluation.side_terms(first, second, pos.mask, True),
                                                     evaluation.side_terms(second, first, pos.mask, False)))]
        rows.append(("first player", weights[FIRST_PLAYER_BONUS], 1, weights[FIRST_PLAYER_BONUS], 0))
        live_first = evaluation.threat_cells(first, second, pos.mask)[1]
        live_second = evaluation.threat_cells(second, first, pos.mask)[1]
        rows.append(("threat cells (weighed)", 1, evaluation.cell_score(live_first, True, weights), 1,
                     evaluation.cell_score(live_second, False, weights)))
        for steps in range(evaluation.EDGE_STEPS):
            cells = sum(column_cells(col, pos.geometry.height) for col, s in enumerate(evaluation.EDGE_STEPS_OF_COLUMN)
                        if s == steps)
            weight = weights[COLUMN_STONES + steps]
            rows.append((f"stones {steps} from edge", weight, popcount(first & cells), weight,
                         popcount(second & cells)))
        lines = [f"{'term':<22}{'X weight':>9}{'X (first)':>11}{'O weight':>9}{'O (second)':>11}"]
        lines += [f"{name:<22}{wx:>9}{x:>11}{wo:>9}{o:>11}" for name, wx, x, wo, o in rows]
        total_first = evaluation.side_score(first, second, pos.mask, True, weights)
        total_second = evaluation.side_score(second, first, pos.mask, False, weights)
        lines.append(f"{'weighted total':<22}{'':>9}{total_first:>11}{'':>9}{total_second:>11}")
        total = evaluation.evaluate(pos.current, pos.mask, pos.stones, weights)
        lines.append(f"Evaluation (side to move): {total} cp")
        return lines

    def perft(self, pos: Board, depth: int, drops: bool, stopped: Callable[[], bool]) -> list[str]:
        """Per-move counts and the total, as Stockfish prints them; once ``stopped()``,
        the moves counted so far and a line that says perft stopped."""
        moves = pos.legal_moves()
        lines, total = [], 0
        for col in moves:
            count = self._perft_count(pos.play(col), depth - 1, stopped)
            if count is None:
                return lines + [f"info string perft stopped after {len(lines)} of {len(moves)} moves"]
            total += count
            lines.append(f"{format_move(col, pos, drops)}: {count}")
        return lines + ["", f"Nodes searched: {total}"]

    def _perft_count(self, pos: Board, depth: int, stopped: Callable[[], bool]) -> int | None:
        """perft of ``pos`` in kernel calls of at most :data:`PERFT_PIECE_LEAVES` move
        sequences each (a few milliseconds), ``stopped()`` asked between them (numba
        cannot be interrupted); None once it says stop."""
        if stopped():
            return None
        if pos.geometry.width ** depth <= PERFT_PIECE_LEAVES or pos.is_over():
            return self.searcher.kernel.perft(pos.current, pos.mask, depth)
        total = 0
        for col in pos.legal_moves():
            count = self._perft_count(pos.play(col), depth - 1, stopped)
            if count is None:
                return None
            total += count
        return total

    def bench(self) -> list[str]:
        result = bench_lines(run_bench(self.searcher))
        self.searcher.clear()
        return result


def info_line(pos: Board, rep: Report, index: int, drops: bool) -> str:
    """One ``info`` line for line ``index`` (0-based) of a report."""
    line = rep.lines[index]
    elapsed_ms = int(rep.elapsed * 1000)
    nps = int(rep.nodes / rep.elapsed) if rep.elapsed > 0 else 0
    pv = " ".join(format_line(pos, list(line.pv), drops))
    return (f"info depth {rep.depth} seldepth {rep.seldepth} multipv {index + 1} "
            f"score {score_text(line.score, pos.stones, rep.exact, pos.geometry.cells)} nodes {rep.nodes} nps {nps} "
            f"hashfull {rep.hashfull} time {elapsed_ms} pv {pv}")


def score_text(score: int, stones: int, exact: bool, cells: int) -> str:
    """``mate N`` for a proven win or loss, ``cp X`` otherwise (a proven draw is ``cp 0``).

    A depth-limited iteration can prove a win without proving it the fastest
    (a quicker one may lie past its horizon), so until the exact solver has
    spoken, a proven score is a bound: ``lowerbound`` for a win (it wins in at
    most N moves), ``upperbound`` for a loss (it loses in at most |N|)."""
    if not is_proven(score):
        return f"cp {score}"
    text = f"mate {mate_distance(score, stones, cells)}"
    if exact:
        return text
    return text + (" lowerbound" if score > 0 else " upperbound")


def bestmove_line(pos: Board, result: Result, drops: bool) -> str:
    """``bestmove <m> [ponder <m>]``."""
    if result.move is None:
        return "bestmove (none)"
    text = f"bestmove {format_move(result.move, pos, drops)}"
    pv = result.report.best.pv if result.report is not None else ()
    after = pos.play(result.move)
    if len(pv) > 1 and pv[0] == result.move and not after.is_over() and after.can_play(pv[1]):
        text += f" ponder {format_move(pv[1], after, drops)}"
    return text


def wanted_strength(options: Options) -> Strength | None:
    """The strength the options ask for, or None for full strength.  ``UCI_LimitStrength``
    with ``UCI_Elo`` wins over ``Skill Level``, as in Stockfish."""
    if options["UCI_LimitStrength"]:
        level = level_for_elo(options.number("UCI_Elo"))
    else:
        level = float(options.number("Skill Level"))
    return None if level >= FULL_STRENGTH else Strength(level)
