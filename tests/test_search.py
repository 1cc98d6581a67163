"""The search driver: what it plays under every kind of limit, how fast it stops,
and what it reports.

cutechess forfeits a game for an illegal or late move, and a wrong ``mate``
is a bug, so these tests hold the driver to: always a legal move (whatever
cut the search short), wins and forced blocks always played, limits and stop
requests obeyed promptly, exact reports equal to the solver's scores, and the
DESIGN's mate-distance formula.
"""

from __future__ import annotations

import functools
import random
import subprocess
import sys
import time
from collections.abc import Iterator

import fhourstones
import pytest
from positions import late_positions
from timing import best_of, search_stop_latency_ms

from c4engine.geometry import Geometry
from c4engine.kernel import perft
from c4engine.kernel.book import BookUnavailableError, OpeningBook
from c4engine.rules.board import Board
from c4engine.rules.notation import parse_digits
from c4engine.rules.scores import mate_distance, to_internal, to_pons
from c4engine.search.limits import Limits
from c4engine.search.pool import StopSignal
from c4engine.search.report import Report
from c4engine.search.searcher import Searcher

SEED = 20240614
WIDTH, HEIGHT, CELLS = 7, 6, 42
# Pons' Test_L3_R1, first lines: positions with their exact scores.
PONS_LATE = [
    ("2252576253462244111563365343671351441", -1),
    ("7422341735647741166133573473242566", 1),
    ("23163416124767223154467471272416755633", 0),
]


@pytest.fixture(scope="module")
def warm_searcher() -> Searcher:
    """One searcher for the module, its kernels loaded (or compiled) before any timing."""
    searcher = Searcher(hash_mb=16)
    searcher.search(parse_digits("4453"), Limits(depth=3))
    searcher.solve(parse_digits(PONS_LATE[0][0]))
    return searcher


@pytest.fixture
def searcher(warm_searcher: Searcher) -> Searcher:
    warm_searcher.clear()
    return warm_searcher


def random_positions(rng: random.Random, games: int) -> Iterator[Board]:
    """Every position of ``games`` random games where the game is not over."""
    for _ in range(games):
        pos = Board()
        while not pos.is_over():
            yield pos
            pos = pos.play(rng.choice(pos.legal_moves()))


def digits(pos: Board) -> str:
    return "".join(str(col + 1) for col in pos.history)


def winning_cols(pos: Board) -> list[int]:
    return [col for col in pos.legal_moves() if pos.is_winning_move(col)]


def exact_move_value(searcher: Searcher, pos: Board, col: int) -> int:
    """Pons score, for the mover, of playing ``col``: from the rules and the solver."""
    if pos.is_winning_move(col):
        return (CELLS + 1 - pos.stones) // 2
    child = pos.play(col)
    if child.is_over():  # the board is full
        return 0
    searcher.clear()
    return -searcher.solve(child)[0]


# ---------------------------------------------------------------- the move played

@pytest.mark.parametrize("limits", [Limits(nodes=1), Limits(nodes=50), Limits(depth=1)],
                         ids=["nodes=1", "nodes=50", "depth=1"])
def test_always_a_legal_move(searcher: Searcher, limits: Limits) -> None:
    """However early the search is cut, the move is legal (cutechess forfeits otherwise)."""
    positions = list(random_positions(random.Random(SEED), 8))
    assert len(positions) > 100
    for pos in positions:
        result = searcher.search(pos, limits)
        assert result.move in pos.legal_moves(), (digits(pos), result)


def test_no_move_when_the_game_is_over(searcher: Searcher) -> None:
    result = searcher.search(parse_digits("1212121"), Limits(depth=3))
    assert result.move is None


@pytest.mark.parametrize("limits", [Limits(nodes=1), Limits(nodes=200), Limits(depth=1),
                                    Limits(depth=4)],
                         ids=["nodes=1", "nodes=200", "depth=1", "depth=4"])
