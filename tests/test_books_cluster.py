"""``c4engine book build --cluster`` on a Ray head of our own, in a network namespace
where only loopback exists (issue 20): a worker killed mid-build loses nothing
and no position is written twice.  Slow: the head takes seconds to start."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from c4engine.books.build import BuildSpec, build, database_path
from c4engine.books.cli import book_command
from c4engine.books.positions import book_positions
from c4engine.geometry import Geometry

pytestmark = pytest.mark.slow
TASK_TITLE = b"ray::solve_chunk"


def solving_workers() -> list[int]:
    """The pids of the Ray workers running a book task now (Ray titles them so)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(TASK_TITLE):
                pids.append(int(entry.name))
        except OSError:
            continue  # gone meanwhile
    return pids


def kill_a_worker_once_it_solves(killed: list[int], give_up: float) -> None:
    while time.monotonic() < give_up and not killed:
        for pid in solving_workers():
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return
        time.sleep(0.02)


def test_a_worker_killed_mid_build_loses_nothing(head: str, tmp_path: Path) -> None:
    geometry = Geometry(5, 4)
    local = tmp_path / "local.book"
    build(BuildSpec(geometry, 6, False, 16), local, resume=False, stream=open(os.devnull, "w"))
    killed: list[int] = []
    killer = threading.Thread(target=kill_a_worker_once_it_solves, args=(killed, time.monotonic() + 120))
    killer.start()
    out = tmp_path / "cluster.book"
    result = CliRunner().invoke(book_command, ["build", "--board", "5x4", "--plies", "6", "--out", str(out),
                                               "--cluster", head])
    killer.join()
    assert result.exit_code == 0, result.output
    assert killed, "no worker was seen solving"
    assert out.read_bytes() == local.read_bytes()
    with sqlite3.connect(database_path(out)) as connection:
        rows, solved, keys = connection.execute(
            "SELECT COUNT(*), COUNT(score), COUNT(DISTINCT key) FROM positions").fetchone()
    assert rows == solved == keys == len(book_positions(geometry, 6))
