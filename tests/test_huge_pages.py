"""Huge pages for the transposition table: asked for where a search fills the table
(``solve``, the ``Large Pages`` option), never for a short search on a fresh table,
and said as the system reports them (``/proc/<pid>/smaps``), not as assumed.

The real processes are read through their own ``/proc/<pid>/smaps``; a system whose
transparent huge pages are ``never`` is stood for by pointing
:data:`c4engine.search.memory.THP_SETTING` at a file of the test's own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from engine_process import READY_TIMEOUT, Board, check_bestmove, start_engine

from c4engine.rules.notation import parse_digits
from c4engine.search import memory
from c4engine.search.memory import (
    advise_huge_pages, allocate_zeros, huge_page_setting, page_report, resident_bytes,
)
from c4engine.search.searcher import Searcher

SYSTEM_GIVES_HUGE_PAGES = huge_page_setting() in ("always", "madvise")
POSITION = "2416615552"  # a position of Pons' Test_L1_R2 set, score 4: some 250,000 nodes
HUGE_PAGES_RE = r"table (\d+) MB: (\d+) MB of it in 2 MB huge pages"


def table_pages(pid: int, table_mb: int) -> tuple[int, int]:
    """MB resident, and MB of them in huge pages, in the anonymous mappings of process
    ``pid`` at least ``table_mb`` MB long: its table (the search's other arrays are
    far smaller), read from the system."""
    resident = huge = 0
    inside = False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if not fields[0].endswith(":"):
            low, high = (int(bound, 16) for bound in fields[0].split("-"))
            inside = len(fields) == 5 and high - low >= table_mb << 20  # no file: anonymous
        elif inside and fields[0] == "Rss:":
            resident += int(fields[1])
        elif inside and fields[0] == "AnonHugePages:":
            huge += int(fields[1])
    return resident >> 10, huge >> 10


@pytest.fixture
def no_huge_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system as one whose transparent huge pages are ``never``."""
    setting = tmp_path / "enabled"
    setting.write_text("always madvise [never]\n")
    monkeypatch.setattr(memory, "THP_SETTING", str(setting))


@pytest.mark.parametrize(("text", "setting"), [("always [madvise] never\n", "madvise"),
                                               ("[always] madvise never\n", "always"),
                                               ("always madvise [never]\n", "never"),
                                               ("madvise\n", "unavailable"), ("", "unavailable")])
def test_the_setting_is_the_word_in_brackets(tmp_path: Path, text: str, setting: str) -> None:
    path = tmp_path / "enabled"
    path.write_text(text)
    assert huge_page_setting(str(path)) == setting


def test_a_system_without_the_setting_has_none() -> None:
    assert huge_page_setting("/nonexistent/transparent_hugepage/enabled") == "unavailable"


@pytest.mark.usefixtures("no_huge_pages")
def test_where_the_system_says_never_the_table_keeps_4kb_pages_and_says_so() -> None:
    """No advice is given (on this machine it would be taken: the table would get
    huge pages), the report says why, and a solve runs as without huge pages."""
    buffer = allocate_zeros(4 << 20)  # 32 MB
    assert not advise_huge_pages(buffer)
    buffer[:] = 1
    held = resident_bytes(buffer)  # the mapping may have merged with a neighbour: at least the buffer
    assert held is not None and held[0] >= buffer.nbytes and held[1] == 0, held
    assert page_report(buffer, asked=True, advised=False) == (
        "4 kB pages, the system gives no huge pages (transparent huge pages never)")
    pos = parse_digits(POSITION)
    asked, plain = (Searcher(64, huge_pages=huge, resident=True, solving_only=True) for huge in (True, False))
    for searcher in (asked, plain):
        searcher.fit_table(pos)
    assert asked.solve(pos) == plain.solve(pos)
    assert asked.page_report() == "table 64 MB: 4 kB pages, the system gives no huge pages (transparent huge pages never)"


def test_an_advised_buffer_gets_huge_pages_where_the_system_gives_them() -> None:
    """Read back, not assumed: on a ``madvise`` or ``always`` system the touched buffer
    is in 2 MB pages; elsewhere the advice is refused and the report says so."""
    buffer = allocate_zeros(4 << 20)
    assert page_report(buffer, asked=False, advised=False) == "4 kB pages, huge pages not asked for"
    advised = advise_huge_pages(buffer)
    assert advised == SYSTEM_GIVES_HUGE_PAGES
    if advised:
        assert page_report(buffer, asked=True, advised=True) == "huge pages asked for, none touched yet"
    buffer[:] = 1
    held = resident_bytes(buffer)
    assert held is not None and held[0] >= buffer.nbytes
    assert (held[1] > 0) == advised
    if advised:
        assert re.fullmatch(r"\d+ MB of it in 2 MB huge pages", page_report(buffer, True, True))


