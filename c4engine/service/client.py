"""``c4engine.remote(url)``: the API's ``solve`` and ``analyse`` answered by a server.

The server is ``c4engine serve`` (docs/service.md) or any server with Pons'
``/solve``, such as connect4.gamesolver.org: a 7x6 position given by its moves
is asked there, in Pons' shape, which both understand; any other board, or a
position set up from a FEN, is asked at ``/api/v1/position``, which only
``c4engine serve`` has.  The standard library's HTTP client does the asking,
so no dependency comes with it; it is imported at the first request, keeping
``import c4engine`` light.

The server is trusted for nothing: a request is bounded as a whole by the
timeout (a server may send one byte a second) and its answer by
:data:`MAX_ANSWER_BYTES`, no redirect is followed (a solver has no reason to
send its clients elsewhere), and an answer is used only if it is one score per
column of the position's board, each a score a move there can have, 100
exactly for the full columns; anything else is a :class:`RemoteError` naming
what was wrong.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

from ..position import IllegalMoveError, Position
from ..rules.scores import win_now

if TYPE_CHECKING:
    import http.client

FULL_COLUMN = 100  # Pons' /solve value for a full column
MAX_ANSWER_BYTES = 65_536  # the longest answer, /api/v1/position on 26 columns, is about 3 KB
READ_BYTES = 16_384


class RemoteError(OSError):
    """The server could not be reached in time, refused the request, redirected it,
    or gave no exact answer of the right shape; the message says which, with the
    server's own message when it sent one."""


class Remote:
    """A solving server, with the in-process API's ``solve`` and ``analyse``.

    ``timeout`` bounds each call's request as a whole, in seconds: connecting,
    sending, the server's solve and reading the answer (the system's name
    lookup aside)."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"remote: {url!r} is not an http:// or https:// address")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise ValueError(f"remote: timeout {timeout!r} is not a positive number of seconds")
        self._https = parsed.scheme == "https"
        self._host, self._port = parsed.hostname, parsed.port  # ValueError for a port that is no number
        self._path = parsed.path.rstrip("/")
        self.url = url.rstrip("/")
        self.timeout = float(timeout)

    def __repr__(self) -> str:
        return f"<Remote {self.url}>"

    def analyse(self, position: Position) -> dict[int, int | None]:
        """The exact score of each column 1-W (None for a full one), as
        :func:`c4engine.analyse` gives it.  Raises :class:`IllegalMoveError` for what
        is no Position or a game that is over, :class:`RemoteError` otherwise: the
        server down, slow past the timeout, refusing, redirecting, without an exact
        answer in its time cap, or answering what is not one score per column of
        the position's board within its score range (100 for a full column)."""
        if not isinstance(position, Position):
            raise IllegalMoveError(f"analyse: expected a c4engine.Position, got {type(position).__name__}")
        if position.is_over():
            raise IllegalMoveError("analyse: the game is already over")
        checker = AnswerCheck(self.url, position)
        if position.board == "7x6" and position.start_fen is None:
            digits = "".join(str(col) for col in position.moves)
            return checker.pons_scores(self._get("/solve", {"pos": digits}), digits)
        return checker.position_scores(self._get("/api/v1/position", {"board": position.board,
                                                                        "fen": position.fen()}))

    def solve(self, position: Position, weak: bool = False) -> int:
        """The position's exact score (``weak``: its sign), as :func:`c4engine.solve`
        gives it: the best column's."""
        score = max(score for score in self.analyse(position).values() if score is not None)
        return (score > 0) - (score < 0) if weak else score

    def _get(self, path: str, query: dict[str, str]) -> object:
        """The JSON of a 200 answer to ``GET path?query``, within the timeout."""
        import http.client  # here: it costs ``import c4engine`` several ms
        kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        connection = kind(self._host, self._port, timeout=self.timeout)
        deadline = Deadline(connection, self.timeout)
        try:
            connection.connect()
            with deadline:
                connection.request("GET", f"{self._path}{path}?{urllib.parse.urlencode(query)}",
                                   headers={"Accept": "application/json", "User-Agent": "c4engine-remote"})
                response = connection.getresponse()
                body = self._read(response)
        except RemoteError:
            raise
        except (http.client.HTTPException, OSError, ValueError) as err:
            if deadline.expired or isinstance(err, TimeoutError):
                raise RemoteError(f"{self.url}: no answer within the timeout of {self.timeout:g} s") from None
            raise RemoteError(f"{self.url}: {str(err) or type(err).__name__}") from None
        finally:
            connection.close()
        return self._json(response, body)

    def _read(self, response: http.client.HTTPResponse) -> bytes:
        """The body, refused past :data:`MAX_ANSWER_BYTES` whatever the server declares."""
        if response.length is not None and response.length > MAX_ANSWER_BYTES:
            raise self._too_long(response.status)
        body = bytearray()
        while len(body) <= MAX_ANSWER_BYTES and (chunk := response.read(READ_BYTES)):
            body += chunk
        if len(body) > MAX_ANSWER_BYTES:
            raise self._too_long(response.status)
        return bytes(body)

    def _too_long(self, status: int) -> RemoteError:
        return RemoteError(f"{self.url}: HTTP {status} with an answer over {MAX_ANSWER_BYTES} bytes "
                           "(a solver's answer is a few KB)")

    def _json(self, response: http.client.HTTPResponse, body: bytes) -> object:
        """The decoded 200 answer; a redirect, any other status or what is no JSON refused."""
        if 300 <= response.status < 400:
            raise RemoteError(f"{self.url}: HTTP {response.status} to {response.getheader('Location', '')[:200]!r}: "
                              "remote() follows no redirects; give it the address the server answers at")
        if response.status != 200:
            raise RemoteError(f"{self.url}: HTTP {response.status}: {_server_message(body)}")
        try:
            return json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: arrays nested thousands deep
            raise RemoteError(f"{self.url}: wrong answer: not JSON: {body[:80]!r}") from None


