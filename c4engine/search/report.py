"""What a search hands back: a line per root move, the reports during a search, the result;
or, for a solve past its node limit, :class:`SolveLimitReached`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    """One searched move with its score and principal variation (columns, 0-based)."""

    score: int
    pv: tuple[int, ...]


@dataclass(frozen=True)
class Report:
    """What one finished iteration found, for an ``info`` line."""

    depth: int
    seldepth: int
    lines: tuple[Line, ...]
    nodes: int
    elapsed: float
    exact: bool
    hashfull: int

    @property
    def best(self) -> Line:
        return self.lines[0]


@dataclass(frozen=True)
class Result:
    """The move to play (``None`` when the game is over) and the last report behind it."""

    move: int | None
    report: Report | None = None
    nodes: int = 0


class SolveLimitReached(RuntimeError):
    """A solve stopped at its node limit (``Searcher.solve``'s ``node_limit``): the
    position's score is unknown."""
