"""The session's engine side: the engine process's life, its lines, and the searches it runs.

What the engine should be doing is derived from the state, never stored as a
plan: after every event :meth:`EngineSide.schedule` compares the search in
flight with the one wanted now (the engine's move, a hint, or the analysis of
the position on the board) and stops the first when it is no longer wanted.

The board (width, height, row length) is the page's choice: the engine is
restarted and told the board's ``UCI_Variant`` (``cfour`` for 7x6,
``cfour-8x7``...) in its handshake, so no search of the old board can answer
for the new one.
Every ``go`` gets exactly one ``bestmove``, so searches are queued in the
order they were started and each ``bestmove`` closes the oldest; a search
for a position that has since changed has its answer ignored.

An engine that dies, or that does not answer within its time plus a grace
period, is reported to the page, which offers a restart; the game lives
in the session, not in the engine, so nothing is lost.
"""

from __future__ import annotations

import shlex
import time

from ..engine.limits import SEARCH_GRACE
from ..engine.uci import learn_uci_line, takes_board_variant
from ..engine.info import engine_move, parse_info
from ..engine.process import start_failure
from ..geometry import STANDARD, Geometry
from ..protocol.go_params import GoParams
from ..protocol.lines import MAX_LINE_BYTES
from ..rules.board import RulesError
from ..rules.notation import parse_int
from ..rules.variants import variant_name
from .game import Game
from .process import EngineProcess
from .requests import LEVELS
from .review import MOVETIME_MS as REVIEW_MOVETIME_MS
from .service_side import ServiceSide
from .session_state import Search

HANDSHAKE_SECONDS = 60.0  # a first start compiles the kernel
HANG_GRACE = SEARCH_GRACE  # seconds past its time (or past a stop) before an engine counts as hung


