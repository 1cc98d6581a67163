"""``c4engine.engine``: parsing what engines say, the process client, and the public
``SimpleEngine`` against c4engine and against engines that crash, stall and babble."""

from __future__ import annotations

import io
import sys
import threading
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pytest
from engine_process import ended_within

from c4engine import Position
from c4engine.engine.client import EngineClient, EngineDied, EngineError, EngineTimeout
from c4engine.engine.process import EngineEnded
from c4engine.engine.limits import (
    READY_SECONDS_PER_GIB,
    SEARCH_GRACE,
    Limit,
    SearchResult,
    hash_ready_seconds,
)
from c4engine.engine.info import (
    MAX_NUMBER,
    Score,
    collect_lines,
    engine_move,
    merge_info,
    move_column,
    parse_info,
    parse_number,
)
from c4engine.engine.simple import SimpleEngine
from c4engine.geometry import Geometry
from c4engine.protocol.go_params import GoParams
from c4engine.protocol.lines import bounded_lines
from c4engine.rules.board import RulesError
from c4engine.rules.notation import parse_digits, to_fen

TESTS = Path(__file__).resolve().parent
SIMPLE = f"{sys.executable} {TESTS / 'engines' / 'simple_engine.py'}"
REAL = f"{sys.executable} -m c4engine"


def misbehaving(mode: str, arg: str = "") -> str:
    return f"{sys.executable} {TESTS / 'engines' / 'misbehaving_engine.py'} {mode} {arg}".rstrip()


@dataclass(frozen=True)
class StandIn:
    """The two attributes the client reads of a position, without c4engine.Position's
    checks: a client must refuse what a duck-typed position may hold."""

    moves: tuple[int, ...] = ()
    start_fen: str | None = None


# -- numbers and info lines -------------------------------------------------


@pytest.mark.parametrize("text, value", [("0", 0), ("-35", -35), ("12345", 12345),
                                         (str(MAX_NUMBER), MAX_NUMBER)])
def test_numbers_engines_may_send(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["", "-", "+2", "1_0", "٣", "1.5", " 7", "9" * 400,
                                  str(MAX_NUMBER + 1), "-" + "9" * 20])
def test_numbers_refused(text):
    with pytest.raises(ValueError):
        parse_number(text)


def test_parse_info_fields():
    line = ("info depth 12 seldepth 20 multipv 2 score cp -35 lowerbound nodes 12345 "
            "nps 99 hashfull 3 time 103 pv 4 4 5")
    assert parse_info(line) == dict(depth=12, seldepth=20, multipv=2, score=Score("cp", -35),
                                    lowerbound=True, nodes=12345, nps=99, hashfull=3,
                                    time=0.103, pv=[4, 4, 5])
    assert parse_info("info depth 9 score mate -3 upperbound pv P@d1 P@c1") == \
        dict(depth=9, score=Score("mate", -3), upperbound=True, pv=[4, 3])
    assert parse_info("info string error: depth 5 is } odd") == dict(string="error: depth 5 is } odd")
    assert parse_info("info depth 3 pv 4 banana 5") == dict(depth=3, pv=[4])


@pytest.mark.parametrize("line", ["info depth x", "info depth", "info score cp",
                                  "info score furlongs 3", f"info score cp {'9' * 400}",
                                  "info nodes ٣٣", "info depth +5", "info currmove Q@z9"])
def test_malformed_info_lines_are_refused(line):
    with pytest.raises(ValueError):
        parse_info(line)


@pytest.mark.parametrize("board, possible, impossible", [
    (parse_digits(""), [1, 21, -1, -21], [0, 22, -22, 99999, -99999]),
    (parse_digits("4453"), [19, -19], [20, -20]),  # 38 cells left: 19 stones each
    (parse_digits("44537"), [19, -18], [20, -19]),  # 37 left: the mover plays the last
    (parse_digits("", Geometry(5, 4)), [10, -10], [11, -11, 21]),
])
def test_a_mate_no_game_from_the_position_can_have_is_refused(board, possible, impossible):
    """A mate beyond the stones left on the board (or mate 0: no search starts from a
    finished game) is refused like any malformed line, bound or not."""
    for moves in possible:
        assert parse_info(f"info depth 9 score mate {moves} pv 4", board)["score"] == Score("mate", moves)
    for moves in impossible:
        for bound in ("", " lowerbound", " upperbound"):
            with pytest.raises(ValueError, match="impossible mate"):
                parse_info(f"info depth 9 score mate {moves}{bound} pv 4", board)
    lines = collect_lines([f"info depth 9 score mate {impossible[0]} pv 1", "info depth 8 score cp 3 pv 2"], board)
    assert lines == (dict(depth=8, score=Score("cp", 3), pv=[2]),)


