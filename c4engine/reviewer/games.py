"""The games a review reads, and the judge of each.

Input is PGN (from ``c4engine match``, cutechess or the board page) or one
game per line as digits.  A game that cannot be read (an illegal move, a
result the board contradicts, another game's variant, a cut-off end, text that
is not UTF-8) is named with its number and first line, and the other games are
still reviewed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import IO, TYPE_CHECKING

from ..geometry import STANDARD, Geometry
from ..inputs import decode_line
from ..referee.pgn import BOOK, RESULTS, PgnGame, PgnMove, read_games
from ..rules.board import Board, RulesError
from ..rules.notation import is_digit_string, parse_digits, parse_fen
from ..rules.variants import BOARD_NAME_PREFIX, VariantError, VariantSet, built_in
from .verdicts import GameJudge, GameReview

if TYPE_CHECKING:
    from ..position import Position

MAX_INPUT_BYTES = 64 << 20
_VARIANT_TAG = re.compile(r'^\s*\[\s*Variant\s+"((?:[^"\\]|\\.)*)"', re.MULTILINE)
_RESULT_AT_END = re.compile(r"(?:1-0|0-1|1/2-1/2|\*)\s*\Z")
_PGN_MARKERS = re.compile(r"[\[{@]|1-0|0-1|1/2-1/2")


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


def read_limited(source: IO[bytes]) -> bytes:
    """The bytes of ``source`` up to one past :data:`MAX_INPUT_BYTES`, enough for
    :func:`read_input` to refuse what is too large: a stream that never ends
    (``/dev/zero``) costs that much memory, not all there is."""
    return source.read(MAX_INPUT_BYTES + 1)


def read_input(data: bytes, variants: VariantSet | None = None, max_games: int | None = None) -> list[Item]:
    """Every game of ``data`` (PGN, or digit strings one game a line), or the problem
    that keeps it from review; ValueError for input too large to read at all, or
    of more than ``max_games`` games (found before the games after them are read).
    ``variants``: the names a PGN's ``Variant`` tag may use besides the built-in
    ones (a loaded variants file, as ``match --variants`` plays them)."""
    if len(data) > MAX_INPUT_BYTES:
        raise ValueError(f"the input has more than {MAX_INPUT_BYTES >> 20} MiB; a review reads at most "
                         f"{MAX_INPUT_BYTES >> 20} MiB (split it)")
    lines = []
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            lines.append(Line(number, decode_line(raw, number)))
        except ValueError as err:
            lines.append(Line(number, "", f"line {number}: {err}", raw.lstrip().startswith(b"[")))
    if any(_PGN_MARKERS.search(line.text) for line in lines):
        return _numbered(_pgn_chunks(lines), partial(_pgn_games, variants=variants or VariantSet()), max_games)
    return _numbered([[line] for line in lines if line.text.strip() or line.problem], _digit_game, max_games)


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


def _numbered(chunks: list[list[Line]], read_chunk: Callable[[int, list[Line]], Iterator[Item]],
              max_games: int | None) -> list[Item]:
    items: list[Item] = []
    for chunk in chunks:
        for item in read_chunk(len(items) + 1, chunk):
            items.append(item)
        if max_games is not None and len(items) > max_games:
            raise ValueError(f"the input has more than {max_games} games; at most {max_games} are "
                             f"reviewed at once (split it)")
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
        yield unnamed_game(Board(), pos.history, None, number, line)


def _pgn_games(number: int, chunk: list[Line], variants: VariantSet) -> Iterator[Item]:
    line = chunk[0].number
    bad = next((entry.problem for entry in chunk if entry.problem), "")
    text = "\n".join(entry.text for entry in chunk)
    tag = _VARIANT_TAG.search(text)
    name = tag.group(1) if tag else "cfour"
    unknown = _variant_problem(name, variants)
    if bad:
        yield InputProblem(number, line, bad)
    elif unknown:
        yield InputProblem(number, line, unknown)
    elif not _RESULT_AT_END.search(text):
        yield InputProblem(number, line, "no result (1-0, 0-1, 1/2-1/2 or *) at its end: "
                                         "the game is cut off")
    else:
        try:
            games = read_games(text, variants)
        except ValueError as err:
            yield InputProblem(number, line, str(err))
            return
        for offset, game in enumerate(games):
            problem = _wrong_result(game)
            yield (InputProblem(number + offset, line, problem) if problem
                   else GameInput(number + offset, line, game, game.variant.geometry))


def _variant_problem(name: str, variants: VariantSet) -> str:
    """Why the ``Variant`` tag names no game of ``variants`` (the built-in ones,
    ``cfour``, ``cfour-8x7``..., and those of a variants file), or '': for a
    ``cfour-WxH`` name, what is wrong with its board (too large, say)."""
    try:
        variants.find(name)
    except VariantError as err:
        if name.lower().startswith(BOARD_NAME_PREFIX):
            return str(err)[:200]
        return (f"variant '{name[:40]}' is not Connect Four (known: cfour, cfour-WxH, "
                f"cfour-WxHkK and the --variants file's names)")
    return ""


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
    """What :func:`c4engine.review` accepts as one game: a Position, columns 1-W, digits, or
    the PGN of one game.  IllegalMoveError for an illegal move given as a Position's
    moves, ValueError for PGN that is not one readable game (its message names the
    move)."""
    from ..position import IllegalMoveError, Position
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
    return unnamed_game(start, [col - 1 for col in position.moves], position.start_fen)


def unnamed_game(start: Board, moves: Sequence[int], start_fen: str | None,
                 number: int = 1, line: int = 1) -> GameInput:
    """A game with no names from ``start`` (the position ``start_fen`` sets up; None:
    the empty board) through ``moves`` (0-based columns), with the result its board
    shows: a digit string's game, a Position's, or the one on the web board."""
    game = PgnGame("?", "?", _result_of(start.play_all(moves)), tuple(PgnMove(col) for col in moves),
                   start_fen=start_fen, variant=built_in(start.geometry))
    return GameInput(number, line, game, start.geometry)


def judge_of(item: GameInput) -> GameJudge:
    """The judge of ``item``'s moves, from its start."""
    moves = item.game.moves
    return GameJudge(item.game.start_position(), [m.col for m in moves],
                     [is_opening(m) for m in moves], item.geometry)


def game_review(item: GameInput, judge: GameJudge) -> GameReview:
    """``item``'s review as far as its judge has come."""
    game = item.game
    return GameReview(tuple(judge.verdicts), game.white, game.black, game.result, game.start_fen,
                      item.geometry)


def is_opening(move: PgnMove) -> bool:
    """Whether the referee's opening imposed the move (its comment starts ``book``)."""
    return move.comment == BOOK or move.comment.startswith(BOOK + ",")
