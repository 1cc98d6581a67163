"""The search as the protocol uses it: options applied, limits chosen, info lines written.

Importing this module compiles (or loads from numba's cache) the search
kernel, which is why :mod:`c4engine.protocol.server` imports it in a background
thread; everything here may take its time to build.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Callable

import numpy as np

from ..geometry import STANDARD, Geometry
from ..kernel.book import OpeningBook
from ..kernel.evaluation import CENTRE_ONLY, TERM_NAMES, THREAT_WEIGHTS
from ..rules.board import Board
from ..rules.notation import format_line, format_move
from ..rules.scores import is_proven, mate_distance
from ..search.bench import bench_lines, run_bench
from ..search.levels import FULL_STRENGTH, Strength, level_for_elo
from ..search.limits import Budget, Limits, clock_budget, movetime_budget
from ..search.pool import StopSignal
from ..search.report import Report, Result
from ..search.searcher import Searcher
from .go_params import GoParams
from .options import Options

WEIGHTS_BY_NAME = {"threats": THREAT_WEIGHTS, "centre": CENTRE_ONLY}


class Backend:
    """The engine's searcher for the board in play, configured from the protocol's options."""

    def __init__(self, options: Options, write: Callable[[str], None],
                 geometry: Geometry = STANDARD) -> None:
        self.options = options
        self.write = write
        self.geometry = geometry
        self._book: OpeningBook | None = None
        self._rng = random.Random()
        self.searcher = self._new_searcher(geometry)

    def _new_searcher(self, geometry: Geometry) -> Searcher:
        """A searcher for ``geometry`` with the options' table, threads, evaluation and book,
        warmed up (on a board's first use this compiles its kernel)."""
        book = self._wanted_book(geometry)
        searcher = Searcher(self.options.number("Hash"), self._weights(), book,
                            self.options.number("Threads"), geometry=geometry)
        searcher.warm_up()
        return searcher

    def set_geometry(self, geometry: Geometry) -> None:
        """Search on the board of ``geometry`` from now on, with a new searcher (the old
        one, its table and its helper threads go once it is replaced); MemoryError,
        with the old searcher kept, when the new one's table cannot be had."""
        if geometry != self.geometry:
            self.searcher = self._new_searcher(geometry)
            self.geometry = geometry

    def apply(self, option: str) -> None:
        """Make an option that was just set take effect.  ``Hash`` and ``Threads`` raise
        MemoryError, with the searcher unchanged, when the new table cannot be had."""
        if option == "Hash":
            self.searcher.resize(self.options.number("Hash"))
        elif option == "Threads":
            self.searcher.set_threads(self.options.number("Threads"))
        elif option == "Clear Hash":
            self.searcher.clear()
        elif option == "OwnBook":
            self.searcher.set_book(self._wanted_book(self.geometry))
        elif option == "Evaluation":
            self.searcher.set_weights(self._weights())
            self.searcher.clear()

    def _weights(self) -> np.ndarray:
        return WEIGHTS_BY_NAME[self.options.text("Evaluation")]

    def _wanted_book(self, geometry: Geometry) -> OpeningBook:
        """The book if ``OwnBook`` is on, the board is the one it covers (7x6, four in a
        row) and the book can be had; else none, said once per board change."""
        if not self.options["OwnBook"]:
            return OpeningBook.empty()
        if geometry != STANDARD:
            self.write(f"info string no opening book for the {geometry} board (the book covers 7x6)")
            return OpeningBook.empty()
        return self._loaded_book()

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
        if params.movetime is not None:
            return movetime_budget(params.movetime)
        overhead = float(self.options.number("Move Overhead"))
        time_left, increment = params.clock(pos.side_to_move == 0)
        if time_left is None:
            return None
        return clock_budget(time_left, increment, params.movestogo, pos.stones, overhead, pos.geometry.cells)

    def search(self, pos: Board, limits: Limits, stop: StopSignal, drops: bool) -> Result:
        """Search and write an ``info`` line per ``MultiPV`` line of every finished
        iteration; below full strength, choose the move as the level does."""
        shown = self.options.number("MultiPV")

        def report(rep: Report) -> None:
            for index in range(min(shown, len(rep.lines))):
                self.write(info_line(pos, rep, index, drops))
        strength = wanted_strength(self.options)
        if strength is None:
            return self.searcher.search(pos, limits, report, stop, shown)
        result = self.searcher.search(pos, strength.cap(limits), report, stop, pos.geometry.width)
        return self._weakened(result, strength)

    def _weakened(self, result: Result, strength: Strength) -> Result:
        """The result with its move chosen among every scored root move by the level;
        the chosen line goes first, so that ``bestmove`` ponders on its reply."""
        if result.report is None:
            return result
        lines = result.report.lines
        chosen = strength.choose([line.score for line in lines], self._rng)
        ordered = (lines[chosen],) + lines[:chosen] + lines[chosen + 1:]
        return replace(result, move=lines[chosen].pv[0], report=replace(result.report, lines=ordered))

    def describe_eval(self, pos: Board) -> list[str]:
        """The evaluation's terms for each side, weighted, and the total."""
        weights = self._weights()
        side_terms, side_score = self.searcher.kernel.evaluation.side_terms, self.searcher.kernel.evaluation.side_score
        first, second = pos.first_player_stones(), pos.mask ^ pos.first_player_stones()
        terms_first = side_terms(first, second, pos.mask, True)
        terms_second = side_terms(second, first, pos.mask, False)
        lines = [f"{'term':<22}{'weight':>7}{'X (first)':>12}{'O (second)':>12}"]
        for name, weight, a, b in zip(TERM_NAMES, weights, terms_first, terms_second):
            lines.append(f"{name:<22}{weight:>7}{a:>12}{b:>12}")
        total_first = side_score(first, second, pos.mask, True, weights)
        total_second = side_score(second, first, pos.mask, False, weights)
        lines.append(f"{'weighted total':<22}{'':>7}{total_first:>12}{total_second:>12}")
        total = self.searcher.kernel.evaluation.evaluate(pos.current, pos.mask, pos.stones, weights)
        lines.append(f"Evaluation (side to move): {total} cp")
        return lines

    def perft(self, pos: Board, depth: int, drops: bool) -> list[str]:
        """Per-move counts and the total, as Stockfish prints them."""
        lines, total = [], 0
        for col in pos.legal_moves():
            child = pos.play(col)
            count = int(self.searcher.kernel.solve.perft(child.current, child.mask, depth - 1))
            total += count
            lines.append(f"{format_move(col, pos, drops)}: {count}")
        return lines + ["", f"Nodes searched: {total}"]

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
