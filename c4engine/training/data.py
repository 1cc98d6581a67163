"""Exactly scored positions to train an evaluation on.

On 7x6, a sample of the 12-stone distance book (exact scores), and on every
board positions at other stone counts solved by the engine's own solver
(win/draw/loss): from random playouts, from games the engine plays with some
noise (:func:`noisy_game`), or from the frontier of the engine's searches from
those games' positions (:func:`leaf_positions`, read back from the
transposition table).  The search evaluates positions like the last two kinds:
without the book, its leaves lie some 10-16 plies past the root (12-24 stones
from an opening position), on lines of sensible moves with unlikely ones
between, since alpha-beta tries every reply at every other ply.  Weights fitted
to random playouts rank such positions worse, and the engine plays worse with
them.  A seeded random tenth of the positions is held out (:func:`make_dataset`);
the fits never see it, and no position of ``c4engine strength``'s set is used at all.

``tools/make_eval_data.py`` makes such files; :mod:`c4engine.training.linear`
and :mod:`c4engine.training.network` fit evaluations to them.
"""

from __future__ import annotations

import itertools
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..geometry import STANDARD, Geometry
from ..kernel.book import SCORE_STONES, OpeningBook
from ..kernel.evaluation import THREAT_WEIGHTS
from ..kernel.layout import GENERATION, TT_SLOTS
from ..referee.strength import builtin_positions, read_positions
from ..rules.bits import column_cells, mirror
from ..rules.board import Board
from ..rules.notation import parse_digits
from ..search.limits import Limits
from ..search.searcher import Searcher, proving_searcher
from .packing import pack

HELD_OUT_FRACTION = 0.1
_BOOK_STONES = 12
GAME_NOISE = 0.15  # share of a noisy game's moves played at random
GAME_MOVE_NODES = 20_000  # the engine's search per move of a noisy game, past the book
LEAF_ROOT_STONES = 16  # a leaf search starts from a noisy game's position of at most this many stones
LEAF_SEARCH_NODES = 60_000
LEAVES_PER_ROOT = 32


@dataclass
class Dataset:
    """Positions with their result for the side to move (-1, 0, +1), and which are held out."""

    geometry: Geometry
    current: np.ndarray
    mask: np.ndarray
    stones: np.ndarray
    result: np.ndarray
    held_out: np.ndarray

    @classmethod
    def of_boards(cls, geometry: Geometry, boards: list[Board], results: list[int], held_out: np.ndarray) -> Dataset:
        """``boards`` with their ``results``, in the training's words (:mod:`.packing`)."""
        return cls(geometry, np.array([pack(b.current, geometry) for b in boards], dtype=np.int64),
                   np.array([pack(b.mask, geometry) for b in boards], dtype=np.int64),
                   np.array([b.stones for b in boards], dtype=np.int8), np.array(results, dtype=np.int8), held_out)

    def __len__(self) -> int:
        return int(self.current.size)

    def save(self, path: Path) -> None:
        np.savez_compressed(path, board=self.geometry.name, current=self.current, mask=self.mask,
                            stones=self.stones, result=self.result, held_out=self.held_out)

    @classmethod
    def load(cls, path: Path) -> Dataset:
        """The set saved at ``path``; ValueError for a file that is no .npz archive,
        which numpy would otherwise read as a pickle and refuse with advice to load
        it unsafely."""
        if not zipfile.is_zipfile(path):
            raise ValueError("not an .npz archive")
        with np.load(path) as data:
            return cls(Geometry.parse(str(data["board"])), data["current"], data["mask"], data["stones"],
                       data["result"], data["held_out"])


# -- data ---------------------------------------------------------------------


def decode_book_key(key: int) -> tuple[int, int]:
    """``(current, mask)`` of a 12-stone book key (the prefix code of
    :mod:`c4engine.kernel.book`: per column bottom up ``10`` first player, ``11``
    second, ``0`` closes the column; the first player is to move)."""
    bits = 2 * _BOOK_STONES + 8
    pos = bits - 1
    current = mask = 0
    for col in range(STANDARD.width):
        row = 0
        while (key >> pos) & 1:
            cell = 1 << (col * STANDARD.h1 + row)
            mask |= cell
            if not (key >> (pos - 1)) & 1:
                current |= cell
            pos -= 2
            row += 1
        pos -= 1
    return current, mask


