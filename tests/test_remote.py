"""``c4engine.remote`` against servers that misbehave (issue 47): hostile HTTP servers
on loopback answer the wrong shape, drip their answer a byte at a time, send far
more than an answer, or redirect elsewhere; each must end in the documented
``RemoteError`` naming what was wrong, within the timeout, in bounded memory.
Its answers from a real ``c4engine serve`` are in tests/test_service.py."""

from __future__ import annotations

import http.client  # noqa: F401  imported before memory is measured: the first import takes 1 MB
import time
import tracemalloc

import pytest
from hostile_http import HostileServer, http_answer, json_answer

import c4engine
from c4engine import Position

ASKED = "4453"  # a 7x6 position by its moves: asked at /solve; 4 stones, so a column scores -19..19
GOOD = [-5, -5, -2, -3, -4, -2, -2]
WIDE = Position.from_moves("4455661188", width=8, height=7)  # asked at /api/v1/position


def pons(scores: object, pos: object = ASKED) -> dict[str, object]:
    return {"pos": pos, "score": scores}


WRONG_SOLVE_ANSWERS = [
    (pons([1, 2]), "not a list of 7 scores"),
    (pons(list(range(10))), "not a list of 7 scores"),
    (pons("0000000"), "not a list of 7 scores"),
    (pons([1000] * 7), "column 1's score 1000 is outside -19..19"),
    (pons([-1000] + GOOD[1:]), "outside -19..19"),
    (pons([100] * 7), "column 1 is scored 100, a full column, but it is not full"),
    (pons([None] + GOOD[1:]), "column 1's score None is not an integer"),
    (pons([True] + GOOD[1:]), "column 1's score True is not an integer"),
    (pons([1.5] + GOOD[1:]), "is not an integer"),
    (pons(["-5"] + GOOD[1:]), "is not an integer"),
    (pons([[-5]] + GOOD[1:]), "is not an integer"),
    (pons(GOOD, pos="44"), "it is about pos '44', not '4453'"),
    ({"score": GOOD}, "no 'pos' field"),
    ({"pos": ASKED}, "no 'score' field"),
    ([GOOD], "expected a JSON object, got list"),
    ("solved", "expected a JSON object, got str"),
    (None, "expected a JSON object, got NoneType"),
]


@pytest.mark.parametrize(("document", "named"), WRONG_SOLVE_ANSWERS,
                         ids=[named for _document, named in WRONG_SOLVE_ANSWERS])
def test_a_solve_answer_of_the_wrong_shape_is_a_remote_error_naming_it(document: object, named: str) -> None:
    with HostileServer(json_answer(document)) as server:
        with pytest.raises(c4engine.RemoteError, match="wrong answer") as caught:
            c4engine.remote(server.url, timeout=10).analyse(Position.from_moves(ASKED))
    assert named in str(caught.value)


def test_full_columns_must_be_100_and_only_they() -> None:
    full_fourth = Position.from_moves("444444")
    with HostileServer(json_answer(pons([0] * 7, "444444"))) as server:
        with pytest.raises(c4engine.RemoteError, match="column 4 is full, yet scored 0, not 100"):
            c4engine.remote(server.url).analyse(full_fourth)
    with HostileServer(json_answer(pons([0, 0, 0, 100, 0, 0, 0], "444444"))) as server:
        assert c4engine.remote(server.url).analyse(full_fourth) == {1: 0, 2: 0, 3: 0, 4: None, 5: 0, 6: 0, 7: 0}


def position_answer(moves: list[object], **fields: object) -> dict[str, object]:
    """``/api/v1/position``'s shape for :data:`WIDE`, with ``fields`` changed."""
    return {"board": WIDE.board, "fen": WIDE.fen(), "exact": True, "moves": moves, **fields}


def every_column(score: int = 0) -> list[object]:
    return [{"column": col, "score": score} for col in range(1, 9)]


WRONG_POSITION_ANSWERS = [
    (position_answer(every_column() + [{"column": 99, "score": 0}]), "a move in column 99"),
    (position_answer(every_column() + [{"column": "1", "score": 0}]), "a move in column 1, which is not"),
    (position_answer(every_column()[:7]), "no score for the legal column(s) [8]"),
    (position_answer(every_column() + every_column()[:1]), "column 1 is scored twice"),
    (position_answer(every_column(1000)), "outside"),
    (position_answer(every_column()[:3] + [{"column": 4}] + every_column()[4:]), "no 'score' field"),
    (position_answer(every_column()[:7] + [8]), "expected a JSON object, got int"),
    (position_answer({"1": 0}), "'moves' is not a list"),
    (position_answer(every_column(), board="7x6"), "it is about board '7x6', not '8x7'"),
    (position_answer(every_column(), fen="8/8/8/8/8/8/8 w - - 0 1"), "it is about fen"),
    ({"exact": True, "moves": every_column()}, "no 'board' field"),
]


