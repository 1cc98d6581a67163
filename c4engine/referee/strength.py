"""``c4engine strength``: how often an engine keeps the game-theoretic result.

Each test position comes with the exact score of every column (Pons' convention,
from the side to move, found by an independent perfect solver when the set was
made).  The engine is asked for one move per position through the protocol, at a
fixed ``movetime`` (or a fixed number of ``nodes``, which makes a run of a
single-threaded engine the same whatever else the machine is doing), and the move
is judged against those scores:

- *kept*: the move's score has the sign of the best score (a win stays a win,
  a draw a draw; in a lost position every legal move keeps the result);
- *fastest*: the move's score equals the best score (the quickest win, or the
  longest defence);
- *blunder*: the result got worse (win to draw or loss, draw to loss).  An
  illegal move, or none in time, counts as a blunder too.

Results are grouped by game phase (stones on the board), because an engine that
solves endgames exactly can still go wrong in the middle game and only a table
per phase shows where.  Any engine that speaks the protocol can be measured, so
the set doubles as a regression check: the command exits with status 1 when a
move blundered.

Between positions the engine gets ``ucinewgame``, which clears its table: the
positions are unrelated (or, worse, a few moves apart in the same game), and a
table kept from one would hand the engine solved subtrees for the next, making
the figures depend on the order of the file and on ``--limit``.  A cold table is
harder than a real game, where earlier moves have warmed it up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib.resources import files

from ..engine.limits import Limit
from ..engine.info import engine_move
from ..engine.process import EngineTimeout
from ..engine.simple import SimpleEngine
from ..geometry import STANDARD
from ..inputs import numbered_lines, summary
from ..rules.board import Board, RulesError
from ..rules.notation import parse_digits

BUILTIN_POSITIONS = "data/strength_positions.txt"
FULL = "x"  # a full column in the position file
START_SECONDS = 180.0  # for the first readyok: a first start may compile the search kernel


@dataclass(frozen=True)
class Phase:
    """A stretch of the game by stones on the board, both ends included."""

    name: str
    low: int
    high: int


PHASES = (Phase("0-8", 0, 8), Phase("9-16", 9, 16), Phase("17-24", 17, 24),
          Phase("25+", 25, STANDARD.cells))


def phase_of(stones: int) -> Phase:
    """The phase a position with ``stones`` stones belongs to."""
    for phase in PHASES:
        if phase.low <= stones <= phase.high:
            return phase
    raise ValueError(f"no phase holds {stones} stones")


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


@dataclass(frozen=True)
class TestPosition:
    """A position (Pons digit string) and the exact score of each column, None when full."""

    __test__ = False  # not a pytest class, whatever its name

    moves: str
    scores: tuple[int | None, ...]

    @property
    def stones(self) -> int:
        return len(self.moves)

    @property
    def best(self) -> int:
        return max(s for s in self.scores if s is not None)

    @property
    def at_risk(self) -> bool:
        """Whether some legal move worsens the result (never so in a lost position)."""
        return any(s is not None and sign(s) < sign(self.best) for s in self.scores)

    def best_columns(self) -> list[int]:
        """0-based columns that reach the best score."""
        return [col for col, s in enumerate(self.scores) if s == self.best]

    def to_line(self) -> str:
        """The position as a line of the position file (what :func:`parse_position_line` reads)."""
        return " ".join([self.moves or "-"] + [FULL if s is None else str(s) for s in self.scores])


def parse_position_line(line: str) -> TestPosition:
    """A ``<digits> <s1> ... <s7>`` line (``-`` for the start position, ``x`` for a
    full column); ValueError says what is wrong.  The scores must fit the board:
    full columns exactly where the board is full, and a game still to be played."""
    fields = line.split()
    if len(fields) != 1 + STANDARD.width:
        raise ValueError(f"expected the moves and {STANDARD.width} scores, found {len(fields)} fields")
    moves = "" if fields[0] == "-" else fields[0]
    try:
        pos = parse_digits(moves)
        scores = tuple(None if f == FULL else int(f) for f in fields[1:])
    except (RulesError, ValueError) as err:
        raise ValueError(str(err)) from None
    if pos.is_over():
        raise ValueError(f"'{moves}': the game is already over")
    full = [col + 1 for col in range(STANDARD.width) if pos.can_play(col) != (scores[col] is not None)]
    if full:
        raise ValueError(f"'{moves}': 'x' must mark exactly the full columns (check {full})")
    return TestPosition(moves, scores)


def read_positions(data: bytes, where: str = "positions") -> list[TestPosition]:
    """All positions of a position file; ``#`` starts a comment line.  ValueError
    names every bad line (``where:line: problem``, see :mod:`c4engine.inputs`)."""
    lines, problems = numbered_lines(data)
    positions = []
    for number, line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            positions.append(parse_position_line(line))
        except ValueError as err:
            problems.append((number, str(err)))
    if problems:
        raise ValueError(summary(where, problems))
    return positions


def builtin_positions() -> bytes:
    """The set shipped with the package (see tools/make_strength_positions.py)."""
    return files("c4engine").joinpath(BUILTIN_POSITIONS).read_bytes()


# -- judging moves ---------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What the engine played in one position: ``played`` is the 0-based column,
    None when the move was illegal or missing (``move`` then says what came)."""

    position: TestPosition
    move: str
    played: int | None
    elapsed: float = 0.0

    @property
    def score(self) -> int | None:
        return None if self.played is None else self.position.scores[self.played]

    @property
    def kept(self) -> bool:
        return self.score is not None and sign(self.score) == sign(self.position.best)

    @property
    def fastest(self) -> bool:
        return self.score == self.position.best

    @property
    def blunder(self) -> bool:
        return not self.kept


