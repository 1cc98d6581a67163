"""``c4engine.remote(url)``: the API's ``solve`` and ``analyse`` answered by a server.

The server is ``c4engine serve`` (docs/service.md) or any server with Pons'
``/solve``, such as connect4.gamesolver.org: a 7x6 position given by its moves
is asked there, in Pons' shape, which both understand; any other board, or a
position set up from a FEN, is asked at ``/api/v1/position``, which only
``c4engine serve`` has.  The standard library's HTTP client does the asking,
so no dependency comes with it; it is imported at the first request, keeping
``import c4engine`` light.
"""

from __future__ import annotations

import json
import urllib.parse

from ..position import IllegalMoveError, Position

FULL_COLUMN = 100  # Pons' /solve value for a full column


class RemoteError(OSError):
    """The server could not be reached, refused the request, or gave no exact answer;
    the message says which, with the server's own message when it sent one."""


class Remote:
    """A solving server, with the in-process API's ``solve`` and ``analyse``.

    ``timeout`` bounds each request, in seconds."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"remote: {url!r} is not an http:// or https:// address")
        self.url = url.rstrip("/")
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"<Remote {self.url}>"

    def analyse(self, position: Position) -> dict[int, int | None]:
        """The exact score of each column 1-W (None for a full one), as
        :func:`c4engine.analyse` gives it.  Raises :class:`IllegalMoveError` for what
        is no Position or a game that is over, :class:`RemoteError` otherwise."""
        if not isinstance(position, Position):
            raise IllegalMoveError(f"analyse: expected a c4engine.Position, got {type(position).__name__}")
        if position.is_over():
            raise IllegalMoveError("analyse: the game is already over")
        digits = "".join(str(col) for col in position.moves)
        if position.board == "7x6" and position.start_fen is None:
            scores = self._get("/solve", {"pos": digits})["score"]
            return {col: None if score == FULL_COLUMN else int(score) for col, score in enumerate(scores, start=1)}
        query = {"board": position.board, "fen": position.fen()}
        answer = self._get("/api/v1/position", query)
        if not answer.get("exact"):
            raise RemoteError(f"{self.url}: no exact answer within the server's time cap")
        scores = {move["column"]: int(move["score"]) for move in answer["moves"]}
        return {col: scores.get(col) for col in range(1, position.width + 1)}

    def solve(self, position: Position, weak: bool = False) -> int:
        """The position's exact score (``weak``: its sign), as :func:`c4engine.solve`
        gives it: the best column's."""
        score = max(score for score in self.analyse(position).values() if score is not None)
        return (score > 0) - (score < 0) if weak else score

    def _get(self, path: str, query: dict[str, str]) -> dict:  # type: ignore[type-arg]
        import urllib.error  # here: urllib.request costs ``import c4engine`` 15 ms
        import urllib.request
        address = f"{self.url}{path}?{urllib.parse.urlencode(query)}"
        request = urllib.request.Request(address, headers={"Accept": "application/json",
                                                           "User-Agent": "c4engine-remote"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())  # type: ignore[no-any-return]
        except urllib.error.HTTPError as err:
            raise RemoteError(f"{self.url}: HTTP {err.code}: {_server_message(err.read())}") from None
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise RemoteError(f"{self.url}: {getattr(err, 'reason', err)}") from None


def _server_message(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return body[:200].decode("utf-8", "replace")


def remote(url: str, timeout: float = 60.0) -> Remote:
    """A server at ``url`` (``c4engine serve``, or Pons' for 7x6) as a :class:`Remote`
    with ``solve`` and ``analyse``.  ValueError for an address that is not http(s)."""
    return Remote(url, timeout)