@pytest.mark.parametrize(("resident_kb", "huge_kb", "report"), [
    (32768, 0, "4 kB pages, huge pages asked for but the system gave none (no free 2 MB blocks)"),
    (0, 0, "huge pages asked for, none touched yet"),
    (32768, 30720, "30 MB of it in 2 MB huge pages"),
])
def test_the_report_says_what_the_system_gave_an_advised_buffer(tmp_path: Path, resident_kb: int, huge_kb: int,
                                                                 report: str) -> None:
    """A system that took the advice but had no free 2 MB blocks to give (memory too
    fragmented to compact) is said as such, from its smaps: the table runs as today."""
    buffer = allocate_zeros(4 << 20)
    first = buffer.ctypes.data
    smaps = tmp_path / "smaps"
    smaps.write_text(f"{first - 4096:x}-{first + buffer.nbytes:x} rw-p 00000000 00:00 0\n"
                     f"Size: {buffer.nbytes >> 10} kB\nRss: {resident_kb} kB\nAnonHugePages: {huge_kb} kB\n"
                     f"{first + buffer.nbytes + 4096:x}-{first + buffer.nbytes + 8192:x} r--p 00000000 00:00 0\n"
                     "Rss: 4 kB\nAnonHugePages: 2048 kB\n")
    assert page_report(buffer, asked=True, advised=True, smaps_path=str(smaps)) == report


def test_solve_has_its_table_in_huge_pages_and_says_so() -> None:
    """The real ``solve`` process, its position solved and its input still open: the
    system's record of it shows the table in huge pages (on a system that gives
    them), and the summary says what it shows."""
    solver = subprocess.Popen([sys.executable, "-m", "c4engine", "solve", "--hash", "64"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert solver.stdin is not None and solver.stdout is not None
        solver.stdin.write(f"{POSITION}\n")
        solver.stdin.flush()
        assert solver.stdout.readline().split()[:2] == [POSITION, "4"]
        resident, huge = table_pages(solver.pid, 64)
        out, err = solver.communicate(timeout=READY_TIMEOUT)
    finally:
        solver.kill()
    summary = err.splitlines()[-1]
    assert resident >= 64
    if SYSTEM_GIVES_HUGE_PAGES:
        assert huge >= 60, (resident, huge)
        match = re.search(HUGE_PAGES_RE + "$", summary)
        assert match and match[1] == "64" and abs(int(match[2]) - huge) <= 2, summary
    else:
        assert huge == 0 and summary.endswith("4 kB pages, the system gives no huge pages "
                                              f"(transparent huge pages {huge_page_setting()})"), summary


def test_the_engine_says_what_pages_large_pages_gives() -> None:
    """``Large Pages``: setting it says what the table has; with it on, a new table (a
    new ``Hash``) says so too, and the process's table is in huge pages as said; off
    again, 4 kB pages, and the search goes on."""
    proc = start_engine()
    try:
        lines = proc.command("setoption name Large Pages value true")
        assert len(lines) == 1, lines
        resident, huge = table_pages(proc.child.pid, 16)
        if SYSTEM_GIVES_HUGE_PAGES:
            match = re.fullmatch("info string " + HUGE_PAGES_RE, lines[0])
            assert match and match[1] == "16" and int(match[2]) >= 14 and huge >= 14, (lines, huge)
        else:
            assert lines[0].startswith("info string table 16 MB: 4 kB pages, the system gives no huge pages")
        lines = proc.command("setoption name Hash value 64")
        assert len(lines) == 1 and lines[0].startswith("info string table 64 MB: "), lines
        assert proc.command("setoption name Large Pages value false") == [
            "info string table 64 MB: 4 kB pages, huge pages not asked for"]
        assert proc.command("setoption name Hash value 32") == []  # off: nothing more said
        proc.send("go depth 6")
        check_bestmove(proc.read_until("bestmove")[-1], Board())
        proc.assert_clean()
    finally:
        proc.close()


def test_a_short_search_on_a_fresh_large_table_leaves_it_unmapped() -> None:
    """The default keeps 4 kB pages faulted in as the search writes: ``go movetime 30``
    on a fresh 1 GB table leaves a few MB of it resident (huge pages would make each
    entry written cost 2 MB: some 50 MB), none of it in huge pages."""
    proc = start_engine()
    try:
        for command in ("setoption name OwnBook value false", "setoption name Hash value 1024"):
            assert proc.command(command) == []
        proc.send("go movetime 30")
        check_bestmove(proc.read_until("bestmove")[-1], Board())
        resident, huge = table_pages(proc.child.pid, 1024)
        assert huge == 0 and resident < 16, (resident, huge)
        proc.assert_clean()
    finally:
        proc.close()