def book_sample(count: int, rng: np.random.Generator) -> tuple[list[Board], list[int]]:
    """``count`` random positions of the 12-stone distance book and their results."""
    import bitbully_databases  # type: ignore[import-untyped]

    book = OpeningBook.load()
    path = bitbully_databases.BitBullyDatabases.get_database_path("12-ply-dist")
    records = np.fromfile(path, dtype=np.dtype([("key", ">i4"), ("value", "u1")]))
    picks = rng.choice(records.size, size=min(count, records.size), replace=False)
    boards, results = [], []
    for key in records["key"][np.sort(picks)].astype(np.int64) & 0xFFFFFFFF:
        current, mask = decode_book_key(int(key))
        score = book.probe(current, mask)
        if score is None:
            raise ValueError(f"book key {key:#x} decodes to a position the book does not answer")
        boards.append(Board(current, mask))
        results.append(int(np.sign(score)))
    return boards, results


def playout(geometry: Geometry, stones: int, rng: np.random.Generator) -> Board | None:
    """A position after ``stones`` stones of a game where each side takes a win on the
    spot, blocks a threat it must block, and otherwise plays at random, avoiding a
    move that lets the opponent win at once when it can; None if the game ends
    first or the side to move can win at once (the search sees that by itself)."""
    return playout_from(Board(0, 0, geometry=geometry), stones, rng)


def playout_from(board: Board, stones: int, rng: np.random.Generator) -> Board | None:
    """:func:`playout`, going on from ``board``."""
    while board.stones < stones:
        moves = board.legal_moves()
        wins = [col for col in moves if board.is_winning_move(col)]
        if wins:
            return None
        threats = board.winning_cells(board.opponent) & board.playable_cells()
        blocks = [col for col in moves if threats & column_cells(col, board.geometry.height)]
        if blocks:
            moves = blocks[:1]
        board = board.play(int(rng.choice(safe_moves(board, moves))))
        if board.is_over():
            return None
    return None if board.can_win_now() else board


def safe_moves(board: Board, moves: list[int]) -> list[int]:
    """Those of ``moves`` after which the opponent cannot win at once, or all of them
    if none is.  A weak solve scores every losing move alike, so a side that is
    lost would otherwise often hand over a win at once and end the game early."""
    return [col for col in moves if not board.play(col).can_win_now()] or moves


def solved_positions(geometry: Geometry, count: int, stones: tuple[int, int], rng: np.random.Generator,
                     node_limit: int) -> Iterator[tuple[Board, int]]:
    """Up to ``count`` playout positions with ``stones`` (both ends) stones and their
    result, by the engine's solver; a position it cannot prove within ``node_limit``
    nodes is skipped (a node count, not a time, so that the data do not depend on
    the machine's load), so hard positions are under-represented."""
    searcher = proving_searcher(geometry, PROVING_HASH_MB)
    found = seen = 0
    while found < count and seen < 20 * count:
        seen += 1
        board = playout(geometry, int(rng.integers(stones[0], stones[1] + 1)), rng)
        if board is None:
            continue
        result = prove(searcher, board, node_limit)
        if result is None:
            continue
        found += 1
        yield board, result


PROVING_HASH_MB = 64  # the solver's table: what a position of the game's stones needs


def game_searchers(geometry: Geometry) -> tuple[Searcher, Searcher]:
    """The solver and the player of :func:`noisy_game`.  The player searches with the
    hand-written weights, so that the data do not change with the learned ones."""
    return proving_searcher(geometry, PROVING_HASH_MB), Searcher(16, weights=THREAT_WEIGHTS, geometry=geometry)


def prove(searcher: Searcher, board: Board, node_limit: int) -> int | None:
    """``board``'s result for the side to move (-1, 0, +1), or None if the solver
    cannot prove it within ``node_limit`` nodes."""
    race = searcher.race(lambda thread: thread.solve(board, True), node_limit)
    searcher.clear()
    return int(np.sign(race.value)) if race.finished else None


def noisy_game(geometry: Geometry, last: int, rng: np.random.Generator, solver: Searcher,
               player: Searcher) -> list[Board]:
    """The positions of a game, up to ``last`` stones or until the side to move can
    win at once.  With probability ``GAME_NOISE`` a move is any that does not let
    the opponent win at once; otherwise a move that keeps the best result, picked
    at random among them (among those that do not let the opponent win at once,
    if any), while the book makes that proof cheap (7x6, under 12
    stones: ``solver``), and past it the engine's own choice in ``GAME_MOVE_NODES``
    nodes (``player``, hand-written weights)."""
    board = Board(0, 0, geometry=geometry)
    positions = []
    while board.stones <= last and not board.is_over() and not board.can_win_now():
        positions.append(board)
        board = board.play(noisy_move(board, rng, solver, player))
    return positions


