"""Search threads (lazy SMP over one shared table) and the searcher's memory contract.

Threads may change node counts, never an exact score: these tests compare two
threads with one on Pons' positions (strong and weak), check that a stop
reaches every thread at once (in the searcher and through the real engine
process), that limits count the work of all threads, and that a table that
cannot be allocated leaves the searcher as it was.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pexpect
import pytest
from kernel_calls import compiled_caller
from timing import search_stop_latency_ms

from c4engine.geometry import Geometry
from c4engine.kernel import layout, negamax, table
from c4engine.protocol.options import find_spec
from c4engine.rules.board import Board
from c4engine.rules.notation import parse_digits
from c4engine.rules.scores import to_pons
from c4engine.search.limits import Limits
from c4engine.search.memory import DEFAULT_HASH_MB, allocate_zeros, fault_in, forget_pages
from c4engine.search.pool import HELPER_NICE, StopSignal
from c4engine.search.probes import SharedProbes
from c4engine.search.searcher import Searcher
from c4engine.search.thread import SearchThread

SEED = 20261122
PONS_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "pons"
TRIES = 5  # timings: the best of this many, so that a busy machine cannot fail them
STOP_LATENCY_MS = 50


@pytest.fixture(scope="module")
def one() -> Searcher:
    searcher = Searcher(hash_mb=16)
    searcher.warm_up()
    return searcher


@pytest.fixture(scope="module")
def two() -> Searcher:
    searcher = Searcher(hash_mb=16, threads=2)
    searcher.warm_up()
    return searcher


def pons_sample(name: str, count: int, seed: int) -> list[tuple[str, int]]:
    path = PONS_DIR / name
    if not path.is_file():
        pytest.skip(f"Pons' test set {path} is not available")
    lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return [(moves, int(score)) for moves, score in random.Random(seed).sample(lines, count)]


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


# ---------------------------------------------------------------- scores never depend on threads

@pytest.mark.parametrize("name, count, weak", [
    ("Test_L3_R1", 100, False), ("Test_L2_R1", 100, False), ("Test_L1_R1", 100, False),
    ("Test_L2_R2", 10, False), ("Test_L1_R1", 60, True), ("Test_L2_R2", 10, True),
])
def test_two_threads_score_as_one(one: Searcher, two: Searcher, name: str, count: int, weak: bool) -> None:
    """Each position solved with one thread and with two (table cleared before each):
    the same score, and Pons' score."""
    wrong = []
    for moves, expected in pons_sample(name, count, SEED):
        pos = parse_digits(moves)
        one.clear()
        two.clear()
        single, _ = one.solve(pos, weak)
        double, _ = two.solve(pos, weak)
        if not single == double == (sign(expected) if weak else expected):
            wrong.append(f"{moves}: Pons {expected}, one thread {single}, two threads {double}")
    assert not wrong, "\n".join(wrong)


def test_threads_probing_different_windows_score_as_pons(two: Searcher) -> None:
    """The exact solve that gives each thread its own null window (used below 6
    stones, where positions take seconds) narrows to Pons' score; here on late
    positions, where probes end at once."""
    for moves, expected in pons_sample("Test_L2_R2", 20, SEED + 2):
        two.clear()
        assert two._solve_shared(parse_digits(moves))[0] == expected, moves


@pytest.mark.slow
@pytest.mark.parametrize("moves, expected", [("11223", 2), ("12345", 3)])
def test_two_threads_solve_early_positions(two: Searcher, moves: str, expected: int) -> None:
    """Early positions, which two threads solve with different windows (scores from
    the one-thread solver)."""
    two.clear()
    assert two.solve(parse_digits(moves))[0] == expected


def test_two_threads_never_cleared_between_positions(two: Searcher) -> None:
    """Entries left by earlier positions and by the other thread never change a score."""
    lines = pons_sample("Test_L1_R1", 100, SEED + 1) + pons_sample("Test_L2_R2", 5, SEED + 1)
    for moves, expected in lines:
        assert two.solve(parse_digits(moves))[0] == expected, moves


