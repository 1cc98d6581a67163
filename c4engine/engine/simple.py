"""python-chess's shape over the client: ``SimpleEngine.popen``, ``play``, ``analyse``."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..rules.board import Board, RulesError
from .client import EngineClient, EngineDied, EngineError, EngineTimeout
from .limits import (
    HANDSHAKE_TIMEOUT,
    READY_TIMEOUT,
    STOP_GRACE,
    Limit,
    SearchResult,
    hash_ready_seconds,
)
from .info import InfoDict, engine_move
from .process import EngineEnded
from .uci import lists_option


class PositionLike(Protocol):
    """What the client reads of a position (:class:`c4engine.Position` has both)."""

    @property
    def moves(self) -> tuple[int, ...]: ...

    @property
    def start_fen(self) -> str | None: ...


@dataclass(frozen=True)
class PlayResult:
    """The engine's move (a column 1-7) and what it said about its best line."""

    move: int
    info: InfoDict = field(default_factory=lambda: InfoDict())


class SimpleEngine:
    """An engine process driven one call at a time, python-chess' ``SimpleEngine``.

    ``SimpleEngine.popen("c4engine")`` starts it, completes the handshake, chooses
    the ``cfour`` variant when offered and waits for ``readyok``.  A search call
    lasts at most as long as its limit allows plus :data:`SEARCH_GRACE`, or
    :data:`SEARCH_TIMEOUT` for depth and node limits, stopping a silent search
    included: a crashed engine raises EngineDied at once, a silent one
    EngineTimeout, never a hang.  After an EngineTimeout the search has been
    stopped and the engine may be used again; one that does not answer the stop
    either has been ended by the client (EngineEnded)."""

    def __init__(self, client: EngineClient) -> None:
        self.client = client
        self.configured: dict[str, str] = {}

    @classmethod
    def popen(cls, command: str | Sequence[str], *, timeout: float = HANDSHAKE_TIMEOUT,
              ready_timeout: float = READY_TIMEOUT,
              options: Mapping[str, object] | None = None,
              startup_timeout: float | None = None) -> SimpleEngine:
        """Start ``command`` (a shell-quoted string or an argument list).  ``timeout``
        is the wait for ``uciok``, and for the first ``readyok`` unless
        ``startup_timeout`` is given (an engine that compiles or loads its data
        before that ``readyok`` may need much longer: see :meth:`EngineClient.setup`)."""
        client = EngineClient(command)
        pairs = [(name, _option_text(value)) for name, value in (options or {}).items()]
        try:
            client.start(timeout)
            _check_listed(client, pairs)
            client.setup(pairs, ready_timeout,
                         startup_timeout=timeout if startup_timeout is None else startup_timeout)
        except BaseException:
            client.kill()
            raise
        engine = cls(client)
        engine.configured.update(pairs)
        return engine

    def __enter__(self) -> SimpleEngine:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.quit()

    @property
    def id(self) -> dict[str, str]:
        """``{"name": ...}`` from the engine's ``id name`` line."""
        return {"name": self.client.id_name} if self.client.id_name else {}

    @property
    def options(self) -> dict[str, str]:
        """The engine's options as it listed them: name -> ``type ... default ...``."""
        return dict(self.client.options)

    def configure(self, options: Mapping[str, object]) -> None:
        """``setoption`` for each of ``options`` (True/False as ``true``/``false``),
        then wait for ``readyok``; EngineError when the engine refuses one (with
        ``info string error``) or did not list it, and then ``configured`` is left
        as it was."""
        pairs = [(name, _option_text(value)) for name, value in options.items()]
        _check_listed(self.client, pairs)
        for name, value in pairs:
            self.client.set_option(name, value)
        self.client.ready_timeout = max(self.client.ready_timeout,
                                        READY_TIMEOUT + hash_ready_seconds(pairs))
        self.client.check_refusals(self.client.is_ready())
        self.configured.update(pairs)

    def play(self, position: PositionLike, limit: Limit, *,
             timeout: float | None = None) -> PlayResult:
        """The engine's move in ``position``; EngineError when it plays an illegal one.
        ``timeout`` replaces the wait that ``limit`` implies (:meth:`Limit.timeout`)."""
        board, result = self.search(position, limit, timeout=timeout)
        try:
            col = engine_move(result.bestmove, board, self.client.drops)
        except RulesError as err:
            raise EngineError(f"{self.client.name}: illegal bestmove: {err}") from None
        return PlayResult(col + 1, _checked(result.info, board))

    def analyse(self, position: PositionLike, limit: Limit, multipv: int | None = None, *,
                timeout: float | None = None) -> InfoDict | list[InfoDict]:
        """What the engine found in ``position``: one InfoDict, or with ``multipv``
        a list of the best lines, best first, each with its own score and PV."""
        if multipv is None:
            board, result = self.search(position, limit, timeout=timeout)
            return _checked(result.info, board)
        self.client.set_option("MultiPV", str(multipv))
        try:
            board, result = self.search(position, limit, timeout=timeout)
        finally:
            self.client.set_option("MultiPV", self.configured.get("MultiPV", "1"))
        return [_checked(info, board) for info in result.lines][:multipv]

    def quit(self) -> None:
        """Ask the engine to quit and end its process group."""
        self.client.quit()

    def search(self, position: PositionLike, limit: Limit, *,
               timeout: float | None = None) -> tuple[Board, SearchResult]:
        """The engine's answer to ``go`` in ``position`` as it came, with the position
        searched: for a referee that judges the move itself (an illegal one is
        returned, not raised).  EngineTimeout as in :meth:`play`, with the search
        stopped; EngineError when the position cannot be sent.

        The whole call fits in the wait (``timeout``, or what ``limit`` implies):
        the search is given up :data:`STOP_GRACE` before its end (half the wait at
        most), which is left for the engine to answer ``stop`` and ``isready``."""
        try:
            board = self.client.position(position.moves, position.start_fen)
        except RulesError as err:
            raise EngineError(f"cannot send the position: {err}") from None
        wait = limit.timeout(board.side_to_move) if timeout is None else timeout
        deadline = time.monotonic() + wait
        try:
            return board, self.client.go(limit.go_params(), wait - min(STOP_GRACE, wait / 2))
        except EngineTimeout:
            self._recover(deadline)
            raise

    def _recover(self, deadline: float) -> None:
        """After a search given up on: stop it and wait, until ``deadline``, for the
        engine to be ready, so that it can be used again.  An engine that does not
        answer that either is ended, and EngineEnded raised (EngineDied if it died
        meanwhile): a caller must not take it for a slow move."""
        wait = max(0.0, deadline - time.monotonic())
        try:
            self.client.stop()
            self.client.is_ready(wait)
        except EngineDied as err:
            self.client.kill()
            raise EngineDied(f"{err} (after a search was stopped)") from None
        except EngineTimeout:
            self.client.kill()
            raise EngineEnded(f"{self.client.name}: no readyok within {wait:.3g} s after stop "
                              f"(a search given up on); the client ended the engine") from None


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _checked(info: InfoDict, board: Board) -> InfoDict:
    """``info`` with its PV cut at the first move that is not legal where it is played."""
    if "pv" not in info:
        return info
    legal = []
    pos = board
    for col in info["pv"]:
        if not pos.can_play(col - 1) or pos.is_over():
            break
        legal.append(col)
        pos = pos.play(col - 1)
    return {**info, "pv": legal}  # type: ignore[typeddict-item]


def _check_listed(client: EngineClient, pairs: Sequence[tuple[str, str]]) -> None:
    """EngineError, before anything is sent, for an option the engine did not list
    in its ``uci`` reply (as python-chess does): engines answer a ``setoption`` they
    do not know in their own words (Stockfish's ``No such option``) or not at all."""
    for name, _ in pairs:
        if not lists_option(client.options, name):
            listed = ", ".join(client.options) or "none"
            raise EngineError(f"{client.name}: no option named '{name}' (it lists: {listed})")
