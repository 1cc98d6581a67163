"""``--cluster``: matches and strength runs on a Ray cluster (issue 13).

The tests that need Ray start a head node of their own (about 15 s on a loaded
2-core machine), so they are marked slow; ``.ci/run`` runs them in a second
pytest call with the ``cluster`` extra installed.  Ray binds its head to the
machine's own address even when told 127.0.0.1, so the head, the drivers (this
process's main thread, where the tests run) and the engines all run in a
network namespace of their own where only loopback exists
(:mod:`network_namespace`, as root): their traffic cannot leave the machine.
The tests without Ray (the option's checks, the message when Ray is missing)
run by default, outside it."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import click
import pytest
from click.testing import CliRunner
from network_namespace import interfaces, namespace_of
from ray_cluster import HEAD_START_SECONDS, Head, free_port, ray_node
from test_match import SIMPLE, SIMPLE_LAST, config, misbehaving

from c4engine.engine.limits import Limit
from c4engine.referee import cluster
from c4engine.referee.cli import match_command, strength_command
from c4engine.referee.cluster import INIT_ATTEMPTS, connected, run_cluster_match
from c4engine.referee.openings import builtin_openings
from c4engine.referee.pgn import read_games
from c4engine.referee.stats import SprtParams

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SLOW = f"{sys.executable} {TESTS / 'engines' / 'slow_engine.py'}"


def run_match_cli(*args: str):
    return CliRunner().invoke(match_command, list(args))


# -- without Ray -------------------------------------------------------------


def test_without_ray_the_option_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    result = run_match_cli("--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1",
                           "--cluster", "auto")  # auto: no address to reach first
    assert result.exit_code == 1
    assert "--cluster needs Ray, which is not installed: pip install 'c4engine[cluster]'" \
        in result.output
    assert "Finished game" not in result.output


class _AbortingRay:
    """Ray whose ``init`` fails as a Ray Client server does when it aborts the
    session it was setting up, the first ``aborts`` times."""

    def __init__(self, aborts: int) -> None:
        self.aborts = aborts
        self.inits = self.shutdowns = 0

    def init(self, **_kwargs: object) -> None:
        self.inits += 1
        if self.inits <= self.aborts:
            raise ConnectionAbortedError("Initialization failure from server:\nZombieProcess")

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_a_session_the_client_server_aborts_is_asked_for_again(monkeypatch):
    ray = _AbortingRay(aborts=INIT_ATTEMPTS - 1)
    monkeypatch.setitem(sys.modules, "ray", ray)
    with connected("auto") as connected_ray:
        assert connected_ray is ray
    assert ray.inits == INIT_ATTEMPTS


def test_a_session_aborted_every_time_is_a_clear_error(monkeypatch):
    ray = _AbortingRay(aborts=INIT_ATTEMPTS)
    monkeypatch.setitem(sys.modules, "ray", ray)
    with pytest.raises(click.ClickException, match="cannot reach the Ray cluster at auto: "
                                                   "Initialization failure from server"):
        with connected("auto"):
            pass
    assert ray.inits == INIT_ATTEMPTS
    assert ray.shutdowns == INIT_ATTEMPTS + 1  # after each failure, and on leaving


class _SlicedRay:
    """Ray as ``ActorGroup.unordered`` sees it: a pool whose waits end empty-handed
    (the pool's own TimeoutError) before each result or failure."""

    class exceptions:  # noqa: N801 - the shape of ray.exceptions
        class RayError(Exception):
            pass

        class RayTaskError(RayError):
            cause: Exception

        class RayActorError(RayError):
            pass

    def __init__(self, outcomes: list[object]) -> None:
        self.util = SimpleNamespace(ActorPool=lambda _actors: _SlicedPool(outcomes))


class _SlicedPool:
    """``ray.util.ActorPool`` whose every result or failure comes after a wait that
    ended empty-handed."""

    def __init__(self, outcomes: list[object]) -> None:
        self.outcomes = list(outcomes)
        self.sliced = False

    def submit(self, _fn: object, _args: object) -> None:
        pass

    def has_next(self) -> bool:
        return bool(self.outcomes)

    def get_next_unordered(self, timeout: float) -> object:
        assert timeout == cluster.POLL_SECONDS
        self.sliced = not self.sliced
        if self.sliced:
            raise TimeoutError("Timed out waiting for result")
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def _sliced_group(outcomes: list[object]) -> cluster.ActorGroup:
    group = cluster.ActorGroup.__new__(cluster.ActorGroup)
    group.ray, group.actors, group.starting, group.running = _SlicedRay(outcomes), [], {}, []
    return group


def test_results_come_through_waits_that_end_empty_handed():
    assert list(_sliced_group([1, 2, 3]).unordered("move", [(0,), (1,), (2,)])) == [1, 2, 3]


def test_a_timeout_raised_by_a_call_is_its_failure_not_an_empty_wait():
    """Ray raises a call's failure as a class deriving from both RayError and the
    cause's class: a TimeoutError of the call must fail the run, not be waited past."""
    class CallTimedOut(_SlicedRay.exceptions.RayError, TimeoutError):
        pass
    results = _sliced_group([1, CallTimedOut("the call timed out"), 3]).unordered(
        "move", [(0,), (1,), (2,)])
    assert next(results) == 1
    with pytest.raises(CallTimedOut):
        next(results)


class _RayWithALostNode:
    """Ray just after a machine of 8 CPUs was lost: ``ray.nodes()`` says it is dead,
    ``cluster_resources()`` still counts its CPUs until the health checks end."""

    def nodes(self) -> list[dict[str, object]]:
        return [{"Alive": True, "Resources": {"CPU": 2.0}}, {"Alive": False, "Resources": {"CPU": 8.0}},
                {"Alive": True, "Resources": {"memory": 1.0}}]

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 10.0}


