"""Our own opening books (issue 20): enumeration, the SQLite build and its resume, the
file format and the kernel's probe, solving a board from a book, the CLI.

Builds run on tiny boards with few plies, so that the default run stays fast;
the book's values are checked against the plain minimax oracle
(tests/minimax_oracle.py) and the boards' values against Tromp's table."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import minimax_oracle as oracle
from failing_ray import connected_to_failing_ray
import numpy as np
import pytest
from click.testing import CliRunner

from c4engine.books.build import BuildSpec, build, database_path
from c4engine.books.cli import book_command
from c4engine.books.positions import book_positions
from c4engine.books.root import root_value, verdict
from c4engine.books.store import StoreError
from c4engine.geometry import Geometry
from c4engine.kernel.built_book import HEADER, BookFileError, BookHeader, BuiltBook, canonical_key, write_book
from c4engine.rules.board import Board
from c4engine.search.searcher import Searcher

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
B5X4 = Geometry(5, 4)
KILLED_PLIES = 8  # 6 plies solved faster than a kill could land
B4X4 = Geometry(4, 4)


def oracle_book_count(width: int, height: int, plies: int) -> int:
    """The positions a book at ``plies`` holds, counted with the oracle's own board:
    reachable, not over, the mover unable to win at once, mirror images once."""
    seen: set[tuple[tuple[int, ...], ...]] = set()

    def visit(board: oracle.Board) -> None:
        if board.stones == plies:
            if not any(board.completes_line(col) for col in board.legal_columns()):
                columns = tuple(tuple(column) for column in board.columns)
                seen.add(min(columns, columns[::-1]))
            return
        for col in board.legal_columns():
            if not board.completes_line(col):
                board.play(col)
                visit(board)
                board.undo(col)

    visit(oracle.Board(width, height, 4))
    return len(seen)


@pytest.mark.parametrize("width, height, plies", [(5, 4, p) for p in range(7)] + [(7, 6, p) for p in range(5)]
                         + [(4, 4, 9)])
def test_the_enumeration_counts_as_the_oracle(width: int, height: int, plies: int) -> None:
    assert len(book_positions(Geometry(width, height), plies)) == oracle_book_count(width, height, plies)


def test_a_position_and_its_mirror_share_a_key() -> None:
    pos = Board(geometry=B5X4).play_all([0, 1, 1])
    image = Board(geometry=B5X4).play_all([4, 3, 3])
    assert canonical_key(pos.current, pos.mask, B5X4) == canonical_key(image.current, image.mask, B5X4)


def build_here(tmp_path: Path, geometry: Geometry, plies: int, weak: bool = False, name: str = "b.book") -> Path:
    out = tmp_path / name
    build(BuildSpec(geometry, plies, weak, 16), out, resume=False, stream=open(os.devnull, "w"))
    return out


@pytest.fixture(scope="module")
def book_4x4_8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_here(tmp_path_factory.mktemp("book"), B4X4, 8)


def test_every_entry_is_the_oracles_exact_score(book_4x4_8: Path) -> None:
    book = BuiltBook.load(book_4x4_8, B4X4)
    positions = book_positions(B4X4, 8)
    assert book.entries == len(positions)
    for pos in positions.values():
        board = oracle.Board(4, 4, 4)
        for col in pos.history:
            board.play(col)
        assert book.probe(pos.current, pos.mask) == oracle.solve(board), pos.history


def test_the_kernel_probe_reads_keys_of_64_bits_in_unsigned_order(tmp_path: Path) -> None:
    """Keys with their top bit set sort last in the file; a probe comparing them as
    signed numbers would put them first and miss every other key."""
    positions = book_positions(B5X4, 4)
    keys = [key for key in positions] + [(1 << 63) + 5, (1 << 64) - 1]
    values = [int(key % 7) - 3 for key in keys]
    path = tmp_path / "big.book"
    write_book(path, BookHeader(B5X4, 4, False, len(keys)), list(zip(keys, values)))
    book = BuiltBook.load(path, B5X4)
    probe = Searcher(geometry=B5X4).kernel.built_book.built_book_value
    for key, pos in positions.items():
        expected = int(key % 7) - 3
        assert book.probe(pos.current, pos.mask) == expected
        assert probe(book.address, book.entries, pos.current, pos.mask) == expected
    absent = Board(geometry=B5X4).play_all([0, 1, 2])  # three stones: no entry has its key
    assert probe(book.address, book.entries, absent.current, absent.mask) == -128


def test_the_searcher_probes_the_book_and_refuses_another_boards(book_4x4_8: Path) -> None:
    searcher = Searcher(geometry=B4X4)
    root = Board(geometry=B4X4)
    score, without = searcher.solve(root)
    searcher.set_built_book(BuiltBook.load(book_4x4_8))
    assert searcher.solve(root)[0] == score
    assert searcher.solve(root)[1] < without
    with pytest.raises(BookFileError, match="is for the 4x4 board, not 5x4"):
        Searcher(geometry=B5X4).set_built_book(BuiltBook.load(book_4x4_8))


def test_the_api_searches_with_a_book_for_the_board_in_use(book_4x4_8: Path) -> None:
    """c4engine.use_book loads the book for the board of the last call (it once failed with
    a TypeError, whatever the board)."""
    import c4engine

    root = c4engine.Position(width=4, height=4)
    c4engine.warm_up(width=4, height=4)
    score = c4engine.solve(root)
    try:
        c4engine.use_book(str(book_4x4_8))
        assert c4engine.solve(root) == score
        c4engine.warm_up(width=5, height=4)
        with pytest.raises(ValueError, match="is for the 4x4 board, not 5x4"):
            c4engine.use_book(str(book_4x4_8))
    finally:
        c4engine.use_book(None)


def test_a_book_for_another_board_or_a_broken_file_is_refused(book_4x4_8: Path, tmp_path: Path) -> None:
    with pytest.raises(BookFileError, match="is for the 4x4 board, not 5x4"):
        BuiltBook.load(book_4x4_8, B5X4)
    data = book_4x4_8.read_bytes()
    broken = tmp_path / "broken.book"
    for content, message in [(data[:-1], "truncated"), (b"PK\x03\x04" + data[4:], "not a c4engine book"),
                             (b"", "not a c4engine book"),
                             (data[:HEADER.size] + data[HEADER.size + 8:HEADER.size + 16]
                              + data[HEADER.size:HEADER.size + 8] + data[HEADER.size + 16:], "increasing")]:
        broken.write_bytes(content)
        with pytest.raises(BookFileError, match=message):
            BuiltBook.load(broken)
    with pytest.raises(BookFileError, match="No such file"):
        BuiltBook.load(tmp_path / "none.book")


def tromp_result(width: int, height: int) -> str:
    for line in (DATA / "tromp_table.txt").read_text().splitlines():
        fields = line.split()
        if fields[:2] == [str(width), str(height)] and len(fields) == 3:
            return fields[2]
    raise LookupError(f"{width}x{height}")


@pytest.mark.parametrize("width, height", [(4, 4), (5, 4), (6, 4)])
def test_a_weak_book_solves_the_board_as_tromps_table(tmp_path: Path, width: int, height: int) -> None:
    book = BuiltBook.load(build_here(tmp_path, Geometry(width, height), 4, weak=True))
    expected = {"first": 1, "draw": 0, "second": -1}[tromp_result(width, height)]
    assert root_value(book) == expected


def test_a_strong_book_gives_when_the_game_ends(tmp_path: Path) -> None:
    geometry = Geometry(6, 4)
    book = BuiltBook.load(build_here(tmp_path, geometry, 4))
    assert root_value(book) == Searcher(geometry=geometry).solve(Board(geometry=geometry))[0]
    assert verdict(book) == "6x4: second player wins, ends on move 24"


def test_a_book_past_64_bits_keeps_whole_keys(tmp_path: Path) -> None:
    """17x3k3 takes 68 bits: two-word keys in the build's database (stone codes), in
    the file and in the kernel's probe, each the solver's value."""
    geometry = Geometry(17, 3, 3)
    book = BuiltBook.load(build_here(tmp_path, geometry, 2))
    searcher = Searcher(geometry=geometry)
    probe = searcher.kernel.built_book.built_book_value
    positions = book_positions(geometry, 2)
    assert book.entries == len(positions) and any(key >> 64 for key in positions)
    for pos in positions.values():
        searcher.clear()
        value = searcher.solve(pos)[0]
        assert book.probe(pos.current, pos.mask) == value
        assert probe(book.address, book.entries, *searcher.kernel.bits(pos.current, pos.mask)) == value
    assert root_value(book) == searcher.solve(Board(geometry=geometry))[0]
    # 51 cells, an odd number: the first player's fifth stone wins, and no sooner (issue 47)
    assert verdict(book) == "17x3k3: first player wins, ends on move 9"
    empty = oracle.Board(17, 3, 3)
    assert oracle.wins_within(empty, 9) and not oracle.wins_within(empty, 7)


# -- the command ---------------------------------------------------------------


def run_book(*args: str):
    return CliRunner().invoke(book_command, list(args))


def test_the_cli_builds_and_solves(tmp_path: Path) -> None:
    out = tmp_path / "b.book"
    built = run_book("build", "--board", "5x4", "--plies", "4", "--out", str(out))
    assert built.exit_code == 0, built.output
    assert f"{out}: 177 positions, 5x4 4-ply strong" in built.output
    assert "177/177 positions" in built.output
    assert run_book("solve", str(out)).output == "5x4: draw\n"


def test_the_cli_refuses_what_cannot_be_built(tmp_path: Path) -> None:
    out = tmp_path / "b.book"
    for args, message in [(["--board", "5x4", "--plies", "20"], "plies must be from 0 to 19 on 5x4"),
                          (["--board", "12x10", "--plies", "2"], "needs width x (height + 1) <= 128")]:
        result = run_book("build", *args, "--out", str(out))
        assert result.exit_code == 2 and message in result.output
    assert not out.exists() and not database_path(out).exists()
    broken = tmp_path / "broken.book"
    broken.write_bytes(b"junk")
    result = run_book("solve", str(broken))
    assert result.exit_code == 1 and "not a c4engine book" in result.output


def test_a_build_in_the_way_or_of_another_board_is_not_touched(tmp_path: Path) -> None:
    out = build_here(tmp_path, B5X4, 2)
    again = run_book("build", "--board", "5x4", "--plies", "2", "--out", str(out))
    assert again.exit_code == 1 and "--resume to go on with it" in again.output
    other = run_book("build", "--board", "4x4", "--plies", "2", "--out", str(out), "--resume")
    assert other.exit_code == 1 and "holds a build with board 5x4, not 4x4" in other.output
    assert BuiltBook.load(out).header.geometry == B5X4
    with pytest.raises(StoreError):
        build(BuildSpec(B5X4, 3, False, 16), out, resume=True)


def test_a_corrupt_build_database_is_a_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "b.book"
    database_path(out).write_bytes(b"not a database" * 100)
    result = run_book("build", "--board", "5x4", "--plies", "2", "--out", str(out), "--resume")
    assert result.exit_code == 1 and "file is not a database" in result.output


def test_a_task_that_fails_on_the_cluster_is_named_with_how_to_go_on(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The error names what the task raised and says that --resume goes on."""
    monkeypatch.setattr("c4engine.books.cli.connected", connected_to_failing_ray)
    result = run_book("build", "--board", "5x4", "--plies", "4", "--out", str(tmp_path / "b.book"),
                      "--cluster", "auto")
    assert result.exit_code == 1
    assert ("a task failed 11 times on the cluster (OverflowError: Python int too large to convert to C long); "
            "the results so far are kept: --resume goes on") in result.output


