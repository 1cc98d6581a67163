"""A plain minimax oracle for drop-on-top connect-K on any board, independent of c4engine.

The engine is checked against this module on tiny boards, so it shares nothing
with the engine: no bitboards, no import from ``c4engine``, no pruning, no
transposition table and no memoisation. The board is a 2-D list, one list of
stones per column from the bottom up (1 for the first player, 2 for the
second), and a line is found by walking the four directions from the stone just
dropped. Slow by design: a position with e empty cells costs up to
e!/(product of the per-column free counts)! leaves, which is fine for the few
empty cells of a tiny board.

Scores follow Pascal Pons' convention, generalised from 7x6 to W x H cells:
from the side to move, 0 for a draw; a win with the winning stone dropped when
n stones are already on the board scores (W*H + 1 - n) // 2, so each further
pair of moves costs one point; a loss is the negative of the opponent's win.

``count_positions`` counts the positions reachable in legal play (the game
stops at a line of K or a full board), as John Tromp counted them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

EMPTY, FIRST, SECOND = 0, 1, 2
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


class OracleError(ValueError):
    """A board size, row length or move sequence the oracle does not accept."""


@dataclass
class Board:
    """A drop-on-top board: ``columns[c]`` holds the stones of column c, bottom first."""

    width: int
    height: int
    connect: int
    columns: list[list[int]] = field(default_factory=list)
    stones: int = 0
    winner: int = EMPTY
    code: int = 0

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1 or self.connect < 1:
            raise OracleError(f"width, height and row length must be positive: "
                              f"{self.width}x{self.height}, connect {self.connect}")
        if not self.columns:
            self.columns = [[] for _ in range(self.width)]
        self._weights = [3 ** cell for cell in range(self.width * self.height)]

    @classmethod
    def from_moves(cls, width: int, height: int, connect: int,
                   moves: str | Iterable[int]) -> Board:
        """The board after ``moves``: a digit string of 1-based columns, or 1-based ints."""
        board = cls(width, height, connect)
        columns = [int(ch) for ch in moves] if isinstance(moves, str) else list(moves)
        for col in columns:
            if board.winner != EMPTY:
                raise OracleError(f"move {col} after the game was won")
            if not 1 <= col <= width or not board.can_play(col - 1):
                raise OracleError(f"illegal move {col} on a {width}x{height} board")
            board.play(col - 1)
        return board

    @property
    def to_move(self) -> int:
        return FIRST if self.stones % 2 == 0 else SECOND

    def is_full(self) -> bool:
        return self.stones == self.width * self.height

    def is_over(self) -> bool:
        return self.winner != EMPTY or self.is_full()

    def can_play(self, col: int) -> bool:
        return len(self.columns[col]) < self.height

    def legal_columns(self) -> list[int]:
        """0-based columns with room left."""
        return [col for col in range(self.width) if self.can_play(col)]

    def completes_line(self, col: int) -> bool:
        """Whether the side to move, dropping into ``col``, makes a line of ``connect``."""
        row, player = len(self.columns[col]), self.to_move
        for dc, dr in DIRECTIONS:
            run = 1 + self._run(col, row, dc, dr, player) + self._run(col, row, -dc, -dr, player)
            if run >= self.connect:
                return True
        return False

    def _run(self, col: int, row: int, dc: int, dr: int, player: int) -> int:
        """How many of ``player``'s stones follow (col, row) in direction (dc, dr)."""
        count, col, row = 0, col + dc, row + dr
        while 0 <= col < self.width and 0 <= row < len(self.columns[col]) \
                and self.columns[col][row] == player:
            count, col, row = count + 1, col + dc, row + dr
        return count

    def play(self, col: int) -> None:
        """Drop the side to move's stone into 0-based ``col``; records a win it makes."""
        player, stack = self.to_move, self.columns[col]
        if self.completes_line(col):
            self.winner = player
        self.code += player * self._weights[col * self.height + len(stack)]
        stack.append(player)
        self.stones += 1

    def undo(self, col: int) -> None:
        stack = self.columns[col]
        player = stack.pop()
        self.code -= player * self._weights[col * self.height + len(stack)]
        self.stones -= 1
        self.winner = EMPTY


def win_score(board: Board) -> int:
    """The score of the side to move winning with its next stone."""
    return (board.width * board.height + 1 - board.stones) // 2


def solve(board: Board) -> int:
    """The exact score of ``board`` for the side to move, by full-width minimax."""
    if board.is_over():
        raise OracleError("the game is over: there is nothing to solve")
    return _negamax(board)


def _negamax(board: Board) -> int:
    if board.is_full():
        return 0
    best = -board.width * board.height
    for col in board.legal_columns():
        if board.completes_line(col):
            value = win_score(board)
        else:
            board.play(col)
            value = -_negamax(board)
            board.undo(col)
        best = max(best, value)
    return best


def count_positions(width: int, height: int, connect: int = 4) -> int:
    """The number of distinct positions reachable in legal play, the empty board included."""
    board = Board(width, height, connect)
    seen = {board.code}
    _visit(board, seen)
    return len(seen)


def _visit(board: Board, seen: set[int]) -> None:
    for col in board.legal_columns():
        board.play(col)
        if board.code not in seen:
            seen.add(board.code)
            if board.winner == EMPTY:
                _visit(board, seen)
        board.undo(col)


def plies_to_end(board: Board) -> int:
    """How the game ends with best play, counted in plies rather than scored: ``p > 0``
    when the side to move wins with the stone dropped ``p`` plies from now (1: its
    next), ``-p`` when it loses to the stone dropped ``p`` plies from now, 0 for a
    draw.  The winner hurries and the loser holds out; nothing here uses a score's
    formula, so distances read from scores can be checked against it."""
    if board.is_over():
        raise OracleError("the game is over: there is nothing to count")
    return _plies(board)


def _plies(board: Board) -> int:
    if any(board.completes_line(col) for col in board.legal_columns()):
        return 1
    outcomes = []
    for col in board.legal_columns():
        board.play(col)
        reply = 0 if board.is_full() else _plies(board)
        board.undo(col)
        outcomes.append(0 if reply == 0 else -reply - 1 if reply > 0 else -reply + 1)
    return max(outcomes, key=_preference)


def _preference(outcome: int) -> tuple[int, int]:
    """Order outcomes from the mover's side: a win sooner, then a draw, then a loss later."""
    if outcome > 0:
        return 2, -outcome
    return (1, 0) if outcome == 0 else (0, -outcome)


def wins_within(board: Board, plies: int) -> bool:
    """Whether the side to move can force a win with a stone dropped at most ``plies``
    plies from now, whatever the opponent does."""
    if plies < 1:
        return False
    if any(board.completes_line(col) for col in board.legal_columns()):
        return True
    if plies < 3:
        return False
    for col in board.legal_columns():
        board.play(col)
        forced = not board.is_full() and _loses_within(board, plies - 1)
        board.undo(col)
        if forced:
            return True
    return False


def _loses_within(board: Board, plies: int) -> bool:
    """Whether every move of the side to move leaves the opponent a win within ``plies``."""
    for col in board.legal_columns():
        if board.completes_line(col):
            return False
        board.play(col)
        lost = not board.is_full() and wins_within(board, plies - 1)
        board.undo(col)
        if not lost:
            return False
    return True