def test_groups_are_sized_by_the_live_nodes_cpus(monkeypatch):
    """Four match actors on the one live machine's 2 CPUs get half a CPU each (all
    can be placed), not a CPU each for the 10 CPUs a lost machine still counts for;
    a strength run makes an engine per live CPU, 2, not 10."""
    ray = _RayWithALostNode()
    assert cluster.live_cpus(ray) == [2, 0]
    assert cluster.default_concurrency(ray) == 1
    assert cluster._cpus_per_actor(ray, 4) == 0.5
    made: list[int] = []

    class Stop(Exception):
        pass

    class CountingGroup:
        def __init__(self, _ray, _host, _args, count, _kind):
            made.append(count)
            raise Stop

    @contextmanager
    def fake_connected(_address, forward_output=False):
        yield ray

    monkeypatch.setattr(cluster, "connected", fake_connected)
    monkeypatch.setattr(cluster, "ActorGroup", CountingGroup)
    with pytest.raises(Stop):
        cluster.run_cluster_strength("auto", SIMPLE, (), [object()] * 20, Limit(time=0.01))
    assert made == [2]


def test_an_address_where_nothing_listens_fails_at_once():
    port = free_port()  # closed again: nothing listens there
    started = time.monotonic()
    result = run_match_cli("--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1",
                           "--cluster", f"127.0.0.1:{port}")
    assert result.exit_code == 1
    assert f"no Ray cluster answers at 127.0.0.1:{port}: Connection refused" in result.output
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("address", ["", "localhost", "http://host:6379", "ray://host",
                                     "host:port"])
def test_a_bad_address_is_a_usage_error(address):
    result = run_match_cli("--engine", SIMPLE, "--engine", SIMPLE, "--depth", "1",
                           "--cluster", address)
    assert result.exit_code == 2
    assert "auto, ray://HOST:PORT or HOST:PORT" in result.output


