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
ConnectX does, through the adapters'
:func:`~c4engine.integrations.kaggle_agents.policy_from_agent`, and takes its
0-based column; ``position`` calls
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
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

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


def policy_arguments(moves: list[int], width: int, height: int) -> tuple[Any, Any]:
    """``connect_four_v3``'s observation planes and action mask for the player to move
    after ``moves`` (0-based columns), drawn by the adapters' :mod:`~c4engine.integrations.planes`."""
    import numpy as np

    from ..integrations.planes import action_mask_of, planes_of
    cells = np.zeros((height, width), dtype=np.int8)  # row 0 the top, 1 and 2 the players' stones
    heights = [0] * width
    for ply, col in enumerate(moves):
        cells[height - 1 - heights[col], col] = 1 + ply % 2
        heights[col] += 1
    return planes_of(cells, 1 + len(moves) % 2), action_mask_of(cells)


class OpenSpielPlayer:
    """A ``pyspiel.Bot`` from ``factory(game)``, made once per board; its move in the
    state the position's moves reach."""

    def __init__(self, factory: Callable[..., Any]) -> None:
        self.factory = factory
        self.games: dict[tuple[int, int, int], Any] = {}  # by (width, height, connect)
        self.bots: dict[tuple[int, int, int], Any] = {}

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


class NotAColumn(Exception):
    """An agent's answer that is no whole number: it names the answer."""


def whole(result: object) -> int:
    """``result`` as a whole number (numpy's included), or NotAColumn."""
    if isinstance(result, bool):
        raise NotAColumn(f"returned {result!r}, not a column")
    try:
        return operator.index(result)  # type: ignore[arg-type]
    except TypeError:
        raise NotAColumn(f"returned {str(result)[:40]!r} ({type(result).__name__}), not a whole number") from None


def answer(agent: Callable[..., Any], shape: str, request: dict[str, Any]) -> dict[str, Any]:
    """The agent's column for ``request`` as 0-based ``move``, or the ``error`` it made."""
    moves, width, height, connect = request["moves"], request["width"], request["height"], request["connect"]
    offset = 0
    try:
        if shape == "kaggle":  # the answer is checked before the adapter's int() could round it
            from ..integrations.kaggle_agents import policy_from_agent
            move = policy_from_agent(lambda *seen: whole(agent(*seen)), connect)(*policy_arguments(moves, width, height))
        elif shape == "pettingzoo":
            move = whole(agent(*policy_arguments(moves, width, height)))
        elif shape == "openspiel":
            move = whole(agent(moves, width, height, connect))
        else:
            from ..position import Position
            move = whole(agent(Position.from_moves([c + 1 for c in moves], width, height, connect)))
            offset = 1
    except NotAColumn as err:
        return {"error": str(err)}
    except Exception as err:  # the agent's own failure, reported, never fatal here
        return {"error": f"raised {type(err).__name__}: {str(err)[:200]}"}
    return {"move": move - offset}


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


def seed_global_randomness() -> None:
    """Seed Python's and numpy's global random generators (with 0), which agents such
    as Kaggle's ``negamax`` draw their ties from: the same set in the same order
    then gets the same moves."""
    random.seed(0)
    try:
        import numpy as np
    except ImportError:
        return
    np.random.seed(0)


def main() -> None:
    seed_global_randomness()
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the agent's prints go to standard error
    sys.stdout = sys.stderr
    sys.path.insert(0, os.getcwd())
    serve(sys.argv[1], sys.argv[2], replies)


if __name__ == "__main__":
    main()