def test_mate_0_is_refused_without_a_board():
    with pytest.raises(ValueError, match="impossible mate"):
        parse_info("info depth 9 score mate 0 pv 4")
    assert parse_info("info depth 9 score mate 99999 pv 4")["score"] == Score("mate", 99999)


def test_later_info_lines_update_only_what_they_carry():
    first = parse_info("info depth 5 score cp 20 lowerbound nodes 100 time 5 pv 4")
    assert merge_info(first, parse_info("info nodes 900 time 40")) == \
        dict(depth=5, score=Score("cp", 20), lowerbound=True, nodes=900, time=0.04, pv=[4])
    exact = merge_info(first, parse_info("info depth 6 score cp 15 pv 3"))
    assert "lowerbound" not in exact and exact["score"] == Score("cp", 15)


def test_multipv_lines_are_kept_apart():
    """The issue's bug: with MultiPV 3 the third line's PV and score became the move's."""
    lines = collect_lines([
        "info depth 1 multipv 1 score cp 30 pv 4",
        "info depth 1 multipv 2 score cp 10 pv 3",
        "info depth 1 multipv 3 score mate -2 upperbound pv 1",
        "info depth 2 multipv 1 score cp 25 pv 4 4",
        "info depth 2 multipv 2 score cp 5 pv 3 4",
        "info depth 2 multipv 3 score cp -50 pv 1 4",
        "info depth 2 multipv x garbage",
        "info string multipv 1 pv 7",
        "info nodes 500 time 9",
    ])
    assert [(i["multipv"], i["score"], i["pv"]) for i in lines] == [
        (1, Score("cp", 25), [4, 4]), (2, Score("cp", 5), [3, 4]), (3, Score("cp", -50), [1, 4])]
    assert lines[0]["nodes"] == 500 and "upperbound" not in lines[2]
    only_second = SearchResult("3", collect_lines(["info multipv 2 score cp 5 pv 3"]))
    assert only_second.info == {}


def test_limit_in_seconds_becomes_a_go_command_in_ms():
    assert Limit(time=0.25, depth=4).go_params().command() == "go depth 4 movetime 250"
    assert Limit(mate=3, white_clock=1, remaining_moves=5).go_params() == \
        GoParams(mate=3, wtime=1000, movestogo=5)
    assert Limit(white_clock=2, black_clock=1.5, white_inc=0.1, black_inc=0.1).go_params() == \
        GoParams(wtime=2000, btime=1500, winc=100, binc=100)
    for bad in (Limit(time=float("inf")), Limit(white_clock=float("nan")), Limit(depth=0),
                Limit(time=1e30)):
        with pytest.raises(ValueError):
            bad.go_params()
    assert Limit(nodes=10).timeout(0) == 60.0 and Limit(time=1, black_clock=0.5).timeout(1) == 5.5


def test_moves_must_come_in_the_notation_the_engine_was_told():
    pos = parse_digits("44")
    assert engine_move("P@d3", pos, drops=True) == 3
    assert engine_move("4", pos, drops=False) == 3
    with pytest.raises(RulesError, match="after UCI_Variant a move is a drop"):
        engine_move("4", pos, drops=True)
    with pytest.raises(RulesError, match="without UCI_Variant a move is a column 1-7"):
        engine_move("P@d3", pos, drops=False)
    with pytest.raises(RulesError, match="lands on rank 3"):
        engine_move("P@d1", pos, drops=True)
    with pytest.raises(RulesError, match="full"):
        engine_move("1", parse_digits("111111"), drops=False)
    with pytest.raises(RulesError, match="no move given"):
        engine_move("(none)", pos, drops=True)


