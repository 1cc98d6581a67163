"""Kaggle ConnectX agents and the adapters' policies, each turned into the other.

Public names: :class:`Struct`, :func:`policy_from_agent` (any ``agent(observation, configuration)``
as a PettingZoo-shaped policy, which :class:`~c4engine.integrations.openspiel.PolicyBot`,
the Gymnasium environment's ``opponent`` and :func:`~c4engine.integrations.pettingzoo.play_game`
take) and :func:`agent_from_policy` (a policy as a Kaggle agent, for
``kaggle_environments.make("connectx").run`` or a submission).  c4engine's own
Kaggle agent is :func:`c4engine.connectx.agent`; its board reader checks every
board handed to a policy here.  Neither needs a library beyond c4engine's own.

pgx's ``connect_four`` is not covered: its state lives in JAX arrays, so even
reading one needs JAX installed (and a batch of them, a device round trip),
which is far more than these adapters' numpy; convert a pgx board to planes
yourself (``np.asarray``) and call any policy here on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..connectx import KAGGLE_ACT_TIMEOUT, field, geometry_of, position_of
from .planes import action_mask_of, cells_of, planes_of
from .player import Policy

Agent = Callable[[Any, Any], int]
OVERAGE_SECONDS = 60.0  # Kaggle's remainingOverageTime at the start of a game


class Struct(dict):  # type: ignore[type-arg]
    """A dict whose keys read as attributes too, as Kaggle's own ``Struct``: agents
    read ``observation.board`` or ``observation["board"]`` alike."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def policy_from_agent(agent: Agent, connect: int = 4, act_timeout: float = KAGGLE_ACT_TIMEOUT) -> Policy:
    """A policy that asks ``agent`` for each move, showing it the board as Kaggle would:
    ``observation`` with ``board`` (flat, top row first, 0/1/2), ``mark`` (the side
    to move's), ``step`` and ``remainingOverageTime``, and ``configuration`` with
    ``columns``, ``rows`` (the planes' size), ``inarow`` (``connect``) and
    ``actTimeout``; both are :class:`Struct`, dicts whose keys read as attributes
    too, as Kaggle passes them.  The agent's answer comes back as an ``int``."""
    def policy(observation: Any, action_mask: Any = None) -> int:
        cells, mark = cells_of(observation)
        rows, columns = cells.shape
        seen = Struct(board=cells.ravel().tolist(), mark=mark, step=int(np.count_nonzero(cells)),
                      remainingOverageTime=OVERAGE_SECONDS)
        configuration = Struct(columns=columns, rows=rows, inarow=connect, actTimeout=act_timeout)
        return int(agent(seen, configuration))
    return policy


def agent_from_policy(policy: Policy) -> Agent:
    """A Kaggle agent that asks ``policy`` for each move, showing it the board as
    PettingZoo would (the planes of the player ``mark`` and the action mask).
    Kaggle's fields are read as :func:`c4engine.connectx.agent` reads them (dicts or
    attributes, Kaggle's defaults for missing sizes); a board no game reaches
    raises :class:`c4engine.IllegalMoveError`."""
    def agent(observation: Any, configuration: Any) -> int:
        geometry = geometry_of(configuration)
        board, mark = field(observation, "board"), field(observation, "mark")
        position_of(board, mark, geometry)  # the reader's checks
        cells = np.asarray(board, dtype=np.int8).reshape(geometry.height, geometry.width)
        return int(policy(planes_of(cells, mark), action_mask_of(cells)))
    return agent
