"""What every test shares: the fake engines importable, this checkout's c4engine in
every process the tests start, the real engine process of the protocol tests, and
a time limit on each test.

The fake engines in ``tests/engines/`` run as scripts (their folder is then on
their path) and are imported as modules by some tests (pytest's ``pythonpath``
setting in pyproject.toml).  An engine process a test starts (``python -m
c4engine``, a fake engine importing c4engine) must run the code under test, not
another installed copy: PYTHONPATH puts this checkout first for them."""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from engine_process import EngineProcess, start_engine

REPOSITORY = Path(__file__).resolve().parent.parent
# For one test with its fixtures, far above the longest (48 s here, a 5x4 count of
# positions): a hang fails its test instead of stalling the whole CI run.
TEST_SECONDS = 900.0
pytest_plugins = ["ray_cluster"]  # the Ray head fixtures of the cluster tests

os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(REPOSITORY), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])


@pytest.fixture(scope="session", autouse=True)
def standard_kernel_compiled() -> None:
    """7x6's kernel compiled before the first test, as a wheel ships it: an engine
    that finds it uncompiled (a fresh checkout's first start) compiles it in another
    process and answers meanwhile without its search (protocol.md, ``isready``),
    which the tests of searches are not about.  The tests of that start give the
    engine empty caches of their own."""
    subprocess.run([sys.executable, "-m", "c4engine", "warm-up", "--board", "7x6"], check=True,
                   stdout=subprocess.DEVNULL, timeout=TEST_SECONDS)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None,
                            ) -> Generator[None, object, object]:
    """A test still running after TEST_SECONDS fails, after the stacks of all threads
    are printed to show where it waited.  The failure is raised by SIGALRM's handler
    in the main thread, where the tests run; a wait inside a C extension sees it
    only when it returns to Python, which is why c4engine's waits on Ray are sliced."""
    def expired(_signum: int, _frame: object) -> None:
        faulthandler.dump_traceback(all_threads=True)
        pytest.fail(f"{item.nodeid} still running after {TEST_SECONDS:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, TEST_SECONDS)
    try:
        return (yield)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def shared_engine() -> Iterator[EngineProcess]:
    """One real engine process for a test module (its standard error goes to a file).
    When it closes, everything it wrote, anything still pending included, must have
    been a line the protocol allows (``protocol_grammar.py``), and its standard error
    must be empty."""
    proc = start_engine()
    yield proc
    try:
        proc.assert_clean()
    finally:
        proc.close()


@pytest.fixture
def engine(shared_engine: EngineProcess) -> EngineProcess:
    """The shared process with no search running, default options, an empty table and
    the start position.  Tests that end the process or need a pristine one start
    their own."""
    for line in ("stop", "setoption name MultiPV value 1", "setoption name OwnBook value true",
                 "setoption name BookFile value <empty>", "setoption name Evaluation value ntuple",
                 "setoption name Move Overhead value 30", "ucinewgame", "position startpos"):
        shared_engine.send(line)
    shared_engine.sync()
    return shared_engine


@pytest.fixture(scope="module")
def cfour_engine() -> Iterator[EngineProcess]:
    """A process switched to the cutechess variant, for a module of cfour tests."""
    proc = start_engine()
    proc.send("setoption name UCI_Variant value cfour")
    assert proc.sync() == []
    yield proc
    try:
        proc.assert_clean()
    finally:
        proc.close()
