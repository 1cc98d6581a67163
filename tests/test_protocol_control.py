"""End-to-end tests of the protocol process, stopping and waiting: `stop`, `isready` mid-search, `quit`, the end of input, `ponder`.

The real ``c4engine`` process driven with pexpect (``engine_process.py``); the
shared process and its reset are the ``engine`` fixtures of ``conftest.py``;
``protocol.md`` is the contract checked."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from engine_process import (
    HEIGHT,
    WIDTH,
    Board,
    EngineProcess,
    bestmove_after,
    bestmoves,
    check_bestmove,
    errors,
    infos,
    score_of,
    start_engine,
    start_long_search,
)
from protocol_grammar import ERROR_RE
from timing import best_of

# ------------------------------------------------------------------ stop, isready, quit, end of input

def test_stop_during_go_infinite_answers_within_50_ms(engine: EngineProcess) -> None:
    """``stop`` during a long ``go infinite``: nothing before it, then the bestmove
    within 50 ms (best of a few tries)."""
    def stop_latency_ms() -> float:
        start_long_search(engine)
        time.sleep(0.2)
        assert bestmoves(engine.sync()) == [], "bestmove before stop under go infinite"
        elapsed_ms, _ = bestmove_after(engine, "stop", Board(), 2.0)
        return elapsed_ms

    best = best_of(stop_latency_ms, within=50)
    print(f"\nstop -> bestmove: {best:.1f} ms (best try)")
    assert best < 50


def test_go_infinite_holds_bestmove_until_stop_even_when_solved(engine: EngineProcess) -> None:
    """With 4 empty cells the search ends by itself at once, yet under ``go infinite``
    the bestmove waits for ``stop`` (UCI), and then follows at once (best of a few
    tries: within 50 ms)."""
    moves = "23163416124767223154467471272416755633"

    def stop_latency_ms() -> float:
        engine.send(f"position startpos moves {moves}")
        engine.send("go infinite")
        lines = engine.read_until(f"info depth {WIDTH * HEIGHT - len(moves)} ")
        assert score_of(infos(lines)[-1]) == ("cp", 0), "solved: a draw"
        engine.expect_quiet(0.3)
        assert bestmoves(engine.sync()) == []
        elapsed_ms, lines = bestmove_after(engine, "stop", Board(moves), 1.0)
        assert lines == [lines[-1]], "only the bestmove was left to write"
        return elapsed_ms

    assert best_of(stop_latency_ms, within=50) < 50


def test_isready_mid_search_is_answered_at_once_and_search_goes_on(engine: EngineProcess) -> None:
    """``isready`` while searching gets ``readyok`` within 100 ms (best of a few), without
    a bestmove, and later iterations still arrive."""
    start_long_search(engine)
    time.sleep(0.3)
    before: list[str] = []

    def readyok_latency_ms() -> float:
        sent = engine.send("isready")
        before.extend(engine.read_until("readyok", 2.0))
        return (time.perf_counter() - sent) * 1000

    best = best_of(readyok_latency_ms, within=100)
    print(f"\nisready mid-search -> readyok: {best:.1f} ms (best try)")
    assert best < 100
    assert bestmoves(before) == []
    deepest = max([int(m["depth"]) for m in infos(before)] + [1])
    later = infos([engine.read_line(8.0)])
    assert later and int(later[0]["depth"]) > deepest, "the search went on"
    engine.send("stop")
    check_bestmove(engine.read_until("bestmove")[-1], Board())


def test_quit_mid_search_writes_bestmove_and_exits_quickly() -> None:
    """``quit`` during a search: the search's bestmove, then the process ends with 0,
    within a second (best of a few tries: a busy machine delays some)."""
    def quit_to_exit_ms() -> float:
        proc = start_engine()
        try:
            start_long_search(proc)
            sent = proc.send("quit")
            lines = proc.read_until("bestmove", 2.0)
            check_bestmove(lines[-1], Board())
            assert proc.wait_exit(5.0) == 0
            return (time.perf_counter() - sent) * 1000
        finally:
            proc.close()

    best = best_of(quit_to_exit_ms, within=1000, tries=3)
    print(f"\nquit mid-search -> exit: {best:.0f} ms (best try)")
    assert best < 1000


def test_end_of_input_lets_a_depth_search_finish() -> None:
    """End of input during ``go depth 8``: the search is not cut short (its depth 8
    iteration is written), then the bestmove, then exit status 0."""
    proc = start_engine()
    try:
        proc.send("setoption name OwnBook value false")
        proc.send("position startpos")
        proc.send("go depth 8")
        proc.child.sendeof()
        lines = proc.read_until("bestmove")
        assert int(infos(lines)[-1]["depth"]) == 8
        check_bestmove(lines[-1], Board())
        assert proc.wait_exit(5.0) == 0
    finally:
        proc.close()


def test_end_of_input_stops_an_infinite_search() -> None:
    """End of input during ``go infinite``: the search is stopped, its bestmove written,
    and the process exits with 0."""
    proc = start_engine()
    try:
        start_long_search(proc)
        sent = time.perf_counter()
        proc.child.sendeof()
        lines = proc.read_until("bestmove", 2.0)
        check_bestmove(lines[-1], Board())
        assert proc.wait_exit(5.0) == 0
        print(f"\nend of input under go infinite -> exit: {(time.perf_counter() - sent) * 1000:.0f} ms")
    finally:
        proc.close()


def test_stop_ends_perft_and_isready_is_answered(engine: EngineProcess) -> None:
    """``perft 10`` (the 7x6 board's deepest) is counted in order with the other
    commands; a ``stop`` read meanwhile ends it at once: the moves counted so far,
    a line that says it stopped, and ``readyok`` for the ``isready`` after it."""
    engine.send("perft 10")
    engine.send("stop")
    lines = engine.sync(2.0)
    assert re.fullmatch(r"info string perft stopped after [0-6] of 7 moves", lines[-1]), lines
    assert engine.command("perft 2")[-1] == "Nodes searched: 49", "a later perft counts in full"


def test_quit_during_perft_ends_the_process_at_once() -> None:
    proc = start_engine()
    try:
        proc.send("perft 10")
        sent = proc.send("quit")
        assert proc.wait_exit(5.0) == 0
        assert (time.perf_counter() - sent) < 2.0  # a loaded machine's margin: perft 10 takes far less
        assert re.fullmatch(r"info string perft stopped after [0-6] of 7 moves", proc.transcript[-1])
    finally:
        proc.close()


def test_a_variants_file_or_book_that_is_not_a_regular_file_is_refused(engine: EngineProcess,
                                                                      tmp_path: Path) -> None:
    """A named pipe with no writer (opening it would wait for one for ever) and a
    directory: one error each, and ``isready`` is answered."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for option in ("VariantPath", "BookFile"):
        for path in (fifo, tmp_path):
            lines = engine.command(f"setoption name {option} value {path}")
            assert len(errors(lines)) == 1 and str(path) in lines[0], lines
            assert lines[0].endswith(": not a regular file"), lines


def test_quit_during_a_long_variants_load_ends_the_process_at_once(tmp_path: Path) -> None:
    """A variants file at the 1 MiB limit takes seconds to read; ``quit`` does not wait."""
    path = tmp_path / "large.ini"
    with path.open("w") as out:
        size = 0
        for number in range(1 << 20):
            section = f"[v{number}:cfour]\n"
            if size + len(section) > 1 << 20:
                break
            out.write(section)
            size += len(section)
    proc = start_engine()
    try:
        proc.send(f"setoption name VariantPath value {path}")
        time.sleep(0.2)
        sent = proc.send("quit")
        assert proc.wait_exit(5.0) == 0
        elapsed = time.perf_counter() - sent
        print(f"\nquit during a 1 MiB variants load -> exit: {elapsed * 1000:.0f} ms")
        assert elapsed < 2.0  # the load itself takes 3 s on a free machine, twice that loaded
    finally:
        proc.close()


# ------------------------------------------------------------------ ponder

def test_ponder_holds_bestmove_until_ponderhit(engine: EngineProcess) -> None:
    """``go ponder`` on a position solved at once: no bestmove while pondering; after
    ``ponderhit`` it comes at once (best of a few tries: within 100 ms)."""
    def ponderhit_latency_ms() -> float:
        engine.send("position startpos moves 4453")
        engine.send("go ponder wtime 1000 btime 1000 winc 10 binc 10")
        engine.read_line()
        time.sleep(0.3)
        assert bestmoves(engine.sync()) == []
        elapsed_ms, _ = bestmove_after(engine, "ponderhit", Board("4453"), 1.0)
        assert engine.sync() == []
        return elapsed_ms

    assert best_of(ponderhit_latency_ms, within=100) < 100


def test_ponderhit_starts_the_clock_of_a_long_search(engine: EngineProcess) -> None:
    """``go ponder`` with a 1 s clock on a long search: it ponders past any budget, and
    after ``ponderhit`` the bestmove comes within the clock's budget (at most half of
    it, plus the pipes: 500 ms, best of three tries)."""
    engine.send("setoption name OwnBook value false")

    def answer_ms() -> float:
        engine.send("ucinewgame")
        engine.send("position startpos")
        engine.send("go ponder wtime 1000 btime 1000")
        time.sleep(0.7)
        assert bestmoves(engine.sync()) == []
        elapsed_ms, _ = bestmove_after(engine, "ponderhit", Board(), 2.0)
        return elapsed_ms

    best = best_of(answer_ms, within=500, tries=3)
    print(f"\nponderhit -> bestmove: {best:.0f} ms (best try)")
    assert best < 500


def test_stop_while_pondering_gives_bestmove(engine: EngineProcess) -> None:
    """A ponder search ended by ``stop`` (the opponent played another move) writes its
    bestmove."""
    engine.send("setoption name OwnBook value false")
    engine.send("go ponder wtime 1000 btime 1000")
    engine.read_line()
    engine.send("stop")
    check_bestmove(engine.read_until("bestmove", 1.0)[-1], Board())


def test_ponderhit_without_ponder_is_an_error(engine: EngineProcess) -> None:
    """``ponderhit`` when idle, and during a search that is not a ponder search: one error
    line each, and the running search is left alone."""
    lines = engine.command("ponderhit")
    assert len(lines) == 1 and ERROR_RE.fullmatch(lines[0])
    start_long_search(engine)
    lines = engine.command("ponderhit")
    assert len(errors(lines)) == 1 and bestmoves(lines) == []
    engine.send("stop")
    check_bestmove(engine.read_until("bestmove")[-1], Board())
