"""The ``BookFile`` option over the protocol (issue 20): a book built by ``c4engine book
build`` is loaded for the board in play, a book for another board or a broken
file is refused with an ``info string error`` and the last good book stays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from engine_process import READY_TIMEOUT, EngineProcess, errors, infos

from c4engine.books.build import BuildSpec, build
from c4engine.geometry import Geometry


@pytest.fixture(scope="module")
def book_5x4(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("book") / "5x4.book"
    build(BuildSpec(Geometry(5, 4), 4, False, 16), out, resume=False, stream=open(os.devnull, "w"))
    return out


@pytest.fixture
def fresh(engine: EngineProcess) -> EngineProcess:
    """The module's engine back on 7x6 (the conftest's ``engine`` has no book file)."""
    engine.send("setoption name UCI_Variant value cfour")
    engine.sync(READY_TIMEOUT)
    return engine


def solve_nodes(engine: EngineProcess) -> int:
    """The nodes of the search that proves the 5x4 start a draw."""
    engine.send("position startpos")
    engine.send("go movetime 20000")
    last = infos(engine.read_until("bestmove", READY_TIMEOUT))[-1]
    assert (last["kind"], last["value"]) == ("cp", "0")
    return int(last["nodes"])


def test_the_option_is_listed(engine: EngineProcess) -> None:
    engine.send("uci")
    lines = engine.read_until("uciok", READY_TIMEOUT)
    assert "option name BookFile type string default <empty>" in lines


def test_a_book_for_the_board_in_play_is_probed(fresh: EngineProcess, book_5x4: Path) -> None:
    engine = fresh
    engine.send("setoption name UCI_Variant value cfour-5x4")
    engine.sync(READY_TIMEOUT)
    without = solve_nodes(engine)
    assert errors(engine.command(f"setoption name BookFile value {book_5x4}")) == []
    engine.send("ucinewgame")
    assert solve_nodes(engine) < without / 4


def test_own_book_proves_the_first_plies_at_once(fresh: EngineProcess, book_5x4: Path) -> None:
    """With ``OwnBook`` on and no ``BookFile``, a 7x6 position of 1 stone is proven
    through the engine's own 4-stone book within 2,000 nodes (through the 12-stone
    book alone it takes some 30,000, and column 2 is played); off, it is not; a
    ``BookFile`` takes its place."""
    engine = fresh

    def answer() -> tuple[str, str]:
        engine.send("ucinewgame")
        engine.send("position startpos moves P@b1")
        engine.send("go nodes 2000")
        lines = engine.read_until("bestmove", READY_TIMEOUT)
        return infos(lines)[-1]["kind"], lines[-1].split()[1]

    assert answer() == ("mate", "P@c1")
    engine.command("setoption name OwnBook value false")
    assert answer()[0] == "cp"
    engine.command("setoption name OwnBook value true")
    assert answer() == ("mate", "P@c1")
    engine.send("setoption name UCI_Variant value cfour-5x4")
    engine.command(f"setoption name BookFile value {book_5x4}")
    engine.send("setoption name UCI_Variant value cfour")
    engine.sync(READY_TIMEOUT)
    assert answer()[0] == "cp"
    engine.command("setoption name BookFile value <empty>")
    assert answer() == ("mate", "P@c1")


def test_a_wrong_book_is_refused_and_the_last_good_one_stays(fresh: EngineProcess, book_5x4: Path,
                                                            tmp_path: Path) -> None:
    engine = fresh
    lines = engine.command(f"setoption name BookFile value {book_5x4}")
    assert lines == [f"info string error option BookFile: book {book_5x4} is for the 5x4 board, not 7x6"]
    engine.send("setoption name UCI_Variant value cfour-5x4")
    assert not [line for line in engine.sync(READY_TIMEOUT) if "book file" in line]  # BookFile is <empty>
    engine.command(f"setoption name BookFile value {book_5x4}")
    engine.send("ucinewgame")
    with_book = solve_nodes(engine)
    broken = tmp_path / "broken.book"
    broken.write_bytes(book_5x4.read_bytes()[:-3])
    for path, message in ((broken, "corrupt header or truncated file"), (tmp_path / "none", "No such file")):
        lines = engine.command(f"setoption name BookFile value {path}")
        assert len(errors(lines)) == 1 and message in lines[0]
    engine.send("ucinewgame")
    assert solve_nodes(engine) == with_book
    engine.send("setoption name UCI_Variant value cfour-6x4")
    lines = engine.sync(READY_TIMEOUT)
    assert lines[-1] == (f"info string searching the 6x4 board without a book file: option BookFile: "
                         f"book {book_5x4} is for the 5x4 board, not 6x4")
