"""``c4engine serve`` (issue 30) as clients see it: a real server process on loopback,
asked over HTTP by the standard library's client and by raw sockets.

What is checked: Pons' /solve shape and scores against bitbully; the full answer
against ``c4engine solve --all`` on 7x6, 8x7 and 6x7; a time cap that gives
bounds and never a guess as exact; the cache across a restart and a kill -9;
the queue's 503, shared solves, a disconnect that stops its solve; bad input,
slow and idle clients; CORS and the metrics.
"""

from __future__ import annotations

import random
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import NoReturn
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("aiohttp", reason="c4engine serve needs aiohttp: pip install 'c4engine[service]'")
from service_process import ServiceProcess, wait_until  # noqa: E402

from c4engine.geometry import STANDARD, Geometry  # noqa: E402
from c4engine.rules.board import Board  # noqa: E402
from c4engine.rules.notation import parse_digits  # noqa: E402
from c4engine.service.answer import Analysis, Bounds  # noqa: E402
from c4engine.service.cache import AnswerCache, prepare_cache  # noqa: E402
from c4engine.service.cli import is_loopback  # noqa: E402

SEED = 30
EXTRA_BOARDS = "8x7,6x7,8x8"
WIDE = Geometry.parse("8x8")  # 72 bits: the key of a position with stones in both edge columns passes 64
SLOW_6X7 = "334"  # about a second to solve every column on 6x7, no book there


def random_board(rng: random.Random, geometry: Geometry, low: int, high: int) -> Board:
    """A position of a random game with ``low`` to ``high`` stones, not over."""
    while True:
        board, stones = Board(geometry=geometry), rng.randint(low, high)
        while board.stones < stones and not board.is_over():
            board = board.play(rng.choice(board.legal_moves()))
        if not board.is_over():
            return board


def image(board: Board) -> Board:
    """``board`` reflected left to right."""
    return Board(geometry=board.geometry).play_all([board.geometry.width - 1 - col for col in board.history])


def edge_board(rng: random.Random, geometry: Geometry, low: int, high: int) -> Board:
    """:func:`random_board` whose cache key (the smaller of its key and its mirror
    image's) passes 64 bits: stones in both edge columns, on a board of more."""
    while True:
        board = random_board(rng, geometry, low, high)
        if min(board.key, image(board).key) >= 1 << 64:
            return board


def digits(board: Board) -> str:
    return "".join(str(col + 1) for col in board.history)


