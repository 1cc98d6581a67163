"""Agents for the tests of ``c4engine grade`` (tests/test_grading.py), run in the
grader's child process.  ``best`` and ``worst`` read the exact scores of the set
named by the GRADING_SET environment variable; the misbehaving ones misbehave in
positions whose stones are a multiple of 3 and play the first legal column
elsewhere, so that a test sees grading go on after each failure."""

from __future__ import annotations

import os
import signal
import time

from c4engine import Position
from c4engine.grading.sets import read_set

_SCORES: dict[str, tuple[int | None, ...]] = {}


def _scores(position: Position) -> tuple[int | None, ...]:
    if not _SCORES:
        for p in read_set(os.environ["GRADING_SET"]).positions:
            if p.scores is not None:
                _SCORES[p.moves] = p.scores
    return _SCORES["".join(map(str, position.moves))]


def best(position: Position) -> int:
    scores = _scores(position)
    return 1 + scores.index(max(s for s in scores if s is not None))


def worst(position: Position) -> int:
    scores = _scores(position)
    return 1 + scores.index(min(s for s in scores if s is not None))


def _first(position: Position) -> int:
    return position.legal_moves()[0]


def _misbehaves(position: Position) -> bool:
    return len(position.moves) % 3 == 0


def raises(position: Position) -> int:
    if _misbehaves(position):
        raise RuntimeError("the agent's own bug")
    return _first(position)


def hangs(position: Position) -> int:
    if _misbehaves(position):
        time.sleep(3600)
    return _first(position)


def illegal(position: Position) -> int:
    return 99 if _misbehaves(position) else _first(position)


def fraction(position: Position) -> object:
    return 3.5 if _misbehaves(position) else _first(position)


def crashes(position: Position) -> int:
    if _misbehaves(position):
        os.kill(os.getpid(), signal.SIGSEGV)
    return _first(position)


def prints(position: Position) -> int:
    print("chatter on standard output")
    return _first(position)


def first_free(observation: object, action_mask: object) -> int:
    """A PettingZoo policy: the first column its mask allows."""
    return list(action_mask).index(1)  # type: ignore[call-overload]


def kaggle_fraction(observation: object, configuration: object) -> object:
    """Kaggle's shape: 3.5 where ``fraction`` says it, else the first free column (0-based)."""
    board = observation.board  # type: ignore[attr-defined]
    if sum(1 for cell in board if cell) % 3 == 0:
        return 3.5
    return next(col for col in range(configuration.columns) if board[col] == 0)  # type: ignore[attr-defined]


def at_random(position: Position) -> int:
    """Any legal column, from Python's global random generator."""
    import random
    return random.choice(position.legal_moves())