def test_a_large_hash_gets_more_time_for_readyok():
    assert hash_ready_seconds([("Hash", "8192")]) == pytest.approx(8 * READY_SECONDS_PER_GIB)
    assert hash_ready_seconds([("Threads", "2")]) == 0.0
    assert hash_ready_seconds([("Hash", "lots")]) == 0.0


# -- the process client -------------------------------------------------------


def test_a_line_that_came_in_time_counts_though_the_caller_wakes_late():
    """On a loaded machine the thread that waits for ``bestmove`` may wake after its
    deadline: the answer the reading thread stamped before it still counts (the
    referee forfeited such games as 'no move in 50 ms'); one stamped after does not."""
    client = EngineClient("unused")
    deadline = time.monotonic() - 0.01  # already past when the caller looks
    client._lines.put((deadline - 0.005, "bestmove 4"))
    assert client._next(deadline, "bestmove", 0.05) == (deadline - 0.005, "bestmove 4")
    client._lines.put((deadline + 0.005, "bestmove 4"))
    with pytest.raises(EngineTimeout, match="no bestmove within 0.05 s"):
        client._next(deadline, "bestmove", 0.05)
    with pytest.raises(EngineTimeout, match="no bestmove within 0.05 s"):
        client._next(deadline, "bestmove", 0.05)


def test_client_talks_to_an_engine_and_notices_its_death():
    client = EngineClient(misbehaving("crash"))
    client.start()
    try:
        assert client.id_name == "simple" and client.supports_variant("cfour")
        assert not client.supports_variant("chess")
        client.setup()
        assert client.drops
        with pytest.raises(EngineTimeout, match="no output within 0.05 s"):
            client.read_line(0.05)
        client.position([4])
        with pytest.raises(EngineDied, match="exited with code 3.*crashing on purpose"):
            client.go(GoParams(depth=1), timeout=5)
        assert not client.alive
        client.start()  # a restart
        assert client.alive
    finally:
        client.quit()
    assert not client.alive


def test_client_search_result():
    client = EngineClient(SIMPLE)
    client.start()
    try:
        client.setup()
        assert client.position([4, 4]) == parse_digits("44")
        result = client.go(GoParams(depth=1), timeout=5)
        assert result.bestmove == "P@a1"
        assert result.info == dict(depth=1, score=Score("cp", 0), nodes=1, time=0.0, pv=[1])
        assert 0 <= result.elapsed < 5
    finally:
        client.quit()


def test_a_bestmove_that_answers_no_go_is_discarded():
    """Issue 10, item 2: a second bestmove must not answer the next go."""
    client = EngineClient(misbehaving("double"), name="double")
    client.start()
    try:
        client.setup()
        client.position([])
        first = client.go(GoParams(depth=1), timeout=5)
        client.position([1])  # at once: the second bestmove may not have arrived yet
        second = client.go(GoParams(depth=1), timeout=5)
        assert (first.bestmove, second.bestmove) == ("P@a1", "P@a2")
        assert client.stale_bestmoves == 1
        assert second.elapsed >= 0
    finally:
        client.quit()


def test_bounded_lines_drop_a_line_over_the_limit_as_soon_as_it_is_one():
    stream = io.BytesIO(b"ok\n" + b"x" * 9 + b"\n" + b"y" * 8 + b"\n" + b"z" * 30 + b"\nend")
    lines = bounded_lines(stream, limit=8)
    assert next(lines) == b"ok\n"
    assert next(lines) is None
    assert next(lines) == b"y" * 8 + b"\n"
    assert next(lines) is None
    assert stream.tell() == 3 + 10 + 9 + 9  # told before the rest of the line was read
    assert list(lines) == [b"end"]


def traced_peak(action) -> int:
    """The most memory Python objects held while ``action`` ran (all threads)."""
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_line_over_64_kib_is_dropped_and_counted_in_bounded_memory():
    """Issue 19, item 1: the client read an engine's line whole, whatever its length."""
    client = EngineClient(misbehaving("longline", "32"))
    client.start()
    try:
        client.setup()
        client.position([])
        result: list[SearchResult] = []
        peak = traced_peak(lambda: result.append(client.go(GoParams(depth=1), timeout=20)))
        assert peak < 4 << 20  # the line is 32 MiB
        assert result[0].bestmove == "P@a1"
        assert client.dropped_lines == 1
    finally:
        client.quit()


