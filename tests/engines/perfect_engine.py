#!/usr/bin/env python3
"""A perfect Connect-Four opponent for the referee, speaking our UCI-style protocol.

    c4engine match --engine c4engine --engine "python tests/engines/perfect_engine.py" ...

Issue 4 asks whether c4engine wins as first player against perfect play and
never loses a drawn opening as second player; that needs an opponent that is
known to be perfect and is independent of c4engine's own solver (a bug shared
by both sides of a match would go unnoticed).  The ``bitbully`` package (a
test-only oracle, AGPL: never imported by the engine) supplies
the exact game values; this file only wraps it in the protocol.

Policy: the move with the best exact score (Pons' convention, which already
prefers the fastest win and the slowest loss); among equal scores the column
nearest the centre (4, 3, 5, 2, 6, 1, 7), or, with ``setoption name Seed value
N`` (N > 0), a random one of them, for variety over many games.

Speed: the referee forfeits a move that comes after ``movetime``, and
``bitbully``'s ``score_all_moves`` (a full solve of every column) takes over a
second on some 12-stone positions, the first ply past its 12-ply book.  So the
engine asks for less: the value ``v`` of the position itself (a book probe up
to 12 stones; an MTD(f) search seeded with the value of the previous move
after that), then one null-window test per column, centre first, for "does
this column keep ``v``?", stopping at the first that does.  That picks the same
move as the full scores (checked by tests/test_perfect_play.py) in a tenth of
the time (worst measured about 0.15 s).  The solver's transposition table is
kept for the whole process: its entries are exact and keyed by position.

bitbully holds the GIL while it searches, so the engine does no work between
``go`` commands (no pondering): it never takes CPU from its opponent.
"""

from __future__ import annotations

import random
import sys
import time
from dataclasses import dataclass, field

from bitbully import BitBully  # type: ignore[import-untyped]
from bitbully import Board as BitBullyBoard

from c4engine.rules.board import Board, RulesError
from c4engine.rules.notation import format_move, parse_fen, play_moves

WIDTH, HEIGHT = 7, 6
CELLS = WIDTH * HEIGHT
CENTRE_FIRST = (3, 2, 4, 1, 5, 0, 6)
BOOK = "12-ply-dist"  # exact values with distances for every position up to 12 stones