def test_the_driver_with_two_threads_reports_exact_scores(one: Searcher, two: Searcher) -> None:
    """``go`` on late positions: two threads end with the exact report one thread gives,
    with every move scored (MultiPV 7) and a best move that keeps the score."""
    for moves, expected in pons_sample("Test_L2_R1", 15, SEED + 2):
        pos = parse_digits(moves)
        one.clear()
        two.clear()
        single = one.search(pos, Limits(), multipv=7).report
        double = two.search(pos, Limits(), multipv=7).report
        assert single is not None and double is not None and single.exact and double.exact
        assert to_pons(double.best.score) == expected, moves
        assert {line.pv[0]: line.score for line in single.lines} == \
               {line.pv[0]: line.score for line in double.lines}, moves


def test_a_helper_finishing_first_gives_the_answer(two: Searcher) -> None:
    """When the main thread is stopped by a helper that finished, the helper's value is
    the answer; the main thread's stopped search is not."""
    stops: list[bool] = []

    def job(thread: object) -> int:
        index = getattr(thread, "index")
        if index == 1:
            return 7
        while not getattr(thread, "mem")[layout.STOP]:  # the main thread waits to be stopped
            time.sleep(0.001)
        stops.append(True)
        getattr(thread, "mem")[layout.ABORTED] = 1
        return -1

    race = two.race(job, 1000)
    assert race.finished and race.value == 7 and race.thread.index == 1 and stops == [True]
    assert not any(thread.mem[layout.STOP] for thread in two.threads), "a race's stop outlived it"


# ---------------------------------------------------------------- limits and stop

def test_a_node_limit_counts_every_thread(two: Searcher) -> None:
    for limit in (1, 500, 20_000):
        two.clear()
        result = two.search(Board(), Limits(nodes=limit))
        assert result.move in range(7)
        assert result.nodes <= limit + 2 * 7  # as with one thread: a few nodes past it, per thread


def test_stop_reaches_every_thread(two: Searcher) -> None:
    """Best of several tries, so that a busy machine cannot fail it; every try must end
    with a legal move and leave no thread searching."""
    best = float("inf")
    for _ in range(TRIES):
        two.clear()
        latency, result = search_stop_latency_ms(two)
        assert result.move in range(7)
        best = min(best, latency)
    print(f"stop latency with two threads, best of {TRIES}: {best:.2f} ms")
    assert best < STOP_LATENCY_MS


