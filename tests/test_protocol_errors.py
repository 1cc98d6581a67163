"""End-to-end tests of the protocol process, bad input: one error per bad command, the last good state kept, commands during a search.

The real ``c4engine`` process driven with pexpect (``engine_process.py``); the
shared process and its reset are the ``engine`` fixtures of ``conftest.py``;
``protocol.md`` is the contract checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_process import (
    DEFAULT_HASH_MB,
    MID_FEN,
    Board,
    EngineProcess,
    bestmoves,
    check_bestmove,
    errors,
    infos,
    start_long_search,
)
from protocol_grammar import ERROR_RE

# ------------------------------------------------------------------ bad input

BAD_COMMANDS = [
    "hello",
    "",
    "go depth x",
    "go depth -1",
    "go depth 0",
    "go depth",
    "go foo",
    "go nodes -5",
    "go movetime -1",
    "go mate -1",
    "setoption name Hash value abc",
    "setoption name MultiPV value 99",
    "setoption name Nope value 1",
    "setoption name Ponder value maybe",
    "setoption name UCI_Variant value chess",
    "setoption foo",
    "position foo",
    "position fen",
    "position startpos moves 1111111",        # a full column
    "position startpos moves 8",               # column 8
    "position startpos moves 0",
    "position startpos moves P@d2",            # a drop on the wrong rank
    "position startpos moves p@d1",            # a lowercase drop
    "position startpos moves P@h1",
    "position startpos moves 12121212",        # a move after the game is over
    "position fen 7/7/7/7/3P3/7 b",            # a floating stone
    "position fen 7/7/7/7/7/PPP4 b",           # counts no game reaches
    "position fen 7/7/7/7/7/3P3 w",            # the wrong side to move
    "position fen 7/7/7/7/7/3P3[PPPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] b",  # hand and board disagree
    "position fen 7/7/7/7/7/PPPPppp b",        # the game is already over
    "position fen 7/7/Pp5/Pp5/Pp5/Pp5 w",      # both sides have four in a row
    "position fen 8/7/7/7/7/7 w",
    "go depth 1_0",                            # numbers: ASCII digits only, no _ or +
    "go depth +2",
    "go depth ٣",
    "go depth 3 depth 4",
    "go mate 0",
    "go searchmoves 4",
    "setoption name Hash value ٣٣",
    "setoption name Hash value +64",
    "position moves 4",
    "position fen 16/7/7/7/7/7 w",             # a run of 16 empty cells
    "ponderhit",
    "perft 0",
    "perft x",
    "debug maybe",
    "bench now",
    "quit now",
]


@pytest.mark.parametrize("bad", BAD_COMMANDS, ids=lambda b: b or "<empty line>")
def test_bad_command_gets_one_error_and_changes_nothing(engine: EngineProcess, bad: str) -> None:
    """Bad input gets exactly one ``info string error`` line that says what is wrong
    (never an internal error), no search and no bestmove, and the engine keeps its
    position (``d`` still shows 4 4 5 3) and its options."""
    engine.send("position startpos moves 4453")
    lines = engine.command(bad)
    assert len(lines) == 1 and ERROR_RE.fullmatch(lines[0]), lines
    assert "internal error" not in lines[0], "bad input must get its real reason"
    engine.expect_quiet(0.05)
    after = engine.command("d")
    assert after[-1] == "Moves: 4 4 5 3"
    assert after[-3] == f"Fen: {MID_FEN}"
    engine.send("go depth 1")
    lines = engine.read_until("bestmove")
    assert {int(m["multipv"]) for m in infos(lines)} == {1}, "MultiPV kept its value"
    check_bestmove(lines[-1], Board("4453"))


def test_over_long_line_is_refused() -> None:
    """A line over 64 KiB gets one error and is not carried out, even though it would be a
    valid command (``position startpos`` padded with blanks).  Sent through a pipe: a
    terminal's line discipline cuts or splits such a line itself, before the engine
    sees it, whatever mode the test asks for."""
    script = (b"position startpos moves 4453\n" + b"position startpos" + b" " * (70 * 1024) + b"\n"
              + b"d\nquit\n")
    done = subprocess.run([sys.executable, "-m", "c4engine"], input=script, capture_output=True,
                          timeout=60, check=True)
    lines = done.stdout.decode().splitlines()
    assert [line for line in lines if ERROR_RE.fullmatch(line)] == [
        "info string error line longer than 65536 bytes ignored"]
    assert lines[-1] == "Moves: 4 4 5 3"


def test_a_search_that_cannot_start_is_said_and_every_go_still_gets_its_bestmove(tmp_path: Path) -> None:
    """numba withheld (a package of that name that fails to import, first on the path):
    ``uci`` and ``d`` still work, and each command that needs the search says why it
    cannot, ``isready`` with its ``readyok`` and ``go`` with ``bestmove (none)``."""
    fake = tmp_path / "numba"
    fake.mkdir()
    (fake / "__init__.py").write_text('raise ImportError("numba withheld")\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    done = subprocess.run([sys.executable, "-m", "c4engine"], input="uci\nisready\ngo depth 2\nd\nquit\n",
                          capture_output=True, text=True, env=env, timeout=60, check=True)
    lines = [line for line in done.stdout.splitlines() if not line.startswith(("id ", "option "))]
    why = "info string error the search could not start: ImportError('numba withheld')"
    assert lines[:5] == ["uciok", why, why, "readyok", why] and lines[5] == "bestmove (none)", lines
    assert lines[-1] == "Moves: (none)"


def test_non_utf8_line_is_refused(engine: EngineProcess) -> None:
    """A line that is not UTF-8 (``d`` with stray bytes, which a lenient decoder would run)
    gets one error and nothing else; the next command works."""
    engine.send("position startpos moves 4453")
    engine.send_bytes(b"d \xff\xfe\xc3\n")
    lines = engine.sync()
    assert len(lines) == 1 and ERROR_RE.fullmatch(lines[0]), lines
    assert engine.command("d")[-1] == "Moves: 4 4 5 3"


def test_unreadable_lines_are_answered_in_their_turn() -> None:
    """Commands are carried out in the order they were sent, and a line that cannot be
    read is one of them: its error follows the answers to the commands before it
    (here an ``isready`` held up by a board being set up), not the moment it was read."""
    script = (b"setoption name UCI_Variant value cfour-5x4\nisready\nd \xff\xfe\n"
              + b"x" * (70 * 1024) + b"\nisready\n")
    done = subprocess.run([sys.executable, "-m", "c4engine"], input=script, capture_output=True,
                          timeout=120, check=True)
    lines = [line for line in done.stdout.decode().splitlines() if line == "readyok" or ERROR_RE.fullmatch(line)]
    assert lines == ["readyok", "info string error line is not valid UTF-8; ignored",
                     "info string error line longer than 65536 bytes ignored", "readyok"]


def test_control_characters_echoed_from_the_input_are_escaped() -> None:
    """An error quotes its input; a NUL (which ends a line for a C reader), an escape
    sequence (which a terminal runs) or a C1 control in it is written as ``\\xNN``.
    Sent through a pipe: a terminal would take DEL as an erase itself."""
    done = subprocess.run([sys.executable, "-m", "c4engine"], input=b"he\x00llo\x1b[2J\x07\xc2\x9b\x7f\n",
                          capture_output=True, timeout=60, check=True)
    assert [line for line in done.stdout.decode().splitlines() if ERROR_RE.fullmatch(line)] == [
        "info string error unknown command 'he\\x00llo\\x1b[2J\\x07\\x9b\\x7f'"]


def test_position_during_search_stops_it_then_takes_the_new_position(engine: EngineProcess) -> None:
    """A refused ``position`` leaves the search running; an accepted one makes it write
    its bestmove (for the old position), and the next search uses the new position."""
    start_long_search(engine)
    lines = engine.command("position startpos moves 8")
    assert len(errors(lines)) == 1 and bestmoves(lines) == [], "a refused position stopped the search"
    engine.send("position startpos moves 1111")
    check_bestmove(engine.read_until("bestmove", 1.0)[-1], Board())
    engine.send("go depth 2")
    lines = engine.read_until("bestmove")
    for m in infos(lines):
        Board("1111").play_line(m["pv"].split(), drops=False)
    check_bestmove(lines[-1], Board("1111"))
    assert engine.command("d")[-1] == "Moves: 1 1 1 1"


def test_go_during_search_gives_one_bestmove_per_go(engine: EngineProcess) -> None:
    """A second ``go`` during a search: the first search's bestmove, then the second's;
    two in all.  A malformed ``go`` in between changes nothing."""
    start_long_search(engine)
    lines = engine.command("go depth x")
    assert len(errors(lines)) == 1 and bestmoves(lines) == []
    engine.send("go depth 3")
    first = engine.read_until("bestmove", 1.0)
    second = engine.read_until("bestmove", 5.0)
    assert [int(m["depth"]) for m in infos(second)] == [1, 2, 3], "the second search, after the first bestmove"
    check_bestmove(first[-1], Board())
    check_bestmove(second[-1], Board())
    assert bestmoves(engine.sync()) == [], "more than one bestmove per go"


@pytest.mark.parametrize("command", ["setoption name MultiPV value 99", "setoption name Hash value x",
                                     "setoption name Nope value 1", "setoption foo", "go depth 0",
                                     "position startpos moves 8"])
def test_refused_command_during_search_leaves_it_running(engine: EngineProcess, command: str) -> None:
    """A refused command changes nothing, a running ``go infinite`` included: one error,
    no bestmove, the search goes on (a deeper iteration comes), and ``stop`` then gets
    its one bestmove."""
    start_long_search(engine)
    lines = engine.command(command)
    assert len(errors(lines)) == 1 and bestmoves(lines) == [], lines
    deepest = max([int(m["depth"]) for m in infos(lines)] + [1])
    later = infos([engine.read_line(8.0)])
    assert later and int(later[0]["depth"]) > deepest, "the search went on"
    engine.send("stop")
    check_bestmove(engine.read_until("bestmove", 2.0)[-1], Board())
    assert bestmoves(engine.sync()) == []


@pytest.mark.parametrize("command", ["setoption name Hash value 16", "ucinewgame"])
def test_setoption_or_ucinewgame_during_search_stops_it(engine: EngineProcess, command: str) -> None:
    """``setoption`` and ``ucinewgame`` stop a running search first: its bestmove comes."""
    start_long_search(engine)
    try:
        engine.send(command)
        check_bestmove(engine.read_until("bestmove", 2.0)[-1], Board())
        assert bestmoves(engine.sync()) == []
    finally:
        engine.send(f"setoption name Hash value {DEFAULT_HASH_MB}")


def test_stop_when_idle_writes_nothing(engine: EngineProcess) -> None:
    """``stop`` with no search is ignored: no output, and the engine still answers."""
    engine.send("stop")
    engine.expect_quiet(0.3)
    assert engine.sync() == []
