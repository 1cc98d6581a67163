"""Grading sets: positions with the exact score of every column, stored once.

A set file (docs/reference/formats.md, "Grading sets") is UTF-8 text: a header of
``key value`` lines, a blank line, then one position a line::

    L1_R2 imperfect 4453 -2 -3 0 1 x -1 -2

its class, how it was reached (``random``, ``imperfect`` or ``pons``), its moves as
column digits (``-`` for the empty board) and the Pons score, for the side to
move, of each column 1-W: ``x`` for a full column, ``?`` for every column of a
position too dear to solve (its class is then ``L1_R?``: the stones are known,
the moves left are not).  The header's ``checksum`` is the SHA-256 of the lines
after the blank one, so that a file cut short or edited by hand is refused
rather than graded against wrong scores.

Classes are Pons' (and AlphaZero.jl's): ``L`` by the stones played, ``R`` by the
moves left to the end of the game under perfect play, each cut at a third and two
thirds of the board's cells (14 and 28 on 7x6, as Pons' files are).

Pons' own test files (``Test_L1_R1``..., lines ``<moves> <score>``) are read
too: their classes come from their names, and the score of each column is
computed when they are read (a few seconds a file), the best of them checked
against the file's score.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..geometry import STANDARD, Geometry, GeometryError
from ..inputs import decode_line, open_regular
from ..rules.board import Board, RulesError
from ..rules.notation import is_digit_string, parse_board, parse_digits, uses_digits
from ..rules.scores import win_now

MAGIC = "c4engine grading set"
FORMAT = "1"
FULL, UNKNOWN, EMPTY_BOARD = "x", "?", "-"
KINDS = ("random", "imperfect", "pons", "game")
MAX_SET_BYTES = 64 << 20
_PONS_NAME = re.compile(r"Test_L([123])_R([123])")


class SetFileError(ValueError):
    """A set file that cannot be graded against: corrupt, of another board, or no set."""


@dataclass(frozen=True)
class SetPosition:
    """A position of a set: ``moves`` as column digits from the empty board, the Pons
    score of each column 0..W-1 (None for a full one), or ``scores`` None when the
    position was too dear to solve; ``label`` its class, ``kind`` how it was reached."""

    moves: str
    scores: tuple[int | None, ...] | None
    label: str
    kind: str
    parsed: Board | None = field(default=None, compare=False, repr=False)  # the board, once read

    @property
    def stones(self) -> int:
        return len(self.moves)

    @property
    def known(self) -> bool:
        return self.scores is not None

    @property
    def best(self) -> int:
        assert self.scores is not None, "an unknown position has no best score"
        return max(s for s in self.scores if s is not None)

    def best_columns(self) -> tuple[int, ...]:
        """The 0-based columns whose score is the best."""
        assert self.scores is not None, "an unknown position has no best columns"
        return tuple(col for col, s in enumerate(self.scores) if s == self.best)

    def board(self, geometry: Geometry) -> Board:
        """The position on ``geometry``'s board (the one the file's reader made, if any)."""
        if self.parsed is not None and self.parsed.geometry == geometry:
            return self.parsed
        return parse_digits(self.moves, geometry)


@dataclass(frozen=True)
class GradeSet:
    """A named set of positions on one board; ``header`` holds how it was made."""

    name: str
    geometry: Geometry
    positions: tuple[SetPosition, ...]
    header: dict[str, str] = field(default_factory=dict)

    @property
    def known(self) -> tuple[SetPosition, ...]:
        return tuple(p for p in self.positions if p.known)


def moves_left(best: int, stones: int, geometry: Geometry) -> int:
    """The moves still to be played, both sides', when both play perfectly from a
    position with ``stones`` stones whose value for the mover is ``best``."""
    if best == 0:
        return geometry.cells - stones
    if best > 0:  # the mover's own stone wins, with ``before`` stones on the board
        before = next(n for n in range(stones, geometry.cells, 2) if win_now(n, geometry.cells) == best)
    else:
        before = next(n for n in range(stones + 1, geometry.cells, 2) if win_now(n, geometry.cells) == -best)
    return before - stones + 1


def band(count: int, geometry: Geometry) -> int:
    """1, 2 or 3: the third of the board's cells ``count`` falls in (14 and 28 cut 7x6)."""
    first, second = round(geometry.cells / 3), round(2 * geometry.cells / 3)
    return 1 if count <= first else 2 if count <= second else 3


