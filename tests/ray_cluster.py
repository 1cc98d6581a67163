"""A Ray cluster of the tests' own, as pytest fixtures (registered in conftest.py):
a head node on loopback with 2 CPUs, in a network namespace where only loopback
exists (:mod:`network_namespace`, as root), so that its traffic cannot leave the
machine.  Ray binds its head to the machine's own address even when told
127.0.0.1; the namespace is what keeps it in.  Used by the cluster tests of the
referee and of the book builder."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from network_namespace import loopback_only

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
HEAD_START_SECONDS = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def ray_node(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``ray start --block ARGS`` on loopback with 2 CPUs, ended when the block ends.
    Its workers import this checkout (PYTHONPATH), as a worker machine would import
    the c4engine installed at the same path."""
    env = os.environ | {"RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), str(TESTS), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("ray")), "start", "--block", *args,
         "--num-cpus", "2", "--node-ip-address", "127.0.0.1", "--disable-usage-stats"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        yield process
    finally:
        process.terminate()  # `ray start --block` ends the processes it started
        process.wait(60)


@dataclass(frozen=True)
class Head:
    """A head node's addresses: for a driver on a cluster machine, and through Ray
    Client for one outside the cluster."""

    address: str
    client_address: str


@pytest.fixture(scope="module")
def isolated_network() -> Iterator[int]:
    """This thread, and the Ray nodes it starts, in a network namespace where only
    loopback exists (its inode), for the module's cluster tests; left afterwards."""
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'c4engine[cluster]'")
    with loopback_only() as namespace:
        yield namespace


@pytest.fixture(scope="module")
def head_node(isolated_network: int) -> Iterator[Head]:
    """A Ray head node of our own, in the isolated network; stopped after the module."""
    port, client_port = free_port(), free_port()
    with ray_node("--head", "--port", str(port), "--include-dashboard=false",
                  # not the 10001 of another cluster on this machine:
                  "--ray-client-server-port", str(client_port)) as process:
        _wait_for_port(port, process)
        _wait_for_port(client_port, process)
        yield Head(f"127.0.0.1:{port}", f"ray://127.0.0.1:{client_port}")


@pytest.fixture(scope="module")
def head(head_node: Head) -> str:
    return head_node.address


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + HEAD_START_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, "ray start exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"no Ray head on port {port} after {HEAD_START_SECONDS:g} s")
