"""Reading a page's requests: the JSON message, a board, a whole number in a range, a
PGN to review; and :class:`RequestError`, the answer to a request that is malformed
or not allowed now (its message says why, and nothing changes).
"""

from __future__ import annotations

import json
from typing import Any

from ..geometry import Geometry, GeometryError
from ..reviewer.games import GameInput, InputProblem, read_input
from ..rules.notation import parse_board

MODES = ("first", "second", "humans")  # the person plays first, second, or both sides
LEVELS = range(0, 21)
MOVETIMES = range(100, 60_001)  # ms
MAX_TEXT = 300
MAX_PGN = 1 << 20  # characters of PGN a page may send for review
MAX_REVIEW_GAMES = 1000  # games in that PGN: the list to pick from stays a few hundred KB
NOT_A_REQUEST = "a request must be a JSON object with an 'op'"


class RequestError(ValueError):
    """A page request that is malformed or not allowed now; the message says why."""


class Quiet(RequestError):
    """A request answered by a message of its own: no error, no state."""


def read_pgn(text: object) -> list[GameInput | InputProblem]:
    """The games of a PGN the page sent; RequestError when there is none to review,
    or more than :data:`MAX_REVIEW_GAMES` (refused before the rest are read).  It
    takes seconds for a PGN at :data:`MAX_PGN`: the server calls it off its event
    loop."""
    if not isinstance(text, str) or not text.strip():
        raise RequestError("paste or load a PGN (or digits, one game a line) first")
    if len(text) > MAX_PGN:
        raise RequestError(f"that PGN has {len(text)} characters; the board reviews at most {MAX_PGN}")
    try:
        items = read_input(text.encode("utf-8", "replace"), max_games=MAX_REVIEW_GAMES)
    except ValueError as err:
        raise RequestError(str(err)) from None
    if not items:
        raise RequestError("no game found in that PGN")
    return items


def game_entry(item: GameInput | InputProblem) -> dict[str, Any]:
    """A game in the page's list to pick from (a game that cannot be read says why),
    its title cut to :data:`MAX_TEXT` characters."""
    if isinstance(item, InputProblem):
        title, ok = str(item), False
    else:
        game = item.game
        title, ok = f"{item.number}. {game.white} - {game.black} {game.result} ({len(game.moves)} moves)", True
    return {"number": item.number, "title": title[:MAX_TEXT], "ok": ok}


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
        return parse_board(text)
    except GeometryError as err:
        raise RequestError(str(err)) from None


def whole_number(message: dict[str, Any], key: str, allowed: range, default: int | None = None) -> int:
    """``message[key]`` as a whole number in ``allowed`` (``default`` when absent and allowed to be)."""
    value = message.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise RequestError(f"{key} must be a whole number from {allowed[0]} to {allowed[-1]}")
    return value
