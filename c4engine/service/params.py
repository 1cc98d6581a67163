"""Reading a request's query: which board, which position, how long to search.

Everything a client sends is checked here, before any work, and refused with
:class:`BadRequest`, whose message names the parameter and the problem; the
service answers it as a 400 with that message in JSON.  Values are echoed into
messages only when short, so that a megabyte of input never comes back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..geometry import Geometry, GeometryError
from ..rules.board import Board, RulesError
from ..rules.notation import check_writable, parse_digits, parse_fen

MAX_QUERY_BYTES = 4096  # far above any position's digits or FEN on the largest board
ECHO_CHARS = 40


class BadRequest(ValueError):
    """A request the service refuses; the message says which parameter and why."""


def shown(text: str) -> str:
    """``text`` quoted for a message, cut short when long."""
    return repr(text) if len(text) <= ECHO_CHARS else f"{text[:ECHO_CHARS]!r}... ({len(text)} characters)"


@dataclass(frozen=True)
class Limits:
    """What the server accepts: its boards (the first is the default) and its time caps."""

    boards: tuple[Geometry, ...]
    default_movetime_ms: int
    max_movetime_ms: int

    @property
    def default_board(self) -> Geometry:
        return self.boards[0]


@dataclass(frozen=True)
class Query:
    """A checked request: the board, the position as given (``pos`` digits or a
    ``fen``), and the search's time cap.  The position is read by :meth:`board`,
    which costs more than every other check: a server that has seen the same
    text before answers without reading it again."""

    geometry: Geometry
    notation: str
    text: str
    movetime_ms: int

    @property
    def position_key(self) -> tuple[Geometry, str, str]:
        return self.geometry, self.notation, self.text

    def board(self) -> Board:
        """The position; BadRequest for an illegal one or a game that is over."""
        try:
            board = parse_fen(self.text, self.geometry) if self.notation == "fen" else \
                _digits(self.text, self.geometry)
        except RulesError as err:
            raise BadRequest(f"{self.notation}: {err}") from None
        if board.is_over():
            raise BadRequest("the game is already over: no move to score")
        return board


def check_names(query: Mapping[str, str], allowed: Iterable[str], query_bytes: int) -> None:
    """Refuse a query that is too long, repeats a parameter or names one the route
    does not take."""
    if query_bytes > MAX_QUERY_BYTES:
        raise BadRequest(f"query string of {query_bytes} bytes: the limit is {MAX_QUERY_BYTES}")
    allowed = tuple(allowed)
    for name in query:
        if name not in allowed:
            raise BadRequest(f"unknown parameter {shown(name)}: this route takes {', '.join(allowed)}")
        if len(query.getall(name)) > 1:  # type: ignore[attr-defined]
            raise BadRequest(f"parameter {name!r} given more than once")


def board_of(query: Mapping[str, str], limits: Limits) -> Geometry:
    """The ``board`` parameter (default: the server's board), one the server serves."""
    text = query.get("board")
    if text is None:
        return limits.default_board
    try:
        geometry = Geometry.parse(text)
        check_writable(geometry)
    except GeometryError as err:
        raise BadRequest(str(err)) from None
    if geometry not in limits.boards:
        served = ", ".join(board.name for board in limits.boards)
        raise BadRequest(f"board {geometry}: not served here (served: {served})")
    return geometry


def position_of(query: Mapping[str, str]) -> tuple[str, str]:
    """``pos`` (column digits 1-9) or ``fen``, at most one; neither is the empty board."""
    if "pos" in query and "fen" in query:
        raise BadRequest("give pos or fen, not both")
    if "fen" in query:
        return "fen", query["fen"]
    return "pos", query.get("pos", "")


def _digits(text: str, geometry: Geometry) -> Board:
    if len(text) > geometry.cells:
        raise BadRequest(f"pos of {len(text)} moves: the {geometry} board has {geometry.cells} cells")
    if any(not "1" <= digit <= str(min(9, geometry.width)) for digit in text):
        raise BadRequest(f"pos {shown(text)}: expected column digits 1-{min(9, geometry.width)}")
    return parse_digits(text, geometry)


def movetime_of(query: Mapping[str, str], limits: Limits) -> int:
    """``movetime`` in milliseconds, 1 to the server's maximum (default: its default)."""
    text = query.get("movetime")
    if text is None:
        return limits.default_movetime_ms
    if not text.isascii() or not text.isdigit() or len(text) > 9 or not 1 <= int(text) <= limits.max_movetime_ms:
        raise BadRequest(f"movetime {shown(text)}: expected milliseconds from 1 to {limits.max_movetime_ms}")
    return int(text)


def position_query(query: Mapping[str, str], query_bytes: int, limits: Limits) -> Query:
    """``/api/v1/position``'s parameters: board, pos or fen, movetime."""
    check_names(query, ("board", "pos", "fen", "movetime"), query_bytes)
    return Query(board_of(query, limits), *position_of(query), movetime_of(query, limits))


def pons_query(query: Mapping[str, str], query_bytes: int, limits: Limits) -> Query:
    """``/solve``'s one parameter, ``pos``, on the server's default board, with the
    server's longest time cap: Pons' shape has room for exact scores only."""
    check_names(query, ("pos",), query_bytes)
    if "pos" not in query:
        raise BadRequest("missing parameter 'pos' (column digits; empty for the start position)")
    return Query(limits.default_board, "pos", query["pos"], limits.max_movetime_ms)
