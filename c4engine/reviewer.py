"""``c4engine review`` and ``c4engine.review()``: exact verdicts on every move of a game.

An engine process searches the positions of the game that
:class:`~c4engine.verdicts.GameJudge` asks for (each position's value, and
every column of a position whose move was not kept), capped at ``movetime``
per search: with c4engine that is the opening book, then the exact solver, so
the scores are exact unless the cap hits first.  :mod:`c4engine.verdicts`
turns the scores into marks, so the web board, which drives its own engine the
same way, gives the same verdicts.

Input is PGN (from ``c4engine match``, cutechess or the board page) or one
game per line as digits.  A game that cannot be read (an illegal move, a
result the board contradicts, another game's variant, a cut-off end, text that
is not UTF-8) is named with its number and first line, and the other games are
still reviewed.
"""

from __future__ import annotations

import atexit
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING, Any

import click

from .arguments import seconds
from .engine.client import SEARCH_GRACE, EngineClient
from .engine.process import EngineError, own_engine_argv
from .geometry import STANDARD, Geometry
from .inputs import decode_line
from .protocol.go_params import GoParams
from .referee.pgn import BOOK, RESULTS, PgnGame, PgnMove, read_games, write_game
from .rules.board import Board, RulesError
from .rules.notation import format_move, is_digit_string, parse_digits, parse_fen
from .rules.variants import VariantError, VariantSet, built_in
from .verdicts import (
    GameJudge,
    GameReview,
    MoveVerdict,
    PlayerSummary,
    Search,
    review_dict,
    score_text,
    summary_dict,
)

if TYPE_CHECKING:
    from .position import Position

DEFAULT_MOVETIME_MS = 5000
MAX_INPUT_BYTES = 64 << 20
_VARIANT_TAG = re.compile(r'^\s*\[\s*Variant\s+"((?:[^"\\]|\\.)*)"', re.MULTILINE)
_RESULT_AT_END = re.compile(r"(?:1-0|0-1|1/2-1/2|\*)\s*\Z")
_PGN_MARKERS = re.compile(r"[\[{@]|1-0|0-1|1/2-1/2")


# -- input --------------------------------------------------------------------

@dataclass(frozen=True)
class GameInput:
    """A game to review: its number in the input (from 1), its first line, the game."""

    number: int
    line: int
    game: PgnGame
    geometry: Geometry = STANDARD


@dataclass(frozen=True)
class InputProblem:
    """A game of the input that cannot be reviewed, and why."""

    number: int
    line: int
    message: str

    def __str__(self) -> str:
        return f"game {self.number} (line {self.line}): {self.message}"


Item = GameInput | InputProblem


def read_input(data: bytes) -> list[Item]:
    """Every game of ``data`` (PGN, or digit strings one game a line), or the problem
    that keeps it from review; ValueError for input too large to read at all."""
    if len(data) > MAX_INPUT_BYTES:
        raise ValueError(f"the input has {len(data) >> 20} MiB; a review reads at most "
                         f"{MAX_INPUT_BYTES >> 20} MiB (split it)")
    lines = []
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            lines.append(Line(number, decode_line(raw, number)))
        except ValueError as err:
            lines.append(Line(number, "", f"line {number}: {err}", raw.lstrip().startswith(b"[")))
    if any(_PGN_MARKERS.search(line.text) for line in lines):
        return _numbered(_pgn_chunks(lines))
    return _numbered([[line] for line in lines if line.text.strip() or line.problem], digits=True)


@dataclass(frozen=True)
class Line:
    """An input line: its number, its text, and the problem of a line that is not UTF-8."""

    number: int
    text: str
    problem: str = ""
    raw_tag: bool = False

    @property
    def is_tag(self) -> bool:
        return self.raw_tag or self.text.lstrip().startswith("[")


def _pgn_chunks(lines: list[Line]) -> list[list[Line]]:
    """The lines split into games: a new one begins at a tag after moves."""
    chunks: list[list[Line]] = []
    in_moves = False
    for entry in lines:
        if not entry.text.strip() and not entry.problem:
            if chunks:
                chunks[-1].append(entry)
            continue
        is_tag = entry.is_tag
        if not chunks or (is_tag and in_moves):
            chunks.append([])
            in_moves = False
        chunks[-1].append(entry)
        in_moves = in_moves or not is_tag
    return chunks


