"""The engine process while a new board's kernel compiles in a child (protocol.md,
``isready``): ``readyok`` at once, search options stored for the build, timed
``go`` answered in time by the interpreter or the rules, the search built once
the child has ended.  The child is a stand-in that runs until the test ends
it, given to 7x6's first build, whose kernel then loads in a second."""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import minimax_oracle as oracle
from c4engine.engine.client import EngineClient
from c4engine.engine.limits import PREPARE_TIMEOUT
from c4engine.geometry import Geometry
from c4engine.protocol.go_params import GoParams
from c4engine.protocol.output import Output
from c4engine.protocol.server import Server
from c4engine.rules.board import Board
from c4engine.rules.variants import built_in
from c4engine.search import kernel_build
from c4engine.search import searcher as searcher_module
from engine_process import EngineProcess

COMPILING_NOTE = ("info string compiling the search for the 7x6 board, new to this installation, in another "
                  "process: until it is ready a timed go is answered by the interpreter's exact solve or by "
                  "the rules")
QUICK_NOTE = "info string the search is not ready yet: a quick move by the rules"


class Engine:
    """A :class:`Server` fed lines in this process, its output kept."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.out = Output(self.stream, lambda: None)
        self.server = Server(self.out)
        self.taken = 0

    def send(self, line: str) -> list[str]:
        """Carry out ``line``; the lines written since the last call."""
        self.server.handle(line, time.perf_counter())
        return self.lines()

    def lines(self) -> list[str]:
        self.out.drain()
        text = self.stream.getvalue()
        new, self.taken = text[self.taken:], len(text)
        return new.splitlines()


@pytest.fixture()
def compiling(monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen[bytes]]:
    """The stand-in child, given to the first build of every engine made meanwhile."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    monkeypatch.setattr(kernel_build, "start_kernel_build", lambda geometry, whole, standard=False: child)
    yield child
    child.kill()
    child.wait()


def end_the_compile(engine: Engine, child: subprocess.Popen[bytes]) -> list[str]:
    """End the stand-in child and wait for the search; the lines its build wrote."""
    child.kill()
    child.wait()
    engine.server.backend_ready()
    return engine.lines()


def near_the_end(seed: int) -> list[int]:
    """0-based moves of a 7x6 position with ten empty cells, still to be played, whose
    mover cannot win at once: the plain minimax solves it in a moment."""
    rng = random.Random(seed)
    while True:
        pos, moves = Board(), []
        while len(moves) < 32 and not pos.is_over() and not pos.can_win_now():
            moves.append(rng.choice(pos.legal_moves()))
            pos = pos.play(moves[-1])
        if len(moves) == 32 and not pos.is_over() and not pos.can_win_now():
            return moves


def oracle_score_of(moves: list[int], column: int | None = None) -> int:
    """The exact score of the position after ``moves`` for its mover, by plain
    minimax; with ``column``, that of playing it."""
    board = oracle.Board.from_moves(7, 6, 4, [col + 1 for col in moves])
    if column is None:
        return oracle.solve(board)
    if board.completes_line(column):
        return oracle.win_score(board)
    board.play(column)
    return 0 if board.is_full() else -oracle.solve(board)


def test_readyok_comes_at_once_and_the_search_once_the_child_has_ended(
        compiling: subprocess.Popen[bytes]) -> None:
    engine = Engine()
    assert engine.send("isready") == [COMPILING_NOTE, "readyok"]
    assert compiling.poll() is None and engine.server.backend is None
    assert engine.send("ucinewgame") == [] and engine.send("isready") == ["readyok"]
    assert engine.server.backend is None
    assert end_the_compile(engine, compiling)[0].startswith("info string evaluation ntuple: ")  # its set-up
    assert engine.send("isready") == ["readyok"] and engine.server.backend is not None
    engine.send("position startpos moves 11223")
    searched = engine.send("go depth 4")
    engine.server.finish_search(stop=False)
    searched += engine.lines()
    assert searched[-1].startswith("bestmove 4") and searched[0].startswith("info depth 1 ")  # the block, searched


def test_a_timed_go_gets_the_interpreters_move_when_it_solves_in_time(
        compiling: subprocess.Popen[bytes]) -> None:
    engine = Engine()
    engine.send("isready")
    for seed in range(3):
        moves = near_the_end(seed)
        engine.send("position startpos moves " + "".join(str(col + 1) for col in moves))
        note, best = engine.send("go movetime 2000")
        score = oracle_score_of(moves)
        assert note == f"info string the search is not ready yet: a move the interpreter solved (score {score})"
        column = int(best.removeprefix("bestmove ")) - 1
        assert oracle_score_of(moves, column) == score, (moves, best)
    assert engine.server.backend is None


def test_a_timed_go_the_interpreter_cannot_solve_in_time_gets_the_rules_move(
        compiling: subprocess.Popen[bytes]) -> None:
    engine = Engine()
    engine.send("isready")
    engine.send("position startpos moves 4455")
    sent = time.perf_counter()
    assert engine.send("go movetime 100") == [QUICK_NOTE, "bestmove 4"]
    assert time.perf_counter() - sent < 0.1 + 0.5  # within its time, give or take a busy machine