def test_an_immediate_win_is_played(searcher: Searcher, limits: Limits) -> None:
    """Even a search cut after one node must not miss a win on the board."""
    positions = [pos for pos in random_positions(random.Random(SEED + 1), 30) if winning_cols(pos)]
    assert len(positions) > 20
    for pos in positions:
        result = searcher.search(pos, limits)
        assert result.move in winning_cols(pos), digits(pos)


def forced_block(pos: Board) -> int | None:
    """The one column that stops the opponent's only immediate win, when the side to
    move cannot win itself and blocking does not give the opponent the cell above."""
    if winning_cols(pos):
        return None
    opponent_to_move = Board(pos.opponent, pos.mask)
    threats = [col for col in pos.legal_moves() if opponent_to_move.is_winning_move(col)]
    if len(threats) != 1 or winning_cols(pos.play(threats[0])):
        return None
    return threats[0]


@pytest.mark.parametrize("depth", [2, 3, 6])
def test_a_forced_block_is_played(searcher: Searcher, depth: int) -> None:
    """With one opponent threat and no own win, anything but the block loses at once."""
    cases = [(pos, block) for pos in random_positions(random.Random(SEED + 2), 30)
             if (block := forced_block(pos)) is not None]
    assert len(cases) > 20
    for pos, block in cases:
        result = searcher.search(pos, Limits(depth=depth))
        assert result.move == block, digits(pos)


# ---------------------------------------------------------------- limits and stopping

@pytest.mark.parametrize("moves", ["", "4453"])
@pytest.mark.parametrize("limit", [100, 1000, 10_000, 100_000])
def test_node_limit(searcher: Searcher, moves: str, limit: int) -> None:
    """The search uses its node budget (these positions are far from solved) and no
    more than a few nodes beyond it."""
    result = searcher.search(parse_digits(moves), Limits(nodes=limit))
    assert 0.9 * limit <= result.nodes <= limit + WIDTH
    assert result.report is not None and result.report.nodes <= limit + WIDTH


def test_depth_limit(searcher: Searcher) -> None:
    """Reports come once per finished depth, and the depth limit is the last one."""
    reports: list[Report] = []
    result = searcher.search(parse_digits("4453"), Limits(depth=5), on_report=reports.append)
    assert [report.depth for report in reports] == [1, 2, 3, 4, 5]
    assert result.report == reports[-1] and not reports[-1].exact


def test_stop_from_another_thread(searcher: Searcher) -> None:
    """An unlimited search on the empty board returns within 50 ms of the stop (best of
    a few tries: a busy machine delays some)."""
    def stop_latency_ms() -> float:
        latency_ms, result = search_stop_latency_ms(searcher)
        assert result.move in range(WIDTH)
        return latency_ms

    latency_ms = best_of(stop_latency_ms, within=50)
    print(f"stop latency: {latency_ms:.2f} ms (best try)")
    assert latency_ms < 50


def test_stop_fired_before_the_search(searcher: Searcher) -> None:
    """A stop that arrives before ``go`` is processed still ends the search at once
    (within 50 ms, best of a few tries)."""
    def elapsed_ms() -> float:
        stop = StopSignal()
        stop.fire()
        started = time.perf_counter()
        result = searcher.search(Board(), Limits(), stop=stop)
        assert result.move in range(WIDTH)
        return (time.perf_counter() - started) * 1000

    assert best_of(elapsed_ms, within=50) < 50


def test_stop_signal_does_not_leak_into_the_next_search(searcher: Searcher) -> None:
    """After a stopped search the next one, with its own signal, runs normally."""
    stop = StopSignal()
    stop.fire()
    searcher.search(Board(), Limits(), stop=stop)
    result = searcher.search(parse_digits("4453"), Limits(depth=4))
    assert result.report is not None and result.report.depth == 4


