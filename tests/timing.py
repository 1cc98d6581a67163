"""Latency promises measured so that a busy machine cannot fail them by chance."""

from __future__ import annotations

from collections.abc import Callable


def best_of(measure: Callable[[], float], within: float, tries: int = 5) -> float:
    """The smallest of up to ``tries`` measurements, stopping at the first one within
    ``within``: a loaded machine delays some tries, while code that breaks the
    promise fails every one of them."""
    best = float("inf")
    for _ in range(tries):
        best = min(best, measure())
        if best < within:
            break
    return best
