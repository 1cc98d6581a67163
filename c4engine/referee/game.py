"""One game: ask the side to move for a move, judge it, until the game ends.

The referee trusts neither engine.  It keeps the position with our own rules
(:mod:`c4engine.rules.board`), checks every move, ends games on four in a row or a
full board, keeps the clocks, and scores a game as lost for the engine that
crashes, plays an illegal move, answers after its time, or stalls; the reason
goes into the PGN and the statistics.  An engine line over 64 KiB is dropped
and counted; if no move comes in time after it, the forfeit says so.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from ..engine.info import engine_move
from ..engine.process import EngineError, EngineTimeout
from ..protocol.go_params import GoParams
from ..protocol.lines import MAX_LINE_BYTES
from ..rules.board import RulesError
from ..rules.notation import parse_digits
from .config import GameSpec, MatchConfig
from .pgn import BOOK, PgnGame, PgnMove, move_comment
from .players import Clocks, Player

SIDES = ("White", "Black")


@dataclass(frozen=True)
class GameOutcome:
    """A finished game: its PGN record, engine 0's points, who forfeited, if anyone,
    how many ``bestmove`` lines each engine sent that answered no ``go``
    (discarded: not a forfeit, since the move that did answer was judged), and
    how many lines over 64 KiB each wrote (dropped unread)."""

    spec: GameSpec
    pgn: PgnGame
    points: float
    forfeit: int | None = None
    stale_bestmoves: tuple[int, int] = (0, 0)
    dropped_lines: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class _Ending:
    """How a game ended: the PGN result, the Termination tag and the final comment."""

    result: str
    termination: str
    description: str
    loser: int | None = None  # colour (0 White, 1 Black) that forfeited


class Game:
    """Plays one game between two prepared players (indexed by colour)."""

    def __init__(self, spec: GameSpec, seats: tuple[Player, Player], config: MatchConfig) -> None:
        self.spec = spec
        self.seats = seats
        self.config = config
        self.pos = parse_digits(spec.opening, config.variant.geometry)
        self.moves = [PgnMove(col, BOOK) for col in self.pos.history]
        self.clocks = Clocks(config.tc) if config.tc else None

    def play(self) -> _Ending:
        for colour, player in enumerate(self.seats):
            try:
                player.prepare()
            except EngineError as err:
                return _forfeit(colour, "abandoned", f"{{side}} disconnects ({err})")
        while not self.pos.is_over():
            ending = self._turn()
            if ending:
                return ending
        if self.pos.last_mover_won():
            winner = 1 - self.pos.side_to_move
            return _Ending(("1-0", "0-1")[winner], "normal", f"{SIDES[winner]} wins")
        return _Ending("1/2-1/2", "normal", "Draw by full board")

    def _turn(self) -> _Ending | None:
        """Ask the side to move for a move and judge it; an ending if it forfeits."""
        colour = self.pos.side_to_move
        player = self.seats[colour]
        allowed = self._allowed_ms(colour)
        timeout = (allowed + self.config.timemargin) / 1000 if allowed is not None \
            else self.config.stall_timeout
        dropped_before = player.client.dropped_lines
        try:
            player.client.position([col + 1 for col in self.pos.history])
            reply = player.client.go(self._limits(), timeout)
        except EngineTimeout:
            dropped = player.client.dropped_lines - dropped_before
            why = f"; it wrote {dropped} line(s) over {MAX_LINE_BYTES} bytes" if dropped else ""
            if allowed is None:
                return _forfeit(colour, "stalled connection",
                                f"{{side}}'s connection stalls (no move in {timeout:g} s{why})")
            return _forfeit(colour, "time forfeit",
                            f"{{side}} loses on time (no move in {allowed:.0f} ms{why})")
        except EngineError as err:
            return _forfeit(colour, "abandoned", f"{{side}} disconnects ({err})")
        elapsed_ms = reply.elapsed * 1000
        if allowed is not None and elapsed_ms > allowed + self.config.timemargin:
            return _forfeit(colour, "time forfeit", f"{{side}} loses on time "
                            f"({elapsed_ms:.0f} ms, {allowed:.0f} allowed)")
        if self.clocks:
            self.clocks.charge(colour, elapsed_ms)
        try:
            col = engine_move(reply.bestmove, self.pos, player.client.drops)
        except RulesError as err:
            return _forfeit(colour, "illegal move", f"{{side}} makes an illegal move: "
                            f"{reply.bestmove or '(none)'} ({err})")
        self.pos = self.pos.play(col)
        self.moves.append(PgnMove(col, move_comment(reply.info, reply.elapsed)))
        return None

    def _allowed_ms(self, colour: int) -> float | None:
        """The time the side to move may use, or None when only depth/nodes limit it."""
        limits = [t for t in (self.config.movetime,
                              self.clocks.left_ms[colour] if self.clocks else None)
                  if t is not None]
        return min(limits) if limits else None

    def _limits(self) -> GoParams:
        cfg = self.config
        params = GoParams(movetime=cfg.movetime, depth=cfg.depth, nodes=cfg.nodes)
        return self.clocks.with_clocks(params) if self.clocks else params


def _forfeit(colour: int, termination: str, template: str) -> _Ending:
    """The side ``colour`` loses; ``template`` says why, ``{side}`` standing for it."""
    return _Ending(("0-1", "1-0")[colour], termination,
                   template.replace("{side}", SIDES[colour]), colour)


def play_game(spec: GameSpec, players: tuple[Player, Player], names: tuple[str, str],
              config: MatchConfig) -> GameOutcome:
    """Play ``spec`` with engine ``spec.white`` moving first; the outcome for engine 0."""
    seats = (players[spec.white], players[1 - spec.white])
    game = Game(spec, seats, config)
    stale_before = [p.client.stale_bestmoves for p in players]
    dropped_before = [p.client.dropped_lines for p in players]
    ending = game.play()
    stale = [p.client.stale_bestmoves - n for p, n in zip(players, stale_before)]
    dropped = [p.client.dropped_lines - n for p, n in zip(players, dropped_before)]
    record = PgnGame(
        white=names[spec.white], black=names[1 - spec.white], result=ending.result,
        moves=tuple(game.moves), round=str(spec.round), event="c4engine match",
        date=datetime.date.today().strftime("%Y.%m.%d"), termination=ending.termination,
        result_comment=ending.description, time_control=str(config.tc) if config.tc else None,
        variant=config.variant)
    white_points = {"1-0": 1.0, "0-1": 0.0}.get(ending.result, 0.5)
    points = white_points if spec.white == 0 else 1.0 - white_points
    forfeit = None if ending.loser is None else spec.white ^ ending.loser  # colour -> engine
    return GameOutcome(spec, record, points, forfeit, (stale[0], stale[1]),
                       (dropped[0], dropped[1]))