def mate_distance(score: int, stones: int) -> int | None:
    """The protocol's ``mate N`` for a Pons score with ``stones`` on the board
    (docs/design.md, Scores); None for a draw."""
    if score > 0:
        return (22 - score) - stones // 2
    if score < 0:
        return -((22 + score) - (stones + 1) // 2)
    return None


def to_bitbully(pos: Board) -> BitBullyBoard:
    """bitbully's board for ``pos`` (built from the cells, so FEN positions work too)."""
    return BitBullyBoard.from_array([[pos.cell(col, row) for row in range(HEIGHT)]
                             for col in range(WIDTH)])


@dataclass
class Choice:
    """A chosen column (0-based) and the exact score of the position for the mover."""

    col: int
    score: int


@dataclass
class PerfectPlayer:
    """Picks perfect moves with bitbully; ``seed`` > 0 breaks ties at random."""

    seed: int = 0
    solver: BitBully = field(default_factory=lambda: BitBully(BOOK))
    rng: random.Random = field(default_factory=random.Random)
    last_score: int = 0  # the value found at our previous move: MTD(f)'s first guess

    def reseed(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def choose(self, board: BitBullyBoard) -> Choice:
        """The move to play in ``board`` (not over, not full) and its exact value."""
        stones = board.count_tokens()
        legal = [col for col in CENTRE_FIRST if board.is_legal_move(col)]
        if board.can_win_next():  # the fastest win there is; no search needed
            wins = [col for col in legal if board.can_win_next(col)]
            return Choice(self._tie_break(wins), (CELLS + 1 - stones) // 2)
        value = self.solver.mtdf(board, self.last_score)
        self.last_score = value
        keeping = []
        for col in legal:
            if self._keeps(board, col, value):
                keeping.append(col)
                if self.seed <= 0:  # centre-first: the first column that keeps it
                    break
        if not keeping:
            raise RuntimeError(f"bitbully: no column keeps the value {value}")
        return Choice(self._tie_break(keeping), value)

    def _keeps(self, board: BitBullyBoard, col: int, value: int) -> bool:
        """Whether playing ``col`` scores at least ``value``: one null-window search,
        far cheaper than the column's exact score."""
        child = board.play_on_copy(col)
        if child.is_full():
            return value <= 0
        # the child's score, from the opponent's view, is at most -value
        return -self.solver.negamax(child, -value, -value + 1, 0) >= value

    def _tie_break(self, cols: list[int]) -> int:
        """Centre first, or a random one of equally good columns when seeded."""
        return self.rng.choice(cols) if self.seed > 0 and len(cols) > 1 else cols[0]


class PerfectEngine:
    """The protocol loop: one command per line on stdin, answers flushed on stdout."""

    def __init__(self) -> None:
        self._player: PerfectPlayer | None = None
        self.seed = 0
        self.pos = Board()
        self.drops = False
        self.pending: str | None = None  # a bestmove held back until stop/ponderhit

    @property
    def player(self) -> PerfectPlayer:
        """Loaded at the first isready or go, so that ``uciok`` comes at once."""
        if self._player is None:
            self._player = PerfectPlayer()
            self._player.reseed(self.seed)
        return self._player

    @staticmethod
    def reply(text: str) -> None:
        print(text, flush=True)

    def run(self) -> None:
        for line in sys.stdin:
            words = line.split()
            if words == ["quit"]:
                return
            handler = getattr(self, f"on_{words[0]}", None) if words else None
            try:
                if handler is None:
                    self.reply(f"info string error unknown command '{line.strip()}'")
                else:
                    handler(words[1:])
            except (RulesError, ValueError) as err:
                self.reply(f"info string error {err}")
        self.flush_pending()

    def on_uci(self, _args: list[str]) -> None:
        self.reply("id name perfect")
        self.reply("id author c4engine tests (bitbully oracle)")
        self.reply("option name UCI_Variant type combo default cfour var cfour")
        self.reply("option name Seed type spin default 0 min 0 max 2147483647")
        self.reply("uciok")

    def on_isready(self, _args: list[str]) -> None:
        _ = self.player
        self.reply("readyok")

    def on_setoption(self, args: list[str]) -> None:
        text = " ".join(args)
        name, _, value = text.removeprefix("name ").partition(" value ")
        key = name.strip().lower()
        if key == "uci_variant":
            if value.strip() != "cfour":
                raise ValueError(f"option UCI_Variant: only cfour, not '{value.strip()}'")
            self.drops = True
        elif key == "seed":
            self.seed = int(value)
            if self._player is not None:
                self._player.reseed(self.seed)
        else:
            raise ValueError(f"unknown option '{name.strip()}'")

    def on_ucinewgame(self, _args: list[str]) -> None:
        self.flush_pending()
        self.pos = Board()
        if self._player is not None:
            self._player.last_score = 0

    def on_position(self, args: list[str]) -> None:
        moves_at = args.index("moves") if "moves" in args else len(args)
        if args[:1] == ["startpos"]:
            start = Board()
        elif args[:1] == ["fen"]:
            start = parse_fen(" ".join(args[1:moves_at]))
        else:
            raise ValueError("position: expected startpos or fen")
        self.pos = play_moves(start, args[moves_at + 1:])  # raises before any change
        self.flush_pending()

    def on_go(self, args: list[str]) -> None:
        self.flush_pending()
        started = time.perf_counter()
        if self.pos.is_over():
            self.reply("info string error go: the game is already over")
            self.reply("bestmove (none)")
            return
        choice = self.player.choose(to_bitbully(self.pos))
        move = format_move(choice.col, self.pos, self.drops)
        stones = self.pos.stones
        mate = mate_distance(choice.score, stones)
        score = "cp 0" if mate is None else f"mate {mate}"
        ms = round(1000 * (time.perf_counter() - started))
        self.reply(f"info depth {CELLS - stones} score {score} time {ms} pv {move}")
        if "infinite" in args or "ponder" in args:
            self.pending = f"bestmove {move}"  # the protocol: only after stop/ponderhit
        else:
            self.reply(f"bestmove {move}")

    def on_stop(self, _args: list[str]) -> None:
        self.flush_pending()

    def on_ponderhit(self, _args: list[str]) -> None:
        self.flush_pending()

    def flush_pending(self) -> None:
        if self.pending is not None:
            self.reply(self.pending)
            self.pending = None


if __name__ == "__main__":
    PerfectEngine().run()