def test_hard_deadline(searcher: Searcher) -> None:
    """``hard_ms`` stops a search that would otherwise run for hours: never before the
    deadline, and within 150 ms after it (best of a few tries)."""
    def elapsed_ms() -> float:
        started = time.perf_counter()
        result = searcher.search(Board(), Limits(hard_ms=200))
        elapsed = (time.perf_counter() - started) * 1000
        assert elapsed >= 190, "stopped before the deadline"
        assert result.move in range(WIDTH)
        return elapsed

    best = best_of(elapsed_ms, within=350)
    print(f"hard_ms=200 returned after {best:.1f} ms (best try)")
    assert best <= 350


# ---------------------------------------------------------------- exact results

def test_exact_report_on_pons_positions(searcher: Searcher) -> None:
    """Late positions are solved by the driver: exact report, Pons' score, and a move
    that keeps it."""
    for moves, expected in PONS_LATE:
        pos = parse_digits(moves)
        result = searcher.search(pos, Limits())
        assert result.report is not None and result.report.exact, moves
        assert to_pons(result.report.best.score) == expected, moves
        assert result.move is not None
        assert exact_move_value(searcher, pos, result.move) == expected, moves


def test_without_solving_early_nothing_is_proven_beyond_the_depth(searcher: Searcher) -> None:
    """A late position the solver proves after the first iteration (what the driver
    does by default); without ``solve_early`` (the difficulty levels) a depth of 3
    ends with a heuristic score, and once the end is within the depth it is exact."""
    pos = parse_digits(PONS_LATE[0][0])
    assert searcher.search(pos, Limits(depth=3)).report.exact  # type: ignore[union-attr]
    searcher.clear()
    shallow = searcher.search(pos, Limits(depth=3), solve_early=False).report
    assert shallow is not None and not shallow.exact and shallow.depth == 3
    searcher.clear()
    to_the_end = searcher.search(pos, Limits(depth=CELLS - pos.stones), solve_early=False).report
    assert to_the_end is not None and to_the_end.exact
    assert to_pons(to_the_end.best.score) == PONS_LATE[0][1]


def test_exact_report_matches_the_solver(searcher: Searcher) -> None:
    """The same on random positions with 26 stones, scored by a separate solver."""
    oracle = Searcher(hash_mb=16)
    for pos in late_positions(random.Random(SEED + 3), 30, 26):
        oracle.clear()
        expected, _ = oracle.solve(pos)
        searcher.clear()
        result = searcher.search(pos, Limits())
        assert result.report is not None and result.report.exact, digits(pos)
        assert to_pons(result.report.best.score) == expected, digits(pos)
        assert result.move is not None
        assert exact_move_value(oracle, pos, result.move) == expected, digits(pos)


def sign(value: int) -> int:
    return (value > 0) - (value < 0)


def test_a_game_s_move_proves_the_result_then_keeps_it() -> None:
    """A game's move (``result_first``) with one line proves only the result (a weak
    solve): a win ends the search at once with the most own moves left as ``mate N
    lowerbound``'s N and a move that still wins, a draw with 0 at the full depth
    and a move that still draws.  A loss goes on to the exact score, so that the
    move played resists longest.  Every claim is checked against bitbully's score
    of every move."""
    bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")
    oracle = bitbully.BitBully()
    searcher = Searcher(hash_mb=16)
    results = set()
    rng = random.Random(SEED + 7)
    for pos in [pos for stones in (16, 24, 30) for pos in late_positions(rng, 16, stones)]:
        scores = oracle.score_all_moves(bitbully.Board.from_moves(list(pos.history)))
        best = max(scores.values())
        searcher.clear()
        result = searcher.search(pos, Limits(soft_ms=60_000, hard_ms=60_000), result_first=True)
        report, moves = result.report, digits(pos)
        assert report is not None and result.move is not None, moves
        assert sign(scores[result.move]) == sign(best), f"{moves}: {scores}, played {result.move}"
        results.add(sign(best))
        if best < 0:
            assert report.exact and to_pons(report.best.score) == best == scores[result.move], moves
            continue
        assert not report.exact and report.depth == CELLS - pos.stones, moves
        assert report.best.score == to_internal(sign(best)), moves
    assert results == {-1, 0, 1}


