"""One page's session: its game, its settings, and the engine process that plays and analyses.

A session is an actor: page requests, engine lines and a clock tick arrive on
one queue and are handled one at a time, so the game, the engine's state and
the searches in flight never race.  The engine is driven only through the
protocol (``position``, ``go``, ``stop``, ``setoption``), so any ``cfour``
engine can sit behind the page.

What the engine should be doing is derived from the state, never stored as a
plan: after every event :meth:`Session.schedule` compares the search in
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
here, not in the engine, so nothing is lost.

A page that sends faster than the session answers (it would have to stop
reading, for the session waits on the page's connection) finds at most
:data:`MAX_WAITING_REQUESTS` requests waiting; the ones past that are refused
unread, and the page is told how many once the session catches up.  When the
page goes, the requests still waiting are dropped and the session and its
engine end after the event in hand, not after a backlog.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time
import traceback
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.client import SEARCH_GRACE, learn_uci_line, takes_board_variant
from ..engine.info import engine_move, parse_info
from ..engine.process import start_failure
from ..geometry import STANDARD, Geometry, GeometryError
from ..protocol.go_params import GoParams
from ..protocol.lines import MAX_LINE_BYTES
from ..referee.pgn import PgnGame, PgnMove, write_game
from ..reviewer.games import GameInput, InputProblem, read_input
from ..rules.board import Board, RulesError
from ..rules.notation import check_writable, parse_fen, parse_int, to_fen
from ..rules.variants import built_in, variant_name
from .game import Game
from .process import EngineProcess
from .review import MOVETIME_MS as REVIEW_MOVETIME_MS
from .review import PageReview

MODES = ("first", "second", "humans")  # the person plays first, second, or both sides
LEVELS = range(0, 21)
MOVETIMES = range(100, 60_001)  # ms
HANDSHAKE_SECONDS = 60.0  # a first start compiles the kernel
HANG_GRACE = SEARCH_GRACE  # seconds past its time (or past a stop) before an engine counts as hung
TICK = 0.25
MAX_TEXT = 300
MAX_PGN = 1 << 20  # characters of PGN a page may send for review
MAX_WAITING_REQUESTS = 64
NOT_A_REQUEST = "a request must be a JSON object with an 'op'"


class RequestError(ValueError):
    """A page request that is malformed or not allowed now; the message says why."""


@dataclass
class Search:
    """One ``go`` in flight: what it is for, the game version it searches, and when
    its engine counts as hung if no ``bestmove`` has come."""

    kind: str  # move, hint, analysis, review
    version: int
    started: float
    deadline: float | None
    stopping: bool = False


class Session:
    """The game of one page and the engine behind it."""

    def __init__(self, argv: Sequence[str], send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self.argv = list(argv)
        self._send = send
        self.events: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self.waiting_requests = 0  # of the events, the page's requests
        self.refused_requests = 0  # since the page was last told
        self.closed = False
        self.game = Game()
        self.version = 0
        self.engine_board = STANDARD  # the board the engine was told in its handshake
        self.mode, self.level, self.movetime, self.analysis = "first", 20, 1000, False
        self.hint_wanted: int | None = None
        self.hint: tuple[int, int] | None = None  # (version, column 1-7)
        self.last_engine_move: dict[str, Any] | None = None
        self.engine: EngineProcess | None = None
        self.status, self.detail, self.engine_name = "starting", "", ""
        self.engine_options: dict[str, str] = {}
        self.sent_options: dict[str, str] = {}
        self.drops = False
        self.pending: deque[Search] = deque()
        self.handshake_deadline = 0.0
        self.review: PageReview | None = None
        self.reviews_started = 0
        self.lines_handled, self.line_arrived = 0, 0.0  # of the engine's lines; when the last came
        self.requests: dict[str, Callable[[dict[str, Any]], Awaitable[None] | None]] = {
            "move": self.req_move, "undo": self.req_undo, "redo": self.req_redo, "new": self.req_new,
            "set": self.req_set, "settings": self.req_settings, "hint": self.req_hint,
            "restart": self.req_restart, "review": self.req_review, "goto": self.req_goto,
            "board": self.req_board,
        }

    # -- the actor --------------------------------------------------------
    def submit(self, request: str | bytes) -> None:
        """Queue a page's request (a WebSocket message) for the actor, or refuse it
        unread when :data:`MAX_WAITING_REQUESTS` are waiting already."""
        if self.waiting_requests >= MAX_WAITING_REQUESTS:
            self.refused_requests += 1
            return
        self.waiting_requests += 1
        self.events.put_nowait(("request", request))

    def close(self) -> None:
        """The page is gone: the actor ends after the event in hand, and what was
        still waiting is dropped with the session."""
        self.closed = True
        self.events.put_nowait(("closed",))

    async def run(self) -> None:
        """Handle events until the page goes away; the engine goes with it."""
        await self.restart_engine()
        await self.push_state()
        try:
            while True:
                try:
                    event = await asyncio.wait_for(self.events.get(), TICK)
                except asyncio.TimeoutError:
                    event = ("tick",)
                if self.closed:
                    return
                await self.handle(event)
                await self.check_hang()  # also while lines keep coming without a bestmove
        finally:
            await self.drop_engine()

    async def handle(self, event: tuple[Any, ...]) -> None:
        try:
            if event[0] == "request":
                self.waiting_requests -= 1
                await self.on_request(event[1])
                await self.tell_refused()
            elif event[0] == "line" and self.engine is not None and event[1] == self.engine.serial:
                self.lines_handled, self.line_arrived = self.lines_handled + 1, event[3]
                await self.on_engine_line(event[2])
        except Exception as exc:  # noqa: BLE001 - a bug must not end the page's session
            traceback.print_exc()
            await self.send({"type": "error", "message": f"internal error in the server: {exc!r}"})

    async def send(self, message: dict[str, Any]) -> None:
        try:
            await self._send(message)
        except (ConnectionError, RuntimeError):
            pass  # the page is gone; the "closed" event ends the session

    async def tell_refused(self) -> None:
        if self.refused_requests:
            count, self.refused_requests = self.refused_requests, 0
            await self.send({"type": "error", "message": (
                f"{count} request(s) refused unread: at most {MAX_WAITING_REQUESTS} may wait "
                "for an answer")})

    # -- page requests ----------------------------------------------------
    async def on_request(self, request: str | bytes) -> None:
        op = None
        try:
            message = read_request(request)
            op = message.get("op")
            handler = self.requests.get(op) if isinstance(op, str) else None
            if handler is None:
                raise RequestError(f"unknown request {op!r}" if op else NOT_A_REQUEST)
            outcome = handler(message)
            if outcome is not None:
                await outcome
        except Quiet:
            return
        except (RequestError, RulesError) as err:
            await self.send({"type": "error", "request": op, "message": str(err)})
            return
        self.schedule()
        await self.push_state()

    def req_move(self, message: dict[str, Any]) -> None:
        column = whole_number(message, "column", range(1, self.game.geometry.width + 1))
        if self.game.result() is not None:
            raise RequestError("the game is over: undo, or start a new game")
        if self.engine_to_move():
            raise RequestError("it is the engine's turn: wait for its move")
        self.game.play(column - 1)
        self.position_changed()

    def req_undo(self, message: dict[str, Any]) -> None:
        """Take back moves until it is a person's turn again (one move with two humans)."""
        if not self.game.moves:
            raise RequestError("there is no move to undo")
        while self.game.moves:
            by_person = not self.engine_moves(len(self.game.moves) - 1)
            self.game.undo()
            if by_person:
                break
        self.position_changed()

    def req_redo(self, message: dict[str, Any]) -> None:
        """Replay an undone move, and the engine's answer that followed it."""
        if not self.game.undone:
            raise RequestError("there is no move to redo")
        self.game.redo()
        while self.game.undone and self.engine_to_move():
            self.game.redo()
        self.position_changed()

    def req_new(self, message: dict[str, Any]) -> None:
        self.game = Game.on(self.game.geometry)
        self.position_changed()

    async def req_board(self, message: dict[str, Any]) -> None:
        """A new game on the board ``message["board"]`` names (``8x7``, ``9x6k5``);
        RequestError naming the limit for one the engine cannot play."""
        await self.switch_board(read_board(message.get("board")))
        self.position_changed()

    async def switch_board(self, geometry: Geometry) -> None:
        """Put the game on ``geometry``'s empty board and, if the engine plays another
        board, restart it on this one."""
        self.game = Game.on(geometry)
        if self.engine_board != geometry:
            await self.restart_engine()

    def req_set(self, message: dict[str, Any]) -> None:
        text = message.get("text")
        if not isinstance(text, str) or len(text) > MAX_TEXT:
            raise RequestError(f"a position is a digit string or a FEN of at most {MAX_TEXT} characters")
        self.game.set_up(text)
        self.position_changed()

    def req_settings(self, message: dict[str, Any]) -> None:
        """Change any of mode, level, movetime and analysis; all are checked before any is set."""
        mode = message.get("mode", self.mode)
        if mode not in MODES:
            raise RequestError(f"mode must be one of {', '.join(MODES)}")
        level = whole_number(message, "level", LEVELS, self.level)
        movetime = whole_number(message, "movetime", MOVETIMES, self.movetime)
        analysis = message.get("analysis", self.analysis)
        if not isinstance(analysis, bool):
            raise RequestError("analysis must be true or false")
        self.mode, self.level, self.movetime, self.analysis = mode, level, movetime, analysis

    def req_hint(self, message: dict[str, Any]) -> None:
        if self.game.result() is not None:
            raise RequestError("the game is over: there is nothing to hint")
        if self.status != "ready":
            raise RequestError(f"the engine is not ready ({self.status}): restart it first")
        self.hint_wanted = self.version

    async def req_restart(self, message: dict[str, Any]) -> None:
        await self.restart_engine()

    async def req_review(self, message: dict[str, Any]) -> None:
        """Review the game on the board (``played``) or a game of ``pgn`` (``game``: its
        number; without one, a PGN of several games gets their list to pick from).
        The board then shows the game from its start, two people to move, so that
        stepping through it never makes the engine play."""
        if message.get("played"):
            item = self.played_game()
        else:
            items = read_pgn(message.get("pgn"))
            number = message.get("game")
            if number is None and len(items) > 1:
                await self.send({"type": "review_games", "games": [game_entry(i) for i in items]})
                raise Quiet
            chosen = items[0] if number is None else next(
                (i for i in items if i.number == number), None)
            if chosen is None:
                raise RequestError(f"there is no game {number!r} in that PGN")
            if isinstance(chosen, InputProblem):
                raise RequestError(f"cannot review {chosen}")
            item = chosen
        await self.switch_board(item.geometry)
        self.reviews_started += 1
        self.review = PageReview(self.reviews_started, item)
        game = item.game
        start = parse_fen(game.start_fen, item.geometry) if game.start_fen else Board(geometry=item.geometry)
        self.game = Game(start, [], [m.col for m in reversed(game.moves)], game.start_fen is None)
        self.mode = "humans"
        self.position_changed()

    def played_game(self) -> GameInput:
        """The game on the board, with the moves undone after it, as a review input."""
        moves = self.game.moves + list(reversed(self.game.undone))
        start_fen = None if self.game.from_start else to_fen(self.game.base)
        final = self.game.base.play_all(moves)
        result = "*" if not final.is_over() else (
            "1/2-1/2" if not final.last_mover_won() else ("1-0" if final.side_to_move == 1 else "0-1"))
        game = PgnGame("?", "?", result, tuple(PgnMove(c) for c in moves), start_fen=start_fen,
                       variant=built_in(self.game.geometry))
        return GameInput(1, 1, game, self.game.geometry)

    def req_goto(self, message: dict[str, Any]) -> None:
        """Show the game after ``ply`` of its moves, played or undone, or ``step`` (-1 or
        1) moves from the one shown, staying at either end: steps are counted here, in
        the order they came, so that keys pressed faster than the page hears back are
        all taken.  Two people only: else stepping back could hand the engine a move."""
        if self.mode != "humans":
            raise RequestError("stepping through a game needs the mode 'two people'")
        plies = len(self.game.moves) + len(self.game.undone)
        if "step" in message:
            step = whole_number(message, "step", range(-1, 2))
            ply = min(max(len(self.game.moves) + step, 0), plies)
        else:
            ply = whole_number(message, "ply", range(0, plies + 1))
        while len(self.game.moves) > ply:
            self.game.undo()
        while len(self.game.moves) < ply:
            self.game.redo()
        self.position_changed()

    def position_changed(self) -> None:
        """A new version of the game: searches of the old one are void."""
        self.version += 1
        self.last_engine_move = None

    # -- whose move -------------------------------------------------------
    def engine_moves(self, ply: int) -> bool:
        """Whether the engine makes the move at ``ply`` (0 = the set-up position's first)."""
        side = (self.game.base.side_to_move + ply) % 2
        return self.mode == ("first", "second")[1 - side]

    def engine_to_move(self) -> bool:
        return self.game.result() is None and self.engine_moves(len(self.game.moves))

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
            info = parse_info(line)
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
        return "analysis" if self.analysis else None

    def schedule(self) -> None:
        """Stop the search in flight if it is no longer wanted; start the wanted one
        once nothing is in flight."""
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

    # -- what the page sees -----------------------------------------------
    def game_pgn(self) -> str:
        """The game on the board as PGN, all its moves (undone ones too); annotated
        when it is the game under review and the review is done."""
        item = self.played_game()
        review = self.review
        if review is not None and review.done and review.columns == [m.col + 1 for m in item.game.moves] \
                and review.item.game.start_fen == item.game.start_fen:
            return str(review.describe()["pgn"])
        return write_game(item.game)

    async def push_state(self) -> None:
        search = self.pending[0] if self.pending and self.current(self.pending[0]) else None
        await self.send({
            "type": "state", "version": self.version, **self.game.describe(),
            "mode": self.mode, "level": self.level, "movetime": self.movetime, "analysis": self.analysis,
            "hint": self.hint[1] if self.hint and self.hint[0] == self.version else None,
            "hint_pending": self.wanted_search() == "hint",
            "engine_turn": self.engine_to_move(),
            "thinking": search.kind if search else None,
            "last_engine_move": self.last_engine_move,
            "pgn": self.game_pgn(), "plies": len(self.game.moves) + len(self.game.undone),
            "review_serial": self.review.serial if self.review else None,
            "engine": {"status": self.status, "detail": self.detail, "name": self.engine_name},
        })


