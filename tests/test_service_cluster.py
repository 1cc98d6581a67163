"""``c4engine serve --cluster`` (issue 30, item 4): the service as Ray Serve replicas on
a Ray head of the tests' own, on loopback in a network namespace where only
loopback exists (tests/ray_cluster.py), asked over real HTTP.

What is checked: the same answers as the local server, bad input still a JSON 400,
and a solver replica killed in the middle of the load: every client gets the
right answer (each checked against the in-process solver) without a single
refusal: the front asks another replica.  Slow: a head and replicas start.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("aiohttp", reason="c4engine serve needs aiohttp: pip install 'c4engine[service]'")
pytest.importorskip("ray.serve", reason="--cluster needs Ray Serve: pip install 'c4engine[cluster]'")
from ray_cluster import free_port  # noqa: E402
from service_process import ServiceProcess  # noqa: E402
from test_service import digits, random_board  # noqa: E402

import c4engine  # noqa: E402
from c4engine.geometry import STANDARD  # noqa: E402

pytestmark = pytest.mark.slow
REPLICA_TITLE = b"ServeReplica:c4engine:Solver"
SEED = 31


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with ServiceProcess(tmp_path_factory.mktemp("local") / "cache.sqlite") as service:
        yield service


@pytest.fixture(scope="module")
def cache_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cluster") / "cache.sqlite"


@pytest.fixture(scope="module")
def clustered(head: str, cache_file: Path) -> Iterator[ServiceProcess]:
    """Two solver replicas of one worker each (the head's 2 CPUs), one cache keeper."""
    with ServiceProcess(cache_file, "--cluster", head, "--port", str(free_port()), "--replicas", "2") as service:
        yield service
        assert service.stop() == 0, "".join(service.log)


def without_timing(document: dict[str, object]) -> dict[str, object]:
    return {name: value for name, value in document.items() if name not in ("time_ms", "source")}


def test_the_cluster_answers_as_the_local_server(clustered: ServiceProcess, local: ServiceProcess) -> None:
    rng = random.Random(SEED)
    positions = ["", "4453", "44444433333"] + [digits(random_board(rng, STANDARD, 12, 24)) for _ in range(5)]
    for pos in positions:
        for path in (f"/solve?pos={pos}", f"/api/v1/position?pos={pos}&movetime=10000"):
            status, _headers, body = clustered.get(path)
            local_status, _local_headers, local_body = local.get(path)
            assert status == local_status == 200, body
            assert without_timing(body) == without_timing(local_body), path
    status, _headers, health = clustered.get("/health")
    assert status == 200 and health["status"] == "ok" and health["boards"] == ["7x6"]


@pytest.mark.parametrize(("path", "status", "named"), [
    ("/solve?pos=9", 400, "pos '9'"), ("/solve?pos=4&x=1", 400, "unknown parameter 'x'"),
    ("/api/v1/position?board=8x7", 400, "not served here"), ("/api/v1/position?pos=" + "4" * 100, 400, "100 moves"),
    ("/nothing", 404, "Not Found")])
def test_bad_input_is_still_a_json_error(clustered: ServiceProcess, local: ServiceProcess, path: str,
                                         status: int, named: str) -> None:
    answer = clustered.get(path)
    assert answer[0] == status and named in answer[2]["error"], answer
    assert answer[2] == local.get(path)[2]


def replica_pids() -> list[int]:
    """The processes of the solver replicas (Ray names them in their command line)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and REPLICA_TITLE in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def asked_until_answered(service: ServiceProcess, pos: str) -> tuple[dict[str, object], int]:
    """The answer, asked again after each 503 (as its Retry-After says); and the 503s."""
    refusals = 0
    while True:
        status, headers, body = service.get(f"/api/v1/position?pos={pos}&movetime=10000", timeout=120)
        if status != 503:
            assert status == 200, body
            return body, refusals
        assert {name.lower(): value for name, value in headers.items()}["retry-after"] == "1"
        refusals += 1
        assert refusals < 30, body
        time.sleep(1)


def test_a_replica_killed_mid_load_costs_no_client_a_wrong_answer(clustered: ServiceProcess,
                                                                    cache_file: Path) -> None:
    rng = random.Random(SEED + 1)
    boards = [random_board(rng, STANDARD, 12, 22) for _ in range(48)]
    expected = {digits(board): c4engine.analyse(c4engine.Position.from_moves(digits(board))) for board in boards}
    victims = replica_pids()
    assert len(victims) == 2, victims
    with ThreadPoolExecutor(4) as clients:
        answers = [clients.submit(asked_until_answered, clustered, digits(board)) for board in boards]
        while sum(answer.done() for answer in answers) < 8:
            time.sleep(0.05)
        os.kill(victims[0], signal.SIGKILL)
        results = [answer.result() for answer in answers]
    assert sum(refusals for _body, refusals in results) == 0  # the front asked another replica
    for board, (body, _refusals) in zip(boards, results):
        scores = {move["column"]: move["score"] for move in body["moves"]}
        assert body["exact"] and scores == {col: score for col, score in expected[digits(board)].items()
                                            if score is not None}
    assert victims[0] not in replica_pids()
    status, _headers, health = clustered.get("/health")
    assert status == 200
    clustered.stop()
    with sqlite3.connect(cache_file) as connection:
        kept = connection.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    assert kept >= len({body["fen"] for body, _refusals in results}) // 2