def test_a_solved_root_s_move_is_found_from_the_table_within_the_solve_s_budget() -> None:
    """After the root's solve, the table holds the move that reached its bound: a
    proven root's move is looked for there first, and that search may run past the
    attempt's node budget, since a proof cut off there was lost.  So with the
    heuristic's column a move that gives up the result (without losing at once)
    and a node limit just past the solve's own nodes, the move played still keeps
    the result.  Checked against bitbully's score of every move."""
    bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")
    oracle = bitbully.BitBully()
    searcher = Searcher(hash_mb=16)
    thread = searcher.threads[0]
    rng, checked = random.Random(SEED + 11), 0
    for pos in [pos for stones in (14, 18, 22) for pos in late_positions(rng, 16, stones)]:
        scores = oracle.score_all_moves(bitbully.Board.from_moves(list(pos.history)))
        result = sign(max(scores.values()))
        worse = [col for col in pos.legal_moves()
                 if sign(scores[col]) < result and not pos.play(col).can_win_now()]
        if result < 0 or not worse or winning_cols(pos):
            continue
        searcher.clear()
        thread.begin(1 << 62)
        thread.solve(pos, True)
        solve_nodes, stored = thread.nodes(), thread.table_move(pos)
        assert sign(scores[stored]) == result, f"{digits(pos)}: {scores}, the table holds {stored}"
        searcher.clear()
        thread.begin(solve_nodes + 64)
        col = thread.keep_root_result(pos, worse[0])
        assert col >= 0 and sign(scores[col]) == result, f"{digits(pos)}: {scores}, played {col}"
        checked += 1
    assert checked >= 10


def test_other_searches_still_get_the_exact_score(searcher: Searcher) -> None:
    """Only a game's move with one line stops at the result: a timed search that is
    not a game's move, and a game's move with MultiPV, get a won position's exact
    score."""
    pos = parse_digits(PONS_LATE[1][0])
    for multipv, result_first in ((1, False), (2, True)):
        searcher.clear()
        report = searcher.search(pos, Limits(soft_ms=60_000, hard_ms=60_000), multipv=multipv,
                                 result_first=result_first).report
        assert report is not None and report.exact and to_pons(report.best.score) == PONS_LATE[1][1]


@pytest.mark.parametrize("moves, pons, mate", [
    ("4455", 18, 2),      # first player: c1 or f1 makes two threats; wins with 6 stones on board
    ("14157", 18, 2),     # second player, the same threats on the other side
    ("44553", -18, -1),   # second player to move cannot stop both threats
    ("141573", -18, -1),  # first player to move cannot stop both threats
])
def test_mate_distance_on_hand_worked_positions(searcher: Searcher, moves: str, pons: int,
                                                mate: int) -> None:
    """DESIGN: win N = (22 - s) - n // 2; loss N = -((22 + s) - (n + 1) // 2)."""
    pos = parse_digits(moves)
    assert searcher.solve(pos)[0] == pons
    assert mate_distance(to_internal(pons), pos.stones, pos.geometry.cells) == mate
    searcher.clear()
    result = searcher.search(pos, Limits())
    assert result.report is not None and result.report.exact
    assert mate_distance(result.report.best.score, pos.stones, pos.geometry.cells) == mate


def test_an_immediate_win_is_mate_in_one(searcher: Searcher) -> None:
    """For every stone count and both sides: an immediate win is mate 1."""
    positions = [pos for pos in random_positions(random.Random(SEED + 4), 40) if winning_cols(pos)]
    assert len({pos.stones for pos in positions}) > 10
    for pos in positions:
        searcher.clear()
        score, _ = searcher.solve(pos)
        assert mate_distance(to_internal(score), pos.stones, pos.geometry.cells) == 1, digits(pos)