class Deadline:
    """Cuts a connection when a request's time is up: the socket's own timeout bounds
    each read, so a server sending a byte now and then would hold the client for
    as long as it likes.  A read the cut interrupts ends at once."""

    def __init__(self, connection: http.client.HTTPConnection, seconds: float) -> None:
        self.connection = connection
        self.end = time.monotonic() + seconds
        self.expired = False
        self._timer: threading.Timer | None = None

    def __enter__(self) -> None:
        """Start counting what is left of the time (connecting took the rest)."""
        self._timer = threading.Timer(max(0.0, self.end - time.monotonic()), self._cut)
        self._timer.daemon = True
        self._timer.start()

    def __exit__(self, *exc: object) -> None:
        assert self._timer is not None
        self._timer.cancel()

    def _cut(self) -> None:
        self.expired = True
        sock = self.connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed: the request ended as the time did
                pass


class AnswerCheck:
    """What a server's answer about ``position`` must be: one score per column of its
    board, 100 for each full column and only for those, any other within the range
    a move at that many stones can score."""

    def __init__(self, url: str, position: Position) -> None:
        self.url = url
        self.position = position
        stones, cells = position._board.stones, position.width * position.height
        self.low, self.high = -win_now(stones + 1, cells), win_now(stones, cells)
        self.legal = set(position.legal_moves())

    def wrong(self, what: str) -> RemoteError:
        return RemoteError(f"{self.url}: wrong answer for {self.position!r}: {what}")

    def field(self, answer: object, name: str) -> Any:
        if not isinstance(answer, dict):
            raise self.wrong(f"expected a JSON object, got {type(answer).__name__}")
        if name not in answer:
            raise self.wrong(f"no {name!r} field")
        return answer[name]

    def pons_scores(self, answer: object, digits: str) -> dict[int, int | None]:
        """Pons' ``/solve`` answer: ``pos`` the digits asked, ``score`` one per column."""
        if self.field(answer, "pos") != digits:
            raise self.wrong(f"it is about pos {str(self.field(answer, 'pos'))[:40]!r}, not {digits!r}")
        scores = self.field(answer, "score")
        if not isinstance(scores, list) or len(scores) != self.position.width:
            raise self.wrong(f"'score' is not a list of {self.position.width} scores, one per column: "
                             f"{str(scores)[:80]}")
        return {col: self.score(col, value) for col, value in enumerate(scores, start=1)}

    def position_scores(self, answer: object) -> dict[int, int | None]:
        """``/api/v1/position``'s answer: this board and FEN, exact, each legal column once."""
        for name, asked in (("board", self.position.board), ("fen", self.position.fen())):
            if self.field(answer, name) != asked:
                raise self.wrong(f"it is about {name} {str(self.field(answer, name))[:80]!r}, not {asked!r}")
        if self.field(answer, "exact") is not True:
            raise RemoteError(f"{self.url}: no exact answer within the server's time cap")
        moves = self.field(answer, "moves")
        if not isinstance(moves, list):
            raise self.wrong(f"'moves' is not a list: {str(moves)[:80]}")
        scores: dict[int, int | None] = {col: None for col in range(1, self.position.width + 1)}
        for move in moves:
            col = self.field(move, "column")
            if type(col) is not int or col not in self.legal:
                raise self.wrong(f"a move in column {str(col)[:20]}, which is not a legal column")
            if scores[col] is not None:
                raise self.wrong(f"column {col} is scored twice")
            scores[col] = self.score(col, self.field(move, "score"))
        if missing := sorted(self.legal - {col for col, score in scores.items() if score is not None}):
            raise self.wrong(f"no score for the legal column(s) {missing}")
        return scores

    def score(self, col: int, value: object) -> int | None:
        """Column ``col``'s score, None for a full column."""
        if type(value) is not int:
            raise self.wrong(f"column {col}'s score {str(value)[:20]} is not an integer")
        if col not in self.legal:
            if value != FULL_COLUMN:
                raise self.wrong(f"column {col} is full, yet scored {value}, not {FULL_COLUMN}")
            return None
        if value == FULL_COLUMN:
            raise self.wrong(f"column {col} is scored {FULL_COLUMN}, a full column, but it is not full")
        if not self.low <= value <= self.high:
            raise self.wrong(f"column {col}'s score {value} is outside {self.low}..{self.high}, "
                             "the scores a move can have here")
        return value


def _server_message(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"])[:200]
    except (ValueError, KeyError, TypeError, RecursionError):
        return body[:200].decode("utf-8", "replace")


def remote(url: str, timeout: float = 60.0) -> Remote:
    """A server at ``url`` (``c4engine serve``, or Pons' for 7x6) as a :class:`Remote`
    with ``solve`` and ``analyse``; ``timeout`` bounds each call's request as a
    whole, in seconds.  ValueError for an address that is not http(s), or a
    timeout that is not a positive number."""
    return Remote(url, timeout)