def solve_all(boards: list[Board], geometry: Geometry) -> dict[str, list[int]]:
    """``c4engine solve --all``'s per-column scores (-1000 for a full column)."""
    text = "".join(f"{digits(board)}\n" for board in boards)
    done = subprocess.run([sys.executable, "-m", "c4engine", "solve", "--all", "--board", geometry.name],
                          input=text, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        moves = fields[0] if len(fields) == geometry.width + 3 else ""
        out[moves] = [int(value) for value in fields[-geometry.width - 2:-2]]
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """7x6 by default, 8x7 and 6x7 too; two workers."""
    service = ServiceProcess(tmp_path_factory.mktemp("service") / "cache.sqlite", "--threads", "2",
                             "--boards", EXTRA_BOARDS, "--idle-timeout", "2")
    with service:
        yield service
        assert service.stop() == 0
    assert "Traceback" not in "".join(service.log)


@pytest.fixture()
def single(tmp_path: Path) -> Iterator[ServiceProcess]:
    """One worker, no queue behind it, 6x7: one long solve fills it."""
    service = ServiceProcess(tmp_path / "cache.sqlite", "--board", "6x7", "--threads", "1", "--queue", "0",
                             "--max-movetime", "20000")
    with service:
        yield service


def check_against_bitbully(server: ServiceProcess, count: int) -> None:
    bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")
    oracle = bitbully.BitBully("12-ply-dist")
    rng = random.Random(SEED)
    for _ in range(count):
        board = random_board(rng, STANDARD, 0, 30)
        status, _headers, body = server.get(f"/solve?pos={digits(board)}")
        expected = oracle.score_all_moves(bitbully.Board(list(board.history)))
        assert status == 200, body
        assert body == {"pos": digits(board), "score": [expected.get(col, 100) for col in range(7)]}


def test_solve_agrees_with_bitbully(server: ServiceProcess) -> None:
    check_against_bitbully(server, 24)


@pytest.mark.slow
def test_solve_agrees_with_bitbully_on_200_positions(server: ServiceProcess) -> None:
    check_against_bitbully(server, 200)
    rng = random.Random(SEED)  # the same positions, through /api/v1/position, against the engine's solver
    boards = [random_board(rng, STANDARD, 0, 30) for _ in range(200)]
    check_positions(server, boards, engine_scores(boards))


def engine_scores(boards: list[Board]) -> dict[str, list[int]]:
    """The in-process solver's per-column scores (-1000 for a full column), book included."""
    import c4engine
    return {digits(board): [-1000 if score is None else score for score in
                            c4engine.analyse(c4engine.Position.from_moves(digits(board))).values()]
            for board in boards}


def check_positions(server: ServiceProcess, boards: list[Board], expected: dict[str, list[int]]) -> None:
    geometry = boards[0].geometry
    for board in boards:
        status, _headers, body = server.get(f"/api/v1/position?board={geometry}&pos={digits(board)}&movetime=10000")
        assert status == 200, body
        assert body["exact"] and body["source"] in ("book", "cache", "search")
        scores = {move["column"]: move["score"] for move in body["moves"]}
        assert [scores.get(col, -1000) for col in range(1, geometry.width + 1)] == expected[digits(board)]
        assert body["score"] == max(scores.values()) == body["moves"][0]["score"]
        assert [move["score"] for move in body["moves"]] == sorted(scores.values(), reverse=True)


def test_position_agrees_with_the_engines_solver_on_7x6(server: ServiceProcess) -> None:
    """0-30 stones: the in-process solver with the opening book (``c4engine solve`` has
    none, and takes minutes on the first moves without it)."""
    rng = random.Random(SEED)
    boards = [random_board(rng, STANDARD, 0, 30) for _ in range(12)]
    check_positions(server, boards, engine_scores(boards))


@pytest.mark.parametrize(("board", "low", "high"), [("7x6", 12, 30), ("8x7", 30, 44), ("6x7", 14, 30)])
def test_position_agrees_with_c4engine_solve(server: ServiceProcess, board: str, low: int, high: int) -> None:
    geometry = Geometry.parse(board)
    rng = random.Random(SEED + geometry.cells)
    boards = [random_board(rng, geometry, low, high) for _ in range(8)]
    check_positions(server, boards, solve_all(boards, geometry))


def test_position_fields() -> None:
    """Verdicts, distances and the order of moves, on positions whose answers are known."""
    from c4engine.rules.notation import parse_digits
    from c4engine.service.answer import Analysis, Bounds, position_document
    board = parse_digits("121212")  # the first player wins at once in column 1
    analysis = Analysis(board, (Bounds.exact(18), Bounds.exact(-17), Bounds(1, 17), Bounds(-17, 17),
                                Bounds.exact(0), Bounds(-17, -1), Bounds.exact(-16)), "search")
    document = position_document(analysis, 1.0)
    assert (document["verdict"], document["score"], document["distance"], document["exact"]) == ("win", 18, 1, True)
    moves = {move["column"]: move for move in document["moves"]}
    assert [move["column"] for move in document["moves"]] == [1, 3, 5, 7, 4, 6, 2]  # proven low end first
    assert moves[3]["verdict"] == "win" and moves[3]["score"] is None and not moves[3]["exact"]
    assert moves[4]["verdict"] == "unknown" and moves[4]["bounds"] == [-17, 17]
    assert moves[5]["distance"] == 42 - 6 and moves[2]["distance"] == 4 and moves[7]["distance"] == 6


def test_a_time_cap_gives_bounds_the_full_solve_keeps(server: ServiceProcess) -> None:
    began = time.perf_counter()
    _status, _headers, capped = server.get(f"/api/v1/position?board=6x7&pos={SLOW_6X7}&movetime=50")
    assert time.perf_counter() - began < 0.05 + 0.5
    assert not capped["exact"] and capped["score"] is None and capped["distance"] is None
    _status, _headers, full = server.get(f"/api/v1/position?board=6x7&pos={SLOW_6X7}&movetime=10000")
    assert full["exact"]
    truth = {move["column"]: move["score"] for move in full["moves"]}
    for move in capped["moves"]:
        low, high = move["bounds"]
        assert low <= truth[move["column"]] <= high
        assert move["exact"] == (low == high) and (move["score"] is None) != move["exact"]


def test_the_cache_is_kept_across_a_restart_mirror_images_included(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    moves = "4455163"
    image = "".join(str(8 - int(digit)) for digit in moves)
    with ServiceProcess(cache) as first:
        _status, _headers, before = first.get(f"/api/v1/position?pos={moves}")
        assert first.stop() == 0
    assert before["source"] == "search"
    with ServiceProcess(cache) as second:
        _status, _headers, after = second.get(f"/api/v1/position?pos={moves}")
        _status, _headers, mirrored = second.get(f"/api/v1/position?pos={image}")
        _status, _headers, pons = second.get(f"/solve?pos={image}")
    assert after["source"] == mirrored["source"] == "cache"
    assert {key: value for key, value in after.items() if key not in ("source", "time_ms")} == \
        {key: value for key, value in before.items() if key not in ("source", "time_ms")}
    by_column = {move["column"]: move["score"] for move in before["moves"]}
    assert pons["score"] == [by_column[8 - col] for col in range(1, 8)]


def test_keys_past_64_bits_are_kept_whole(tmp_path: Path) -> None:
    """Issue 47: the key of a 72-128-bit position overflowed SQLite's INTEGER (every
    lookup of one failed).  On 8x8, 16x7 and 26x3, positions with stones in both
    edge columns are kept, found again, mirror images included, after a reopen,
    under keys that are BLOBs, beside the narrower boards' integers."""
    rng = random.Random(SEED + 47)
    boards = [edge_board(rng, Geometry.parse(name), 2, 30) for name in ("8x8", "16x7", "26x3") for _ in range(20)]
    boards += [random_board(rng, STANDARD, 2, 20) for _ in range(20)]
    answers = {board: tuple(None if not board.can_play(col) else Bounds.exact((col + index) % 7 - 3)
                            for col in range(board.geometry.width)) for index, board in enumerate(boards)}
    path = tmp_path / "cache.sqlite"
    cache = AnswerCache(path, 1 << 20)
    for board, columns in answers.items():
        assert cache.get(board) is None
        cache.put(Analysis(board, columns, "search"))
    cache.close()
    assert cache.failed == 0 and cache.written == len(boards)
    again = AnswerCache(path, 1 << 20)
    for board, columns in answers.items():
        found, mirrored = again.get(board), again.get(image(board))
        assert found is not None and found.columns == columns and found.source == "cache"
        assert mirrored is not None and mirrored.columns == columns[::-1]
    again.close()
    with sqlite3.connect(path) as connection:
        kinds = dict(connection.execute("SELECT typeof(key), COUNT(*) FROM answers GROUP BY typeof(key)"))
        widths = set(connection.execute("SELECT board, length(key) FROM answers WHERE typeof(key) = 'blob'"))
    assert kinds == {"blob": 60, "integer": 20}
    assert widths == {("8x8", 9), ("16x7", 16), ("26x3", 13)}  # the board's key bits, in bytes


def test_a_cache_file_written_before_wide_boards_still_opens(tmp_path: Path) -> None:
    """A file as the service wrote it until issue 47 (the same table: a key of at most
    64 bits is still stored as it was, signed): its rows are answered from."""
    path = tmp_path / "cache.sqlite"
    board, signed = parse_digits("4455163"), parse_digits("11818888118181", Geometry.parse("8x7"))
    assert min(signed.key, image(signed).key) >= 1 << 63  # stored negative
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE answers (seq INTEGER PRIMARY KEY, board TEXT NOT NULL, "
                           "key INTEGER NOT NULL, scores BLOB NOT NULL, UNIQUE (board, key))")
        for shown, scores in ((board, bytes([1, 2, 3, 4, 5, 6, 7])), (signed, bytes([250, 1, 2, 3, 4, 5, 6, 100]))):
            key = min(shown.key, image(shown).key)
            connection.execute("INSERT INTO answers (board, key, scores) VALUES (?, ?, ?)",
                               (shown.geometry.name, key - (1 << 64) if key >= 1 << 63 else key, scores))
    cache = AnswerCache(path, 1 << 20)
    found, wide = cache.get(board), cache.get(signed)
    cache.close()
    assert found is not None and [bounds.low for bounds in found.columns if bounds] == [1, 2, 3, 4, 5, 6, 7]
    assert wide is not None and len(wide.columns) == 8 and cache.rows == 2


def test_every_position_of_a_wide_board_is_answered(server: ServiceProcess) -> None:
    """Issue 47: on 8x8, every position with stones in both edge columns was a 500.
    Those of the issue, capped, are answered; deep ones exactly, as the in-process
    solver answers them, by the FEN (``remote()``) and by the moves.  Their rows'
    keys are checked in test_keys_past_64_bits_are_kept_whole."""
    import c4engine
    for moves in ("1188", "1818", "181818", "8811"):
        status, _headers, body = server.get(f"/api/v1/position?board=8x8&pos={moves}&movetime=50")
        assert status == 200 and body["stones"] == len(moves), body
    rng = random.Random(SEED + 48)
    far = c4engine.remote(server.url)
    for board in (edge_board(rng, WIDE, 44, 50) for _ in range(4)):
        position = c4engine.Position.from_moves(digits(board), width=8, height=8)
        scores = c4engine.analyse(position)
        assert far.analyse(position) == scores
        status, _headers, body = server.get(f"/api/v1/position?board=8x8&pos={digits(board)}")
        assert status == 200 and {move["column"]: move["score"] for move in body["moves"]} == \
            {col: score for col, score in scores.items() if score is not None}, body


def test_kill_9_during_the_load_loses_nothing_committed(tmp_path: Path) -> None:
    """Many solves written while the server is killed; the file opens, passes SQLite's
    check, and every answer it kept is exact."""
    import c4engine
    cache = tmp_path / "cache.sqlite"
    rng = random.Random(SEED + 9)
    boards = [random_board(rng, STANDARD, 14, 30) for _ in range(400)]
    server = ServiceProcess(cache, "--threads", "2")
    stop = threading.Event()
    killer = threading.Timer(0.5, lambda: (server.proc.kill(), stop.set()))

    def ask(board: Board) -> None:
        if not stop.is_set():
            try:
                server.get(f"/api/v1/position?pos={digits(board)}", timeout=10)
            except OSError:
                pass
    with server, ThreadPoolExecutor(8) as pool:
        list(pool.map(ask, boards[:100]))
        killer.start()
        list(pool.map(ask, boards[100:]))
        server.proc.wait(10)
    with sqlite3.connect(cache) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        kept = connection.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    assert kept >= 50
    with ServiceProcess(cache) as again:
        cached = 0
        for board in boards:
            _status, _headers, body = again.get(f"/api/v1/position?pos={digits(board)}")
            if body["source"] == "cache":
                cached += 1
                scores = c4engine.analyse(c4engine.Position.from_moves(digits(board)))
                assert {move["column"]: move["score"] for move in body["moves"]} == \
                    {col: score for col, score in scores.items() if score is not None}
    assert cached >= kept  # every row kept was asked for by one of these positions


BAD_REQUESTS = [
    ("/solve?pos=9", "pos '9'"),
    ("/solve?pos=4444444", "column 4 is full"),
    ("/solve?pos=" + "4" * 100, "100 moves"),
    ("/solve", "missing parameter 'pos'"),
    ("/solve?pos=44&board=7x6", "unknown parameter 'board'"),
    ("/solve?pos=1&pos=2", "more than once"),
    ("/solve?pos=%FF", "not UTF-8"),
    ("/solve?pos=12121212", "already over"),
    ("/api/v1/position?board=12x10", "12x10: needs width x (height + 1) <= 128"),
    ("/api/v1/position?board=5x4", "not served here"),
    ("/api/v1/position?board=huge", "expected WxH"),
    ("/api/v1/position?fen=8/8/8/8/8/8/8%20w", "expected 6 rows"),
    ("/api/v1/position?pos=44&fen=7/7/7/7/7/7%20w", "not both"),
    ("/api/v1/position?pos=44&movetime=0", "movetime '0'"),
    ("/api/v1/position?pos=44&movetime=99999999999999999999", "movetime"),
    ("/api/v1/position?depth=3", "unknown parameter 'depth'"),
    ("/api/v1/position?pos=" + "4" * (1 << 20), "query string of 1048580 bytes"),
]


@pytest.mark.parametrize(("path", "named"), BAD_REQUESTS, ids=[named for _path, named in BAD_REQUESTS])
def test_bad_input_gets_a_400_naming_it(server: ServiceProcess, path: str, named: str) -> None:
    status, headers, body = server.get(path)
    assert status == 400 and headers["Content-Type"].startswith("application/json")
    assert named in body["error"]
    assert server.get("/health")[0] == 200


def raw_request(url: str, data: bytes, timeout: float = 10.0) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_body_over_1_kb_is_refused_with_a_json_413(server: ServiceProcess) -> None:
    """docs/service.md: GET only, no body (1 KB at most).  A body of 5,000 bytes was
    answered 200 (issue 47); declared or chunked, it is a 413 now, and a small one
    is ignored."""
    import http.client
    import json
    host, port = server.url.removeprefix("http://").split(":")
    for body, chunked, status in ((b"x" * 5000, False, 413), (b"x" * 5000, True, 413), (b"x" * 100, False, 200),
                                  (b"x" * 1024, True, 200)):
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        pieces = iter([body[:700], body[700:]]) if chunked else body
        connection.request("GET", "/solve?pos=4453", body=pieces, encode_chunked=chunked,
                           headers={"Transfer-Encoding": "chunked"} if chunked else {})
        response = connection.getresponse()
        answer = json.loads(response.read())
        connection.close()
        assert (response.status, response.getheader("Content-Type")) == (status, "application/json"), answer
        if status == 413:
            assert answer == {"error": "a request body over 1024 bytes: the routes take none", "status": 413}
        else:
            assert answer["score"] == [-5, -5, -2, -3, -4, -2, -2]


def test_raw_bytes_that_are_not_utf8_and_unknown_paths(server: ServiceProcess) -> None:
    """Raw bytes that no URL may hold are refused by aiohttp's parser (plain text);
    percent-escaped ones that are not UTF-8 get the service's JSON (BAD_REQUESTS)."""
    answer = raw_request(server.url, b"GET /solve?pos=4\xff\xfe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.0 400") and b"Invalid char in url query" in answer
    for path in ("/", "/static/../../etc/passwd", "/solve/", "/api/v1/position/../../x"):
        status, _headers, body = server.get(path)
        assert status == 404 and "error" in body, path
    answer = raw_request(server.url, b"POST /solve?pos=4 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                                     b"Connection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 405") and b'"error"' in answer
    answer = raw_request(server.url, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.0 400")
    assert server.get("/health")[0] == 200


def test_slow_and_idle_clients_are_cut_off_and_others_served(server: ServiceProcess) -> None:
    """A slow-loris client is closed after the idle timeout (2 s here); 2,000 idle
    connections do not keep the server from answering."""
    host, port = server.url.removeprefix("http://").split(":")
    slow = socket.create_connection((host, int(port)))
    slow.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
    began = time.monotonic()
    closed = False
    while time.monotonic() - began < 10 and not closed:
        try:
            slow.sendall(b"X: y\r\n")
            slow.settimeout(0.5)
            closed = slow.recv(1) == b""
        except socket.timeout:
            pass
        except OSError:
            closed = True
    slow.close()
    assert closed and time.monotonic() - began < 6
    idle = [socket.create_connection((host, int(port))) for _ in range(2000)]
    try:
        status, _headers, body = server.get("/solve?pos=4453", timeout=10)
        assert status == 200 and body["score"] == [-5, -5, -2, -3, -4, -2, -2]
    finally:
        for sock in idle:
            sock.close()


def test_a_full_queue_answers_503_and_identical_requests_share_a_solve(single: ServiceProcess) -> None:
    with ThreadPoolExecutor(2) as pool:
        long = [pool.submit(single.get, "/api/v1/position?movetime=1500") for _ in range(2)]
        assert wait_until(lambda: single.get("/health")[2]["in_flight"] == 1)
        status, headers, body = single.get("/api/v1/position?pos=3&movetime=1500")
        assert status == 503 and headers["Retry-After"] == "1" and "busy" in body["error"]
        answers = [future.result() for future in long]
    assert [status for status, _headers, _body in answers] == [200, 200]
    assert answers[0][2]["moves"] == answers[1][2]["moves"]
    metrics = single.get("/metrics")[2]
    assert "c4engine_solve_seconds_count 1\n" in metrics
    assert 'c4engine_requests_total{route="/api/v1/position",status="503"} 1' in metrics


def test_a_client_that_leaves_stops_its_solve(single: ServiceProcess) -> None:
    host, port = single.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"GET /api/v1/position?movetime=20000 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert wait_until(lambda: single.get("/health")[2]["in_flight"] == 1)
    began = time.monotonic()
    assert wait_until(lambda: single.get("/health")[2]["in_flight"] == 0, 5.0)
    assert time.monotonic() - began < 2.0
    status, _headers, _body = single.get("/api/v1/position?pos=3&movetime=100")
    assert status == 200  # the worker is free again


def test_cors_headers(server: ServiceProcess, tmp_path: Path) -> None:
    status, headers, _body = server.get("/solve?pos=4", headers={"Origin": "https://game.example"})
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "*"
    answer = raw_request(server.url, b"OPTIONS /solve HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\n"
                                     b"Access-Control-Request-Method: GET\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 204") and b"Access-Control-Allow-Origin: *" in answer
    with ServiceProcess(tmp_path / "cache.sqlite", "--cors", "https://game.example") as listed:
        _status, allowed, _body = listed.get("/solve?pos=4", headers={"Origin": "https://game.example"})
        _status, other, _body = listed.get("/solve?pos=4", headers={"Origin": "https://evil.example"})
    assert allowed["Access-Control-Allow-Origin"] == "https://game.example"
    assert "Access-Control-Allow-Origin" not in other


def test_metrics_count_requests_sources_and_solves(server: ServiceProcess) -> None:
    server.get("/solve?pos=44444433333")  # the book's
    server.get("/solve?pos=4")
    server.get("/solve?pos=4")  # cached by now
    text = server.get("/metrics")[2]
    for needed in ('c4engine_requests_total{route="/solve",status="200"}',
                   'c4engine_answers_total{source="book",exact="true"}',
                   'c4engine_answers_total{source="cache",exact="true"}', "c4engine_solve_seconds_count",
                   "c4engine_queue_depth 0", "# TYPE c4engine_solve_seconds histogram"):
        assert needed in text


def test_it_binds_loopback_unless_told(server: ServiceProcess) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2") and not is_loopback("example.org")


def test_a_host_other_than_loopback_is_announced(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without binding anything: the command's warning, before the server would start."""
    from click.testing import CliRunner

    from c4engine.cli import cli
    from c4engine.service import run as run_module
    told: list[str] = []

    async def no_server(settings: run_module.Settings, tell: object) -> None:
        told.append(settings.host)
    monkeypatch.setattr(run_module, "run_service", no_server)
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--cache", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 0 and told == ["0.0.0.0"]
    assert "listening on 0.0.0.0, reachable from other machines" in result.output
    result = CliRunner().invoke(cli, ["serve", "--cache", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 0 and told[-1] == "127.0.0.1" and "reachable" not in result.output


def test_remote_answers_as_the_in_process_api(server: ServiceProcess) -> None:
    import c4engine
    from c4engine import Position
    far = c4engine.remote(server.url)
    for moves in ("", "4453", "44444433333"):
        position = Position.from_moves(moves)
        assert far.analyse(position) == c4engine.analyse(position)
        assert far.solve(position) == c4engine.solve(position)
        assert far.solve(position, weak=True) == c4engine.solve(position, weak=True)
    wide = Position.from_moves("4455661188", width=8, height=7)
    scores = far.analyse(wide)
    assert len(scores) == 8 and far.solve(wide) == max(s for s in scores.values() if s is not None)
    from_fen = Position.from_fen(Position.from_moves("4453").fen())
    assert far.analyse(from_fen) == c4engine.analyse(Position.from_moves("4453"))
    with pytest.raises(c4engine.IllegalMoveError, match="already over"):
        far.analyse(Position.from_moves("1212121"))
    with pytest.raises(c4engine.RemoteError, match="not served here"):
        far.analyse(Position(width=5, height=4))
    with pytest.raises(c4engine.RemoteError, match="HTTP 404"):
        c4engine.remote(server.url + "/nothing").analyse(Position())
    with pytest.raises(ValueError, match="not an http"):
        c4engine.remote("ftp://example.org")


def test_a_built_book_is_read_before_the_search(tmp_path: Path) -> None:
    """A book of 8x7 positions at 5 stones, with made-up values no search would give:
    the position one stone short of them is answered from it, and a weak book is
    not used (its values are signs, not scores)."""
    import numpy as np

    from c4engine.kernel.book import OpeningBook
    from c4engine.kernel.built_book import BookHeader, BuiltBook, canonical_key, write_book
    from c4engine.rules.notation import parse_digits
    from c4engine.service.books import Books
    geometry = Geometry.parse("8x7")
    board = parse_digits("4455", geometry)
    children = {col: board.play(col) for col in range(8)}
    keys = np.array(sorted({canonical_key(child.current, child.mask, geometry) for child in children.values()}),
                    dtype=np.uint64)
    made_up = {int(key): 7 - index for index, key in enumerate(keys)}
    for weak in (False, True):
        path = tmp_path / f"book-{weak}.book"
        write_book(path, BookHeader(geometry, 5, weak, len(keys)), list(made_up.items()))
        books = Books(OpeningBook.empty(), [BuiltBook.load(path)])
        analysis = books.analyse(board)
        if weak:
            assert analysis is None
            continue
        assert analysis is not None and analysis.source == "book"
        expected = [-made_up[canonical_key(children[col].current, children[col].mask, geometry)] for col in range(8)]
        assert [bounds.low for bounds in analysis.columns if bounds is not None] == expected
        assert books.analyse(parse_digits("445", geometry)) is None  # two stones short: the search's


def test_a_fault_of_the_server_is_a_json_500_and_it_goes_on_serving() -> None:
    """In-process, over aiohttp's test server on loopback: a cache that fails."""
    import asyncio

    from aiohttp.test_utils import TestClient, TestServer

    from c4engine.kernel.book import OpeningBook
    from c4engine.service.app import create_app
    from c4engine.service.books import Books
    from c4engine.service.metrics import Metrics
    from c4engine.service.params import Limits
    from c4engine.service.recent import RecentAnswers
    from c4engine.service.routes import Service

    class BrokenCache:
        rows = 0

        async def lookup(self, board: Board) -> None:
            raise OSError("disk gone")

    service = Service(Limits((STANDARD,), 1000, 1000), Books(OpeningBook.empty()), BrokenCache(),  # type: ignore[arg-type]
                      None, Metrics({}), ("*",), RecentAnswers(10))  # type: ignore[arg-type]

    async def body() -> None:
        async with TestClient(TestServer(create_app(service, 5.0), host="127.0.0.1")) as client:
            response = await client.get("/solve?pos=4453")
            assert response.status == 500 and "internal error" in (await response.json())["error"]
            response = await client.get("/solve?pos=9")
            assert response.status == 400
    asyncio.run(asyncio.wait_for(body(), 60))


def test_a_cache_that_is_no_database_and_a_book_of_another_board_are_refused(tmp_path: Path) -> None:
    import numpy as np
    from click.testing import CliRunner

    from c4engine.cli import cli
    from c4engine.kernel.built_book import BookHeader, write_book
    garbage = tmp_path / "cache.sqlite"
    garbage.write_bytes(b"not a database" * 100)
    result = CliRunner().invoke(cli, ["serve", "--port", "0", "--cache", str(garbage)])
    assert result.exit_code == 2 and "--cache" in result.output and "not a database" in result.output
    book = tmp_path / "8x7.book"
    write_book(book, BookHeader(Geometry.parse("8x7"), 2, False, 1), [(5, 0)])
    result = CliRunner().invoke(cli, ["serve", "--port", "0", "--cache", str(tmp_path / "c.sqlite"),
                                      "--book", str(book)])
    assert result.exit_code == 2 and "8x7 board, which is not served" in result.output


def test_workers_are_processes_answering_on_one_port(tmp_path: Path) -> None:
    """``--workers 2``: new connections to the one port reach both processes, each
    counting its own requests (one process would count them all).  An odd number
    of requests, so that the two counts cannot be equal and collapse into one."""
    import re
    with ServiceProcess(tmp_path / "cache.sqlite", "--workers", "2") as served:
        assert wait_until(lambda: any("c4engine serve process 2 on" in line for line in served.log), 120)
        for _ in range(61):
            assert served.get("/solve?pos=4453")[2]["score"] == [-5, -5, -2, -3, -4, -2, -2]
        counts = set()
        for _ in range(40):
            found = re.search(r'route="/solve",status="200"\} (\d+)', served.get("/metrics")[2])
            assert found is not None
            counts.add(int(found.group(1)))
        assert served.stop() == 0
    assert len(counts) == 2 and sum(counts) == 61


def test_cluster_options_are_checked_before_ray_is_imported(tmp_path: Path) -> None:
    """A bad --cluster address, --workers with --cluster, a port 0 for Ray Serve's proxy:
    usage errors; the local server's modules never import Ray."""
    from click.testing import CliRunner

    from c4engine.cli import cli
    cache = ["--cache", str(tmp_path / "c.sqlite")]
    for arguments, named in ((["--cluster", "no address"], "expected auto"),
                             (["--cluster", "auto", "--workers", "2"], "--workers"),
                             (["--cluster", "auto", "--port", "0"], "a port of its own")):
        result = CliRunner().invoke(cli, ["serve", *arguments, *cache])
        assert result.exit_code == 2 and named in result.output, result.output
    done = subprocess.run([sys.executable, "-c", "import sys, c4engine.service.cli, c4engine.service.run, "
                           "c4engine.service.app; assert 'ray' not in sys.modules"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_processes_open_a_prepared_cache_at_once(tmp_path: Path) -> None:
    """``--workers``' processes open the cache file together: on a new file each
    switched it to WAL, and one start in about twelve failed with "database is
    locked" (seen in the suite's workers test).  The parent prepares the file
    first; then 60 pairs of forked processes opening it at once all succeed."""
    import os
    failed = 0
    for trial in range(60):
        path = tmp_path / f"{trial}.sqlite"
        prepare_cache(path)
        children = []
        for _ in range(2):
            pid = os.fork()
            if pid == 0:
                _open_and_exit(path)
            children.append(pid)
        failed += sum(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0 for pid in children)
    assert failed == 0


def _open_and_exit(path: Path) -> NoReturn:
    """In a forked child: open the cache and end the process, 0 on success."""
    import os
    try:
        AnswerCache(path, 1 << 20)
        os._exit(0)
    except sqlite3.Error:
        os._exit(3)


def minimax_move_scores(width: int, height: int, moves: list[int]) -> dict[int, int]:
    """Each legal column's Pons score (1-based) by plain minimax, as the service gives it."""
    import minimax_oracle as minimax
    board = minimax.Board.from_moves(width, height, 4, [col + 1 for col in moves])
    scores = {}
    for col in board.legal_columns():
        if board.completes_line(col):
            scores[col + 1] = minimax.win_score(board)
            continue
        board.play(col)
        scores[col + 1] = 0 if board.is_full() else -minimax.solve(board)
        board.undo(col)
    return scores


@pytest.mark.slow
def test_new_boards_compile_side_by_side_and_are_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two boards new to the caches: the second compiles in a child process beside the
    server's own compile of the first (the log says so), and both are served with
    the plain minimax's scores."""
    monkeypatch.setenv("C4ENGINE_KERNEL_CACHE", str(tmp_path / "kernels"))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    rng = random.Random(SEED)
    with ServiceProcess(tmp_path / "cache.sqlite", "--board", "5x4", "--boards", "6x4") as service:
        assert any("compiling the kernels of 6x4 in child processes" in line for line in service.log), service.log
        for geometry in (Geometry(5, 4), Geometry(6, 4)):
            for _ in range(3):
                moves = list(random_board(rng, geometry, geometry.cells - 11, geometry.cells - 9).history)
                status, _, body = service.get(f"/api/v1/position?board={geometry}&pos="
                                              + "".join(str(col + 1) for col in moves))
                assert status == 200, body
                assert {move["column"]: move["score"] for move in body["moves"]} == \
                    minimax_move_scores(geometry.width, geometry.height, moves), (geometry, moves)
        assert service.stop() == 0