def test_multipv_scores_every_move_exactly(searcher: Searcher) -> None:
    """With MultiPV 7 on solvable positions, each line's score is that move's exact
    score, every legal move has a line, and the lines come best first."""
    oracle = Searcher(hash_mb=16)
    for pos in late_positions(random.Random(SEED + 5), 12, 26):
        searcher.clear()
        result = searcher.search(pos, Limits(), multipv=7)
        report = result.report
        assert report is not None and report.exact, digits(pos)
        by_col = {line.pv[0]: to_pons(line.score) for line in report.lines}
        assert sorted(by_col) == pos.legal_moves(), digits(pos)
        expected = {col: exact_move_value(oracle, pos, col) for col in pos.legal_moves()}
        assert by_col == expected, digits(pos)
        scores = [line.score for line in report.lines]
        assert scores == sorted(scores, reverse=True), digits(pos)
        assert result.move == report.lines[0].pv[0]


def test_multipv_2_gives_the_two_best(searcher: Searcher) -> None:
    pos = parse_digits(PONS_LATE[1][0])
    result = searcher.search(pos, Limits(), multipv=2)
    assert result.report is not None and len(result.report.lines) == 2
    assert to_pons(result.report.lines[0].score) == PONS_LATE[1][1]


# ---------------------------------------------------------------- perft

