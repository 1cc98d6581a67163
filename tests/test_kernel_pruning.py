"""The kernel's pruning rules, each where it fires, and the solver against bitbully.

Every rule of the kernel's static resolution claims something about the score
of a position it never searches: "lost at once", "at most a draw", "at most a
loss by the end of the game" (the even-rows bound).  Each test here finds
positions where a rule fires and checks its claim against bitbully, a solver
that shares no code with ours (a test-only oracle).  The whole solver is then
compared with bitbully on random positions of every stone count, weak and
strong, which covers what has no claim of its own to check (move order,
enhanced transposition cutoffs, exact bounds, the mirror-symmetric table).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest
from kernel_calls import compiled_caller

from c4engine.kernel import jit, layout, negamax, resolve, solve, table
from c4engine.kernel.addresses import compiled_address
from c4engine.kernel.constants import CELLS, WIDTH
from c4engine.rules.board import Board
from c4engine.rules.notation import parse_digits
from c4engine.rules.scores import to_pons
from c4engine.search.searcher import Searcher
from c4engine.search.thread import UNLIMITED

bitbully = pytest.importorskip("bitbully", reason="the bitbully solver (test oracle) is not installed")

# The kernel's internal functions these tests call (see kernel_calls).
resolve_position, forced_cells, forced_move, loss_now, can_make_line, follow_up_bound = (
    compiled_caller(function) for function in (resolve.resolve, resolve.forced_cells, resolve.forced_move,
                                               resolve.loss_now, resolve.can_make_line, resolve.follow_up_bound))
winning_cells, mirror = compiled_caller(jit.winning_cells), compiled_caller(jit.mirror)
table_key, tt_slot, tt_lookup, stored_move, entry_move = (
    compiled_caller(function) for function in (table.table_key, table.tt_slot, table.tt_lookup, table.stored_move,
                                               table.entry_move))

SEED = 20261122
ORACLE = bitbully.BitBully("12-ply-dist")


def true_score(pos: Board) -> int:
    """bitbully's exact score of ``pos`` (Pons' convention, side to move)."""
    return int(ORACLE.mtdf(bitbully.Board(list(pos.history))))


def random_positions(rng: random.Random, stones: int) -> Iterator[Board]:
    """Positions after ``stones`` random moves, the game not over and the side to move
    unable to win at once (the kernel's precondition)."""
    while True:
        pos = Board()
        while pos.stones < stones and not pos.is_over():
            pos = pos.play(rng.choice(pos.legal_moves()))
        if pos.stones == stones and not pos.is_over() and not pos.can_win_now():
            yield pos


def resolved(searcher: Searcher, pos: Board) -> tuple[int, ...]:
    """The kernel's static resolution of ``pos`` with an open window."""
    return tuple(int(x) for x in resolve_position(pos.current, pos.mask, pos.stones, -layout.INFINITE,
                                                layout.INFINITE, searcher.mem))


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return Searcher(hash_mb=16)


# ---------------------------------------------------------------- static rules

def test_two_immediate_threats_lose_without_a_node(searcher: Searcher) -> None:
    """The first player holds three in a row on the bottom row, open at both ends:
    the second player (5 stones on the board) cannot block both, and loses to the
    first player's 7th stone: Pons score -(43 - 6) // 2 = -18."""
    pos = parse_digits("27374")
    layout.begin_search(searcher.mem, UNLIMITED)
    value = negamax.negamax(pos.current, pos.mask, pos.stones, CELLS, -layout.INFINITE, layout.INFINITE, 0,
                           searcher.mem)
    assert to_pons(int(value)) == -18 == true_score(pos)
    assert searcher.mem[layout.NODES] == 0


def test_a_context_without_the_drivers_addresses_raises(searcher: Searcher) -> None:
    """The drivers call the recursion and the root search through their addresses in
    the context (kernel.addresses): a context that lacks one raises instead of
    jumping to 0, and one that has them searches."""
    pos = parse_digits("4453")
    for slot in (layout.SEARCH_ADDRESS, layout.NEGAMAX_ADDRESS):
        mem = searcher.mem.copy()
        mem[slot] = 0
        layout.begin_search(mem, UNLIMITED)
        with pytest.raises(RuntimeError, match="lacks the address"):
            solve.solve(pos.current, pos.mask, pos.stones, False, mem)
    assert searcher.mem[layout.SEARCH_ADDRESS] == compiled_address(negamax.search_node, negamax.SEARCH_SIGNATURE) != 0
    layout.begin_search(searcher.mem, UNLIMITED)
    assert solve.solve(pos.current, pos.mask, pos.stones, False, searcher.mem) == true_score(pos)
    assert searcher.mem[layout.NODES] > 0


def test_an_internal_function_called_from_python_raises() -> None:
    """Only the entry points have a Python wrapper; another kernel function called
    from Python raises TypeError (numba would jump to the wrapper it never made)."""
    pos = parse_digits("4453")
    with pytest.raises(TypeError, match="internal to the kernel"):
        resolve.forced_cells(pos.current, pos.mask)
    assert forced_cells(pos.current, pos.mask) == (0, pos.playable_cells())


def test_a_threat_above_the_forced_block_loses(searcher: Searcher) -> None:
    """Random positions where the side to move must block the opponent's only
    immediate win right below another of its wins: resolved as lost at once."""
    rng = random.Random(SEED)
    found = 0
    for pos in random_positions(rng, 16):
        if found == 5:
            break
        opponent = pos.current ^ pos.mask
        wins, safe = forced_cells(pos.current, pos.mask)
        stacked = wins != 0 and wins & (wins - 1) == 0 and winning_cells(opponent, pos.mask) & (wins << 1)
        if not stacked:
            continue
        found += 1
        value = resolved(searcher, pos)[0]
        assert value == loss_now(pos.stones)
        assert to_pons(value) == true_score(pos)


def test_forced_lines_are_played_out_statically(searcher: Searcher) -> None:
    """Positions whose side to move has a single move that does not lose at once: the
    resolution plays it (and any forced reply) without a node, and whatever it
    settles or leaves to search keeps the score bitbully gives."""
    rng = random.Random(SEED + 1)
    checked = 0
    for pos in random_positions(rng, 20):
        if checked == 10:
            break
        wins, safe = forced_cells(pos.current, pos.mask)
        if forced_move(wins, safe) == 0 or safe == 0:
            continue
        flips = resolved(searcher, pos)[4]
        if flips == 0 and resolved(searcher, pos)[0] == resolve.UNRESOLVED:
            pytest.fail("a forced move was not played")
        checked += 1
        searcher.clear()
        assert searcher.solve(pos)[0] == true_score(pos)


def test_a_side_that_cannot_make_four_scores_at_most_a_draw(searcher: Searcher) -> None:
    """Late random positions where the side to move has no possible four left: the
    bound (0) holds against bitbully, and the kernel settles a window above it."""
    rng = random.Random(SEED + 2)
    found = 0
    for pos in random_positions(rng, 38):
        if found == 5:
            break
        if can_make_line(pos.current, pos.mask):
            continue
        found += 1
        assert true_score(pos) <= 0
        assert resolve_position(pos.current, pos.mask, pos.stones, 0, 1, searcher.mem)[0] <= 0


def test_follow_up_bound_never_exceeds_the_score() -> None:
    """On random positions with the first player to move, the claimeven bound is a
    true upper bound, and it fires often enough to matter, also with a loss (from a
    four of the second player's, not only "no four for either side")."""
    rng = random.Random(SEED + 3)
    fired = losses = 0
    for stones in range(24, 38, 2):
        for pos, _ in zip(random_positions(rng, stones), range(40)):
            bound = follow_up_bound(pos.current, pos.mask)
            if bound == resolve.NO_BOUND:
                continue
            fired += 1
            losses += bound < 0
            assert true_score(pos) <= to_pons(int(bound)), "".join(str(c + 1) for c in pos.history)
    assert fired >= 20 and losses >= 10


def test_mirror_entries_return_mirrored_moves(searcher: Searcher) -> None:
    """A position solved once answers its mirror image from the same entries: same
    key, same score without new work at the root, and the principal variation
    comes back mirrored."""
    pos = parse_digits("2252576253462244111563")
    mirrored = parse_digits("".join(str(WIDTH - c) for c in pos.history))
    assert table_key(pos.current, pos.mask)[0] == table_key(mirrored.current, mirrored.mask)[0]
    assert mirror(pos.mask) == mirrored.mask
    searcher.clear()
    score, _ = searcher.solve(pos)
    key, flipped = table_key(pos.current, pos.mask)
    entry = tt_lookup(searcher.mem, tt_slot(searcher.mem, key), key)
    assert entry != 0
    best = stored_move(entry_move(entry), flipped)
    out = np.zeros(CELLS, dtype=np.int64)
    length = solve.principal_variation(pos.current, pos.mask, best, searcher.mem, out)
    pv = [int(c) for c in out[:length]]
    length = solve.principal_variation(mirrored.current, mirrored.mask, WIDTH - 1 - best, searcher.mem, out)
    assert [int(c) for c in out[:length]] == [WIDTH - 1 - c for c in pv]
    assert searcher.solve(mirrored)[0] == score == true_score(pos)


# ---------------------------------------------------------------- against bitbully

def check_against_bitbully(searcher: Searcher, stone_counts: range, per_count: int, seed: int) -> None:
    """Strong and weak scores of random positions agree with bitbully's."""
    rng = random.Random(seed)
    wrong = []
    for stones in stone_counts:
        for pos, _ in zip(random_positions(rng, stones), range(per_count)):
            expected = true_score(pos)
            for weak in (False, True):
                searcher.clear()
                score, _ = searcher.solve(pos, weak)
                if score != (expected if not weak else (expected > 0) - (expected < 0)):
                    wrong.append(f"{''.join(str(c + 1) for c in pos.history)} weak={weak}: "
                                 f"expected {expected}, got {score}")
    assert not wrong, "\n".join(wrong)


def test_solver_agrees_with_bitbully_from_14_stones(searcher: Searcher) -> None:
    check_against_bitbully(searcher, range(14, CELLS - 1), 3, SEED + 10)


@pytest.mark.slow
def test_solver_agrees_with_bitbully_from_6_stones(searcher: Searcher) -> None:
    """Earlier positions take the solver seconds each (no book in ``solve``)."""
    check_against_bitbully(searcher, range(6, 14), 3, SEED + 11)