def test_an_engine_that_floods_waits_for_the_client_to_read():
    """Issue 19, item 1: 16 MiB of info lines queued up while the caller did not read."""
    client = EngineClient(misbehaving("flood", "16"))
    client.start()
    try:
        client.setup()
        client.position([])
        client.send("go depth 1")
        peak = traced_peak(lambda: time.sleep(1.5))
        assert peak < 4 << 20
        while not client.read_line(10).startswith("bestmove"):
            pass
    finally:
        client.quit()


def test_a_reader_that_fails_ends_the_output_not_its_thread(monkeypatch):
    """Issue 19, item 1: under a memory cap the reader thread died of MemoryError
    with a traceback, and the client waited for the lines it would never read."""
    def failing(_stream):
        raise MemoryError
        yield b""
    died: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", died.append)
    monkeypatch.setattr("c4engine.engine.process.bounded_lines", failing)
    client = EngineClient(SIMPLE)
    began = time.monotonic()
    with pytest.raises(EngineDied, match=r"its output could not be read \(MemoryError"):
        client.start(timeout=10)
    assert time.monotonic() - began < 3
    assert not client.alive and not died


def test_an_engine_whose_child_holds_its_output_is_seen_dead_and_the_child_ended(tmp_path):
    """Issue 10, item 5: the engine exits, its child keeps the pipe open."""
    pid_file = tmp_path / "child.pid"
    client = EngineClient(misbehaving("orphan", str(pid_file)))
    client.start()
    client.setup()
    client.position([])
    began = time.monotonic()
    with pytest.raises(EngineDied, match="exited with code 3"):
        client.go(GoParams(depth=1), timeout=20)
    assert time.monotonic() - began < 10
    assert ended_within(int(pid_file.read_text()), 5.0)
    client.quit()


def test_readyok_waits_longer_for_a_large_hash():
    """Issue 10, item 6: a slow readyok (1 s here) fails a short limit, and passes when
    the engine was given a Hash whose allocation explains it."""
    client = EngineClient(misbehaving("slowready", "1.0"))
    client.start()
    try:
        with pytest.raises(EngineTimeout, match="no readyok within 0.3 s"):
            client.setup(ready_timeout=0.3, startup_timeout=0.3)
        client.start()
        client.setup([("Hash", "1024")], ready_timeout=0.3, startup_timeout=0.3)
        assert client.ready_timeout == pytest.approx(0.3 + READY_SECONDS_PER_GIB)
    finally:
        client.quit()


def test_the_first_readyok_may_take_the_start_up_time():
    """The first readyok ends the engine's start-up (c4engine compiles its kernel on a
    first start), so it gets ``startup_timeout``; a later one only ``ready_timeout``."""
    client = EngineClient(misbehaving("slowready", "1.0"))
    client.start()
    try:
        client.setup(ready_timeout=0.3, startup_timeout=5.0)
        with pytest.raises(EngineTimeout, match="no readyok within 0.3 s"):
            client.is_ready()
    finally:
        client.quit()


# -- the public client ----------------------------------------------------------


def test_simple_engine_plays_and_quits_as_a_context_manager():
    with SimpleEngine.popen(SIMPLE) as engine:
        assert engine.id == {"name": "simple"}
        result = engine.play(Position.from_moves("44"), Limit(depth=1))
        assert result.move == 1 and result.info["pv"] == [1]
        engine.configure({"uci_variant": "cfour"})
        assert engine.configured["uci_variant"] == "cfour"
        process = engine.client
    assert not process.alive


def test_simple_engine_reports_a_crash_and_a_stall_within_the_limit():
    with SimpleEngine.popen(misbehaving("crash")) as engine:
        with pytest.raises(EngineDied, match="crashing on purpose"):
            engine.play(Position(), Limit(depth=1))
    with SimpleEngine.popen(misbehaving("stall")) as engine:
        began = time.monotonic()
        with pytest.raises(EngineTimeout):
            engine.play(Position(), Limit(time=0.05), timeout=0.5)
        assert time.monotonic() - began < 3