def noisy_move(board: Board, rng: np.random.Generator, solver: Searcher, player: Searcher) -> int:
    """One move of :func:`noisy_game`."""
    moves = board.legal_moves()
    if rng.random() < GAME_NOISE:
        return int(rng.choice(safe_moves(board, moves)))
    if solver.book.has_scores and board.stones < SCORE_STONES:
        scores, _ = solver.solve_moves(board, weak=True)
        solver.clear()
        best = max(scores[col] for col in moves)
        return int(rng.choice(safe_moves(board, [col for col in moves if scores[col] == best])))
    player.clear()
    move = player.search(board, Limits(nodes=GAME_MOVE_NODES)).move
    assert move is not None  # the game is not over
    return move


def game_positions(geometry: Geometry, count: int, stones: tuple[int, int], rng: np.random.Generator,
                   node_limit: int) -> Iterator[tuple[Board, int]]:
    """Up to ``count`` distinct positions of noisy games (:func:`noisy_game`) with
    ``stones`` (both ends) stones, and their results; as in
    :func:`solved_positions`, a position not proven within ``node_limit`` nodes
    is skipped.  Every position of a game in the range is taken; at most
    ``count`` games are played."""
    solver, player = game_searchers(geometry)

    def candidates(seen: set[int]) -> Iterator[Board]:
        for _ in range(count):
            yield from (board for board in noisy_game(geometry, stones[1], rng, solver, player)
                        if board.stones >= stones[0])

    return solved_distinct(candidates, count, solver, node_limit)


def leaf_positions(geometry: Geometry, count: int, stones: tuple[int, int], rng: np.random.Generator,
                   node_limit: int) -> Iterator[tuple[Board, int]]:
    """Up to ``count`` distinct positions a search evaluates, with ``stones`` (both
    ends) stones, and their results (skipped when not proven within
    ``node_limit`` nodes, as in :func:`solved_positions`).  Each root is a
    position of a noisy game (:func:`noisy_game`) of at most
    ``LEAF_ROOT_STONES`` stones; the engine searches it for
    ``LEAF_SEARCH_NODES`` nodes with the hand-written weights, and
    ``LEAVES_PER_ROOT`` of the positions it stored with at most one ply left
    (:func:`searched_positions`) are drawn."""
    solver, player = game_searchers(geometry)

    def candidates(seen: set[int]) -> Iterator[Board]:
        for _ in range(20 * count):
            game = noisy_game(geometry, LEAF_ROOT_STONES, rng, solver, player)
            yield from game_leaves(game, LEAVES_PER_ROOT, stones, rng, player, seen)

    return solved_distinct(candidates, count, solver, node_limit)


def game_leaves(game: list[Board], count: int, stones: tuple[int, int], rng: np.random.Generator,
                player: Searcher, seen: set[int] | frozenset[int] = frozenset()) -> list[Board]:
    """Up to ``count`` positions with ``stones`` (both ends) stones, not in ``seen``, that
    ``player`` stored with at most one ply left (:func:`searched_positions`) searching a
    random position of ``game`` with at most ``LEAF_ROOT_STONES`` stones for
    ``LEAF_SEARCH_NODES`` nodes: the positions a search evaluates."""
    roots = [board for board in game if board.stones <= LEAF_ROOT_STONES]
    if not count or not roots:
        return []
    player.clear()
    player.search(roots[int(rng.integers(len(roots)))], Limits(nodes=LEAF_SEARCH_NODES))
    frontier = [board for board in searched_positions(player, 1)
                if stones[0] <= board.stones <= stones[1] and board.key not in seen]
    return [frontier[int(at)] for at in rng.choice(len(frontier), size=min(count, len(frontier)), replace=False)]


def solved_distinct(candidates: Callable[[set[int]], Iterator[Board]], count: int, solver: Searcher,
                    node_limit: int) -> Iterator[tuple[Board, int]]:
    """The distinct positions of ``candidates(seen)`` (which may use the keys
    ``seen`` so far) with their results, until ``count`` were tried; one the
    solver cannot prove within ``node_limit`` nodes is skipped."""
    seen: set[int] = set()
    for board in candidates(seen):
        if board.key in seen:
            continue
        seen.add(board.key)
        result = prove(solver, board, node_limit)
        if result is not None:
            yield board, result
        if len(seen) == count:
            return