class Quiet(RequestError):
    """A request answered by a message of its own: no error, no state."""


def read_pgn(text: object) -> list[GameInput | InputProblem]:
    """The games of a PGN the page sent; RequestError when there is none to review."""
    if not isinstance(text, str) or not text.strip():
        raise RequestError("paste or load a PGN (or digits, one game a line) first")
    if len(text) > MAX_PGN:
        raise RequestError(f"that PGN has {len(text)} characters; the board reviews at most {MAX_PGN}")
    try:
        items = read_input(text.encode("utf-8", "replace"))
    except ValueError as err:
        raise RequestError(str(err)) from None
    if not items:
        raise RequestError("no game found in that PGN")
    return items


def game_entry(item: GameInput | InputProblem) -> dict[str, Any]:
    """A game in the page's list to pick from (a game that cannot be read says why)."""
    if isinstance(item, InputProblem):
        return {"number": item.number, "title": str(item), "ok": False}
    game = item.game
    return {"number": item.number, "ok": True,
            "title": f"{item.number}. {game.white} - {game.black} {game.result} ({len(game.moves)} moves)"}


def read_request(request: str | bytes) -> dict[str, Any]:
    """A page's WebSocket message as a JSON object; RequestError saying why when it is
    none.  Python's JSON reader recurses, so a message nested thousands of levels
    deep raises RecursionError, which is refused like any other text."""
    if not isinstance(request, str):
        raise RequestError(f"{NOT_A_REQUEST}, sent as text")
    try:
        message = json.loads(request)
    except ValueError:
        raise RequestError(NOT_A_REQUEST) from None
    except RecursionError:
        raise RequestError(f"{NOT_A_REQUEST}, nested a few levels at most") from None
    if not isinstance(message, dict):
        raise RequestError(NOT_A_REQUEST)
    return message


def read_board(text: object) -> Geometry:
    """The board a page names, ``WxH`` or ``WxHkK``; RequestError naming the limit
    for one the engine cannot play."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise RequestError("a board is written WxH or WxHkK, e.g. 8x7 or 9x6k5")
    try:
        geometry = Geometry.parse(text)
        check_writable(geometry)
    except GeometryError as err:
        raise RequestError(str(err)) from None
    return geometry


def whole_number(message: dict[str, Any], key: str, allowed: range, default: int | None = None) -> int:
    """``message[key]`` as a whole number in ``allowed`` (``default`` when absent and allowed to be)."""
    value = message.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise RequestError(f"{key} must be a whole number from {allowed[0]} to {allowed[-1]}")
    return value
