"""How long an engine is given, and what a search returns: python-chess' ``Limit``
and the result of ``go``, with the waits the client allows at each step.

Apart from :mod:`c4engine.engine.client` because the referee's configuration and
the web board read these waits without driving a process themselves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..protocol.go_params import GoParams
from .info import InfoDict, parse_number

HANDSHAKE_TIMEOUT = 35.0  # what cutechess allows for `uciok`


READY_TIMEOUT = 15.0  # ... and for `readyok`
PREPARE_TIMEOUT = 600.0  # c4engine's first readyok on a new board: it compiles its kernels first


# An engine that touches every page of its transposition table before readyok is slow
# with a large Hash: c4engine did so until its tables were allocated lazily (9-18 s for
# Hash 8192 on this 2-core machine, 23.3 s for Hash 4096 with the load average at 7,
# 5.8 s per GiB).  A readyok after a large Hash gets this much longer per GiB asked
# for, rather than the referee refusing to start such an engine.
READY_SECONDS_PER_GIB = 8.0


SEARCH_GRACE = 5.0  # past its time limit, before a search counts as silent (SimpleEngine: stop included)


STOP_GRACE = 1.0  # of that, what is kept for a search given up on to answer stop and isready


SEARCH_TIMEOUT = 60.0  # for searches limited by depth or nodes only


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


def hash_ready_seconds(options: Sequence[tuple[str, str]]) -> float:
    """Extra ``readyok`` time for a large ``Hash`` option (see READY_SECONDS_PER_GIB)."""
    for name, value in options:
        if name.lower() == "hash":
            try:
                return max(0, parse_number(value.strip())) / 1024 * READY_SECONDS_PER_GIB
            except ValueError:
                return 0.0
    return 0.0