@pytest.mark.parametrize("mode", ["deaf", "babble"])
def test_simple_engine_ends_an_engine_still_deaf_after_a_timeout(mode):
    """It answers neither the search nor the isready after it, silent or flooding its
    output with info lines: not a slow move (EngineTimeout) nor a crash (EngineDied)
    but an engine the client ended (EngineEnded), its process gone, all within the
    wait asked for (issue 19, item 6: the isready had 15 s more)."""
    with SimpleEngine.popen(misbehaving(mode)) as engine:
        began = time.monotonic()
        with pytest.raises(EngineEnded, match=r"no readyok within [\d.]+ s after stop .*the client ended the engine") \
                as ended:
            engine.play(Position(), Limit(time=0.05), timeout=1.0)
        assert time.monotonic() - began < 1.0 + 0.5
        assert not engine.client.alive
        assert not isinstance(ended.value, (EngineDied, EngineTimeout))


def test_simple_engine_waits_its_time_limit_plus_the_grace_and_no_more():
    """Issue 19, item 6: Limit(time=0.5) against a deaf engine blocked 20.5 s."""
    with SimpleEngine.popen(misbehaving("deaf")) as engine:
        began = time.monotonic()
        with pytest.raises(EngineEnded):
            engine.play(Position(), Limit(time=0.5))
        assert time.monotonic() - began < 0.5 + SEARCH_GRACE + 0.5


def test_simple_engine_waits_its_start_up_timeout_for_the_first_readyok():
    """Issue 19, item 6: popen(timeout=1) waited 15 s (the later readyok's limit)."""
    began = time.monotonic()
    with pytest.raises(EngineTimeout, match="no readyok within 1 s"):
        SimpleEngine.popen(misbehaving("slowready", "30"), timeout=1)
    assert time.monotonic() - began < 3


def test_simple_engine_that_never_completes_the_handshake_is_an_error():
    began = time.monotonic()
    with pytest.raises(EngineTimeout, match="no uciok within 0.5 s"):
        SimpleEngine.popen(misbehaving("silent"), timeout=0.5)
    assert time.monotonic() - began < 3


def test_simple_engine_refuses_an_illegal_move():
    with SimpleEngine.popen(misbehaving("illegal")) as engine:
        with pytest.raises(EngineError, match="illegal bestmove"):
            engine.play(Position(), Limit(depth=1))
    with SimpleEngine.popen(misbehaving("wrongnotation")) as engine:
        with pytest.raises(EngineError, match="a move is a drop"):
            engine.play(Position(), Limit(depth=1))


def test_simple_engine_ignores_malformed_info_lines():
    with SimpleEngine.popen(misbehaving("garbage")) as engine:
        result = engine.play(Position.from_moves("4"), Limit(depth=1))
    assert result.move == 1
    assert result.info == dict(depth=4, score=Score("mate", 2), lowerbound=True, nodes=40,
                               time=0.007, pv=[1])


def test_simple_engine_analyse_keeps_multipv_lines_apart():
    with SimpleEngine.popen(misbehaving("multipv")) as engine:
        lines = engine.analyse(Position.from_moves("111111"), Limit(depth=2), multipv=3)
        single = engine.analyse(Position(), Limit(depth=2))
    assert [(i["multipv"], i["score"], i["pv"], i["depth"]) for i in lines] == [
        (1, Score("cp", -10), [2], 2), (2, Score("cp", -20), [3], 2), (3, Score("cp", -30), [4], 2)]
    assert single["pv"] == [1] and single["nodes"] == 99


def test_simple_engine_sends_the_start_fen_and_the_moves():
    start = parse_digits("4444")
    with SimpleEngine.popen(SIMPLE) as engine:
        result = engine.play(Position.from_fen(to_fen(start)).play(1).play(2), Limit(depth=1))
        assert result.move == 1
        with pytest.raises(EngineError, match="cannot send the position"):
            engine.play(StandIn((4,) * 7), Limit(depth=1))


def strength(score: Score) -> tuple[int, int]:
    """A key that orders scores from the mover's side: wins (sooner first), heuristic
    values, losses (later first)."""
    if score.kind == "cp":
        return (1, score.value)
    return (2, -score.value) if score.value > 0 else (0, -score.value)


