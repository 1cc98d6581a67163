"""``c4engine match``: a referee that plays two engines against each other.

The referee trusts neither engine.  It keeps the position with our own rules
(:mod:`c4engine.board`), checks every move, ends games on four in a row or a
full board, keeps the clocks, and scores a game as lost for the engine that
crashes, plays an illegal move, answers after its time, or stalls; the reason
goes into the PGN and the statistics, and the match goes on with the engine
restarted if it died.

Each opening is played twice, the engines swapping colours, so that a
lopsided opening costs both the same; the pairs feed the pentanomial
statistics and the SPRT (see :mod:`c4engine.match_stats`).
"""

from __future__ import annotations

import datetime
import itertools
import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import click

from .board import Position, RulesError
from .engine_client import (HANDSHAKE_TIMEOUT, EngineClient, EngineError, EngineTimeout,
                            GoLimits)
from .match_stats import (Pentanomial, SprtParams, draw_ratio, elo_estimate, los,
                          pentanomial, score, sprt_decision, sprt_llr_pentanomial)
from .notation import format_line, parse_digits, parse_move
from .pgn import BOOK, PgnGame, PgnMove, move_comment, write_game

SIDES = ("White", "Black")
STALL_TIMEOUT = 60.0  # seconds a depth- or node-limited search may take


@dataclass(frozen=True)
class EngineSpec:
    """How to run one engine: its command line, display name, and options to set."""

    command: str
    name: str | None = None
    options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TimeControl:
    """A base time and an increment per move, in milliseconds."""

    base_ms: int
    inc_ms: int

    def __str__(self) -> str:
        """cutechess' form, ``10+0.1`` (seconds)."""
        base = f"{self.base_ms / 1000:g}"
        return f"{base}+{self.inc_ms / 1000:g}" if self.inc_ms else base


@dataclass(frozen=True)
class MatchConfig:
    """Everything a match needs; built by the command line or by tests."""

    engines: tuple[EngineSpec, EngineSpec]
    openings: tuple[str, ...]
    games: int
    tc: TimeControl | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None
    timemargin: int = 0
    stall_timeout: float = STALL_TIMEOUT
    handshake_timeout: float = HANDSHAKE_TIMEOUT
    order: str = "sequential"
    seed: int | None = None
    concurrency: int = 1
    sprt: SprtParams | None = None
    pgn_path: Path | None = None


@dataclass(frozen=True)
class GameSpec:
    """One game of the schedule; ``white`` is the index of the engine that moves first."""

    number: int
    round: int
    opening: str
    white: int


@dataclass(frozen=True)
class GameOutcome:
    """A finished game: its PGN record, engine 0's points, and who forfeited, if anyone."""

    spec: GameSpec
    pgn: PgnGame
    points: float
    forfeit: int | None = None


@dataclass(frozen=True)
class _Ending:
    """How a game ended: the PGN result, the Termination tag and the final comment."""

    result: str
    termination: str
    description: str
    loser: int | None = None  # colour (0 White, 1 Black) that forfeited


# -- openings and schedule ------------------------------------------------


def builtin_openings() -> tuple[str, ...]:
    """Every 2-ply opening, one of each mirror pair: 25 positions.

    After two stones no side can be lost at once (a threat needs three), all first
    moves and replies are covered, and a mirror image would only replay the same
    game.  Many of these are won for one side with perfect play (the first player
    wins by starting in the centre), which pairing with colours swapped cancels;
    a vetted balanced list can be given with --openings."""
    return tuple(f"{a}{b}" for a in range(1, 8) for b in range(1, 8)
                 if f"{a}{b}" <= f"{8 - a}{8 - b}")


EMPTY_BOARD = "-"  # an openings-file line for "start from the empty board"


def read_openings(path: Path) -> tuple[str, ...]:
    """Digit strings, one per line (blank lines and ``#`` comments skipped, ``-`` for
    the empty board); each must be a legal game that is not over yet."""
    openings = []
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line == EMPTY_BOARD:
            line = ""
        try:
            if parse_digits(line).is_over():
                raise RulesError("the game is already over")
        except RulesError as err:
            raise click.UsageError(f"{path}:{number}: opening '{line}': {err}") from None
        openings.append(line)
    if not openings:
        raise click.UsageError(f"{path}: no openings found")
    return tuple(openings)


