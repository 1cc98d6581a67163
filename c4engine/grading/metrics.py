"""The grades of moves against exact scores, with their published definitions.

For a position whose every column has an exact Pons score, a move is

- *perfect* when its score equals the best score (PARL's "perfect"; where
  several columns have the best score, each of them is perfect);
- *good* when it keeps the position's win/draw/loss class: the sign of its
  score is the sign of the best score (PARL's "good"; in a lost position every
  move is good);
- a *mistake* as AlphaZero.jl's Pons benchmark counts one: the sign of its
  score is below the best sign (``sign(qs[a]) != maximum(sign, qs)``).  That is
  exactly a move that is not good: the rate is ``1 - good``, given apart so that
  the figure can be compared with AlphaZero.jl's error rates as it prints them.

A *failure* (the agent raised, hung past its time, crashed, or gave no legal
column) is neither perfect nor good, and is a mistake.  Each rate comes with
Wilson's 95% score interval, which stays inside 0-100% and is sound for rates
near either end, where most agents' are.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..referee.strength import sign
from .sets import SetPosition

Z_95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval


@dataclass(frozen=True)
class Grade:
    """What an agent played in one position: ``played`` the 0-based column, or None
    with ``failure`` saying why there is no legal move; ``set_name`` the set."""

    position: SetPosition
    set_name: str
    played: int | None
    failure: str = ""
    seconds: float = 0.0

    @property
    def score(self) -> int | None:
        if self.played is None or self.position.scores is None:
            return None
        return self.position.scores[self.played]

    @property
    def perfect(self) -> bool:
        return self.score is not None and self.score == self.position.best

    @property
    def good(self) -> bool:
        return self.score is not None and sign(self.score) == sign(self.position.best)

    @property
    def mistake(self) -> bool:
        return not self.good

    @property
    def loss(self) -> tuple[int, int]:
        """How bad the move was, for ordering the worst first: the classes it fell
        (2 for a win thrown to a loss, 3 for a failure) and the score it gave away."""
        if self.score is None:
            return 3, 0
        return sign(self.position.best) - sign(self.score), self.position.best - self.score


@dataclass(frozen=True)
class Rate:
    """``count`` of ``total``, with Wilson's 95% interval (fractions 0-1)."""

    count: int
    total: int

    @property
    def value(self) -> float:
        return self.count / self.total if self.total else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.count, self.total)

    def as_dict(self) -> dict[str, float | int]:
        low, high = self.interval
        return {"count": self.count, "total": self.total, "rate": self.value, "low": low, "high": high}


def wilson(count: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson's score interval for ``count`` successes in ``total`` trials."""
    if total == 0:
        return 0.0, 1.0
    p = count / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return (0.0 if count == 0 else centre - half), (1.0 if count == total else centre + half)


@dataclass(frozen=True)
class Summary:
    """The grades of a group of positions."""

    positions: int
    perfect: Rate
    good: Rate
    mistake: Rate
    failures: int

    def as_dict(self) -> dict[str, object]:
        return {"positions": self.positions, "perfect": self.perfect.as_dict(), "good": self.good.as_dict(),
                "mistake": self.mistake.as_dict(), "failures": self.failures}


def summarise(grades: Iterable[Grade]) -> Summary:
    graded = list(grades)
    total = len(graded)
    return Summary(total, Rate(sum(g.perfect for g in graded), total), Rate(sum(g.good for g in graded), total),
                   Rate(sum(g.mistake for g in graded), total), sum(bool(g.failure) for g in graded))


def grouped(grades: Iterable[Grade], key: Callable[[Grade], str]) -> dict[str, Summary]:
    """A summary per value of ``key``, in the order the values first come."""
    groups: dict[str, list[Grade]] = {}
    for grade in grades:
        groups.setdefault(key(grade), []).append(grade)
    return {name: summarise(members) for name, members in groups.items()}


PHASE_STONES = 6  # stones per phase: 0-5, 6-11, ... (seven phases on 7x6)


def phase_name(stones: int) -> str:
    """The phase of a position with ``stones`` stones: a stretch of :data:`PHASE_STONES`."""
    low = stones // PHASE_STONES * PHASE_STONES
    return f"{low}-{low + PHASE_STONES - 1}"


def by_phase(grades: Iterable[Grade]) -> dict[str, Summary]:
    ordered = sorted(grades, key=lambda g: g.position.stones)
    return grouped(ordered, lambda g: phase_name(g.position.stones))


def by_set(grades: Iterable[Grade]) -> dict[str, Summary]:
    """A summary per set and class (``set/L1_R2``), sets in order, classes sorted."""
    graded = list(grades)
    order = {name: i for i, name in reversed(list(enumerate(g.set_name for g in graded)))}
    ordered = sorted(graded, key=lambda g: (order[g.set_name], g.position.label))
    return grouped(ordered, lambda g: f"{g.set_name}/{g.position.label}")


def worst(grades: Iterable[Grade], count: int) -> list[Grade]:
    """The ``count`` worst moves that were not perfect, the worst first."""
    flawed = [g for g in grades if not g.perfect]
    return sorted(flawed, key=lambda g: g.loss, reverse=True)[:count]