def judge(position: TestPosition, move: str, drops: bool, elapsed: float = 0.0,
          board: Board | None = None) -> Verdict:
    """The verdict on ``move`` as the engine sent it: a drop after ``UCI_Variant
    cfour`` (``drops``), a digit otherwise; the other notation is illegal, as in a match.
    ``board`` is the position, when the caller has it already."""
    try:
        where = parse_digits(position.moves) if board is None else board
        col: int | None = engine_move(move, where, drops)
    except RulesError:
        col = None
    return Verdict(position, move, col, elapsed)


# -- the report ------------------------------------------------------------


@dataclass
class PhaseTally:
    """Counts for one phase; ``at_risk`` are the positions where a blunder was possible."""

    positions: int = 0
    at_risk: int = 0
    kept: int = 0
    fastest: int = 0
    blunders: int = 0

    def add(self, verdict: Verdict) -> None:
        self.positions += 1
        self.at_risk += verdict.position.at_risk
        self.kept += verdict.kept
        self.fastest += verdict.fastest
        self.blunders += verdict.blunder

    def row(self, name: str) -> str:
        percent = 100.0 * self.blunders / self.positions if self.positions else 0.0
        return (f"{name:<6} {self.positions:>9} {self.at_risk:>7} {self.kept:>6} "
                f"{self.fastest:>8} {self.blunders:>9} {percent:>10.1f}")


def tally_by_phase(verdicts: Iterable[Verdict]) -> dict[str, PhaseTally]:
    """A tally per phase that has positions, in phase order, then ``all``."""
    tallies = {phase.name: PhaseTally() for phase in PHASES}
    total = PhaseTally()
    for verdict in verdicts:
        tallies[phase_of(verdict.position.stones).name].add(verdict)
        total.add(verdict)
    return {name: t for name, t in tallies.items() if t.positions} | {"all": total}


def describe_blunder(verdict: Verdict) -> str:
    """One line naming the position, the move and what the best move would have scored."""
    pos = verdict.position
    if verdict.played is None:
        played = f"'{verdict.move}' (illegal or missing)"
    else:
        played = f"column {verdict.played + 1} (score {verdict.score})"
    cols = pos.best_columns()
    best = ("column " if len(cols) == 1 else "columns ") + ",".join(str(c + 1) for c in cols)
    return (f"{pos.moves or '(start)'}: played {played}, best {pos.best} ({best}), "
            f"phase {phase_of(pos.stones).name}")


def report_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """The table per phase, the timing, and every blunder."""
    lines = ["phase  positions at risk   kept  fastest  blunders  blunder %"]
    lines += [t.row(name) for name, t in tally_by_phase(verdicts).items()]
    if verdicts:
        times = [v.elapsed * 1000 for v in verdicts]
        lines.append(f"move time: mean {sum(times) / len(times):.0f} ms, max {max(times):.0f} ms")
    blunders = [v for v in verdicts if v.blunder]
    if blunders:
        lines.append(f"blunders ({len(blunders)}):")
        lines += ["  " + describe_blunder(v) for v in blunders]
    return lines


# -- driving the engine ------------------------------------------------------


@dataclass(frozen=True)
class _Game:
    """A test position as the engine client reads one: the columns 1-7 played from the start."""

    moves: tuple[int, ...]
    start_fen: str | None = None


class EngineUnderTest:
    """An engine process asked for one move per position, set up as in a match
    (:meth:`SimpleEngine.popen`: drops when it offers ``cfour``).

    The first ``readyok`` may take long (c4engine compiles its kernel on a first
    start, and again after every change to it): this measures moves, not start-up,
    so it waits far longer than cutechess' 15 s."""

    def __init__(self, command: str, options: Sequence[tuple[str, str]]) -> None:
        self.engine = SimpleEngine.popen(command, options=dict(options),
                                         startup_timeout=START_SECONDS)
        self.client = self.engine.client

    def move(self, position: TestPosition, limit: Limit) -> Verdict:
        """Ask for a move in ``position`` with a fresh table; a move that does not come
        within the grace time counts as missing (the search is stopped)."""
        self.client.new_game()
        self.client.is_ready()
        game = _Game(tuple(int(d) for d in position.moves))
        try:
            board, result = self.engine.search(game, limit)
        except EngineTimeout:
            return Verdict(position, "(timeout)", None, limit.timeout(len(game.moves) % 2))
        return judge(position, result.bestmove, self.client.drops, result.elapsed, board)

    def close(self) -> None:
        self.engine.quit()


def run_positions(engine: EngineUnderTest, positions: Iterable[TestPosition], limit: Limit,
                  progress: Callable[[Verdict], None] | None = None) -> list[Verdict]:
    """The engine's verdict on every position, in order."""
    verdicts = []
    for position in positions:
        verdicts.append(engine.move(position, limit))
        if progress:
            progress(verdicts[-1])
    return verdicts


def select(positions: list[TestPosition], phases: Sequence[str], limit: int | None,
           ) -> list[TestPosition]:
    """The positions of the chosen phases (all when none is chosen), the first ``limit``."""
    chosen = [p for p in positions if not phases or phase_of(p.stones).name in phases]
    return chosen[:limit]