def schedule(openings: Sequence[str], games: int, order: str,
             seed: int | None) -> list[GameSpec]:
    """``games`` games in rounds of two: the same opening, engine 0 White then Black."""
    picks = _opening_stream(openings, order, seed)
    specs = []
    opening = ""
    for number in range(1, games + 1):
        if number % 2 == 1:
            opening = next(picks)
        specs.append(GameSpec(number, (number + 1) // 2, opening, white=(number - 1) % 2))
    return specs


def _opening_stream(openings: Sequence[str], order: str, seed: int | None) -> Iterator[str]:
    """Openings in file order, or shuffled anew on each pass through the list."""
    if order == "sequential":
        yield from itertools.cycle(openings)
    else:
        rng = random.Random(seed)
        while True:
            batch = list(openings)
            rng.shuffle(batch)
            yield from batch


# -- one engine of a worker -----------------------------------------------


class Player:
    """An engine process as the referee uses it: configured after every (re)start,
    resynchronized or restarted before every game."""

    def __init__(self, spec: EngineSpec, config: MatchConfig,
                 log: Callable[[str], None] | None) -> None:
        self.spec = spec
        self.config = config
        self.client = EngineClient(spec.command, name=spec.name or spec.command, log=log)
        self.drops = False

    def start(self) -> None:
        """Start, handshake, select the cfour variant if offered, set the options.

        An engine with variants but not ``cfour`` would play some other game with
        our moves (Debian's Fairy-Stockfish 11.1 does): refused, as cutechess does.
        One without a ``UCI_Variant`` option gets our digit moves."""
        self.client.start(self.config.handshake_timeout)
        self.drops = self.client.supports_variant("cfour")
        if self.drops:
            self.client.set_option("UCI_Variant", "cfour")
        elif "UCI_Variant" in self.client.options:
            raise EngineError(f"{self.client.name}: its UCI_Variant option offers no cfour")
        for name, value in self.spec.options:
            self.client.set_option(name, value)
        self.client.is_ready()

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


# -- one game -------------------------------------------------------------


class Clocks:
    """Both sides' time left under a time control, kept by the referee from its
    own measurements (what the engines think of their time does not count)."""

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        self.left_ms = [float(tc.base_ms), float(tc.base_ms)]

    def charge(self, colour: int, elapsed_ms: float) -> None:
        """Take a move's time off, then add the increment (a margin used is forgiven)."""
        self.left_ms[colour] = max(0.0, self.left_ms[colour] - elapsed_ms) + self.tc.inc_ms

    def go_fields(self) -> dict[str, int]:
        return dict(wtime=int(self.left_ms[0]), btime=int(self.left_ms[1]),
                    winc=self.tc.inc_ms, binc=self.tc.inc_ms)


class Game:
    """Plays one game between two prepared players (indexed by colour)."""

    def __init__(self, spec: GameSpec, seats: tuple[Player, Player], config: MatchConfig) -> None:
        self.spec = spec
        self.seats = seats
        self.config = config
        self.pos = parse_digits(spec.opening)
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
        try:
            player.client.position(format_line(Position(), list(self.pos.history), player.drops))
            reply = player.client.go(self._limits(), timeout)
        except EngineTimeout:
            if allowed is None:
                return _forfeit(colour, "stalled connection",
                                f"{{side}}'s connection stalls (no move in {timeout:g} s)")
            return _forfeit(colour, "time forfeit",
                            f"{{side}} loses on time (no move in {allowed:.0f} ms)")
        except EngineError as err:
            return _forfeit(colour, "abandoned", f"{{side}} disconnects ({err})")
        elapsed_ms = reply.elapsed * 1000
        if allowed is not None and elapsed_ms > allowed + self.config.timemargin:
            return _forfeit(colour, "time forfeit", f"{{side}} loses on time "
                            f"({elapsed_ms:.0f} ms, {allowed:.0f} allowed)")
        if self.clocks:
            self.clocks.charge(colour, elapsed_ms)
        try:
            col = parse_move(reply.bestmove, self.pos)
            self.pos = self.pos.play(col)
        except RulesError as err:
            return _forfeit(colour, "illegal move", f"{{side}} makes an illegal move: "
                            f"{reply.bestmove or '(none)'} ({err})")
        self.moves.append(PgnMove(col, move_comment(reply.info.score, reply.info.depth,
                                                    reply.elapsed)))
        return None

    def _allowed_ms(self, colour: int) -> float | None:
        """The time the side to move may use, or None when only depth/nodes limit it."""
        limits = [t for t in (self.config.movetime,
                              self.clocks.left_ms[colour] if self.clocks else None)
                  if t is not None]
        return min(limits) if limits else None

    def _limits(self) -> GoLimits:
        cfg = self.config
        clocks = self.clocks.go_fields() if self.clocks else {}
        return GoLimits(movetime=cfg.movetime, depth=cfg.depth, nodes=cfg.nodes, **clocks)


def _forfeit(colour: int, termination: str, template: str) -> _Ending:
    """The side ``colour`` loses; ``template`` says why, ``{side}`` standing for it."""
    return _Ending(("0-1", "1-0")[colour], termination,
                   template.replace("{side}", SIDES[colour]), colour)


def play_game(spec: GameSpec, players: tuple[Player, Player], names: tuple[str, str],
              config: MatchConfig) -> GameOutcome:
    """Play ``spec`` with engine ``spec.white`` moving first; the outcome for engine 0."""
    seats = (players[spec.white], players[1 - spec.white])
    game = Game(spec, seats, config)
    ending = game.play()
    record = PgnGame(
        white=names[spec.white], black=names[1 - spec.white], result=ending.result,
        moves=tuple(game.moves), round=str(spec.round), event="c4engine match",
        date=datetime.date.today().strftime("%Y.%m.%d"), termination=ending.termination,
        result_comment=ending.description, time_control=str(config.tc) if config.tc else None)
    white_points = {"1-0": 1.0, "0-1": 0.0}.get(ending.result, 0.5)
    points = white_points if spec.white == 0 else 1.0 - white_points
    forfeit = None if ending.loser is None else spec.white ^ ending.loser  # colour -> engine
    return GameOutcome(spec, record, points, forfeit)


# -- the tally ------------------------------------------------------------


@dataclass
class Tally:
    """Results so far, from engine 0's side."""

    names: tuple[str, str]
    sprt: SprtParams | None = None
    outcomes: list[GameOutcome] = field(default_factory=list)

    def add(self, outcome: GameOutcome) -> None:
        self.outcomes.append(outcome)

    def wdl(self, white: int | None = None) -> tuple[int, int, int]:
        """Engine 0's wins, draws, losses (only the games where engine ``white`` was White)."""
        points = [o.points for o in self.outcomes if white is None or o.spec.white == white]
        return points.count(1.0), points.count(0.5), points.count(0.0)

    def pentanomial(self) -> Pentanomial:
        """Pair counts over the rounds whose two games are both finished."""
        rounds: dict[int, list[float]] = {}
        for o in self.outcomes:
            rounds.setdefault(o.spec.round, []).append(o.points)
        return pentanomial([(p[0], p[1]) for p in rounds.values() if len(p) == 2])

    def llr(self) -> float | None:
        return sprt_llr_pentanomial(self.pentanomial(), self.sprt) if self.sprt else None

    def decision(self) -> str | None:
        llr = self.llr()
        return None if llr is None or self.sprt is None else sprt_decision(llr, self.sprt)

    def forfeits(self, engine: int) -> Counter[str]:
        return Counter(o.pgn.termination for o in self.outcomes if o.forfeit == engine)

    def score_line(self) -> str:
        """cutechess' ``Score of A vs B: W - L - D [score] N``."""
        wins, draws, losses = self.wdl()
        return (f"Score of {self.names[0]} vs {self.names[1]}: {wins} - {losses} - {draws}  "
                f"[{score(wins, draws, losses):.3f}] {wins + draws + losses}")

    def progress_line(self, outcome: GameOutcome) -> str:
        pgn = outcome.pgn
        line = (f"Finished game {outcome.spec.number} ({pgn.white} vs {pgn.black}, opening "
                f"{outcome.spec.opening}): {pgn.result} {{{pgn.result_comment}}} | "
                f"{self.score_line()}")
        llr = self.llr()
        if llr is not None and self.sprt is not None:
            line += f" | LLR {llr:.2f} ({self.sprt.lower:.2f}, {self.sprt.upper:.2f})"
        return line

    def summary_lines(self, scheduled: int) -> list[str]:
        wins, draws, losses = self.wdl()
        elo = elo_estimate(wins, draws, losses)
        penta = self.pentanomial()
        lines = [self.score_line()]
        for engine, colour in ((0, "White"), (1, "Black")):
            cw, cd, cl = self.wdl(white=engine)
            lines.append(f"...      {self.names[0]} playing {colour}: {cw} - {cl} - {cd}  "
                         f"[{score(cw, cd, cl):.3f}] {cw + cd + cl}")
        lines.append(f"Elo difference: {elo.diff:.1f} +/- {elo.margin:.1f}, "
                     f"LOS: {100 * los(wins, losses):.1f} %, "
                     f"DrawRatio: {100 * draw_ratio(wins, draws, losses):.1f} %")
        lines.append(f"Ptnml(0-2): {list(penta.by_score())} "
                     f"(pairs LL, LD, WL+DD, WD, WW; WL {penta.wl}, DD {penta.dd})")
        lines += self._sprt_lines()
        for engine in (0, 1):
            reasons = self.forfeits(engine)
            if reasons:
                detail = ", ".join(f"{why} {count}" for why, count in sorted(reasons.items()))
                lines.append(f"Forfeits by {self.names[engine]}: "
                             f"{sum(reasons.values())} ({detail})")
        lines.append(f"{len(self.outcomes)} of {scheduled} games finished.")
        return lines

    def _sprt_lines(self) -> list[str]:
        llr, params = self.llr(), self.sprt
        if llr is None or params is None:
            return []
        verdict = {"H1": "H1 was accepted", "H0": "H0 was accepted", None: "no decision yet"}
        return [f"SPRT ({params.model}, pentanomial): elo0 {params.elo0:g}, elo1 {params.elo1:g}, "
                f"alpha {params.alpha:g}, beta {params.beta:g}: llr {llr:.2f}, "
                f"lbound {params.lower:.2f}, ubound {params.upper:.2f} - "
                f"{verdict[self.decision()]}"]


# -- the match ------------------------------------------------------------


@dataclass
class MatchReport:
    """The results, and how many games were scheduled (an SPRT may stop earlier)."""

    tally: Tally
    scheduled: int


def start_players(config: MatchConfig,
                  log: Callable[[str], None] | None) -> list[tuple[Player, Player]]:
    """Start a pair of engines per concurrent game, all at once (a Python engine may
    take seconds to load); if any fails, end the others and raise its EngineError."""
    pairs = [(Player(config.engines[0], config, log), Player(config.engines[1], config, log))
             for _ in range(min(config.concurrency, config.games))]
    everyone = [p for pair in pairs for p in pair]
    with ThreadPoolExecutor(max_workers=len(everyone)) as pool:
        errors = [f.exception() for f in [pool.submit(p.start) for p in everyone]]
    failure = next((e for e in errors if e is not None), None)
    if failure is not None:
        for player in everyone:
            player.client.kill()
        raise failure
    return pairs


def display_names(config: MatchConfig, first_pair: tuple[Player, Player]) -> tuple[str, str]:
    """--name, else the engine's ``id name``, else the command; made distinct."""
    names = [spec.name or player.client.id_name or spec.command
             for spec, player in zip(config.engines, first_pair)]
    if names[0] == names[1]:
        names = [f"{names[0]}-1", f"{names[1]}-2"]
    return names[0], names[1]


def run_match(config: MatchConfig, progress: Callable[[str], None],
              log: Callable[[str], None] | None = None) -> MatchReport:
    """Play the match; ``progress`` gets a line per finished game.  Raises EngineError
    before any game when an engine cannot be started."""
    pairs = start_players(config, log)
    names = display_names(config, pairs[0])
    for pair in pairs:
        for player, name in zip(pair, names):
            player.client.name = name  # what messages about it will call it
    for player in pairs[0]:
        for option, _ in player.spec.options:
            if option not in player.client.options:
                progress(f"warning: {player.client.name} does not list an option '{option}'")
    specs = schedule(config.openings, config.games, config.order, config.seed)
    runner = _Runner(config, names, specs, progress)
    try:
        runner.run(pairs)
    finally:
        runner.stopped.set()  # on Ctrl-C: no new games while the engines are ended
        for pair in pairs:
            for player in pair:
                player.close()
    return MatchReport(runner.tally, len(specs))


class _Runner:
    """Hands games to worker threads, one per pair of engines, and records results."""

    def __init__(self, config: MatchConfig, names: tuple[str, str], specs: list[GameSpec],
                 progress: Callable[[str], None]) -> None:
        self.config = config
        self.names = names
        self.pending = iter(specs)
        self.progress = progress
        self.tally = Tally(names, config.sprt)
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.failures: list[BaseException] = []

    def run(self, pairs: list[tuple[Player, Player]]) -> None:
        threads = [threading.Thread(target=self._work, args=(pair,), daemon=True,
                                    name=f"match-worker-{i}") for i, pair in enumerate(pairs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if self.failures:
            raise self.failures[0]

    def _next(self) -> GameSpec | None:
        with self.lock:
            return None if self.stopped.is_set() else next(self.pending, None)

    def _work(self, pair: tuple[Player, Player]) -> None:
        try:
            while (spec := self._next()) is not None:
                self._record(play_game(spec, pair, self.names, self.config))
        except BaseException as err:  # a bug here must not leave the match hanging
            with self.lock:
                self.failures.append(err)
            self.stopped.set()

    def _record(self, outcome: GameOutcome) -> None:
        with self.lock:
            self.tally.add(outcome)
            if self.config.pgn_path is not None:
                with self.config.pgn_path.open("a", encoding="utf-8") as out:
                    out.write(write_game(outcome.pgn))
            self.progress(self.tally.progress_line(outcome))
            if self.tally.decision() is not None:
                self.stopped.set()


# -- command line ---------------------------------------------------------


def parse_tc(text: str) -> TimeControl:
    """``10+0.1`` or ``10``: seconds of base time and of increment per move."""
    base, _, inc = text.partition("+")
    try:
        base_s, inc_s = float(base), float(inc or 0)
    except ValueError:
        raise click.BadParameter(f"'{text}': expected SECONDS[+INCREMENT], e.g. 10+0.1",
                                 param_hint="--tc") from None
    if base_s <= 0 or inc_s < 0:
        raise click.BadParameter(f"'{text}': the base time must be positive", param_hint="--tc")
    return TimeControl(round(base_s * 1000), round(inc_s * 1000))


def parse_sprt(text: str) -> SprtParams:
    """``elo0=0 elo1=10 alpha=0.05 beta=0.05 [model=normalized|logistic]``."""
    values: dict[str, Any] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or key not in ("elo0", "elo1", "alpha", "beta", "model"):
            raise click.BadParameter(f"'{word}': expected elo0=, elo1=, alpha=, beta= or model=",
                                     param_hint="--sprt")
        try:
            values[key] = value if key == "model" else float(value)
        except ValueError:
            raise click.BadParameter(f"'{word}': not a number", param_hint="--sprt") from None
    try:
        return SprtParams(**values)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--sprt") from None


_ENGINE_GROUP_KEY = "c4engine.match.engines"
_GROUPED = ("engine", "name", "option")


class _MatchCommand(click.Command):
    """click keeps each option's values apart, but ``--name`` and ``--option`` belong
    to the ``--engine`` before them; the parser's record of the order tells which."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        opts, _, order = self.make_parser(ctx).parse_args(args=list(args))
        ctx.meta[_ENGINE_GROUP_KEY] = _engine_specs(opts, order)
        return super().parse_args(ctx, args)


def _engine_specs(opts: dict[str, object], order: Sequence[click.Parameter]) -> list[EngineSpec]:
    specs: list[EngineSpec] = []
    seen: Counter[str] = Counter()
    for param in order:
        if param.name not in _GROUPED:
            continue
        value = opts[param.name][seen[param.name]]  # type: ignore[index]
        seen[param.name] += 1
        if param.name == "engine":
            specs.append(EngineSpec(value))
        elif not specs:
            raise click.UsageError(f"--{param.name} {value}: give it after its --engine")
        elif param.name == "name":
            if specs[-1].name is not None:
                raise click.UsageError(f"--name {value}: this engine already has a name")
            specs[-1] = replace(specs[-1], name=value)
        else:
            specs[-1] = replace(specs[-1], options=specs[-1].options + (_split_option(value),))
    return specs


def _split_option(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise click.UsageError(f"--option {text}: expected NAME=VALUE")
    return name.strip(), value


def _game_count(games: int | None, rounds: int | None, openings: int) -> int:
    """--games, or two per round; by default every opening once with each colour."""
    if games is not None and rounds is not None:
        raise click.UsageError("give --games or --rounds, not both")
    if games is not None:
        return games
    return 2 * (rounds if rounds is not None else openings)


def _echo_err(line: str) -> None:
    click.echo(line, err=True)


@click.command("match", cls=_MatchCommand)
@click.option("--engine", "engine", multiple=True, metavar="CMD",
              help="Engine command line (shell quoting); give it twice.")
@click.option("--name", "name", multiple=True, metavar="N",
              help="Display name of the preceding --engine.")
@click.option("--option", "option", multiple=True, metavar="NAME=VALUE",
              help="setoption for the preceding --engine (repeatable).")
@click.option("--tc", help="Time control SECONDS[+INC], e.g. 10+0.1; the referee keeps the clocks.")
@click.option("--movetime", type=click.IntRange(min=1), metavar="MS", help="Time per move.")
@click.option("--depth", type=click.IntRange(min=1), help="Depth per move.")
@click.option("--nodes", type=click.IntRange(min=1), help="Nodes per move.")
@click.option("--timemargin", type=click.IntRange(min=0), default=0, show_default=True,
              metavar="MS", help="Lateness tolerated before a move loses on time.")
@click.option("--stall-timeout", type=click.FloatRange(min=0, min_open=True),
              default=STALL_TIMEOUT, show_default=True, metavar="SECONDS",
              help="Wait for a depth/nodes-limited move before it counts as a stall.")
@click.option("--handshake-timeout", type=click.FloatRange(min=0, min_open=True),
              default=HANDSHAKE_TIMEOUT, show_default=True, metavar="SECONDS",
              help="Wait for uciok at each engine start.")
@click.option("--openings", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="File of openings, one digit string per line, '-' for the empty board "
                   "(default: all 2-ply openings).")
@click.option("--order", type=click.Choice(["sequential", "random"]), default="sequential",
              show_default=True)
@click.option("--seed", type=int, help="Seed for --order random.")
@click.option("--games", type=click.IntRange(min=1), help="Number of games.")
@click.option("--rounds", type=click.IntRange(min=1), help="Number of openings, each played twice.")
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True,
              help="Games played at once, each with its own engine processes.")
@click.option("--sprt", metavar="'elo0=0 elo1=10 alpha=0.05 beta=0.05'",
              help="Stop when the SPRT decides: fastchess' GSPRT on game pairs, bounds in "
                   "normalized Elo (add model=logistic for plain Elo).")
@click.option("--pgn", "pgn_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Append the games to this PGN file.")
@click.option("--debug", is_flag=True, help="Print all engine traffic on stderr.")
@click.pass_context
def match_command(ctx: click.Context, /, tc: str | None, movetime: int | None, depth: int | None,
                  nodes: int | None, timemargin: int, stall_timeout: float,
                  handshake_timeout: float, openings: Path | None, order: str, seed: int | None,
                  games: int | None, rounds: int | None, concurrency: int, sprt: str | None,
                  pgn_path: Path | None, debug: bool, **_grouped: object) -> None:
    """Play two engines against each other and report the result."""
    specs = ctx.meta[_ENGINE_GROUP_KEY]
    if len(specs) != 2:
        raise click.UsageError(f"give exactly two --engine options, not {len(specs)}")
    if not (tc or movetime or depth or nodes):
        raise click.UsageError("give a limit: --tc, --movetime, --depth or --nodes")
    if pgn_path and not pgn_path.resolve().parent.is_dir():
        raise click.BadParameter(f"no directory for '{pgn_path}'", param_hint="--pgn")
    suite = read_openings(openings) if openings else builtin_openings()
    config = MatchConfig(
        engines=(specs[0], specs[1]), openings=suite,
        games=_game_count(games, rounds, len(suite)), tc=parse_tc(tc) if tc else None,
        movetime=movetime, depth=depth, nodes=nodes, timemargin=timemargin,
        stall_timeout=stall_timeout, handshake_timeout=handshake_timeout, order=order,
        seed=seed, concurrency=concurrency, sprt=parse_sprt(sprt) if sprt else None,
        pgn_path=pgn_path)
    try:
        report = run_match(config, _echo_err, _echo_err if debug else None)
    except EngineError as err:
        raise click.ClickException(str(err)) from None
    for line in report.tally.summary_lines(report.scheduled):
        click.echo(line)
