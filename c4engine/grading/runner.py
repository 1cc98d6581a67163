"""Grading: an agent's move in every known position of the sets, or the moves of
played games, each judged against exact scores (:mod:`.metrics`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ..reviewer.games import GameInput, is_opening
from .agents import Agent, AgentFailure
from .build import exact_scores
from .metrics import Grade
from .sets import GradeSet, SetPosition, class_of

GAMES_SET = "games"


def grade_sets(agent: Agent, sets: Sequence[GradeSet],
               progress: Callable[[int, int], None] | None = None) -> list[Grade]:
    """The agent's grade in each known position of ``sets``, in order; ``progress``
    hears how many are done of how many after each."""
    total = sum(len(s.known) for s in sets)
    grades: list[Grade] = []
    for grade_set in sets:
        for position in grade_set.known:
            grades.append(grade_one(agent, grade_set, position))
            if progress:
                progress(len(grades), total)
    return grades


def grade_one(agent: Agent, grade_set: GradeSet, position: SetPosition) -> Grade:
    board = position.board(grade_set.geometry)
    began = time.perf_counter()
    try:
        col = agent.move(board)
    except AgentFailure as err:
        return Grade(position, grade_set.name, None, str(err), time.perf_counter() - began)
    return Grade(position, grade_set.name, col, "", time.perf_counter() - began)


@dataclass(frozen=True)
class GameMove:
    """A move of a played game to grade: the position before it and the column."""

    position: SetPosition
    column: int


def game_moves(games: Sequence[GameInput], player: str | None) -> Iterator[GameMove]:
    """Every move of ``games`` made by ``player`` (a name of the PGN's White or Black
    tags; None: both sides), the referee's imposed opening moves left out; the
    positions' scores left to :func:`grade_games`."""
    for item in games:
        game = item.game
        board = game.start_position()
        for ply, move in enumerate(game.moves):
            name = game.white if ply % 2 == 0 else game.black
            if not is_opening(move) and (player is None or player == name):
                moves = "".join(str(col + 1) for col in board.history)
                yield GameMove(SetPosition(moves, None, "", "game"), move.col)
            board = board.play(move.col)


def grade_games(games: Sequence[GameInput], player: str | None, node_limit: int,
                progress: Callable[[int, int], None] | None = None) -> tuple[list[Grade], int]:
    """The grades of the moves :func:`game_moves` picks, each position scored exactly
    (the same position once), and how many were too dear to score (left out)."""
    moves = list(game_moves(games, player))
    geometry = games[0].geometry if games else None
    scored: dict[str, tuple[int | None, ...] | None] = {}
    grades, unknown = [], 0
    for done, move in enumerate(moves, start=1):
        assert geometry is not None
        key = move.position.moves
        if key not in scored:
            scored[key] = exact_scores(move.position.board(geometry), node_limit)
        scores = scored[key]
        if scores is None:
            unknown += 1
        else:
            best = max(s for s in scores if s is not None)
            position = SetPosition(key, scores, class_of(len(key), best, geometry), "game")
            grades.append(Grade(position, GAMES_SET, move.column))
        if progress:
            progress(done, len(moves))
    return grades, unknown