@pytest.mark.parametrize(("document", "named"), WRONG_POSITION_ANSWERS,
                         ids=[named for _document, named in WRONG_POSITION_ANSWERS])
def test_a_position_answer_of_the_wrong_shape_is_a_remote_error_naming_it(document: object, named: str) -> None:
    with HostileServer(json_answer(document)) as server:
        with pytest.raises(c4engine.RemoteError, match="wrong answer") as caught:
            c4engine.remote(server.url, timeout=10).analyse(WIDE)
    assert named in str(caught.value)


def test_an_inexact_answer_and_what_is_no_json() -> None:
    with HostileServer(json_answer(position_answer(every_column(), exact="yes"))) as server:
        with pytest.raises(c4engine.RemoteError, match="no exact answer"):
            c4engine.remote(server.url).analyse(WIDE)
    with HostileServer(json_answer(position_answer(every_column()))) as server:
        assert c4engine.remote(server.url).analyse(WIDE) == dict.fromkeys(range(1, 9), 0)
    for body in (b"<html>solved</html>", b"[" * 20_000 + b"]" * 20_000, b"NaN", b"\xff\xfe"):
        with HostileServer(lambda _line, body=body: http_answer(body)) as server:  # type: ignore[misc]
            with pytest.raises(c4engine.RemoteError, match="not JSON|is not an integer|expected a JSON object"):
                c4engine.remote(server.url).analyse(Position.from_moves(ASKED))


def test_a_request_is_bounded_as_a_whole_by_the_timeout() -> None:
    """A valid answer sent one byte every 0.25 s (some 30 s in all) to a client whose
    timeout is 2 s: each read is short, the whole is not."""
    whole = http_answer(b'{"pos":"4453","score":[-5,-5,-2,-3,-4,-2,-2]}')[0]
    with HostileServer(lambda _line: [whole[i:i + 1] for i in range(len(whole))], pause_s=0.25) as server:
        began = time.monotonic()
        with pytest.raises(c4engine.RemoteError, match="no answer within the timeout of 2 s"):
            c4engine.remote(server.url, timeout=2).analyse(Position.from_moves(ASKED))
        assert time.monotonic() - began < 3.5


def test_a_huge_answer_is_refused_in_bounded_memory() -> None:
    """50 MB sent, declared and not: the client stops reading past its cap, and never
    holds more than a few times the cap."""
    megabyte = b" " * (1 << 20)
    declared = f"HTTP/1.1 200 OK\r\nContent-Length: {50 << 20}\r\n\r\n".encode()
    undeclared = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
    for head in (declared, undeclared):
        with HostileServer(lambda _line, head=head: [head, *[megabyte] * 50]) as server:  # type: ignore[misc]
            tracemalloc.start()
            try:
                with pytest.raises(c4engine.RemoteError) as caught:
                    c4engine.remote(server.url, timeout=30).analyse(Position.from_moves(ASKED))
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
        assert peak < 1 << 20, peak
        assert str(caught.value) == f"{server.url}: HTTP 200 with an answer over 65536 bytes (a solver's answer is a few KB)"


def test_no_redirect_is_followed() -> None:
    """A redirect to another host (here: another port) is refused, naming where it
    pointed; the other server is never asked."""
    with HostileServer(json_answer(pons(GOOD))) as elsewhere:
        moved = f"Location: {elsewhere.url}/solve?pos={ASKED}\r\n"
        for status in ("301 Moved Permanently", "302 Found", "307 Temporary Redirect"):
            with HostileServer(lambda _line, status=status: http_answer(b"", status, moved)) as server:  # type: ignore[misc]
                with pytest.raises(c4engine.RemoteError, match=f"HTTP {status[:3]} to '{elsewhere.url}/solve"
                                   r"\?pos=4453': remote\(\) follows no redirects"):
                    c4engine.remote(server.url).analyse(Position.from_moves(ASKED))
                assert len(server.requests) == 1
        assert elsewhere.requests == []


def test_an_error_status_names_the_servers_message_in_short() -> None:
    for body, shown in ((b'{"error":"busy","status":503}', "HTTP 503: busy"),
                        (b"x" * 5000, "HTTP 503: " + "x" * 200),
                        (b'["error"]', "HTTP 503: [\"error\"]")):
        with HostileServer(lambda _line, body=body: http_answer(body, "503 Busy")) as server:  # type: ignore[misc]
            with pytest.raises(c4engine.RemoteError) as caught:
                c4engine.remote(server.url).analyse(Position.from_moves(ASKED))
        assert str(caught.value) == f"{server.url}: {shown}"


def test_a_bad_timeout_or_port_is_refused_at_once() -> None:
    for timeout in (0, -1, float("nan"), float("inf"), "5", True):
        with pytest.raises(ValueError, match="not a positive number"):
            c4engine.remote("http://127.0.0.1:8000", timeout=timeout)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        c4engine.remote("http://127.0.0.1:port")
