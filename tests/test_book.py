"""The opening book reader against the package's own reader, an independent
solver, and positions whose scores follow by hand."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

import pytest

from c4engine.geometry import STANDARD
from c4engine.kernel.book import (
    NOT_IN_BOOK,
    BookUnavailableError,
    OpeningBook,
    book_outcome,
    book_score,
)
from c4engine.rules import bits
from c4engine.rules.board import Board

bbd = pytest.importorskip("bitbully_databases", reason="the opening book data package is not installed")

SEED = 20240611


@pytest.fixture(scope="module")
def book() -> OpeningBook:
    return OpeningBook.load()


# ---------------------------------------------------------------- helpers

def random_position(rng: random.Random, stones: int) -> Board:
    """A position after ``stones`` random moves, the game not over."""
    while True:
        pos = Board()
        for _ in range(stones):
            moves = pos.legal_moves()
            if not moves:
                break
            pos = pos.play(rng.choice(moves))
        else:
            if not pos.is_over():
                return pos


def mirrored(pos: Board) -> Board:
    width, height = STANDARD.width, STANDARD.height
    return Board(bits.mirror(pos.current, width, height), bits.mirror(pos.mask, width, height),
                    tuple(STANDARD.width - 1 - col for col in pos.history))


def positions_and_mirrors(stones: int, count: int) -> list[Board]:
    rng = random.Random(SEED + stones)
    out = []
    for _ in range(count):
        pos = random_position(rng, stones)
        out += [pos, mirrored(pos)]
    return out


def rows_top_first(pos: Board) -> list[list[int]]:
    """The package's board matrix: rows from the top, 1 first player, 2 second."""
    return [[pos.cell(col, row) for col in range(STANDARD.width)] for row in reversed(range(STANDARD.height))]


def from_rows_top_first(rows: list[list[int]]) -> Board:
    """Our position from the package's board matrix (an even count: first player to move)."""
    first = second = 0
    for r, line in enumerate(rows):
        for col, who in enumerate(line):
            cell = 1 << (col * STANDARD.h1 + STANDARD.height - 1 - r)
            first |= cell if who == 1 else 0
            second |= cell if who == 2 else 0
    return Board(first, first | second)


def immediate_wins(stones: int, pos: Board) -> int:
    """How many cells ``stones`` could complete a four on with the next drop."""
    return bits.popcount(pos.winning_cells(stones) & pos.playable_cells())


class _RecordsOnDisk:
    """The reference reader's (position, score) list, read on demand.

    ``BitBullyDatabases`` reads a whole file into a Python list, 5 s for the
    12-ply one; its binary search only indexes the list, so this sequence
    hands it each record through the package's own record parser instead.
    """

    def __init__(self, file: BinaryIO, with_distances: bool, is_8ply: bool) -> None:
        self._file = file
        self._record = (3 if is_8ply else 4) + (1 if with_distances else 0)
        self._args = (with_distances, is_8ply)
        self._len = os.fstat(file.fileno()).st_size // self._record

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: int) -> tuple[int | None, int | None]:
        self._file.seek(i * self._record)
        return bbd.BitBullyDatabases._readline(self._file, *self._args)


@pytest.fixture(scope="module")
def reference() -> Iterator[dict[int, object]]:
    """The package's reader for 8 and 12 stones, keyed by stone count."""
    readers = {}
    with ExitStack() as files:
        for stones, name, dist in ((8, "8-ply", False), (12, "12-ply-dist", True)):
            reader = bbd.BitBullyDatabases(None)
            file = files.enter_context(Path(reader.get_database_path(name)).open("rb"))
            reader.book = _RecordsOnDisk(file, dist, stones == 8)
            reader.with_distances = dist
            readers[stones] = reader
        yield readers


def pons_from_distance(v: int | None) -> int | None:
    """The reference's 12-ply value in Pons' convention: ``100 - |v|`` plies to the
    winning stone, whose number is then ``12 + plies``; a side that wins with
    stone ``k`` scores ``(44 - k) // 2``."""
    if v is None or v == 0:
        return v
    winning_stone = 12 + 100 - abs(v)
    return (44 - winning_stone) // 2 * (1 if v > 0 else -1)


# ---------------------------------------------------------------- the package's reader

@pytest.mark.parametrize("pos", positions_and_mirrors(12, 150), ids=lambda p: "".join(map(str, p.history)))
def test_12_stones_agree_with_reference_reader(book: OpeningBook, reference: dict, pos: Board) -> None:
    expected = pons_from_distance(reference[12].get_book_value(rows_top_first(pos)))
    assert book.probe(pos.current, pos.mask) == expected


