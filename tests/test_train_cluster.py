"""``c4engine train --cluster`` on a Ray head of our own, in a network namespace where
only loopback exists: the games solved in Ray tasks make the same network as
here.  Slow: the head takes seconds to start."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from c4engine.cli import cli

pytestmark = pytest.mark.slow
TINY = ["train", "--board", "7x6", "--no-book", "--games", "12", "--stones", "28", "36", "--nodes", "50000",
        "--tuples", "4", "--epochs", "2"]


def test_the_cluster_makes_the_same_network_as_one_process(head: str, tmp_path: Path) -> None:
    here, there = tmp_path / "here.npz", tmp_path / "there.npz"
    local = CliRunner().invoke(cli, [*TINY, "--out", str(here)])
    assert local.exit_code == 0, local.output
    remote = CliRunner().invoke(cli, [*TINY, "--out", str(there), "--cluster", head])
    assert remote.exit_code == 0, remote.output
    assert there.read_bytes() == here.read_bytes()