def _numbered(chunks: list[list[Line]], digits: bool = False) -> list[Item]:
    items: list[Item] = []
    for chunk in chunks:
        for item in (_digit_game if digits else _pgn_games)(len(items) + 1, chunk):
            items.append(item)
    return items


def _digit_game(number: int, chunk: list[Line]) -> Iterator[Item]:
    line, moves, problem = chunk[0].number, chunk[0].text.strip(), chunk[0].problem
    if problem:
        yield InputProblem(number, line, problem)
    elif not is_digit_string(moves):
        yield InputProblem(number, line, f"'{moves[:40]}' is neither PGN nor moves in digits (like 4453)")
    else:
        try:
            pos = parse_digits(moves)
        except RulesError as err:
            yield InputProblem(number, line, str(err))
            return
        yield GameInput(number, line, PgnGame("?", "?", _result_of(pos),
                                              tuple(PgnMove(col) for col in pos.history)))


def _pgn_games(number: int, chunk: list[Line]) -> Iterator[Item]:
    line = chunk[0].number
    bad = next((entry.problem for entry in chunk if entry.problem), "")
    text = "\n".join(entry.text for entry in chunk)
    tag = _VARIANT_TAG.search(text)
    name = tag.group(1) if tag else "cfour"
    known = _known_variant(name)
    if bad:
        yield InputProblem(number, line, bad)
    elif not known:
        yield InputProblem(number, line, f"variant '{name[:40]}' is not Connect Four "
                                         f"(known: cfour, cfour-WxH and cfour-WxHkK)")
    elif not _RESULT_AT_END.search(text):
        yield InputProblem(number, line, "no result (1-0, 0-1, 1/2-1/2 or *) at its end: "
                                         "the game is cut off")
    else:
        try:
            games = read_games(text)
        except ValueError as err:
            yield InputProblem(number, line, str(err))
            return
        for offset, game in enumerate(games):
            problem = _wrong_result(game)
            yield (InputProblem(number + offset, line, problem) if problem
                   else GameInput(number + offset, line, game, game.variant.geometry))


def _known_variant(name: str) -> bool:
    """Whether the ``Variant`` tag names a built-in game (``cfour``, ``cfour-8x7``...)."""
    try:
        VariantSet().find(name)
    except VariantError:
        return False
    return True


def _result_of(pos: Board) -> str:
    """The result a finished position shows ('*' while the game goes on)."""
    if pos.last_mover_won():
        return "1-0" if pos.side_to_move == 1 else "0-1"
    return "1/2-1/2" if pos.is_over() else "*"


def _wrong_result(game: PgnGame) -> str:
    """Why the game's result cannot be right, or ''."""
    if game.result not in RESULTS:
        return f"result '{game.result[:20]}' is none of {', '.join(RESULTS)}"
    shown = _result_of(game.final_position())
    if shown != "*" and game.result not in (shown, "*"):
        return f"result {game.result}, but the board after move {len(game.moves)} says {shown}"
    return ""


def game_of(moves_or_game: object) -> GameInput:
    """What :func:`review` accepts as one game: a Position, columns 1-W, digits, or
    the PGN of one game.  IllegalMoveError for an illegal move given as a Position's
    moves, ValueError for PGN that is not one readable game (its message names the
    move)."""
    from .position import IllegalMoveError, Position
    if isinstance(moves_or_game, Position):
        return _position_game(moves_or_game)
    if isinstance(moves_or_game, str) and _PGN_MARKERS.search(moves_or_game):
        items = read_input(moves_or_game.encode())
        if len(items) != 1:
            raise ValueError(f"review: expected the PGN of one game, found {len(items)}")
        if isinstance(items[0], InputProblem):
            raise ValueError(f"review: {items[0]}")
        return items[0]
    if isinstance(moves_or_game, (str, Sequence)):
        return _position_game(Position.from_moves(moves_or_game))  # type: ignore[arg-type]
    raise IllegalMoveError(f"review: expected a Position, moves or PGN text, got {moves_or_game!r:.40}")