@pytest.mark.parametrize("pos", positions_and_mirrors(8, 150), ids=lambda p: "".join(map(str, p.history)))
def test_8_stones_agree_with_reference_reader(book: OpeningBook, reference: dict, pos: Board) -> None:
    # The reference answers 1 (a win) for a position the file leaves out.
    assert book.probe_outcome(pos.current, pos.mask) == reference[8].get_book_value(rows_top_first(pos))


def test_documented_examples(book: OpeningBook) -> None:
    """The package's docstring: 71 'wins in 29 moves' (the winning stone is
    stone 41, Pons 1); -88 'loses in 12 moves' (the opponent's stone 24, Pons -10)."""
    wins = [[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0, 0], [0, 1, 0, 2, 0, 0, 0],
            [0, 2, 0, 1, 0, 2, 0], [0, 1, 0, 2, 0, 1, 0], [0, 2, 0, 1, 0, 2, 0]]
    loses = [[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0, 0],
             [0, 0, 2, 2, 0, 0, 0], [0, 1, 2, 1, 0, 0, 0], [0, 1, 1, 2, 0, 2, 2]]
    for rows, score in ((wins, 1), (loses, -10)):
        pos = from_rows_top_first(rows)
        assert book.probe(pos.current, pos.mask) == score
        assert book.probe(mirrored(pos).current, mirrored(pos).mask) == score


# ---------------------------------------------------------------- what the book does not answer

@pytest.mark.parametrize("stones", [0, 1, 7, 9, 10, 11, 13, 20])
def test_other_stone_counts_are_not_in_book(book: OpeningBook, stones: int) -> None:
    pos = random_position(random.Random(SEED + stones), stones)
    assert book_score(book.score_address, book.score_records, pos.current, pos.mask) == NOT_IN_BOOK
    assert book_outcome(book.outcome_address, book.outcome_records, pos.current, pos.mask) == NOT_IN_BOOK
    assert book.probe(pos.current, pos.mask) is None


def test_each_book_answers_only_its_own_size(book: OpeningBook) -> None:
    eight = random_position(random.Random(SEED), 8)
    twelve = random_position(random.Random(SEED), 12)
    assert book.probe(eight.current, eight.mask) is None
    assert book.probe_outcome(twelve.current, twelve.mask) is None


def test_immediate_win_is_left_to_the_search(book: OpeningBook) -> None:
    """Positions whose side to move wins at once are not in the 12-ply file."""
    pos = Board().play_all([0, 6, 0, 6, 0, 6, 1, 5, 2, 4, 2, 4])
    assert immediate_wins(pos.current, pos) and not pos.is_over()
    assert book.probe(pos.current, pos.mask) is None


def test_finished_game_is_not_called_a_win(book: OpeningBook) -> None:
    """8 stones, the second player has four: absent from the file, yet no win."""
    pos = Board().play_all([0, 1, 0, 1, 0, 1, 6, 1])
    assert pos.is_over()
    assert book.probe_outcome(pos.current, pos.mask) is None


def test_empty_book_knows_nothing() -> None:
    empty = OpeningBook.empty()
    pos = random_position(random.Random(SEED), 8)
    assert empty.probe_outcome(pos.current, pos.mask) is None
    pos = random_position(random.Random(SEED), 12)
    assert empty.probe(pos.current, pos.mask) is None


def test_missing_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bitbully_databases", None)
    OpeningBook.load.cache_clear()
    with pytest.raises(BookUnavailableError, match="bitbully-databases is not installed"):
        OpeningBook.load()


def test_loads_once(book: OpeningBook) -> None:
    assert OpeningBook.load() is OpeningBook.load()
    assert book.score_records == 4_200_899 and book.outcome_records == 34_515


def test_the_book_is_mapped_from_its_file_not_copied(book: OpeningBook) -> None:
    """One copy per machine: the 12-stone records are the file's read-only pages, which
    every engine process shares, and the kernel reads them where they lie."""
    maps = Path("/proc/self/maps")
    if not maps.is_file():
        pytest.skip("no /proc/self/maps on this system")
    path = Path(bbd.BitBullyDatabases.get_database_path("12-ply-dist")).resolve()
    address = book.score_address
    for line in maps.read_text().splitlines():
        fields = line.split()
        low, high = (int(x, 16) for x in fields[0].split("-"))
        if low <= address < high:
            assert fields[-1] == str(path) and fields[1].startswith("r-")
            return
    pytest.fail("the book's address is in no mapping")