class EngineSide(ServiceSide):
    """The engine behind a page: started, restarted on another board, told what to
    search, and read."""

    # -- engine life ------------------------------------------------------
    async def restart_engine(self) -> None:
        await self.drop_engine()
        self.status, self.detail, self.engine_name = "starting", "", ""
        self.engine_options, self.sent_options, self.drops = {}, {}, False
        self.engine_board = self.game.geometry
        self.lines_handled = 0
        try:
            self.engine = await EngineProcess.start(
                self.argv,
                lambda serial, line, arrived: self.events.put_nowait(("line", serial, line, arrived)))
        except OSError as err:
            self.status, self.detail = "dead", start_failure(shlex.join(self.argv), err)
            return
        self.handshake_deadline = time.monotonic() + HANDSHAKE_SECONDS
        self.engine.send("uci")

    async def drop_engine(self) -> None:
        """Kill the engine (if any) and forget its searches."""
        engine, self.engine = self.engine, None
        self.pending.clear()
        if engine is not None:
            await engine.kill()

    async def engine_failed(self, status: str, detail: str) -> None:
        """The engine died or hung: kill it, tell the page, keep the game."""
        await self.drop_engine()
        self.status, self.detail = status, detail
        await self.push_state()

    async def check_hang(self) -> None:
        """Whether a deadline passed with no answer.  While engine lines wait in the
        queue the clock is the arrival of the newest one handled: an answer that
        came in time is not late for waiting behind a flood of ``info``."""
        now = time.monotonic()
        if self.engine is not None and self.engine.lines_passed > self.lines_handled:
            now = self.line_arrived
        if self.status == "starting" and self.engine is not None and now > self.handshake_deadline:
            await self.engine_failed("hung", f"it did not finish starting within {HANDSHAKE_SECONDS:g} s")
        elif self.pending and self.pending[0].deadline is not None and now > self.pending[0].deadline:
            dropped = self.engine.dropped_lines if self.engine is not None else 0
            why = f"; it wrote {dropped} line(s) over {MAX_LINE_BYTES} bytes" if dropped else ""
            await self.engine_failed("hung", f"no bestmove within its time plus {HANG_GRACE:g} s{why}")

    async def switch_board(self, geometry: Geometry) -> None:
        """Put the game on ``geometry``'s empty board and, if the engine plays another
        board, restart it on this one."""
        self.game = Game.on(geometry)
        if self.engine_board != geometry:
            await self.restart_engine()

    # -- engine lines -----------------------------------------------------
    async def on_engine_line(self, line: str | None) -> None:
        assert self.engine is not None
        if line is None:
            await self.engine_failed("dead", f"it {self.engine.why_it_ended()}")
            return
        words = line.split()
        if self.status == "starting":
            await self.on_handshake_line(line, words)
        elif words[:2] == ["info", "string"]:
            await self.send({"type": "engine_says", "text": " ".join(words[2:])})
        elif words[:1] == ["info"] and self.pending and self.pending[0].kind == "review":
            if self.review is not None and self.current(self.pending[0]):
                self.review.add_line(line)
        elif words[:1] == ["info"] and self.pending and self.current(self.pending[0]):
            await self.forward_info(line)
        elif words[:1] == ["bestmove"]:
            await self.on_bestmove(words[1] if len(words) > 1 else "")

    async def on_handshake_line(self, line: str, words: list[str]) -> None:
        assert self.engine is not None
        self.engine_name = learn_uci_line(line, self.engine_options) or self.engine_name
        if words == ["uciok"]:
            variant = variant_name(self.engine_board)
            if takes_board_variant(self.engine_options, variant):
                self.engine.send(f"setoption name UCI_Variant value {variant}")
                self.drops = True
            elif self.engine_board != STANDARD:
                await self.engine_failed("dead", f"it offers no UCI_Variant {variant}: it cannot play "
                                                 f"the {self.engine_board} board; choose 7x6")
                return
            self.engine.send("isready")
        elif words == ["readyok"]:
            self.status = "ready"
            self.schedule()
            await self.push_state()

    async def forward_info(self, line: str) -> None:
        """An ``info`` line of the search in flight, read by the public client's parser
        and sent on with its fields (a malformed line is dropped)."""
        try:
            info = parse_info(line, self.game.position)
        except ValueError:
            return
        if "score" not in info or not info.get("pv"):
            return
        bound = "lowerbound" if info.get("lowerbound") else "upperbound" if info.get("upperbound") else None
        await self.send({"type": "info", "kind": self.pending[0].kind, "version": self.version,
                         "line": line, "depth": info.get("depth"), "multipv": info.get("multipv", 1),
                         "score": {"kind": info["score"].kind, "value": info["score"].value, "bound": bound},
                         "pv": info["pv"]})

    async def on_bestmove(self, token: str) -> None:
        if not self.pending:
            return
        search = self.pending.popleft()
        if self.current(search) and search.kind == "review" and self.review is not None:
            self.review.finish_search()
            await self.send({"type": "review", "review": self.review.describe()})
        elif self.current(search) and search.kind not in ("analysis", "review"):
            try:
                column = engine_move(token, self.game.position, self.drops) + 1
            except RulesError as err:
                await self.engine_failed("dead", f"it answered 'bestmove {token}': {err}")
                return
            if search.kind == "move":
                self.game.play(column - 1)
                self.position_changed()
                self.last_engine_move = {"column": column,
                                         "ms": round((time.monotonic() - search.started) * 1000)}
            else:
                self.hint = (self.version, column)
        self.schedule()
        await self.push_state()

    # -- searching --------------------------------------------------------
    def current(self, search: Search) -> bool:
        return search.version == self.version_for(search.kind) and not search.stopping

    def version_for(self, kind: str | None) -> int:
        """What a search of ``kind`` must have been started for: a review's serial
        (it goes on while the page steps through the game), else the game's version."""
        return self.review.serial if kind == "review" and self.review is not None else self.version

    def wanted_search(self) -> str | None:
        """What the engine should be searching now, if anything."""
        if self.game.result() is not None and (self.review is None or self.review.done):
            return None
        if self.game.result() is not None:
            return "review"
        if self.engine_to_move():
            return "move"
        if self.hint_wanted == self.version and (self.hint is None or self.hint[0] != self.version):
            return "hint"
        if self.review is not None and not self.review.done:
            return "review"
        return "analysis" if self.analysis and self.service is None else None

    def schedule(self) -> None:
        """Stop the search in flight if it is no longer wanted; start the wanted one
        once nothing is in flight.  With a service, the analysis is asked of it
        (:mod:`.service_side`) whatever the engine's state."""
        self.ask_service()
        if self.status != "ready" or self.engine is None:
            return
        wanted = self.wanted_search()
        if self.pending:
            search = self.pending[0]
            if (search.kind, search.version) != (wanted, self.version_for(wanted)) and not search.stopping:
                search.stopping = True
                search.deadline = time.monotonic() + HANG_GRACE
                self.engine.send("stop")
            return
        if wanted is not None:
            self.start_search(wanted)

    def start_search(self, kind: str) -> None:
        assert self.engine is not None
        self.set_option("Skill Level", self.level if kind == "move" else LEVELS[-1])
        if kind == "review" and self.review is not None:
            self.set_option("MultiPV", self.review.multipv())
            self.engine.send(self.review.position_command(self.drops))
            movetime = REVIEW_MOVETIME_MS
        else:
            self.set_option("MultiPV", self.game.geometry.width if kind == "analysis" else 1)
            self.engine.send(self.game.engine_position(self.drops))
            movetime = self.movetime
        limits = GoParams(infinite=True) if kind == "analysis" else GoParams(movetime=movetime)
        self.engine.send(limits.command())
        now = time.monotonic()
        deadline = None if kind == "analysis" else now + movetime / 1000 + HANG_GRACE
        self.pending.append(Search(kind, self.version_for(kind), now, deadline))

    def set_option(self, name: str, value: int) -> None:
        """``setoption`` if the engine has the option and it does not hold ``value``
        already; a spin's value is kept inside the range the engine announced."""
        spec = self.engine_options.get(name)
        if spec is None or self.engine is None:
            return
        words = spec.split()
        for bound, pick in (("min", max), ("max", min)):
            if bound in words[:-1]:
                try:
                    value = pick(value, parse_int(words[words.index(bound) + 1]))
                except ValueError:  # a bound that is no number bounds nothing
                    pass
        if self.sent_options.get(name) != str(value):
            self.engine.send(f"setoption name {name} value {value}")
            self.sent_options[name] = str(value)