def completes_four(columns: tuple[str, ...], col: int, stone: str) -> bool:
    """Whether the top stone of ``col`` (just dropped) makes a line of four."""
    row = len(columns[col]) - 1

    def owner(c: int, r: int) -> str:
        return columns[c][r] if 0 <= c < WIDTH and 0 <= r < len(columns[c]) else ""

    for dc, dr in ((0, 1), (1, 0), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            c, r = col + sign * dc, row + sign * dr
            while owner(c, r) == stone:
                run += 1
                c, r = c + sign * dc, r + sign * dr
        if run >= 4:
            return True
    return False


@functools.cache
def naive_perft(columns: tuple[str, ...], depth: int) -> int:
    """Move sequences of ``depth`` plies from a position that is not over (columns as
    strings of 'X' and 'O' from the bottom); a line that ends in a four before
    ``depth`` counts for nothing.  Memoised on the position, which is all the
    count depends on."""
    if depth == 0:
        return 1
    stone = "XO"[sum(len(column) for column in columns) % 2]
    total = 0
    for col in range(WIDTH):
        if len(columns[col]) == HEIGHT:
            continue
        child = columns[:col] + (columns[col] + stone,) + columns[col + 1:]
        if depth == 1:
            total += 1
        elif not completes_four(child, col, stone):
            total += naive_perft(child, depth - 1)
    return total


def columns_of(pos: Board) -> tuple[str, ...]:
    return tuple("".join("XO"[pos.cell(col, row) - 1] for row in range(pos.column_height(col)))
                 for col in range(WIDTH))


def test_perft_of_the_empty_board() -> None:
    """No game can end and no column fill within 6 plies; at 7 the six-stone columns
    lose one move each (7**7 - 7), at 8 the first fours end games."""
    for depth in range(1, 7):
        assert perft.perft(0, 0, depth) == 7 ** depth
    empty = ("",) * WIDTH
    assert naive_perft(empty, 7) == 7 ** 7 - 7 == perft.perft(0, 0, 7)
    assert perft.perft(0, 0, 8) == naive_perft(empty, 8)


def test_perft_from_late_positions() -> None:
    """Where games end by fours and full columns within the horizon."""
    for pos in late_positions(random.Random(SEED + 6), 10, 30):
        for depth in (3, 5):
            assert perft.perft(pos.current, pos.mask, depth) == naive_perft(columns_of(pos), depth), \
                digits(pos)


def test_a_solve_cut_short_never_passes_for_a_move_that_reaches_the_score() -> None:
    """Regression: the root's score comes from the book at once (12 stones), then each
    move is checked against it; when the node budget ran out inside that check, the
    aborted search's 0 was taken for "reaches the score" and a move losing in 3 was
    played instead of the one losing in 14.  Column 1 is the only best move here
    (bitbully: -2 -12 -4 -13 -12 -12 -12)."""
    try:
        book = OpeningBook.load()
    except BookUnavailableError as err:
        pytest.skip(f"no opening book: {err}")
    pos = parse_digits("122211522374")
    searcher = Searcher(hash_mb=16, book=book)
    searcher.threads[0].begin(5000)
    assert searcher.threads[0].solve_root(pos, False, 3, find_nodes=5000) == -1
    searcher.clear()
    result = searcher.search(pos, Limits(hard_ms=5000))
    assert result.move == 0 and result.report is not None and result.report.exact


def test_no_exact_attempt_takes_a_wide_board_s_middle_game_nodes() -> None:
    """8x8 at 16 stones (48 empty cells) is far from solvable: its nodes go to the
    iterations, which reach depth 10 in 60,000 (depth 3 when every iteration was
    followed by a solve attempt of at least 20,000 nodes, from 13 stones on)."""
    geometry = Geometry.parse("8x8")
    moves = [int(col) - 1 for col in "8584883545546477"]
    searcher = Searcher(16, geometry=geometry)
    pos = Board(geometry=geometry).play_all(moves)
    assert not searcher.solver_may_reach_the_end(pos)
    reports: list[Report] = []
    searcher.search(pos, Limits(nodes=60_000), on_report=reports.append)
    assert reports[-1].depth >= 10 and not reports[-1].exact
    late = fhourstones.random_positions(geometry, 1, (35, 35), seed=1)[0]  # 29 empty cells, as 7x6's at 13 stones
    assert searcher.solver_may_reach_the_end(late)


def test_a_middle_game_within_40_empty_cells_is_solved_an_opening_is_not() -> None:
    """Past 12 stones the solver is tried with up to 40 empty cells: an 8x7 game's
    position of 19 stones (37 empty cells), where c4engine left the draw against
    Fairy-Stockfish at 1 s + 0.05 (column 5, not 1), is then solved in a search of
    500,000 nodes (about 0.2 s).  An opening with as many empty cells is not tried:
    7x6 without its book at 2 stones, or 8x8 before 24 stones."""
    geometry = Geometry.parse("8x7")
    searcher = Searcher(16, geometry=geometry)
    pos = Board(geometry=geometry).play_all([int(col) - 1 for col in "4184444663455553313"])
    assert searcher.solver_may_reach_the_end(pos)
    reports: list[Report] = []
    result = searcher.search(pos, Limits(nodes=500_000), on_report=reports.append)
    assert reports[-1].exact and reports[-1].best.score == 0 and result.move == 0
    assert not Searcher(16).solver_may_reach_the_end(Board().play_all([3, 3]))
    wide = Geometry.parse("8x8")
    three_rows = Board(geometry=wide).play_all(list(range(8)) * 3)  # 24 stones, 40 empty cells
    wide_searcher = Searcher(16, geometry=wide)
    assert wide_searcher.solver_may_reach_the_end(three_rows)
    assert not wide_searcher.solver_may_reach_the_end(Board(geometry=wide).play_all(list(range(8)) * 2 + list(range(7))))


def test_the_warm_up_runs_the_depth_limited_search_on_every_board() -> None:
    """The depth-limited search is compiled once a board is warmed up, though 8x7's
    warm-up position has every move settled by the rules and runs no node of it:
    before the kernel compiled ``negamax`` up front, a match's first move on 8x7 or
    8x8 compiled it and lost on time at 1 s + 0.05.  In a process of its own,
    where nothing else has run it."""
    code = ("from c4engine.geometry import Geometry; from c4engine.search.searcher import Searcher; "
            "s = Searcher(16, geometry=Geometry.parse('8x7')); s.warm_up(); "
            "print(len(s.kernel.negamax.negamax.signatures))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    assert int(done.stdout) >= 1