def class_of(stones: int, best: int | None, geometry: Geometry) -> str:
    """``L{stones' band}_R{moves left's band}``; ``R?`` when the score is unknown."""
    level = f"L{band(stones, geometry)}"
    return f"{level}_R?" if best is None else f"{level}_R{band(moves_left(best, stones, geometry), geometry)}"


# -- writing ---------------------------------------------------------------


def position_line(position: SetPosition, width: int) -> str:
    if position.scores is None:
        scores = [UNKNOWN] * width
    else:
        scores = [FULL if s is None else str(s) for s in position.scores]
    return " ".join([position.label, position.kind, position.moves or EMPTY_BOARD, *scores])


def set_text(grade_set: GradeSet) -> str:
    """The file's text: the header (with the count and the checksum) and the positions."""
    body = "".join(position_line(p, grade_set.geometry.width) + "\n" for p in grade_set.positions)
    header = {**grade_set.header, "board": grade_set.geometry.name,
              "positions": str(len(grade_set.positions)),
              "checksum": "sha256:" + hashlib.sha256(body.encode()).hexdigest()}
    lines = [MAGIC, f"format {FORMAT}"] + [f"{key} {value}" for key, value in header.items()]
    return "\n".join(lines) + "\n\n" + body


def write_set(path: str | Path, grade_set: GradeSet) -> None:
    Path(path).write_text(set_text(grade_set), encoding="utf-8")


# -- reading ---------------------------------------------------------------


Analyse = Callable[[Board], "tuple[int | None, ...] | None"]  # every column's score; None: too dear


def read_set(path: str | Path, geometry: Geometry | None = None, analyse: Analyse | None = None) -> GradeSet:
    """The set at ``path``: a set file, or one of Pons' test files (whose columns
    ``analyse`` scores; a Pons file is 7x6).  SetFileError, naming the file and the
    line, for a file that cannot be read, is corrupt, or is not of ``geometry``'s
    board (None: any board)."""
    where = str(path)
    try:
        with open_regular(path) as source:
            data = source.read(MAX_SET_BYTES + 1)
    except OSError as err:
        raise SetFileError(f"{where}: {err.strerror or err}") from None
    if len(data) > MAX_SET_BYTES:
        raise SetFileError(f"{where}: more than {MAX_SET_BYTES >> 20} MiB: no set is that large")
    lines = _decoded(data, where)
    name = Path(path).name
    if lines and lines[0] == MAGIC:
        grade_set = _parse_set(lines, name, where)
    else:
        grade_set = _parse_pons(lines, name, where, analyse)
    if geometry is not None and grade_set.geometry != geometry:
        raise SetFileError(f"{where}: a set of the {grade_set.geometry} board, not {geometry}")
    return grade_set


def _decoded(data: bytes, where: str) -> list[str]:
    try:
        return [decode_line(raw, number) for number, raw in enumerate(data.splitlines(), start=1)]
    except ValueError as err:
        raise SetFileError(f"{where}: {err}") from None


def _parse_set(lines: list[str], name: str, where: str) -> GradeSet:
    try:
        blank = lines.index("")
    except ValueError:
        raise SetFileError(f"{where}: no blank line after the header: the file is cut short") from None
    header = _header(lines[1:blank], where)
    body = lines[blank + 1:]
    text = "".join(line + "\n" for line in body)
    if "sha256:" + hashlib.sha256(text.encode()).hexdigest() != header["checksum"]:
        raise SetFileError(f"{where}: the positions do not match the header's checksum: "
                           f"the file is corrupt or was edited")
    try:
        geometry = parse_board(header["board"])
    except GeometryError as err:
        raise SetFileError(f"{where}: board {header['board']!r}: {err}") from None
    if not uses_digits(geometry):
        raise SetFileError(f"{where}: board {geometry}: a set's moves are column digits, so 9 columns at most")
    positions = tuple(_parse_line(line, geometry, f"{where}:{number}")
                      for number, line in enumerate(body, start=blank + 2))
    if str(len(positions)) != header["positions"]:
        raise SetFileError(f"{where}: {len(positions)} positions, the header says {header['positions']}")
    kept = {key: value for key, value in header.items() if key not in ("board", "positions", "checksum")}
    return GradeSet(name, geometry, positions, kept)