def test_real_c4engine_multipv_lines_belong_together():
    """MultiPV 3 against c4engine: three lines numbered 1-3, best first, each its own
    PV; the move played is the first line's."""
    position = Position.from_moves("4")
    with SimpleEngine.popen(REAL, ready_timeout=180) as engine:
        lines = engine.analyse(position, Limit(depth=6), multipv=3)
        assert [line["multipv"] for line in lines] == [1, 2, 3]
        assert len({line["pv"][0] for line in lines}) == 3
        values = [strength(line["score"]) for line in lines]
        assert values == sorted(values, reverse=True)
        engine.configure({"MultiPV": 3})
        engine.client.position(position.moves)
        answer = engine.client.go(GoParams(depth=6), timeout=60)
        assert engine_move(answer.bestmove, parse_digits("4"), True) + 1 == \
            answer.lines[0]["pv"][0]
        assert [line["multipv"] for line in answer.lines] == [1, 2, 3]
        played = engine.play(position, Limit(depth=6))
        assert played.move == played.info["pv"][0]


def test_real_c4engine_bounds_stay_bounds():
    """Issue 9: a bound was reported as an exact mate.  Here c4engine proves the loss
    at depth 4 without its distance: ``mate -1 upperbound`` (lost in at most one)."""
    with SimpleEngine.popen(REAL, ready_timeout=180, options={"OwnBook": False}) as engine:
        info = engine.analyse(Position.from_moves("4455443"), Limit(depth=4))
    assert info["score"] == Score("mate", -1) and info.get("upperbound") is True
    assert "lowerbound" not in info


@pytest.mark.parametrize("options, refusal", [({"Hash": 0}, "option Hash: 0 is outside"),
                                               ({"Nope": 1}, "no option named 'Nope'")])
def test_an_option_the_engine_refuses_is_an_engine_error(options, refusal):
    """``c4engine strength --option Hash=0`` ran with the default table and said
    nothing: the engine's ``info string error`` on a ``setoption`` of the start-up
    was dropped with the other lines before ``readyok``.  It ends the start instead."""
    with pytest.raises(EngineError, match=refusal):
        SimpleEngine.popen(REAL, ready_timeout=180, options=options)


def test_an_option_the_engine_does_not_list_is_an_engine_error_before_it_is_sent(tmp_path):
    """Engines answer a ``setoption`` they do not know in their own words (Stockfish's
    ``No such option``) or not at all, so the client goes by the ``uci`` list, as
    python-chess does: neither ``popen`` nor ``configure`` sends such an option."""
    log = tmp_path / "log"
    recording = f"{sys.executable} {TESTS / 'engines' / 'recording_engine.py'} {log}"
    with pytest.raises(EngineError, match="no option named 'Hash' \\(it lists: UCI_Variant\\)"):
        SimpleEngine.popen(SIMPLE, options={"Hash": 16})
    with SimpleEngine.popen(recording) as engine:
        with pytest.raises(EngineError, match="no option named 'Ponder'"):
            engine.configure({"UCI_Variant": "cfour", "Ponder": False})
        assert engine.configured == {}
        engine.quit()
    assert [line for line in log.read_text().splitlines() if line.startswith("setoption")] == [
        "setoption name UCI_Variant value cfour"]  # the start's, none of configure's


def test_configure_with_an_option_the_engine_refuses_is_an_engine_error():
    """``configure`` after the start: the refusal is raised, and ``configured`` keeps
    what the engine really has."""
    with SimpleEngine.popen(REAL, ready_timeout=180) as engine:
        with pytest.raises(EngineError, match="option MultiPV: 99 is outside"):
            engine.configure({"MultiPV": 99})
        assert "MultiPV" not in engine.configured
        engine.configure({"MultiPV": 2})
        assert engine.configured["MultiPV"] == "2"


@pytest.mark.parametrize("token", ["P@d٣", "P@d３", "P@d²", "٤"])
def test_a_move_with_digits_other_than_ascii_is_no_move(token):
    """Issue 27: the protocol writes ranks and columns in ASCII digits only, so a
    drop or digit in another script is no move an engine can mean."""
    with pytest.raises(ValueError):
        move_column(token)
