"""The engines of a match as the referee uses them, and the clocks it keeps for them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..engine.client import EngineClient
from ..engine.process import EngineError
from ..protocol.go_params import GoParams
from .config import EngineSpec, MatchConfig, TimeControl


class Player:
    """An engine process as the referee uses it: configured after every (re)start,
    resynchronized or restarted before every game."""

    def __init__(self, spec: EngineSpec, config: MatchConfig,
                 log: Callable[[str], None] | None) -> None:
        self.spec = spec
        self.config = config
        self.client = EngineClient(spec.command, name=spec.name or spec.command, log=log)

    def start(self) -> None:
        """Start, handshake, choose the variant and set the options
        (:meth:`EngineClient.setup`)."""
        self.client.start(self.config.handshake_timeout)
        self.client.setup(self.spec.options, startup_timeout=self.config.handshake_timeout,
                          variant=self.config.variant, variants_path=self.config.variants_path)

    def prepare(self) -> None:
        """Ready for a new game.  A live engine gets ``stop`` first: a search given up
        at a timeout may still run, and ``isready`` drains its late ``bestmove``.
        A dead or unresponsive engine is restarted; EngineError if that fails too."""
        if self.client.alive:
            try:
                self.client.stop()
                self._new_game()
                return
            except EngineError:
                pass
        self.start()
        self._new_game()

    def _new_game(self) -> None:
        self.client.new_game()
        self.client.is_ready()

    def close(self) -> None:
        self.client.quit()


class Clocks:
    """Both sides' time left under a time control, kept by the referee from its
    own measurements (what the engines think of their time does not count)."""

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        self.left_ms = [float(tc.base_ms), float(tc.base_ms)]

    def charge(self, colour: int, elapsed_ms: float) -> None:
        """Take a move's time off, then add the increment (a margin used is forgiven)."""
        self.left_ms[colour] = max(0.0, self.left_ms[colour] - elapsed_ms) + self.tc.inc_ms

    def with_clocks(self, params: GoParams) -> GoParams:
        """``params`` with both sides' time left and increments."""
        return replace(params, wtime=int(self.left_ms[0]), btime=int(self.left_ms[1]),
                       winc=self.tc.inc_ms, binc=self.tc.inc_ms)
