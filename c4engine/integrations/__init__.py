"""c4engine inside the loops where agents are trained: OpenSpiel, PettingZoo, Gymnasium
and Kaggle-shaped agents, one module per library.

- :mod:`c4engine.integrations.openspiel`: ``C4Bot``, a ``pyspiel.Bot`` for any
  ``connect_four(rows=, columns=, x_in_row=)`` c4engine plays; ``PolicyBot``, any
  policy as a ``pyspiel.Bot``.
- :mod:`c4engine.integrations.pettingzoo`: ``C4Policy``, a policy for
  ``connect_four_v3``'s ``(observation, action_mask)``; ``play_game``, one game of
  the AEC loop between policies.
- :mod:`c4engine.integrations.gymnasium`: ``ConnectFourEnv``, a single-agent
  environment with c4engine as the opponent, registered as ``c4engine/ConnectFour-v0``.
- :mod:`c4engine.integrations.kaggle_agents`: ``policy_from_agent`` and
  ``agent_from_policy``, between Kaggle's ``agent(observation, configuration)``
  and a policy.
- :mod:`c4engine.integrations.player` (``EnginePlayer``: the engine at a
  strength) and :mod:`c4engine.integrations.planes` (the board as PettingZoo
  shows it), which they share and which need none of the libraries.

A *policy* is what PettingZoo's loop calls: ``policy(observation, action_mask) ->
action``, the observation an ``H x W x 2`` array (plane 0 the stones of the player
to move, plane 1 the opponent's, row 0 the top row), the mask one 0/1 per column,
the action a 0-based column.  Each adapter imports its library when it is
imported itself, never with ``import c4engine``: the core install needs none of
them (``pip install 'c4engine[openspiel]'``, ``[pettingzoo]``, ``[gymnasium]``).
They reach the engine through the in-process API (:mod:`c4engine.api`).
"""

from __future__ import annotations

import importlib
from types import ModuleType


def import_library(name: str, extra: str) -> ModuleType:
    """The library ``name``, or ImportError saying which extra installs it."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        raise ImportError(f"c4engine's {extra} adapter needs {name}: pip install 'c4engine[{extra}]'") from err
