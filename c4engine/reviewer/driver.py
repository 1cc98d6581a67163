"""The engine process that runs a review's searches, and the one the Python API keeps."""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..arguments import command_line, seconds
from ..engine.client import EngineClient, is_c4engine
from ..engine.limits import HANDSHAKE_TIMEOUT, PREPARE_TIMEOUT, SEARCH_GRACE
from ..engine.process import own_engine_argv
from ..geometry import STANDARD, Geometry
from ..protocol.go_params import GoParams
from ..rules.variants import built_in
from .verdicts import GameReview, MoveVerdict, Search
from .games import GameInput, game_of, game_review, judge_of

DEFAULT_MOVETIME_MS = 5000


class Reviewer:
    """An engine process that searches what :class:`~c4engine.reviewer.verdicts.GameJudge`
    asks for, ``movetime_ms`` at most per search (None: until proven), keeping its
    table from one search to the next."""

    def __init__(self, command: str | Sequence[str] | None = None,
                 movetime_ms: int | None = DEFAULT_MOVETIME_MS) -> None:
        self.client = EngineClient(command or own_engine_argv(), name="reviewer")
        self.movetime_ms = movetime_ms
        self.started = False
        self.multipv = 1
        self.geometry = STANDARD

    def __enter__(self) -> Reviewer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.started:
            self.client.quit()
            self.started = False

    def start(self, geometry: Geometry = STANDARD) -> None:
        """Start (or restart) the engine on ``geometry``'s board (``UCI_Variant``);
        EngineError if it cannot be used or cannot play that board.  c4engine gets
        :data:`PREPARE_TIMEOUT` for its first ``readyok``, as in a match: on a
        board's first use it compiles that board's kernel before answering."""
        self.close()
        self.client.start()
        startup = PREPARE_TIMEOUT if is_c4engine(self.client.id_name) else HANDSHAKE_TIMEOUT
        self.client.setup([("MultiPV", "1")], startup_timeout=startup, variant=built_in(geometry))
        self.started, self.multipv, self.geometry = True, 1, geometry

    def review(self, item: GameInput, on_move: Callable[[MoveVerdict], None] | None = None) -> GameReview:
        """Every move of ``item`` judged; ``on_move`` sees each verdict as it comes."""
        if not (self.started and self.client.alive and self.geometry == item.geometry):
            self.start(item.geometry)
        judge = judge_of(item)
        while (search := judge.next_search()) is not None:
            for verdict in judge.take(self._lines(item, search)):
                if on_move:
                    on_move(verdict)
        return game_review(item, judge)

    def _lines(self, item: GameInput, search: Search) -> Sequence[Any]:
        multipv = search.lines(item.geometry)
        if multipv != self.multipv:
            self.client.set_option("MultiPV", str(multipv))
            self.multipv = multipv
        game = item.game
        self.client.position([m.col + 1 for m in game.moves[:search.played]], game.start_fen)
        if self.movetime_ms is None:  # until proven
            result = self.client.go(GoParams(), timeout=None)
        else:
            result = self.client.go(GoParams(movetime=self.movetime_ms),
                                    timeout=self.movetime_ms / 1000 + SEARCH_GRACE)
        return result.lines


_lock = threading.Lock()
_shared: Reviewer | None = None


def review_game(moves_or_game: object, movetime: object, engine: str | Sequence[str] | None) -> GameReview:
    """:func:`c4engine.review`'s work: one engine process, c4engine's own kept for the
    whole Python process (its start-up is the costly part), any other for this call."""
    global _shared
    limit = DEFAULT_MOVETIME_MS / 1000 if movetime is None else seconds(movetime, "review: movetime")
    movetime_ms = None if limit is None else max(1, round(limit * 1000))
    command = None if engine is None else command_line(engine, "review: engine")
    item = game_of(moves_or_game)
    if command is not None:
        with Reviewer(command, movetime_ms) as own:
            return own.review(item)
    with _lock:
        if _shared is None:
            _shared = Reviewer()
            atexit.register(_shared.close)
        _shared.movetime_ms = movetime_ms
        return _shared.review(item)