def test_the_8_stone_file_is_mapped_only_when_used() -> None:
    """The search never probes 8 stones, so loading the book leaves that file alone."""
    OpeningBook.load.cache_clear()
    fresh = OpeningBook.load()
    assert not fresh.outcomes_mapped
    pos = random_position(random.Random(SEED), 8)
    fresh.probe_outcome(pos.current, pos.mask)
    assert fresh.outcomes_mapped


def test_a_corrupt_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys out of order (a bad copy, a format change) must not reach the binary search."""
    source = Path(bbd.BitBullyDatabases.get_database_path("12-ply-dist"))
    records = bytearray(source.read_bytes()[:5000])
    records[0:5], records[5:10] = records[5:10], records[0:5]
    broken = tmp_path / "book_12ply_distances.dat"
    broken.write_bytes(records)
    monkeypatch.setattr(bbd.BitBullyDatabases, "get_database_path", staticmethod(lambda name: str(broken)))
    OpeningBook.load.cache_clear()
    with pytest.raises(BookUnavailableError, match="not strictly increasing"):
        OpeningBook.load()
    OpeningBook.load.cache_clear()


# ---------------------------------------------------------------- scores by hand

def test_score_by_hand_win_in_two(book: OpeningBook) -> None:
    """First player to move on 12 stones (own stones on rows 1 and 3 of columns
    2, 4, 6); no four at once, but column 3 makes an open three on the bottom
    row that the opponent cannot both block nor beat with a four of its own:
    the win comes with the second stone, stone 15, placed on 14: (43 - 14) // 2."""
    pos = Board().play_all([3, 3, 3, 3, 1, 1, 1, 1, 5, 5, 5, 5])
    after = pos.play(2)
    assert immediate_wins(pos.current, pos) == 0
    assert immediate_wins(after.opponent, after) == 2 and immediate_wins(after.current, after) == 0
    assert book.probe(pos.current, pos.mask) == 14


def test_score_by_hand_loss_at_once(book: OpeningBook) -> None:
    """The opponent holds two playable winning cells and the side to move has
    no four: the opponent wins with stone 14, placed on 13: -(43 - 13) // 2."""
    pos = Board().play_all([0, 2, 0, 3, 6, 4, 6, 2, 2, 3, 3, 4])
    assert immediate_wins(pos.opponent, pos) == 2 and immediate_wins(pos.current, pos) == 0
    assert book.probe(pos.current, pos.mask) == -15
    eight = Board().play_all([0, 2, 0, 3, 6, 4, 6, 2])
    assert immediate_wins(eight.opponent, eight) == 2 and immediate_wins(eight.current, eight) == 0
    assert book.probe_outcome(eight.current, eight.mask) == -1


# ---------------------------------------------------------------- an independent solver

@pytest.fixture(scope="module")
def solver() -> ModuleType:
    bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")
    return bitbully


def test_oracle_uses_pons_convention(solver: ModuleType) -> None:
    """Our hand-made positions: bitbully's plain search (no book) gives 14 and -15."""
    plain = solver.BitBully(opening_book=None)
    assert plain.mtdf(solver.Board([3, 3, 3, 3, 1, 1, 1, 1, 5, 5, 5, 5])) == 14
    assert plain.mtdf(solver.Board([0, 2, 0, 3, 6, 4, 6, 2, 2, 3, 3, 4])) == -15


def test_12_stones_match_solver(book: OpeningBook, solver: ModuleType) -> None:
    """Exact scores against bitbully's search without any book, mirrors included."""
    plain = solver.BitBully(opening_book=None)
    rng = random.Random(SEED)
    checked = 0
    while checked < 30:
        pos = random_position(rng, 12)
        if rng.random() < 0.5:
            pos = mirrored(pos)
        score = book.probe(pos.current, pos.mask)
        if score is None:
            continue
        assert score == plain.mtdf(solver.Board(list(pos.history))), pos.history
        checked += 1


def test_8_stones_match_solver(book: OpeningBook, solver: ModuleType) -> None:
    """Win/draw/loss against bitbully searching down to its 12-stone book (the
    8-stone file plays no part there; a search from 8 stones alone takes minutes)."""
    deep = solver.BitBully("12-ply-dist")
    rng = random.Random(SEED)
    for _ in range(30):
        pos = random_position(rng, 8)
        score = deep.mtdf(solver.Board(list(pos.history)))
        assert book.probe_outcome(pos.current, pos.mask) == (score > 0) - (score < 0), pos.history
