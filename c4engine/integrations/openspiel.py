"""c4engine as an OpenSpiel player: ``C4Bot``, a ``pyspiel.Bot`` for ``connect_four``.

Public names: :class:`C4Bot` (c4engine at a strength), :class:`PolicyBot` (any
PettingZoo-shaped policy, a Kaggle agent through
:func:`c4engine.integrations.kaggle_agents.policy_from_agent` too, as a bot),
:func:`geometry_of` (the board of a game, or :class:`UnsupportedGameError`),
:func:`cells_of_state` and :func:`position_of_state`.

Both bots read the position from the state itself (``str(state)`` and
``current_player()``), never from ``history()``, which is empty for a state
made from JSON (``game.new_initial_state(json)``); so they keep nothing between
moves, and ``restart_at`` and ``inform_action`` have nothing to do.  They work in
OpenSpiel's Python ``evaluate_bots`` and in the C++ ``pyspiel.evaluate_bots``.
Importing this module imports ``pyspiel`` (``pip install 'c4engine[openspiel]'``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..api import FULL_STRENGTH
from ..geometry import Geometry
from ..position import IllegalMoveError, Position, board_shape
from . import import_library
from .planes import action_mask_of, planes_of, position_of_cells
from .player import EnginePlayer, Policy

pyspiel = import_library("pyspiel", "openspiel")

CELLS = str.maketrans({".": "0", "x": "1", "o": "2"})


class UnsupportedGameError(ValueError):
    """A game c4engine does not play: not ``connect_four``, or a board past its limits
    (width x (rows + 1) at most 128, ``x_in_row`` from 3 to the longer side, at
    most 26 columns); the message names the limit."""


def geometry_of(game: Any) -> Geometry:
    """The board of an OpenSpiel ``connect_four`` game, or :class:`UnsupportedGameError`."""
    name = game.get_type().short_name
    if name != "connect_four":
        raise UnsupportedGameError(f"c4engine plays connect_four, not {name}")
    params = game.get_parameters()
    try:
        return board_shape(params["columns"], params["rows"], params["x_in_row"])
    except IllegalMoveError as err:
        raise UnsupportedGameError(f"c4engine cannot play {game}: {err}") from None


def cells_of_state(state: Any, geometry: Geometry) -> tuple[np.ndarray, int]:
    """The state's cells (``H x W``, row 0 at the top, 1 the first player's stones)
    and the mark of the player to move, read from ``str(state)``."""
    text = str(state).translate(CELLS).split()
    cells = np.array([list(row) for row in text[:geometry.height]], dtype=np.int8)
    if cells.shape != (geometry.height, geometry.width):
        raise IllegalMoveError(f"state {str(state)!r}: expected {geometry.height} rows of {geometry.width} cells")
    return cells, state.current_player() + 1


def position_of_state(state: Any, geometry: Geometry) -> Position:
    """The c4engine position of a state still to be played."""
    if state.is_terminal():
        raise IllegalMoveError("the game is already over")
    cells, mark = cells_of_state(state, geometry)
    return position_of_cells(cells, mark, geometry.connect)


class _StatelessBot(pyspiel.Bot):
    """A bot that reads each state afresh: nothing to restart or to be told."""

    def __init__(self, game: Any) -> None:
        pyspiel.Bot.__init__(self)
        self.geometry = geometry_of(game)

    def restart(self) -> None:
        """Nothing is kept between moves."""

    def restart_at(self, state: Any) -> None:
        """Nothing is kept between moves: each ``step`` reads its state."""

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        """The next ``step`` reads the move from its state."""


class C4Bot(_StatelessBot):
    """c4engine on ``game`` (``connect_four`` with any ``rows``, ``columns`` and
    ``x_in_row`` it plays), at a strength: perfect by default, a ``level`` 0-19
    (the engine's ``Skill Level``), ``time`` seconds or about ``nodes`` nodes a move;
    ``seed`` seeds its random draws (see
    :class:`c4engine.integrations.player.EnginePlayer`).

    ``step_with_policy`` gives a probability for every legal action, as
    OpenSpiel's ``MCTSBot`` does: when playing perfectly, the uniform
    distribution over the columns with the best exact score (0 elsewhere; the
    action is drawn from it); under a level or a limit all the weight is on the
    move played.  Raises
    :class:`UnsupportedGameError` for a game c4engine does not play, ``ValueError``
    for a setting out of range, and :class:`c4engine.IllegalMoveError` when asked to
    move in a finished game."""

    def __init__(self, game: Any, level: int = FULL_STRENGTH, time: float | None = None,
                 nodes: int | None = None, seed: int | None = None) -> None:
        super().__init__(game)
        self.player = EnginePlayer(level, time, nodes, seed)

    def step(self, state: Any) -> int:
        return self.player.act(position_of_state(state, self.geometry))

    def provides_policy(self) -> bool:
        return True

    def step_with_policy(self, state: Any) -> tuple[list[tuple[int, float]], int]:
        policy, action = self.player.act_with_policy(position_of_state(state, self.geometry))
        return [(legal, policy.get(legal, 0.0)) for legal in state.legal_actions()], action


class PolicyBot(_StatelessBot):
    """Any policy (``policy(observation, action_mask) -> action``, see
    :data:`c4engine.integrations.player.Policy`) playing ``game``: each step shows it
    the state as PettingZoo would.  ``ValueError`` if it answers a column that is
    not legal."""

    def __init__(self, game: Any, policy: Policy) -> None:
        super().__init__(game)
        self.policy = policy

    def step(self, state: Any) -> int:
        cells, mark = cells_of_state(state, self.geometry)
        action = int(self.policy(planes_of(cells, mark), action_mask_of(cells)))
        if action not in state.legal_actions():
            raise ValueError(f"the policy played column {action}, which is not legal here")
        return action