# -- resume after kill -9 -----------------------------------------------------


def build_process(out: Path, *extra: str) -> subprocess.Popen[bytes]:
    """A 5x4 book of 8 plies (8,556 positions, seconds of solving: time to be killed)."""
    return subprocess.Popen([sys.executable, "-m", "c4engine", "book", "build", "--board", "5x4", "--plies",
                             str(KILLED_PLIES), "--out", str(out), *extra], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def solved_count(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as connection:
        try:
            return int(connection.execute("SELECT COUNT(score) FROM positions").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def kill_soon_after_a_commit(out: Path, total: int, rng: random.Random) -> bool:
    """Resume the build of ``out`` and SIGKILL it just after its first new commit.
    True if that interrupted it, False if it finished all ``total`` positions first."""
    process = build_process(out, "--resume")
    deadline = time.monotonic() + 120
    before = solved_count(database_path(out))
    while solved_count(database_path(out)) == before and process.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(rng.uniform(0, 0.05))  # soon after a commit: hardest first, the rest is quick
    process.send_signal(signal.SIGKILL)
    process.wait()
    return solved_count(database_path(out)) < total


def build_killed_three_times(out: Path, total: int, rng: random.Random) -> None:
    """Killed once while it starts, then after each of three resumed commits.
    A fast machine may finish the build between kills; then it starts over from
    nothing, so that every build the test checks was interrupted three times."""
    for _ in range(5):
        for stale in out.parent.glob(out.name + "*"):  # with SQLite's journal
            stale.unlink()
        early = build_process(out)  # killed while it starts, enumerates or solves its first chunks
        time.sleep(rng.uniform(0.2, 1.5))
        early.send_signal(signal.SIGKILL)
        early.wait()
        if all(kill_soon_after_a_commit(out, total, rng) for _ in range(3)):
            return
    pytest.fail("the build finished before its third kill in each of five tries")


def test_killed_builds_resume_to_the_same_book_each_position_once(tmp_path: Path) -> None:
    """SIGKILL at random moments while positions are being solved, then ``--resume``
    to the end: the same bytes as an uninterrupted build, every position solved
    once and none lost."""
    whole = tmp_path / "whole.book"
    assert build_process(whole).wait(timeout=300) == 0
    total = len(book_positions(B5X4, KILLED_PLIES))
    out = tmp_path / "killed.book"
    build_killed_three_times(out, total, random.Random(20))
    assert build_process(out, "--resume").wait(timeout=300) == 0
    assert out.read_bytes() == whole.read_bytes()
    with sqlite3.connect(database_path(out)) as connection:
        rows, solved, keys = connection.execute(
            "SELECT COUNT(*), COUNT(score), COUNT(DISTINCT key) FROM positions").fetchone()
    assert rows == solved == keys == total


# -- against an independent book ------------------------------------------------


def random_book_position(rng: random.Random, plies: int) -> Board | None:
    """A random game of ``plies`` stones that no stone ended, whose mover cannot win
    at once (a book position), or None when the playout ran into a dead end."""
    pos = Board()
    for _ in range(plies):
        moves = [col for col in pos.legal_moves() if not pos.is_winning_move(col)]
        if not moves:
            return None
        pos = pos.play(rng.choice(moves))
    return None if pos.can_win_now() else pos


@pytest.mark.slow
@pytest.mark.parametrize("plies, weak, count", [(12, False, 300), (8, True, 150)])
def test_random_positions_solved_as_a_build_does_agree_with_bitbully(plies: int, weak: bool, count: int) -> None:
    """Random 7x6 positions solved by the build's own code path (``solve_chunk``)
    against bitbully-databases' 12-ply (exact) and 8-ply (win/draw/loss) books."""
    from c4engine.books.build import solve_chunk
    from c4engine.books.store import Row
    from c4engine.geometry import STANDARD
    from c4engine.kernel.book import OpeningBook

    book, rng, spec = OpeningBook.load(), random.Random(20), BuildSpec(STANDARD, plies, weak, 64)
    positions = [pos for pos in (random_book_position(rng, plies) for _ in range(3 * count)) if pos][:count]
    rows = [Row(canonical_key(pos.current, pos.mask, STANDARD), pos.current, pos.mask) for pos in positions]
    ours = [score for _, score, _ in solve_chunk(spec, rows)]
    theirs = [book.probe_outcome(p.current, p.mask) if weak else book.probe(p.current, p.mask) for p in positions]
    assert len(positions) == count and ours == theirs


def test_a_7x6_build_of_fewer_stones_than_the_book_solves_through_it() -> None:
    """4-stone positions are proven through the 12-stone book, with bitbully's exact
    scores, in thousands of nodes each (from scratch: tens of millions)."""
    import bitbully  # type: ignore[import-untyped]

    from c4engine.books.build import solve_chunk
    from c4engine.books.store import Row
    from c4engine.geometry import STANDARD

    rng = random.Random(4)
    positions = [pos for pos in (random_book_position(rng, 4) for _ in range(30)) if pos][:12]
    rows = [Row(canonical_key(pos.current, pos.mask, STANDARD), pos.current, pos.mask) for pos in positions]
    results = solve_chunk(BuildSpec(STANDARD, 4, False, 64), rows)
    oracle = bitbully.BitBully("12-ply-dist")
    assert [score for _, score, _ in results] == [int(oracle.mtdf(bitbully.Board(list(pos.history))))
                                                  for pos in positions]
    assert len(positions) == 12 and max(nodes for *_, nodes in results) < 1_000_000


def test_a_result_that_comes_twice_is_written_once(tmp_path: Path) -> None:
    """A chunk retried after its worker was lost may deliver its results again."""
    from c4engine.books.store import BuildStore

    store = BuildStore(tmp_path / "b.sqlite")
    big = (1 << 64) - 2  # a key with the top bit set: stored as a negative SQLite integer
    store.save_positions(B5X4, 2, False, [(5, 1, 3, 0), (big, 2, 3, 9)])
    assert [row.key for row in store.to_do()] == [big, 5]  # hardest (largest hint) first
    assert store.record([(big, 4, 100)]) == 1
    assert store.record([(big, -4, 7), (5, 0, 1)]) == 1
    assert sorted(store.solved()) == [(5, 0), (big, 4)] and store.total_nodes() == 101