def test_stop_with_two_threads_in_the_engine_process() -> None:
    """The real process: ``Threads 2``, ``go infinite``, ``stop``; a legal bestmove within
    50 ms of the stop (the best of several tries)."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    child = pexpect.spawn(sys.executable, ["-m", "c4engine"], env=env, encoding="utf-8", timeout=60,
                          echo=False)
    child.delaybeforesend = None
    try:
        child.sendline("setoption name Threads value 2")
        child.sendline("isready")
        child.expect_exact("readyok")
        best = float("inf")
        for moves in ("", "4", "44", "4453", "3")[:TRIES]:
            child.sendline(f"position startpos moves {moves}" if moves else "position startpos")
            child.sendline("go infinite")
            child.expect("info depth", timeout=10)
            time.sleep(0.1)
            child.sendline("stop")
            fired = time.perf_counter()
            child.expect(r"bestmove ([1-7])[ \r\n]", timeout=10)
            best = min(best, (time.perf_counter() - fired) * 1000)
            col = int(child.match.group(1)) - 1
            assert parse_digits(moves).can_play(col)
        print(f"stop to bestmove with Threads 2, best of {TRIES}: {best:.2f} ms")
        assert best < STOP_LATENCY_MS
        child.sendline("quit")
        child.expect(pexpect.EOF, timeout=10)
    finally:
        child.close(force=True)


def test_threads_option_is_announced() -> None:
    result = subprocess.run([sys.executable, "-m", "c4engine"], input="uci\nquit\n", capture_output=True,
                            text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent)))
    assert "option name Threads type spin default 1 min 1 max 64" in result.stdout.splitlines()


# ---------------------------------------------------------------- the busy table

def test_only_several_threads_share_out_children_and_only_near_the_root() -> None:
    busy_slot = compiled_caller(negamax.busy_slot)
    one, two = Searcher(hash_mb=1), Searcher(hash_mb=1, threads=2)
    key = parse_digits("4453").mask
    assert busy_slot(one.mem, 0, key) == -1
    main, helper = two.threads[0].mem, two.threads[1].mem
    slot = busy_slot(main, 0, key)
    assert slot >= 0 and np.shares_memory(main[slot:slot + 1], helper[busy_slot(helper, 0, key):])
    assert busy_slot(main, negamax.DEFER_PLIES, key) == -1


def test_the_busy_table_is_empty_after_a_search_finished_or_stopped() -> None:
    """Every thread takes its marks back, also when a stop unwinds it: a mark left
    behind would make the next search defer a child nobody searches."""
    searcher = Searcher(hash_mb=16, threads=2)
    mem = searcher.mem
    busy = mem[mem[layout.BUSY_START]:mem[layout.BUSY_START] + mem[layout.BUSY_SLOTS]]
    assert len(busy) > 0
    searcher.solve(parse_digits("4453"), weak=True)
    assert not np.any(busy)
    stop = StopSignal()
    threading.Timer(0.2, stop.fire).start()
    searcher.solve(Board(), stop=stop)
    assert stop.fired and not np.any(busy)


def test_a_second_thread_probes_next_to_the_first_probe_then_shares_a_probe() -> None:
    """The exact solve's helper works on the other side of the score: on the empty
    board, while the main thread probes 0 (is the first player winning?), the helper
    probes 1; after that, a probe under way is shared."""
    searcher = Searcher(hash_mb=1, threads=2)
    main = searcher.threads[0]
    probes = SharedProbes(Board(), searcher.kernel.solve)
    assert probes._free_point() == 0
    probes.probing[main] = 0
    assert probes._free_point() == 1
    probes.lowest, probes.highest, probes.probing[main] = -20, 0, -10
    assert probes._free_point() == -10


def test_the_helper_leaves_the_probe_at_1_once_the_probe_at_0_refutes_a_root_move() -> None:
    """A probe at 0 that refutes a root move most likely fails (the score is 0 or
    below), so the helper's probe at 1 is cancelled and its next point is -1; until
    then it stays at 1."""
    searcher = Searcher(hash_mb=1, threads=2)
    main, helper = searcher.threads
    probes = SharedProbes(Board(), searcher.kernel.solve)
    probes.probing[main] = 0
    main.begin(1 << 40)
    assert probes._start(helper) == 1
    time.sleep(20 * SharedProbes.WATCH_SECONDS)
    assert helper.mem[layout.NODE_LIMIT] > 0 and not probes.leans_low
    main.mem[layout.ROOT_FAILS] = 1
    deadline = time.monotonic() + 5.0
    while helper.mem[layout.NODE_LIMIT] > 0 and time.monotonic() < deadline:
        time.sleep(SharedProbes.WATCH_SECONDS)
    assert helper.mem[layout.NODE_LIMIT] == 0 and probes.leans_low
    del probes.probing[helper]
    assert probes._free_point() == -1


def test_on_an_even_width_a_refuted_root_move_leaves_the_helper_where_it_is() -> None:
    """Without a lone centre column, the first root move refuted says little (6x7
    wins after its probe at 0 refutes both centre columns): no watcher moves the
    helper."""
    searcher = Searcher(hash_mb=1, threads=2)
    main, helper = searcher.threads
    probes = SharedProbes(Board(geometry=Geometry(6, 7)), searcher.kernel.solve)
    probes.probing[main] = 0
    main.begin(1 << 40)
    main.mem[layout.ROOT_FAILS] = 1
    assert probes._start(helper) == 1
    time.sleep(20 * SharedProbes.WATCH_SECONDS)
    assert helper.mem[layout.NODE_LIMIT] > 0 and not probes.leans_low


@pytest.mark.parametrize(("board", "moves", "side"), [
    (Geometry(6, 6), [], -1), (Geometry(8, 6), [], -1), (Geometry(4, 4), [], -1),
    (Geometry(8, 6), [3], 1), (Geometry(6, 7), [], 1), (Geometry(8, 5), [], 1), (Geometry(7, 6), [], 1)])
def test_the_helper_starts_below_0_where_the_follow_up_favours_the_player_not_to_move(
        board: Geometry, moves: list[int], side: int) -> None:
    """On a board of even width and even height the second player's follow-up makes a
    score of 0 or below likely with the first player to move (6x6 and 8x6 score -1):
    the helper starts at -1 there, at 1 on every other board or side to move."""
    searcher = Searcher(hash_mb=1, threads=2)
    main = searcher.threads[0]
    probes = SharedProbes(Board(geometry=board).play_all(moves), searcher.kernel.solve)
    probes.probing[main] = 0
    assert probes._free_point() == side


def own_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def helper_start_nice(probes: SharedProbes, helper: SearchThread) -> tuple[int | None, int]:
    """The point ``probes`` gives ``helper`` and the priority of the thread that claimed
    it, claimed on a new thread (which a helper's lowered priority cannot outlive)."""
    seen: list[tuple[int | None, int]] = []
    claimer = threading.Thread(target=lambda: seen.append((probes._start(helper), own_nice())))
    claimer.start()
    claimer.join(5)
    del probes.probing[helper]
    return seen[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread of its own priority is Linux's")
def test_a_helper_on_a_probe_of_its_own_yields_to_the_main_thread_one_sharing_a_probe_does_not() -> None:
    """Beside the main thread's probe at 0, a weak solve's helper shares it and keeps
    its priority; a strong solve's takes 1, which the answer may not need, at a
    priority HELPER_NICE below the main thread's."""
    searcher = Searcher(hash_mb=1, threads=2)
    main, helper = searcher.threads
    main_nice = own_nice()
    weak = SharedProbes(Board(), searcher.kernel.solve)
    weak.lowest, weak.highest = -1, 1
    weak.probing[main] = 0
    assert helper_start_nice(weak, helper) == (0, main_nice)
    strong = SharedProbes(Board(), searcher.kernel.solve)
    strong.probing[main] = 0
    assert helper_start_nice(strong, helper) == (1, min(19, main_nice + HELPER_NICE))
    assert own_nice() == main_nice


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread of its own priority is Linux's")
def test_the_warm_ups_solve_leaves_the_helpers_priority_alone() -> None:
    """The warm-up's shared solve (``yielding`` off) may give the helper a probe of
    its own, but lowered there it would stay lowered for a weak solve, whose helper
    only shares one."""
    searcher = Searcher(hash_mb=1, threads=2)
    main, helper = searcher.threads
    warm_up = SharedProbes(Board(), searcher.kernel.solve, yielding=False)
    warm_up.probing[main] = 0
    assert helper_start_nice(warm_up, helper) == (1, own_nice())


def test_the_kernel_counts_the_root_moves_a_probe_refutes(one: Searcher) -> None:
    """ROOT_FAILS: a probe above the score refutes every root move it searches; one
    below it succeeds with its first move here, refuting none."""
    pos = parse_digits("4453")
    thread = one.threads[0]
    one.clear()
    for middle, fails in ((-2, True), (-3, False)):
        thread.begin(1 << 40)
        thread.probe(pos, middle)
        assert (thread.mem[layout.ROOT_FAILS] > 0) == fails, middle


def test_a_probe_the_range_has_settled_is_never_joined() -> None:
    """A thread whose probe the range has settled may not have left it yet (it is
    cancelled, but waits for a core): the others must not join that point, where
    the table answers at once and settles nothing, so that they would loop on it
    and keep it alive among themselves."""
    searcher = Searcher(hash_mb=1, threads=2)
    main = searcher.threads[0]
    probes = SharedProbes(Board(), searcher.kernel.solve)
    probes.lowest, probes.highest, probes.probing[main] = -20, 0, 1
    assert probes.lowest <= probes._free_point() < probes.highest


@pytest.mark.slow
def test_threads_beyond_the_cores_never_probe_a_point_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """With many more threads than cores, the shared probes of an early position
    finish, and no thread probes a point twice: a probe is only started inside the
    range, which only narrows, and a probe that finishes settles its point (a point
    outside the range is settled)."""
    threads = 16
    searcher = Searcher(hash_mb=16, threads=threads)
    searcher.warm_up()
    probes: list[tuple[int, int]] = []
    real_probe = SearchThread.probe

    def recorded(self: SearchThread, pos: Board, middle: int) -> int:
        probes.append((self.index, middle))
        return real_probe(self, pos, middle)
    monkeypatch.setattr(SearchThread, "probe", recorded)
    stop = StopSignal()
    timer = threading.Timer(60.0, stop.fire)
    timer.start()
    try:
        score, _ = searcher.solve(parse_digits("4453"), stop=stop)
    finally:
        timer.cancel()
    assert not stop.fired and score == -2
    repeated = sorted({probe for probe in probes if probes.count(probe) > 1})
    assert not repeated, f"{len(probes)} probes; (thread, point) probed again: {repeated[:10]}"


# ---------------------------------------------------------------- memory

def test_forgotten_pages_read_as_zeros() -> None:
    buffer = allocate_zeros(5 * 4096)
    buffer[:] = 7
    forget_pages(buffer, 1001)
    assert np.all(buffer[:1001] == 7) and not np.any(buffer[1001:])


LATE_POSITION = "255235415174342746764567246772"  # 30 stones, heights 2 5 2 6 5 4 6


def resident_mb() -> float:
    """The process's resident memory (Linux: /proc/self/statm)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pages are faulted in ahead on Linux only")
def test_faulted_in_pages_are_resident_and_keep_their_data() -> None:
    buffer = allocate_zeros(64 << 17)  # 64 MB
    buffer[:1000] = 7
    before = resident_mb()
    fault_in(buffer, 500)
    assert resident_mb() - before > 60
    assert np.all(buffer[:1000] == 7) and not np.any(buffer[1000:])


def test_pages_that_would_take_half_the_free_memory_stay_lazy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large --hash on a machine short of memory: no mapping ahead, no swapping."""
    monkeypatch.setattr("c4engine.search.memory.free_memory", lambda: 100 << 20)
    buffer = allocate_zeros(64 << 17)  # 64 MB, more than half of 100 MB
    before = resident_mb()
    fault_in(buffer, 0)
    assert resident_mb() - before < 10


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pages are faulted in ahead on Linux only")
def test_a_resident_table_is_mapped_as_far_as_each_position_needs() -> None:
    """The solve command's table: mapped before each solve for the part the position can
    fill (fit_table), all of it for the empty board, again after the 16th clear hands
    its pages back; only a little for a late position; the ordinary one stays lazy."""
    before = resident_mb()
    lazy = Searcher(hash_mb=300)
    resident = Searcher(hash_mb=300, resident=True)
    assert resident_mb() - before < 50
    assert resident.fit_table(parse_digits(LATE_POSITION)) == table.MIN_TABLE_ENTRIES
    assert resident_mb() - before < 50
    for _ in range(table.GENERATIONS):
        resident.clear()
    assert int(resident.mem[layout.GENERATION]) == 0 and not np.any(resident.tt)
    assert resident.fit_table(Board()) == len(resident.tt)
    assert resident_mb() - before > 280
    del lazy


def test_a_table_fitted_to_a_late_position_solves_it_and_is_whole_again_after_a_clear() -> None:
    """At most 60,543 positions can follow LATE_POSITION: its solve uses the table's
    minimum, gives the score of a whole table, and the next clear gives the next
    search all of it."""
    pos = parse_digits(LATE_POSITION)
    whole = Searcher(hash_mb=64)
    expected = whole.solve(pos)[0]
    fitted = Searcher(hash_mb=64)
    fitted.clear()
    assert fitted.fit_table(pos) == table.MIN_TABLE_ENTRIES < len(fitted.tt)
    assert int(fitted.mem[layout.TT_SLOTS]) == table.MIN_TABLE_ENTRIES
    assert fitted.solve(pos)[0] == expected
    fitted.clear()
    assert int(fitted.mem[layout.TT_SLOTS]) == len(fitted.tt)


def test_a_cleared_large_table_forgets_everything() -> None:
    """Past WIPE_BY_WRITING_MB, the 16th clear hands the pages back instead of writing
    them: the same position then takes as many nodes as on a fresh table."""
    pos = parse_digits("715371563635542612576371")
    fresh = Searcher(hash_mb=300)
    _, first = fresh.solve(pos)
    _, cached = fresh.solve(pos)
    assert cached < first
    for _ in range(table.GENERATIONS):
        fresh.clear()
    assert int(fresh.mem[layout.GENERATION]) == 0
    assert not np.any(fresh.tt[:100_000])
    assert fresh.solve(pos)[1] == first


def test_a_failed_resize_changes_nothing(one: Searcher, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new table is allocated before the old one is let go."""
    pos = parse_digits("715371563635542612576371")
    one.clear()
    _, first = one.solve(pos)
    before = (one.hash_mb, one.mem, len(one.threads))

    def refuse(words: int) -> np.ndarray:
        raise MemoryError("refused")
    monkeypatch.setattr("c4engine.search.searcher.allocate_zeros", refuse)
    with pytest.raises(MemoryError):
        one.resize(8192)
    with pytest.raises(MemoryError):
        one.set_threads(4)
    assert (one.hash_mb, one.mem, len(one.threads)) == before
    assert one.solve(pos)[1] < first, "the table lost its entries"


def test_a_resize_beyond_the_address_space_limit_changes_nothing() -> None:
    """Issue 10 item 7 for real: under ``ulimit -v`` (as ``prlimit --as``), an 8 GB
    table is refused with MemoryError, and the searcher goes on with its table."""
    script = textwrap.dedent("""
        import resource
        from c4engine.rules.notation import parse_digits
        from c4engine.search.searcher import Searcher
        searcher = Searcher(hash_mb=16)
        pos = parse_digits("715371563635542612576371")
        _, first = searcher.solve(pos)
        limit = 1500 * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            searcher.resize(8192)
        except MemoryError as err:
            print("refused:", err)
        print(searcher.hash_mb, searcher.solve(pos)[1] < first)
    """)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("refused: cannot allocate 8192 MB"), done.stdout
    assert lines[1] == "16 True"


def test_allocating_a_large_table_touches_no_page() -> None:
    """An 8 GB ``Hash`` is set at once: the pages come when the search touches them."""
    started = time.perf_counter()
    buffer = allocate_zeros(1 << 30)
    elapsed = time.perf_counter() - started
    assert buffer.size == 1 << 30 and buffer[123_456_789] == 0
    assert elapsed < 1.0, f"allocating 8 GB took {elapsed:.2f} s"


def test_the_hash_option_defaults_to_the_searchers_table() -> None:
    """The option and the searcher agree on the default table (16 MB; protocol.md says why)."""
    assert find_spec("Hash").default == DEFAULT_HASH_MB == Searcher().hash_mb == 16


def test_a_dropped_searcher_ends_its_helper_threads() -> None:
    before = threading.active_count()
    searcher = Searcher(hash_mb=2, threads=3)
    assert threading.active_count() == before + 2
    searcher.set_threads(2)
    del searcher
    deadline = time.perf_counter() + 5
    while threading.active_count() > before and time.perf_counter() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == before
