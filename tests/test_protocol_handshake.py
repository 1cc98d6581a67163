"""End-to-end tests of the protocol process, the handshake: `uci`, its options as protocol.md lists them, the first start, `isready`.

The real ``c4engine`` process driven with pexpect (``engine_process.py``); the
shared process and its reset are the ``engine`` fixtures of ``conftest.py``;
``protocol.md`` is the contract checked."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from engine_process import NETWORK_NOTE, READY_TIMEOUT, EngineProcess, console_script
from timing import best_of

from c4engine.protocol.options import SPECS, Options

# ------------------------------------------------------------------ handshake

def test_uci_through_console_script_lists_everything_before_uciok() -> None:
    """The installed ``c4engine`` command (what cutechess runs) identifies itself and
    announces every option of options.py, UCI_Variant with ``var cfour`` included,
    before ``uciok``; ``isready`` then gets the network's note and ``readyok``, and
    ``quit`` exits with 0."""
    proc = EngineProcess(console_script(), [])
    try:
        sent = proc.send("uci")
        lines = proc.read_until("uciok", READY_TIMEOUT)
        elapsed = time.perf_counter() - sent
        print(f"\nconsole script: uciok {elapsed * 1000:.0f} ms after uci")
        assert re.fullmatch(r"id name c4engine \S+", lines[0]), lines[0]
        assert re.fullmatch(r"id author \S.*", lines[1]), lines[1]
        options = lines[2:-1]
        assert options == Options().announce()
        variant = next(line for line in options if line.startswith("option name UCI_Variant "))
        assert variant.startswith("option name UCI_Variant type combo default cfour var cfour var ")
        sent = proc.send("isready")
        assert proc.read_until("readyok", READY_TIMEOUT) == [NETWORK_NOTE, "readyok"]  # the search's set-up
        print(f"console script: readyok {(time.perf_counter() - sent) * 1000:.0f} ms after isready")
        proc.send("quit")
        assert proc.wait_exit(5.0) == 0
    finally:
        proc.close()


def test_protocol_md_lists_every_option_as_uci_announces_it() -> None:
    """The contract's ``uci`` example names every option of options.py, in order, as
    the engine announces it, and its table explains each one."""
    text = (Path(__file__).resolve().parents[1] / "protocol.md").read_text()
    listed = [line[2:] for line in text.splitlines() if line.startswith("< option name ")]
    assert listed == Options().announce()
    for spec in SPECS:
        assert f"| `{spec.name}` |" in text, f"protocol.md's option table lacks {spec.name}"


def test_uciok_within_a_second_of_a_fresh_start() -> None:
    """cutechess starts the process and sends ``uci`` at once: ``uciok`` must not wait for
    numba (protocol.md: "answered at once"); within a second, best of three starts."""
    def uciok_seconds() -> float:
        proc = EngineProcess()
        try:
            sent = proc.send("uci")
            lines = proc.read_until("uciok", READY_TIMEOUT)
            elapsed = time.perf_counter() - sent
            assert len(lines) == 2 + len(SPECS) + 1
            assert proc.sync(READY_TIMEOUT) == [NETWORK_NOTE]  # the search's set-up
            return elapsed
        finally:
            proc.close()

    best = best_of(uciok_seconds, within=1.0, tries=3)
    print(f"\nfresh process: uciok {best * 1000:.0f} ms after uci (best try)")
    assert best < 1.0


@pytest.mark.slow
def test_first_start_on_a_cold_numba_cache(tmp_path: Path) -> None:
    """The very first start compiles the kernel (an empty NUMBA_CACHE_DIR forces it):
    ``uciok`` still comes within a second, ``readyok`` within cutechess' 15 s."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    proc = EngineProcess(env=env)
    try:
        sent = proc.send("uci")
        proc.read_until("uciok", READY_TIMEOUT)
        uciok = time.perf_counter() - sent
        sent = proc.send("isready")
        proc.read_until("readyok", 120.0)
        readyok = time.perf_counter() - sent
        print(f"\ncold cache: uciok {uciok * 1000:.0f} ms, readyok {readyok:.1f} s after isready")
        assert uciok < 1.0
        assert readyok < 15.0
    finally:
        proc.close()


QUICK_NOTE = "info string the search is not ready yet: a quick move by the rules"


def test_a_timed_go_before_the_search_is_built_is_answered_in_time() -> None:
    """A fresh process, no ``isready``: a ``go movetime 100`` cannot wait for the search
    to load (a second or more), so the quick tier answers it within its time, with the
    winning move when there is one; the search, built meanwhile, answers the next."""
    proc = EngineProcess()
    try:
        proc.send("position startpos moves 112233")  # the first player has three in a row
        sent = proc.send("go movetime 100")
        lines = proc.read_until("bestmove", READY_TIMEOUT)
        elapsed = time.perf_counter() - sent
        print(f"\nfresh process: go movetime 100 answered in {elapsed * 1000:.0f} ms")
        assert lines == [QUICK_NOTE, "bestmove 4"] and elapsed < 1.0
        proc.send("position startpos moves 11223")
        proc.send("go depth 4")  # no time limit: waits for the search
        lines = proc.read_until("bestmove", READY_TIMEOUT)
        assert QUICK_NOTE not in lines and lines[-1].startswith("bestmove 4"), lines  # the block
    finally:
        proc.close()


def test_isready_answers_readyok(engine: EngineProcess) -> None:
    """``isready`` gets exactly ``readyok`` and nothing else."""
    engine.send("isready")
    assert engine.read_line() == "readyok"
