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
``agent(position)`` with a :class:`c4engine.Position` and takes its column 1-W;
``pettingzoo`` calls ``policy(observation, action_mask)`` with
``connect_four_v3``'s planes (:mod:`c4engine.integrations.planes` draws them) and
takes its 0-based column; ``openspiel`` calls ``factory(game)`` once per board for
a ``pyspiel.Bot`` (``mcts:N``: OpenSpiel's ``MCTSBot`` with N simulations, as its
``mcts.py`` example sets it up: UCT constant 2, one random rollout, solving
on, its random state seeded with N: the same set in the same order gets the
same moves) and takes ``bot.step(state)``, the state reached by
the position's moves.
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


def pettingzoo_arguments(moves: list[int], width: int, height: int, connect: int) -> tuple[Any, Any]:
    """``connect_four_v3``'s observation planes and action mask for the player to move."""
    import numpy as np

    from ..integrations.planes import action_mask_of, planes_of
    observation, _ = kaggle_arguments(moves, width, height, connect)
    cells = np.array(observation.board, dtype=np.int8).reshape(height, width)
    return planes_of(cells, observation.mark), action_mask_of(cells)


class OpenSpielPlayer:
    """A ``pyspiel.Bot`` from ``factory(game)``, made once per board; its move in the
    state the position's moves reach."""

    def __init__(self, factory: Callable[..., Any]) -> None:
        self.factory, self.bots, self.games = factory, {}, {}  # type: ignore[var-annotated]

    def __call__(self, moves: list[int], width: int, height: int, connect: int) -> int:
        import pyspiel

        from ..integrations.openspiel import geometry_of
        board = (width, height, connect)
        if board not in self.bots:
            game = pyspiel.load_game("connect_four", {"columns": width, "rows": height, "x_in_row": connect})
            geometry_of(game)  # the adapters' check that c4engine plays it
            self.games[board], self.bots[board] = game, self.factory(game)
        state = self.games[board].new_initial_state()
        for col in moves:
            state.apply_action(col)
        return int(self.bots[board].step(state))


def mcts_factory(simulations: int) -> Callable[[Any], Any]:
    """OpenSpiel's ``MCTSBot`` with ``simulations`` a move, as its ``mcts.py`` example
    makes it (UCT constant 2, one random rollout, solving on)."""
    import numpy as np
    from open_spiel.python.algorithms import mcts

    def factory(game: Any) -> Any:
        rng = np.random.RandomState(simulations)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
        return mcts.MCTSBot(game, uct_c=2, max_simulations=simulations, evaluator=evaluator, solve=True,
                            random_state=rng)
    return factory


def answer(agent: Callable[..., Any], shape: str, request: dict[str, Any]) -> dict[str, Any]:
    """The agent's column for ``request`` as 0-based ``move``, or the ``error`` it made."""
    moves, width, height, connect = request["moves"], request["width"], request["height"], request["connect"]
    offset = 0
    try:
        if shape == "kaggle":
            result = agent(*kaggle_arguments(moves, width, height, connect))
        elif shape == "pettingzoo":
            result = agent(*pettingzoo_arguments(moves, width, height, connect))
        elif shape == "openspiel":
            result = agent(moves, width, height, connect)
        else:
            from ..position import Position
            result = agent(Position.from_moves([c + 1 for c in moves], width, height, connect))
            offset = 1
    except Exception as err:  # the agent's own failure, reported, never fatal here
        return {"error": f"raised {type(err).__name__}: {str(err)[:200]}"}
    if isinstance(result, bool):
        return {"error": f"returned {result!r}, not a column"}
    try:
        return {"move": operator.index(result) - offset}
    except TypeError:
        return {"error": f"returned {str(result)[:40]!r} ({type(result).__name__}), not a whole number"}


def agent_of(spec: str, shape: str) -> Callable[..., Any]:
    """What :func:`answer` calls for the agent ``spec`` names in ``shape``."""
    if shape != "openspiel":
        return load(spec)
    kind, _, count = spec.partition(":")
    if kind == "mcts" and count.isdigit():
        return OpenSpielPlayer(mcts_factory(int(count)))
    return OpenSpielPlayer(load(spec))


def serve(spec: str, shape: str, replies: TextIO) -> None:
    try:
        agent = agent_of(spec, shape)
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
