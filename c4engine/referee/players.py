"""The engines of a match as the referee uses them, and the clocks it keeps for them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

from ..engine.client import EngineClient, is_c4engine
from ..engine.limits import PREPARE_TIMEOUT
from ..engine.process import EngineError, EngineTimeout
from ..protocol.go_params import GoParams
from .config import EngineSpec, MatchConfig, TimeControl

PREPARE_NOTICE_AFTER = 5.0  # seconds of waiting for that readyok before saying why


class Player:
    """An engine process as the referee uses it: configured after every (re)start,
    resynchronized or restarted before every game."""

    def __init__(self, spec: EngineSpec, config: MatchConfig,
                 log: Callable[[str], None] | None) -> None:
        self.spec = spec
        self.config = config
        self.client = EngineClient(spec.command, name=spec.name or spec.command, log=log)

    def start(self, preparing: Callable[[str], None] | None = None) -> None:
        """Start, handshake, choose the variant and set the options
        (:meth:`EngineClient.setup`).

        ``preparing``: this start is the first of its command, alone, and prepares
        the board for the engines started after it.  c4engine (by its ``id name``)
        compiles its search kernel for a board on its first use there, once per
        installation, before its first ``readyok``: minutes when every engine of a
        match does it at once on a busy machine.  So this one gets
        :data:`PREPARE_TIMEOUT` for that ``readyok``, ``preparing`` hears why
        after :data:`PREPARE_NOTICE_AFTER` s, and the others load the kernel from
        the cache.  A timeout's message says the engine may be compiling and names
        ``--handshake-timeout``."""
        try:
            self.client.start(self.config.handshake_timeout)
            startup = self.config.handshake_timeout
            notice = None
            if preparing is not None and is_c4engine(self.client.id_name):
                startup = max(startup, PREPARE_TIMEOUT)
                notice = threading.Timer(PREPARE_NOTICE_AFTER, preparing, [self._preparing_line()])
                notice.daemon = True
                notice.start()
            try:
                self.client.setup(self.spec.options, startup_timeout=startup,
                                  variant=self.config.variant, variants_path=self.config.variants_path)
            finally:
                if notice is not None:
                    notice.cancel()
        except EngineTimeout as err:
            raise EngineTimeout(f"{err}: the engine may still be compiling or loading its data for the "
                                f"{self.config.variant.geometry} board (c4engine compiles its kernel on a "
                                f"board's first use); give it longer with --handshake-timeout") from None

    def _preparing_line(self) -> str:
        return (f"waiting for {self.client.name} to prepare the {self.config.variant.geometry} board: a first "
                f"start there compiles its search kernel, once (up to {PREPARE_TIMEOUT:.0f} s)")

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