def searched_positions(searcher: Searcher, max_depth: int) -> list[Board]:
    """The positions the last search stored in ``searcher``'s table with at most
    ``max_depth`` plies left: the search's frontier, which the evaluation scores.

    An entry keeps the low bits of its key and its slot is the key modulo the
    table's (odd) size, so the key follows by the Chinese remainder theorem (or
    from the second word, for boards with two-word entries); Pons' key
    ``current + mask`` then decodes column by column."""
    table, mem = searcher.kernel.table, searcher.mem
    entries = searcher.tt.reshape(-1, table.ENTRY_WORDS)
    data = entries[:, -1]
    slots = np.flatnonzero((data != 0)
                           & ((data >> table.GEN_SHIFT) & (table.GENERATIONS - 1) == mem[GENERATION])
                           & ((data >> table.DEPTH_SHIFT) & table.DEPTH_FIELD <= max_depth))
    if table.ENTRY_WORDS == 2:
        keys = entries[slots, 0] ^ data[slots]
    else:
        size, low = int(mem[TT_SLOTS]), data[slots] & table.KEY_FIELD
        inverse = pow(1 << table.PARTIAL_KEY_BITS, -1, size)
        keys = low + ((slots - low) % size * inverse % size << table.PARTIAL_KEY_BITS)
    return [decode_key(int(key), searcher.geometry) for key in keys]


def decode_key(key: int, geometry: Geometry) -> Board:
    """The position whose key (``current + mask``) is ``key``: in a column of ``k``
    stones, ``mask`` is ``2**k - 1`` and ``current`` is less than ``2**k``, so the
    column's part of the key lies in ``[2**k - 1, 2**(k + 1) - 2]``."""
    current = mask = 0
    for col in range(geometry.width):
        part = (key >> (col * geometry.h1)) & ((1 << geometry.h1) - 1)
        column_mask = (1 << ((part + 1).bit_length() - 1)) - 1
        current |= (part - column_mask) << (col * geometry.h1)
        mask |= column_mask << (col * geometry.h1)
    return Board(current, mask, geometry=geometry)


def strength_keys() -> set[int]:
    """The keys (and mirror images' keys) of ``c4engine strength``'s positions, which
    measure the engine and so are never trained on."""
    boards = [parse_digits(position.moves) for position in read_positions(builtin_positions())]
    return {board.key for board in boards} | {board_mirror_key(board) for board in boards}


def make_dataset(geometry: Geometry, book: int, solved: int, stones: tuple[int, int], seed: int,
                 node_limit: int, games: int = 0, leaves: int = 0,
                 solved_one: Callable[[int], None] = lambda count: None) -> Dataset:
    """``book`` book positions (7x6 only), ``solved`` solved playout positions, up
    to ``games`` solved positions of noisy games and up to ``leaves`` solved
    positions of searches from them (:func:`leaf_positions`), a seeded tenth of
    them held out; ``solved_one(1)`` is called as each solved position is found (a progress
    bar's).  Duplicates (a position or its mirror image) are kept once, so no
    position is both trained on and held out; on 7x6 the strength set's
    positions are left out."""
    rng = np.random.default_rng(seed)
    boards, results = book_sample(book, rng) if book and geometry.is_standard else ([], [])
    for board, result in itertools.chain(solved_positions(geometry, solved, stones, rng, node_limit),
                                         game_positions(geometry, games, stones, rng, node_limit),
                                         leaf_positions(geometry, leaves, stones, rng, node_limit)):
        solved_one(1)
        boards.append(board)
        results.append(result)
    unique: dict[int, int] = {}
    excluded = strength_keys() if geometry.is_standard else set()
    for index, board in enumerate(boards):
        if board.key not in excluded:
            unique.setdefault(min(board.key, board_mirror_key(board)), index)
    rows = sorted(unique.values())
    held_out = rng.random(len(rows)) < HELD_OUT_FRACTION
    return Dataset.of_boards(geometry, [boards[i] for i in rows], [results[i] for i in rows], held_out)


def board_mirror_key(board: Board) -> int:
    """The key of the position's mirror image."""
    width, height = board.geometry.width, board.geometry.height
    return mirror(board.current, width, height) + mirror(board.mask, width, height)