def _position_game(position: Position) -> GameInput:
    geometry = position._board.geometry
    start = parse_fen(position.start_fen, geometry) if position.start_fen else Board(geometry=geometry)
    final = start.play_all([col - 1 for col in position.moves])
    return GameInput(1, 1, PgnGame("?", "?", _result_of(final),
                                   tuple(PgnMove(col - 1) for col in position.moves),
                                   start_fen=position.start_fen, variant=built_in(geometry)), geometry)


# -- the engine ---------------------------------------------------------------

class Reviewer:
    """An engine process that searches what :class:`~c4engine.verdicts.GameJudge`
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
        EngineError if it cannot be used or cannot play that board."""
        self.close()
        self.client.start()
        self.client.setup([("MultiPV", "1")], variant=built_in(geometry))
        self.started, self.multipv, self.geometry = True, 1, geometry

    def review(self, item: GameInput, on_move: Callable[[MoveVerdict], None] | None = None) -> GameReview:
        """Every move of ``item`` judged; ``on_move`` sees each verdict as it comes."""
        if not (self.started and self.client.alive and self.geometry == item.geometry):
            self.start(item.geometry)
        game = item.game
        judge = judge_of(item)
        while (search := judge.next_search()) is not None:
            for verdict in judge.take(self._lines(item, search)):
                if on_move:
                    on_move(verdict)
        return GameReview(tuple(judge.verdicts), game.white, game.black, game.result, game.start_fen,
                          item.geometry)

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


def judge_of(item: GameInput) -> GameJudge:
    """The judge of ``item``'s moves, from its start."""
    moves = item.game.moves
    return GameJudge(item.game.start_position(), [m.col for m in moves],
                     [is_opening(m) for m in moves], item.geometry)


def is_opening(move: PgnMove) -> bool:
    """Whether the referee's opening imposed the move (its comment starts ``book``)."""
    return move.comment == BOOK or move.comment.startswith(BOOK + ",")


# -- output -------------------------------------------------------------------

def annotated(game: PgnGame, review: GameReview) -> PgnGame:
    """``game`` with each move's annotation (``?!``, ``?``, ``??``) and a comment with
    the move's exact score from the mover's side (``{+M7}``), the best move and its
    score where the move was worse (``{-M12, best P@d3 +M7}``), ``book`` first for
    an opening move."""
    board = game.start_position()
    moves = []
    for move, verdict in zip(game.moves, review.moves):
        parts = [BOOK] if verdict.opening else []
        parts.append(score_text(verdict.after, verdict.stones, review.geometry))
        if verdict.mark not in (None, "kept") and verdict.best:
            best = format_move(verdict.best[0] - 1, board, drops=True)
            parts.append(f"best {best} {score_text(verdict.before, verdict.stones, review.geometry)}")
        moves.append(PgnMove(move.col, ", ".join(parts), verdict.nag))
        board = board.play(move.col)
    return replace(game, moves=tuple(moves))


def player_names(review: GameReview) -> tuple[str, str]:
    """The two players' names, or which side they played when the input has none."""
    return (review.white if review.white != "?" else "first player",
            review.black if review.black != "?" else "second player")


def summary_table(totals: dict[str, PlayerSummary]) -> str:
    """Each player's moves by mark, and accuracy (the share of result-keeping moves)."""
    width = max([len(name) for name in totals] + [6])
    rows = [f"{'player':<{width}}  moves  kept  slower  mistakes  blunders  unproven  accuracy"]
    for name, s in totals.items():
        accuracy = "-" if s.accuracy is None else f"{100 * s.accuracy:.1f}%"
        rows.append(f"{name:<{width}}  {s.moves:5d}  {s.kept:4d}  {s.slower:6d}  {s.mistakes:8d}  "
                    f"{s.blunders:8d}  {s.unproven:8d}  {accuracy:>8}")
    return "\n".join(rows)


def progress_line(number: int, total: int, review: GameReview, seconds: float) -> str:
    marks = [v.mark for v in review.moves]
    counts = ", ".join(f"{marks.count(m)} {m}{'s' if marks.count(m) > 1 and m != 'slower' else ''}"
                       for m in ("slower", "mistake", "blunder") if m in marks)
    return (f"game {number}/{total}: {len(review.moves)} moves reviewed in {seconds:.1f} s"
            + (f" ({counts})" if counts else ""))