def _header(lines: Sequence[str], where: str) -> dict[str, str]:
    header = dict(line.partition(" ")[::2] for line in lines)
    if header.get("format") != FORMAT:
        raise SetFileError(f"{where}: format {header.get('format')!r}: this c4engine reads format {FORMAT}")
    missing = [key for key in ("board", "positions", "checksum") if key not in header]
    if missing:
        raise SetFileError(f"{where}: the header has no {', '.join(missing)}")
    header.pop("format")
    return header


def _parse_line(line: str, geometry: Geometry, where: str) -> SetPosition:
    fields = line.split()
    if len(fields) != 3 + geometry.width:
        raise SetFileError(f"{where}: expected a class, a kind, the moves and {geometry.width} scores, "
                           f"found {len(fields)} fields")
    label, kind, moves, *tokens = fields
    moves = "" if moves == EMPTY_BOARD else moves
    if kind not in KINDS:
        raise SetFileError(f"{where}: kind {kind!r} is none of {', '.join(KINDS)}")
    try:
        board = _playable(moves, geometry)
        scores = None if tokens == [UNKNOWN] * geometry.width else tuple(
            None if token == FULL else int(token) for token in tokens)
    except (RulesError, ValueError) as err:
        raise SetFileError(f"{where}: {err}") from None
    position = SetPosition(moves, scores, label, kind, board)
    problem = _inconsistency(position, board, geometry)
    if problem:
        raise SetFileError(f"{where}: {problem}")
    return position


def _playable(moves: str, geometry: Geometry) -> Board:
    if moves and not is_digit_string(moves):
        raise RulesError(f"'{moves[:40]}' is not a string of column digits")
    board = parse_digits(moves, geometry)
    if board.is_over():
        raise RulesError(f"'{moves}': the game is already over")
    return board


def _inconsistency(position: SetPosition, board: Board, geometry: Geometry) -> str:
    """What makes the line impossible (full columns, scores out of range, a class
    its scores contradict), or ''."""
    if position.scores is not None:
        full = [col for col in range(geometry.width) if not board.can_play(col)]
        if [col for col, s in enumerate(position.scores) if s is None] != full:
            return "'x' must mark the full columns, and only them"
        lowest, highest = -win_now(board.stones + 1, geometry.cells), win_now(board.stones, geometry.cells)
        if any(s is not None and not lowest <= s <= highest for s in position.scores):
            return f"a score outside {lowest}..{highest}, the scores a move can have here"
    best = position.best if position.scores is not None else None
    label = class_of(position.stones, best, geometry)
    if position.label != label and position.kind != "pons":
        return f"class {position.label}, but its stones and scores make it {label}"
    return ""


def _parse_pons(lines: list[str], name: str, where: str, analyse: Analyse | None) -> GradeSet:
    """One of Pons' files, ``<moves> <score>`` a line, its columns scored by ``analyse``."""
    named = _PONS_NAME.fullmatch(name)
    positions = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = line.split()
        try:
            if len(fields) != 2:
                raise ValueError(f"expected '<moves> <score>' (a Pons test file) or a c4engine set, "
                                 f"found {len(fields)} fields")
            board = _playable(fields[0], STANDARD)
            stored = int(fields[1])
        except (RulesError, ValueError) as err:
            raise SetFileError(f"{where}:{number}: {err}") from None
        if analyse is None:
            raise SetFileError(f"{where}: a Pons file needs its columns scored")
        scores = analyse(board)
        if scores is None:
            raise SetFileError(f"{where}:{number}: the position is too dear to solve")
        position = SetPosition(fields[0], scores, "", "pons")
        if position.best != stored:
            raise SetFileError(f"{where}:{number}: the file says {stored}, the solver {position.best}: "
                               f"a wrong or corrupt file")
        label = f"L{named.group(1)}_R{named.group(2)}" if named else class_of(board.stones, stored, STANDARD)
        positions.append(SetPosition(fields[0], scores, label, "pons"))
    if not positions:
        raise SetFileError(f"{where}: no positions")
    return GradeSet(name, STANDARD, tuple(positions), {"source": "pons"})