def test_an_untimed_go_waits_for_the_search_without_holding_the_commands_up(
        compiling: subprocess.Popen[bytes]) -> None:
    """``go infinite`` while compiling: ``isready`` and ``stop`` are carried out at once
    (a page stopping its analysis), the ``stop`` answered by the rules, as is a
    ``go depth`` that the next ``go`` stops; an ``infinite`` started meanwhile
    searches once the search is built, until ``stop``."""
    engine = Engine()
    engine.send("isready")
    engine.send("position startpos moves 112233")
    assert engine.send("go infinite") == [] and engine.send("isready") == ["readyok"]
    stopped = engine.send("stop")
    engine.server.finish_search(stop=False)
    assert stopped + engine.lines() == [QUICK_NOTE, "bestmove 4"]  # the win
    engine.send("position startpos moves 11223")
    assert engine.send("go depth 4") == []
    assert engine.send("go infinite") == [QUICK_NOTE, "bestmove 4"]  # the depth go stopped first: the block
    searched = end_the_compile(engine, compiling)
    time.sleep(0.3)
    searched += engine.send("stop")
    engine.server.finish_search(stop=True)
    searched += engine.lines()
    assert any(line.startswith("info depth") for line in searched) and searched[-1].startswith("bestmove 4")


def test_search_options_set_meanwhile_are_stored_and_taken_by_the_search(
        compiling: subprocess.Popen[bytes]) -> None:
    engine = Engine()
    engine.send("isready")
    assert engine.send("setoption name Hash value 32") == [] and engine.send("setoption name Threads value 2") == []
    assert engine.server.backend is None
    end_the_compile(engine, compiling)
    searcher = engine.server.backend_ready().searcher
    assert (searcher.hash_mb, len(searcher.threads)) == (32, 2)


def test_a_table_the_search_cannot_have_is_refused_when_it_is_built(
        compiling: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with memory for 16 MB of table but not 64: the ``Hash`` stored
    meanwhile is said refused once the search is built, and is 16 again, as a
    ``setoption`` refused at once leaves it."""
    allocate = searcher_module.allocate_zeros

    def short_of_memory(words: int) -> np.ndarray:
        if words * 8 > 40 << 20:
            raise MemoryError
        return allocate(words)
    monkeypatch.setattr(searcher_module, "allocate_zeros", short_of_memory)
    engine = Engine()
    engine.send("isready")
    assert engine.send("setoption name Hash value 64") == []
    errors = [line for line in end_the_compile(engine, compiling) if line.startswith("info string error")]
    assert errors == ["info string error options Hash, set while the search compiled, refused: not enough "
                      "memory for the search on the 7x6 board; keeping their values from before"]
    assert engine.server.options.number("Hash") == 16 and engine.server.backend_ready().searcher.hash_mb == 16


@pytest.mark.slow
def test_a_real_engine_on_a_new_board_is_ready_at_once_and_searches_once_compiled(tmp_path: Path) -> None:
    """The real process with an empty kernel cache on 6x5: ``readyok`` before the
    search's set-up lines (before the change they came first, after the compile),
    within a generous ceiling; a timed ``go`` answered by the interpreter; an
    untimed one by the search, once compiled."""
    env = dict(os.environ, C4ENGINE_KERNEL_CACHE=str(tmp_path))
    proc = EngineProcess(env=env)
    try:
        proc.send("uci")
        proc.read_until("uciok")
        proc.send("setoption name UCI_Variant value cfour-6x5")
        sent = proc.send("isready")
        lines = proc.read_until("readyok", 120.0)
        waited = time.perf_counter() - sent
        print(f"\nempty kernel cache, 6x5: readyok {waited:.2f} s after isready")
        assert lines == [COMPILING_NOTE.replace("7x6", "6x5"), "readyok"] and waited < 10.0
        proc.send("position startpos moves P@b1 P@f1 P@e1 P@c1 P@c2 P@d1 P@f2 P@d2 P@b2 P@a1 P@f3 P@a2 P@d3 P@c3")
        proc.send("go movetime 1000")
        assert proc.read_until("bestmove") == [
            "info string the search is not ready yet: a move the interpreter solved (score 1)", "bestmove P@b3"]
        proc.send("go depth 8")
        lines = proc.read_until("bestmove", 300.0)
        assert lines[0] == "info string no opening book for the 6x5 board (the book covers 7x6)"
        assert " score mate 8 " in lines[-2] and lines[-1] == "bestmove P@e2", lines
    finally:
        proc.close()


@pytest.mark.slow
def test_the_client_starts_a_c4engine_on_a_new_board_when_it_can_search(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``EngineClient.setup`` ends with c4engine's search built, so that a referee's,
    a reviewer's or a grader's first timed move is searched: it has depth lines,
    where the rules' quick move, what it got before the untimed ``go``, has none."""
    monkeypatch.setenv("C4ENGINE_KERNEL_CACHE", str(tmp_path))
    client = EngineClient([sys.executable, "-m", "c4engine"])
    try:
        client.start()
        client.setup(startup_timeout=PREPARE_TIMEOUT, variant=built_in(Geometry(5, 4)))
        client.position([3, 3])
        result = client.go(GoParams(movetime=100), timeout=30.0)
        assert result.info.get("depth", 0) >= 1, result
    finally:
        client.quit()


@pytest.mark.slow
def test_a_checkouts_first_start_on_7x6_is_ready_at_once(tmp_path: Path) -> None:
    """7x6 with no shipped kernel (this checkout) and empty caches, as where the
    wheel's kernel does not fit: its kernel compiles in a child too, and
    ``readyok`` does not wait (cutechess would kill an engine silent for 15 s)."""
    env = dict(os.environ, C4ENGINE_KERNEL_CACHE=str(tmp_path / "kernels"), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    proc = EngineProcess(env=env)
    try:
        proc.send("uci")
        proc.read_until("uciok")
        sent = proc.send("isready")
        lines = proc.read_until("readyok", 120.0)
        print(f"\nempty caches, 7x6: readyok {time.perf_counter() - sent:.2f} s after isready")
        assert lines == [COMPILING_NOTE, "readyok"]
        proc.send("position startpos moves 4444")
        proc.send("go depth 3")
        assert proc.read_until("bestmove", 300.0)[-1].startswith("bestmove 4")
    finally:
        proc.close()
