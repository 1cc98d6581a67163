"""End-to-end tests of the protocol process, the process under stress: pipes nobody reads, readers that go, memory refused, threads that must not leak.

The real ``c4engine`` process driven with pexpect (``engine_process.py``); the
shared process and its reset are the ``engine`` fixtures of ``conftest.py``;
``protocol.md`` is the contract checked."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from engine_process import (
    DEFAULT_HASH_MB,
    NETWORK_NOTE,
    READY_TIMEOUT,
    Board,
    EngineProcess,
    bestmoves,
    check_bestmove,
    errors,
    infos,
    start_engine,
)
from protocol_grammar import ERROR_RE

# ------------------------------------------------------------------ the process under stress

def pipe_engine(args: list[str] | None = None, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """An engine on plain pipes (a terminal would hide a full or closed stdout)."""
    return subprocess.Popen(args or [sys.executable, "-m", "c4engine"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def thread_count(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no thread count in /proc")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc to count threads")
def test_ponderhit_after_a_stopped_ponder_is_an_error_and_leaks_nothing(engine: EngineProcess) -> None:
    """``go ponder`` then ``stop``: the ponder search is over, so each of 200
    ``ponderhit``s gets an error, no bestmove, and the thread count stays flat."""
    engine.send("position startpos moves 4453")
    engine.send("go ponder wtime 1000000000 btime 1000000000")
    engine.read_line()
    engine.send("stop")
    check_bestmove(engine.read_until("bestmove")[-1], Board("4453"))
    engine.sync()
    before = thread_count(engine.child.pid)
    for _ in range(200):
        engine.send("ponderhit")
    lines = engine.sync()
    assert len(lines) == 200 and all(ERROR_RE.fullmatch(line) for line in lines), lines[:3]
    assert thread_count(engine.child.pid) <= before


@pytest.mark.parametrize("script", [
    "go\n",
    "go ponder\nponderhit\n",
    "go mate 3\n",
], ids=["plain go", "ponderhit without a clock", "mate only"])
def test_end_of_input_stops_an_unbounded_search(script: str) -> None:
    """At the end of input a search that nothing but ``stop`` would end (here from the
    start without the book, which takes hours) is stopped and answered like ``stop``:
    ``printf '...go\\n' | c4engine`` ends."""
    done = subprocess.run([sys.executable, "-m", "c4engine"], capture_output=True, timeout=60,
                          input=f"setoption name OwnBook value false\nposition startpos\n{script}".encode())
    lines = done.stdout.decode().splitlines()
    assert done.returncode == 0 and done.stderr == b""
    assert len(bestmoves(lines)) == 1
    check_bestmove(lines[-1], Board())


@pytest.mark.parametrize("ending", [b"quit\n", b""], ids=["quit", "end of input"])
def test_a_stdout_nobody_reads_does_not_block_quit(ending: bytes) -> None:
    """Nobody reads the engine's output: 20000 ``d`` fill the pipe many times over, yet
    ``quit`` (or the end of input) is still seen and the process exits with 0."""
    proc = pipe_engine()
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"d\n" * 20000 + ending)
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()


def test_a_reader_gone_mid_search_ends_the_engine_quietly() -> None:
    """The reader closes its end during a long search: the next line the engine writes
    finds the pipe broken, and the process exits with 0 and no traceback."""
    proc = pipe_engine()
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(b"setoption name OwnBook value false\nposition startpos\ngo infinite\n")
        proc.stdin.flush()
        assert proc.stdout.readline().decode() == NETWORK_NOTE + "\n"  # the search's set-up
        assert proc.stdout.readline().startswith(b"info depth")
        proc.stdout.close()
        proc.stdin.write(b"isready\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
        assert proc.stderr.read() == b""
    finally:
        proc.kill()
        proc.wait()


def test_output_never_fails_on_the_terminals_encoding() -> None:
    """``héllo`` echoed in the error to an ASCII-only stdout: escaped, not a crash."""
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    done = subprocess.run([sys.executable, "-m", "c4engine"], input="héllo\nd\n".encode(), env=env,
                          capture_output=True, timeout=60)
    lines = done.stdout.decode("ascii").splitlines()
    assert done.returncode == 0 and done.stderr == b""
    assert lines[0] == "info string error unknown command 'h\\xe9llo'"
    assert lines[-1] == "Moves: (none)"


def test_quit_is_not_kept_waiting_by_a_busy_command() -> None:
    """``bench`` takes seconds and nothing interrupts it; ``isready`` after it waits for
    it as UCI intends, but ``quit`` is read meanwhile and ends the process at once:
    no bench result and no ``readyok`` are written.  Without the book: with it, the
    bench now takes a few tens of milliseconds."""
    proc = start_engine()
    try:
        proc.send("setoption name OwnBook value false")
        handshake = len(proc.transcript)
        proc.send("bench")
        proc.send("isready")
        sent = proc.send("quit")
        assert proc.wait_exit(5.0) == 0
        elapsed = time.perf_counter() - sent
        print(f"\nquit during bench -> exit: {elapsed * 1000:.0f} ms")
        after = proc.transcript[handshake:]
        assert not any(line.startswith(("Nodes searched", "readyok")) for line in after), "quit waited for bench"
        assert elapsed < 3.0
    finally:
        proc.close()


@pytest.mark.parametrize("setup", [[], ["setoption name UCI_Variant value cfour-8x7"]],
                         ids=["start-up", "new board"])
def test_a_go_piped_before_quit_still_gets_its_bestmove(setup: list[str]) -> None:
    """``go`` and ``quit`` piped at once, while the start-up (or a new board's set-up)
    still runs: quit waits for it this time, and the ``go`` is answered as if stopped
    at once, with a legal move, before the process ends with 0 (on 7x6 the move may
    come from the book's solve, which follows depth 1 whatever the limits, with
    its reply to ponder on)."""
    lines = [*setup, "position startpos moves 4", "go depth 5", "quit"]
    done = subprocess.run([sys.executable, "-m", "c4engine"], input="\n".join(lines).encode() + b"\n",
                          capture_output=True, timeout=120)
    out = done.stdout.decode().splitlines()
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    bestmoves = [line for line in out if line.startswith("bestmove")]
    assert len(bestmoves) == 1, out
    assert re.fullmatch(r"bestmove (P@[a-h]\d|[1-7])( ponder (P@[a-h]\d|[1-7]))?", bestmoves[0]), bestmoves


def test_isready_waits_for_a_new_table_then_the_engine_searches() -> None:
    """After ``setoption name Hash value 256`` the ``readyok`` comes once the table is
    built, and the next ``go`` uses it."""
    proc = start_engine()
    try:
        proc.send("setoption name Hash value 256")
        assert proc.sync(60.0) == []
        proc.send("go depth 6")
        check_bestmove(proc.read_until("bestmove")[-1], Board())
        proc.assert_clean()
    finally:
        proc.close()


PRLIMIT = shutil.which("prlimit")


@pytest.mark.skipif(PRLIMIT is None, reason="needs util-linux prlimit to cap the address space")
def test_a_failed_hash_allocation_keeps_the_old_table() -> None:
    """Capped at 1500 MB of address space, ``setoption name Hash value 8192`` cannot be
    allocated: one error saying so, the old table and value are kept, later ``go``s
    work and ``quit`` exits with 0 and nothing on stderr."""
    proc = EngineProcess(PRLIMIT, [f"--as={1500 * 1024 * 1024}", sys.executable, "-m", "c4engine"])
    try:
        proc.send("uci")
        proc.read_until("uciok", READY_TIMEOUT)
        proc.sync(READY_TIMEOUT)
        lines = proc.command("setoption name Hash value 8192")
        assert len(lines) == 1 and re.fullmatch(
            rf"info string error option Hash: not enough memory for 8192 MB; keeping the table of {DEFAULT_HASH_MB} MB",
            lines[0]), lines
        for moves in ("", "4453"):
            proc.send(f"position startpos moves {moves}".strip())
            proc.send("go depth 8")
            lines = proc.read_until("bestmove")
            assert errors(lines) == [], lines
            assert int(infos(lines)[-1]["depth"]) >= 8, "the search ran"
            check_bestmove(lines[-1], Board(moves))
        assert proc.command("setoption name Hash value 32") == []
        proc.assert_clean()
        proc.send("quit")
        assert proc.wait_exit(5.0) == 0
    finally:
        proc.close()
