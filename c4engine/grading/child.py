"""The child process that runs a Python agent for ``c4engine grade``.

``python -m c4engine.grading.child SPEC SHAPE`` imports the agent (``module:function``
or ``path/to/file.py:function``) and answers one JSON line per position on its
standard output: ``{"move": N}`` or ``{"error": "..."}``; its first line is
``{"ready": NAME}`` once the agent is imported (or ``{"error": ...}`` if it cannot
be).  Anything the agent prints goes to standard error, so it cannot garble
the answers.  The grader reads them with a time limit and, if this process
hangs or dies, counts the position as a failure and starts another: the agent
cannot take the grader down.

Shapes: ``kaggle`` calls ``agent(observation, configuration)`` as Kaggle's
ConnectX does and takes its 0-based column; ``position`` calls
``agent(position)`` with a :class:`c4engine.Position` and takes its column 1-W.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import operator
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

KAGGLE_ACT_TIMEOUT = 2.0


class Struct(dict):  # type: ignore[type-arg]
    """A dict whose keys read as attributes too, as Kaggle's ``Struct`` does."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def load(spec: str) -> Callable[..., Any]:
    """The function ``spec`` names; ValueError saying why it cannot be had."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        raise ValueError(f"'{spec}': expected module:function or file.py:function")
    if where.endswith(".py"):
        path = Path(where)
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None or not path.is_file():
            raise ValueError(f"'{where}': no such Python file")
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    function = getattr(module, name, None)
    if not callable(function):
        raise ValueError(f"'{spec}': {where} has no function {name}")
    return function


def kaggle_arguments(moves: list[int], width: int, height: int, connect: int) -> tuple[Struct, Struct]:
    """Kaggle's observation and configuration for the position after ``moves`` (0-based
    columns): the board a flat list, top row first, 1 and 2 the first and second player."""
    board = [0] * (width * height)
    heights = [0] * width
    for ply, col in enumerate(moves):
        row = height - 1 - heights[col]
        board[row * width + col] = 1 + ply % 2
        heights[col] += 1
    observation = Struct(board=board, mark=1 + len(moves) % 2, step=len(moves), remainingOverageTime=60)
    configuration = Struct(columns=width, rows=height, inarow=connect, actTimeout=KAGGLE_ACT_TIMEOUT,
                           timeout=KAGGLE_ACT_TIMEOUT, agentTimeout=60, episodeSteps=1000)
    return observation, configuration


def answer(agent: Callable[..., Any], shape: str, request: dict[str, Any]) -> dict[str, Any]:
    """The agent's column for ``request`` as 0-based ``move``, or the ``error`` it made."""
    moves, width = request["moves"], request["width"]
    try:
        if shape == "kaggle":
            result = agent(*kaggle_arguments(moves, width, request["height"], request["connect"]))
            offset = 0
        else:
            from ..position import Position
            result = agent(Position.from_moves([c + 1 for c in moves], width, request["height"], request["connect"]))
            offset = 1
    except Exception as err:  # the agent's own failure, reported, never fatal here
        return {"error": f"raised {type(err).__name__}: {str(err)[:200]}"}
    if isinstance(result, bool):
        return {"error": f"returned {result!r}, not a column"}
    try:
        return {"move": operator.index(result) - offset}
    except TypeError:
        return {"error": f"returned {str(result)[:40]!r} ({type(result).__name__}), not a whole number"}


def serve(spec: str, shape: str, replies: TextIO) -> None:
    try:
        agent = load(spec)
    except Exception as err:  # an agent that cannot be imported: the grader stops with this
        replies.write(json.dumps({"error": f"cannot load {spec}: {type(err).__name__}: {err}"}) + "\n")
        replies.flush()
        return
    replies.write(json.dumps({"ready": spec}) + "\n")
    replies.flush()
    for line in sys.stdin:
        replies.write(json.dumps(answer(agent, shape, json.loads(line))) + "\n")
        replies.flush()


def main() -> None:
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the agent's prints go to standard error
    sys.stdout = sys.stderr
    sys.path.insert(0, os.getcwd())
    serve(sys.argv[1], sys.argv[2], replies)


if __name__ == "__main__":
    main()