@click.command("review")
@click.argument("file", type=click.File("rb"), default="-")
@click.option("--movetime", "movetime_ms", type=click.IntRange(1, 3_600_000),
              default=DEFAULT_MOVETIME_MS, show_default=True, metavar="MS",
              help="Time cap per search: where it hits, a score is a bound, never shown as exact.")
@click.option("--engine", metavar="CMD", default=None,
              help="Engine command line (shell quoting) that gives mate scores and MultiPV "
                   "lines for every column; default: c4engine itself.")
@click.option("--json", "as_json", is_flag=True, help="Write the verdicts as JSON instead of PGN.")
def review_command(file: IO[bytes], movetime_ms: int, engine: str | None, as_json: bool) -> None:
    """Judge every move of games with exact scores: kept, slower (?!), mistake (?) or
    blunder (??).

    FILE (default: standard input) is PGN, as `c4engine match`, cutechess and the
    board page write it, or one game per line in digits (4453...).  Writes the
    games annotated as PGN (or JSON with --json) on standard output, a line per
    game as it is done and each player's summary on standard error.  A game that
    cannot be read is named and skipped; the exit status is then 1."""
    try:
        items = read_input(file.read())
    except ValueError as err:
        raise click.ClickException(str(err)) from None
    games = [item for item in items if isinstance(item, GameInput)]
    problems = [item for item in items if isinstance(item, InputProblem)]
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    reviews = _review_all(games, engine, movetime_ms)
    if as_json:
        click.echo(json.dumps(_json_document(games, reviews, problems), indent=1))
    else:
        for item, review in zip(games, reviews):
            click.echo(write_game(annotated(item.game, review)), nl=False)
    click.echo(summary_table(_totals(reviews)), err=True)
    if problems:
        sys.exit(1)


def _review_all(games: list[GameInput], engine: str | None, movetime_ms: int) -> list[GameReview]:
    reviews = []
    try:
        with Reviewer(engine, movetime_ms) as reviewer:
            for item in games:
                began = time.perf_counter()
                review = reviewer.review(item)
                reviews.append(review)
                click.echo(progress_line(len(reviews), len(games), review,
                                         time.perf_counter() - began), err=True)
    except EngineError as err:
        raise click.ClickException(f"the engine failed: {err}") from None
    return reviews


def _totals(reviews: list[GameReview]) -> dict[str, PlayerSummary]:
    totals: dict[str, PlayerSummary] = {}
    for review in reviews:
        for name, summary in zip(player_names(review), (review.first, review.second)):
            totals[name] = totals.get(name, PlayerSummary()) + summary
    return totals


def _json_document(games: list[GameInput], reviews: list[GameReview],
                   problems: list[InputProblem]) -> dict[str, Any]:
    return {"games": [{"number": item.number, "line": item.line, **review_dict(review)}
                      for item, review in zip(games, reviews)],
            "errors": [{"number": p.number, "line": p.line, "message": p.message} for p in problems],
            "players": {name: summary_dict(s) for name, s in _totals(reviews).items()}}


# -- the Python API -----------------------------------------------------------

_lock = threading.Lock()
_shared: Reviewer | None = None


def review_game(moves_or_game: object, movetime: object, engine: str | Sequence[str] | None) -> GameReview:
    """:func:`c4engine.review`'s work: one engine process, c4engine's own kept for the
    whole Python process (its start-up is the costly part), any other for this call."""
    global _shared
    limit = DEFAULT_MOVETIME_MS / 1000 if movetime is None else seconds(movetime, "review: movetime")
    movetime_ms = None if limit is None else max(1, round(limit * 1000))
    item = game_of(moves_or_game)
    if engine is not None:
        with Reviewer(engine, movetime_ms) as own:
            return own.review(item)
    with _lock:
        if _shared is None:
            _shared = Reviewer()
            atexit.register(_shared.close)
        _shared.movetime_ms = movetime_ms
        return _shared.review(item)