def test_a_match_without_the_option_never_imports_ray(tmp_path):
    script = (f"import sys\nfrom c4engine.cli import main\n"
              f"sys.argv = ['c4engine', 'match', '--engine', {SIMPLE!r}, '--engine', "
              f"{SIMPLE_LAST!r}, '--depth', '1', '--games', '2']\n"
              "try:\n    main()\nfinally:\n    assert 'ray' not in sys.modules, 'ray imported'\n")
    env = os.environ | {"PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "2 of 2 games finished." in done.stdout


# -- on a Ray cluster of our own ----------------------------------------------


def games_as_played(pgn: Path) -> list[tuple[str, str, str, str, str, list[int]]]:
    return [(g.round, g.white, g.black, g.result, g.termination, [m.col for m in g.moves])
            for g in read_games(pgn.read_text(encoding="utf-8"))]


@pytest.mark.slow
def test_the_cluster_and_its_driver_see_only_loopback(head: str, isolated_network: int):
    """The driver, the head's raylet and a worker all run in the namespace, and no
    interface but loopback is there to reach the network through."""
    import ray

    assert namespace_of() == isolated_network and interfaces() == ["lo"]
    assert namespace_of(_raylet_pid(head, node_of_head=True)) == isolated_network

    @ray.remote(num_cpus=0)
    def where_am_i() -> tuple[int, list[str]]:
        return namespace_of(), interfaces()

    ray.init(address=head, logging_level=logging.WARNING)
    try:
        assert ray.get(where_am_i.remote()) == (isolated_network, ["lo"])
        assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_a_cluster_match_reads_like_the_local_one(head: str, tmp_path):
    """The engines are deterministic, so both matches play the same games: the same
    summary, the same progress lines, the same PGN games in game order."""
    args = ["--engine", SIMPLE, "--engine", SIMPLE_LAST, "--depth", "1", "--rounds", "5",
            "--sprt", "elo0=0 elo1=10"]
    local = run_match_cli(*args, "--pgn", str(tmp_path / "local.pgn"))
    remote = run_match_cli(*args, "--pgn", str(tmp_path / "cluster.pgn"),
                           "--cluster", head, "--concurrency", "2")
    assert local.exit_code == 0 and remote.exit_code == 0, remote.output
    assert remote.stdout == local.stdout
    assert "10 of 10 games finished." in remote.stdout and "Ptnml(0-2)" in remote.stdout
    finished = sorted(line.split(" |")[0] for line in remote.stderr.splitlines()
                      if line.startswith("Finished game"))
    assert finished == sorted(line.split(" |")[0] for line in local.stderr.splitlines()
                              if line.startswith("Finished game"))
    played = games_as_played(tmp_path / "cluster.pgn")
    assert played == games_as_played(tmp_path / "local.pgn")
    assert [round_ for round_, *_ in played] == [str(1 + i // 2) for i in range(10)]


@pytest.mark.slow
def test_a_match_through_ray_client_reads_like_the_local_one(head_node: Head):
    """``ray://``: the driver outside the cluster, its actors and engines inside."""
    args = ["--engine", SIMPLE, "--engine", SIMPLE_LAST, "--depth", "1", "--rounds", "2"]
    local = run_match_cli(*args)
    remote = run_match_cli(*args, "--cluster", head_node.client_address)
    assert remote.exit_code == 0, remote.output
    assert remote.stdout == local.stdout
    assert "4 of 4 games finished." in remote.stdout


@pytest.mark.slow
def test_misbehaviour_on_a_worker_is_judged_as_at_home(head: str):
    """A crash inside an actor: the engine is adjudicated and restarted by the
    referee (play_game), the actor lives on."""
    report = run_cluster_match(config(SIMPLE, misbehaving("crash")), lambda _line: None,
                               address=head)
    assert len(report.tally.outcomes) == 4
    assert report.tally.forfeits(1) == {"abandoned": 4}
    assert all("crashing on purpose" in o.pgn.result_comment for o in report.tally.outcomes)


@pytest.mark.slow
def test_an_sprt_decision_stops_the_cluster_match(head: str, tmp_path):
    pgn = tmp_path / "sprt.pgn"
    cfg = config(SIMPLE, misbehaving("illegal"), openings=builtin_openings(), games=40,
                 sprt=SprtParams(0, 200, model="logistic"), pgn_path=pgn)
    report = run_cluster_match(cfg, lambda _line: None, address=head, concurrency=2)
    assert report.tally.decision() == "H1"
    assert len(report.tally.outcomes) == 16  # 8 won pairs, then nothing more is recorded
    assert "16 of 40 games finished." in report.tally.summary_lines(report.scheduled)
    assert len(read_games(pgn.read_text())) == 16


def _kill_by_ray(actor_name: str) -> None:
    import ray

    ray.kill(ray.get_actor(actor_name), no_restart=False)


def _kill_its_worker_process(actor_name: str) -> None:
    """SIGKILL to the actor's worker process, as the kernel's OOM killer sends it."""
    import ray

    actor = ray.get_actor(actor_name)
    os.kill(ray.get(actor.__ray_call__.remote(lambda _host: os.getpid())), signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("kill", [_kill_by_ray, _kill_its_worker_process], ids=["ray.kill", "sigkill"])
def test_a_killed_actor_loses_no_game_and_counts_none_twice(head: str, tmp_path, kill):
    """Killed while both actors are in the middle of a pair (each game ~1 s; the
    pool hands an actor its next pair before it reports the last one): Ray restarts
    the actor and replays its pair there.  Without the replay a pair would be
    missing, or the match would fail on the lost actor."""
    killed: list[str] = []

    def kill_one_actor(line: str) -> None:
        if line.startswith("Finished game") and not killed:
            kill("match-1")
            killed.append(line)

    pgn = tmp_path / "killed.pgn"
    cfg = config(SLOW, f"{SLOW} 0.02", openings=("11", "22", "33", "55"), games=8,
                 pgn_path=pgn)
    report = run_cluster_match(cfg, kill_one_actor, address=head, concurrency=2)
    assert killed
    numbers = sorted(o.spec.number for o in report.tally.outcomes)
    assert numbers == list(range(1, 9))
    assert [g[0] for g in games_as_played(pgn)] == ["1", "1", "2", "2", "3", "3", "4", "4"]
    assert not report.tally.forfeits(0) and not report.tally.forfeits(1)


@pytest.mark.slow
def test_a_lost_machine_loses_no_game_and_counts_none_twice(head: str):
    """A second node joins; of the match's two actors (one CPU each, spread) one runs
    there.  Its raylet is killed mid-match, as when a machine is lost: once Ray
    declares the node dead (its health checks take some 15 s) it restarts the actor
    on the head and replays the pair there."""
    import ray

    with ray_node("--address", head) as node:
        _wait_for_nodes(head, 2, node)
        killed: list[int] = []

        def kill_the_second_node(line: str) -> None:
            if line.startswith("Finished game") and not killed:
                here = ray.get_runtime_context().get_node_id()  # the driver's: the head
                homes = [_node_of(f"match-{slot}") for slot in (0, 1)]
                assert homes.count(here) == 1, "the actors were not spread over both nodes"
                killed.append(_raylet_pid(head, node_of_head=False))
                os.kill(killed[0], signal.SIGKILL)

        cfg = config(SLOW, SLOW, openings=("11", "22", "33", "55", "66", "77"), games=12)
        report = run_cluster_match(cfg, kill_the_second_node, address=head, concurrency=2)
    assert killed
    assert sorted(o.spec.number for o in report.tally.outcomes) == list(range(1, 13))
    assert not report.tally.forfeits(0) and not report.tally.forfeits(1)


def _node_of(actor_name: str) -> str:
    import ray

    actor = ray.get_actor(actor_name)
    return str(ray.get(actor.__ray_call__.remote(
        lambda _host: ray.get_runtime_context().get_node_id())))


def _wait_for_nodes(address: str, count: int, process: subprocess.Popen[bytes]) -> None:
    import ray

    ray.init(address=address, logging_level=logging.WARNING)
    try:
        deadline = time.monotonic() + HEAD_START_SECONDS
        while sum(node["Alive"] for node in ray.nodes()) < count:
            assert process.poll() is None and time.monotonic() < deadline, "no second node"
            time.sleep(0.5)
    finally:
        ray.shutdown()


def _raylet_pid(address: str, node_of_head: bool) -> int:
    """The raylet of this test's cluster (its GCS port) on the head, or on another node."""
    for pid in Path("/proc").iterdir():
        try:
            command = (pid / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        port = address.rsplit(":", 1)[1].encode()
        if command[0].endswith(b"/raylet") and (b"--head" in command) == node_of_head and any(
                arg.startswith(b"--gcs-address=") and arg.endswith(b":" + port) for arg in command):
            return int(pid.name)
    raise AssertionError(f"no raylet of {address} found")


@pytest.mark.slow
def test_an_engine_that_does_not_start_fails_the_match_at_once(head: str, tmp_path):
    pgn = tmp_path / "none.pgn"
    started = time.monotonic()
    result = run_match_cli("--engine", SIMPLE, "--engine", "/nonexistent/engine", "--depth", "1",
                           "--games", "20", "--cluster", head, "--pgn", str(pgn))
    elapsed = time.monotonic() - started
    assert result.exit_code == 1
    assert f"Error: worker {socket.gethostname()} (" in result.output  # its name and address
    assert "cannot start '/nonexistent/engine': No such file or directory" in result.output
    assert "Finished game" not in result.output and not pgn.exists()
    assert elapsed < 60  # no wait for a handshake, nor a timeout per game


def strength_report(text: str) -> list[str]:
    """``strength``'s report from its table's heading on, without the times.  Ray prints
    the cluster's own errors on the driver's stdout ("(raylet) The node ... has been
    marked dead because the detector has missed too many heartbeats", seen in CI under
    load), whose lines start with a colour code or a tab; they are not the report's."""
    lines = [line for line in text.splitlines() if not line.startswith(("\x1b", "\t"))]
    table = next(i for i, line in enumerate(lines) if line.startswith("phase "))
    return [line for line in lines[table:] if not line.startswith("move time")]


@pytest.mark.slow
def test_strength_on_the_cluster_judges_as_at_home(head: str):
    args = ["--engine", SIMPLE, "--movetime", "10", "--limit", "12"]
    local = CliRunner().invoke(strength_command, args)
    remote = CliRunner().invoke(strength_command, [*args, "--cluster", head])
    assert remote.exit_code == local.exit_code == 1, remote.output  # simple blunders

    assert strength_report(remote.stdout) == strength_report(local.stdout)
    assert "blunders (" in remote.stdout


_HOLD_CPUS = """
import logging, sys, ray
ray.init(address=sys.argv[1], logging_level=logging.WARNING)

@ray.remote(num_cpus=float(sys.argv[2]))
class Holder:
    def ready(self) -> bool:
        return True

holder = Holder.remote()
ray.get(holder.ready.remote())
print("held", flush=True)
sys.stdin.read()  # until the test is done: the actor ends with this driver
"""


@contextmanager
def cpus_held(address: str, cpus: int) -> Iterator[None]:
    """Another driver on the cluster, with an actor holding ``cpus`` CPUs."""
    driver = subprocess.Popen([sys.executable, "-c", _HOLD_CPUS, address, str(cpus)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert driver.stdout is not None and driver.stdout.readline() == "held\n"
        yield
    finally:
        driver.communicate(timeout=60)


@pytest.mark.slow
def test_actors_the_cluster_has_no_room_for_fail_the_run(head: str, monkeypatch):
    """Another job holds both of the head's CPUs, so the actors can never be placed:
    Ray would wait for them for ever, the run fails once READY_SECONDS are over."""
    monkeypatch.setattr(cluster, "READY_SECONDS", 5.0)
    with cpus_held(head, 2):
        started = time.monotonic()
        result = CliRunner().invoke(strength_command, ["--engine", SIMPLE, "--movetime", "10",
                                                       "--limit", "4", "--cluster", head])
        elapsed = time.monotonic() - started
    assert result.exit_code == 2, result.output  # the run failed, not measured
    assert ("Error: none of the 2 Ray actors running after 5 s; the cluster has 0 of 2 CPUs "
            "free, and each actor needs 1") in result.output
    assert elapsed < 60


@pytest.mark.slow
def test_an_actor_the_cluster_cannot_place_holds_nothing_up(head: str, monkeypatch):
    """Another job holds one of the head's two CPUs: one of the run's two actors can
    never be placed (as when the cluster still counts the CPUs of a machine just
    lost, which hung CI in stop 25).  The other one measures every position."""
    monkeypatch.setattr(cluster, "READY_SECONDS", 30.0)
    args = ["--engine", SIMPLE, "--movetime", "10", "--limit", "12"]
    local = CliRunner().invoke(strength_command, args)
    with cpus_held(head, 1):
        remote = CliRunner().invoke(strength_command, [*args, "--cluster", head])
    assert remote.exit_code == local.exit_code == 1, remote.output

    assert strength_report(remote.stdout) == strength_report(local.stdout)
