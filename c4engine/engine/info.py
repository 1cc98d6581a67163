"""Reading an engine's answers: ``info`` lines as dictionaries, scores, moves, several PV lines."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

from ..rules.board import Board, RulesError
from ..rules.notation import DIGITS, FILES, is_digit_string, parse_int, parse_move

MAX_NUMBER = (1 << 63) - 1


@dataclass(frozen=True)
class Score:
    """A score as the engine sends it: ``cp`` (a heuristic value) or ``mate`` in N moves."""

    kind: str
    value: int


class InfoDict(TypedDict, total=False):
    """What ``info`` lines said about one line of the search (python-chess' keys).

    ``lowerbound`` / ``upperbound`` are present (True) when ``score`` is only a
    bound; ``time`` is in seconds; ``pv`` holds columns 1-7 (the engine's notation
    read without checking ranks: the referee judges only ``bestmove``)."""

    depth: int
    seldepth: int
    multipv: int
    score: Score
    lowerbound: bool
    upperbound: bool
    nodes: int
    nps: int
    hashfull: int
    tbhits: int
    time: float
    currmove: int
    currmovenumber: int
    pv: list[int]
    string: str


_INT_KEYS = ("depth", "seldepth", "multipv", "nodes", "nps", "hashfull", "tbhits",
             "currmovenumber")


_BOUNDS = ("lowerbound", "upperbound")


def parse_number(text: str) -> int:
    """An engine's integer: the protocol's one number syntax (:func:`parse_int`:
    ASCII digits, an optional leading minus) within :data:`MAX_NUMBER`; ValueError
    otherwise, so that ``+3``, ``1_0``, Arabic digits and numbers of any length
    never reach the caller."""
    value = parse_int(text)
    if abs(value) > MAX_NUMBER:
        raise ValueError(f"'{text[:30]}' is out of range")
    return value


def move_column(token: str) -> int:
    """The column 1.. a move token names, read from its notation alone (a digit, or
    the file of a drop, on any board); ValueError for anything else."""
    if len(token) == 1 and token in DIGITS[1:]:
        return int(token)
    if 4 <= len(token) <= 5 and token.startswith("P@") and token[2] in FILES and is_digit_string(token[3:]):
        return FILES.index(token[2]) + 1
    raise ValueError(f"'{token[:30]}' is not a move")


def parse_info(line: str, board: Board | None = None) -> InfoDict:
    """The fields of one ``info`` line; ValueError when a number is malformed or out of
    range, a key lacks its value, or the score is a mate no game can have: ``mate 0``
    (no search starts from a finished game) or, given the searched ``board``, a mate
    beyond the stones left to play (:func:`possible_mate`).  ``string`` takes the
    rest of the line; ``pv`` stops at the first token that is not a move."""
    tokens = line.split()[1:]
    info: InfoDict = {}
    i = 0
    while i < len(tokens):
        key = tokens[i]
        if key == "string":
            info["string"] = " ".join(tokens[i + 1:])
            break
        if key == "pv":
            info["pv"] = _pv_columns(tokens[i + 1:])
            break
        if key == "score":
            i = _parse_score(tokens, i + 1, info, line, board)
            continue
        if i + 1 >= len(tokens) and key in (*_INT_KEYS, "time", "currmove"):
            raise ValueError(f"'{key}' without a value in {line[:80]!r}")
        if key in _INT_KEYS:
            info[key] = parse_number(tokens[i + 1])  # type: ignore[literal-required]
        elif key == "time":
            info["time"] = parse_number(tokens[i + 1]) / 1000
        elif key == "currmove":
            info["currmove"] = move_column(tokens[i + 1])
        else:
            i -= 1  # an unknown word: skipped alone
        i += 2
    return info


def _parse_score(tokens: list[str], i: int, info: InfoDict, line: str, board: Board | None) -> int:
    """``score cp|mate N [lowerbound|upperbound]`` from ``tokens[i]``; the next index."""
    if i + 1 >= len(tokens) or tokens[i] not in ("cp", "mate"):
        raise ValueError(f"malformed score in {line[:80]!r}")
    score = Score(tokens[i], parse_number(tokens[i + 1]))
    if score.kind == "mate" and not possible_mate(score.value, board):
        raise ValueError(f"impossible mate in {line[:80]!r}")
    info["score"] = score
    if i + 2 < len(tokens) and tokens[i + 2] in _BOUNDS:
        info[tokens[i + 2]] = True  # type: ignore[literal-required]
        return i + 3
    return i + 2


def possible_mate(moves: int, board: Board | None) -> bool:
    """Whether ``mate moves`` can be said of a position that is not over: the mover
    wins with one of the stones it has left to play, or loses to one of the
    opponent's (on ``board``; any nonzero mate when the position is not known)."""
    if board is None:
        return moves != 0
    empty = board.geometry.cells - board.stones
    return 1 <= moves <= (empty + 1) // 2 or 1 <= -moves <= empty // 2


def _pv_columns(tokens: list[str]) -> list[int]:
    columns = []
    for token in tokens:
        try:
            columns.append(move_column(token))
        except ValueError:
            break
    return columns


def merge_info(older: InfoDict, newer: InfoDict) -> InfoDict:
    """``older`` updated by what ``newer`` carries: a last line often reports only
    nodes and time, which must not erase the score; a new score replaces the old
    one with its bound (or lack of one)."""
    merged = dict(older)
    if "score" in newer:
        for bound in _BOUNDS:
            merged.pop(bound, None)
    merged.update(newer)
    return merged  # type: ignore[return-value]


def engine_move(token: str, board: Board, drops: bool) -> int:
    """The 0-based column of ``bestmove``'s move in ``board``, in the notation the
    engine was told to speak; RulesError (an illegal move) otherwise."""
    if token in ("", "(none)", "0000"):
        raise RulesError("no move given")
    is_drop = len(token) >= 4 and token[1] == "@"
    if drops and not is_drop:
        raise RulesError(f"move '{token}': after UCI_Variant a move is a drop like P@d1")
    if not drops and is_drop:
        raise RulesError(f"move '{token}': without UCI_Variant a move is a column "
                         f"1-{board.geometry.width}")
    col = parse_move(token, board)
    board.play(col)  # raises on a full column or a finished game
    return col


def add_info(lines: dict[int, InfoDict], line: str, board: Board | None = None) -> None:
    """Merge one ``info`` line of a search of ``board`` into ``lines``, the MultiPV
    lines by number (a line without a number is about ``multipv 1``).  A line
    :func:`parse_info` refuses (a malformed number, an impossible mate) is ignored,
    and so is ``info string``: one garbled line does not void a move."""
    try:
        info = parse_info(line, board)
    except ValueError:
        return
    if "string" not in info:
        number = info.get("multipv", 1)
        lines[number] = merge_info(lines.get(number, {}), info)


def collect_lines(info_lines: Iterable[str], board: Board | None = None) -> tuple[InfoDict, ...]:
    """Each MultiPV line's info of a search of ``board``, merged over the ``info``
    lines that carry its number (see :func:`add_info`), in MultiPV order."""
    lines: dict[int, InfoDict] = {}
    for line in info_lines:
        add_info(lines, line, board)
    return tuple(lines[n] for n in sorted(lines))
