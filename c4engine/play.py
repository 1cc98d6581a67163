"""``c4engine play``: a game against the engine in the terminal.

The engine runs in this process through :class:`~c4engine.backend.Backend`,
the same layer the protocol uses, so ``--level`` is the protocol's
``Skill Level`` and plays exactly as a GUI would see it.  After each engine
move the evaluation is said in words, with the time the move took, because a
bare column number teaches a person nothing.
"""

from __future__ import annotations

import os
import sys
import time

import click

from .cli import board_option
from .geometry import Geometry
from .protocol.go_params import GoParams
from .rules.board import Board, RulesError
from .rules.notation import FILES, MAX_DIGIT_COLUMNS, is_digit_string, parse_digits, render
from .rules.scores import is_proven, mate_distance
from .search.levels import FULL_STRENGTH

HELP = """commands:
  1-{width:<5} drop a stone in that column
  hint    the engine's choice for you, at full strength
  undo    take back your last move (and the engine's answer)
  new     start a new game
  quit    leave (Ctrl-D too)
  help    this list"""
SYMBOL_COLOURS = {"X": "red", "O": "yellow"}


class Game:
    """The terminal game: the position, who is who, and the engine."""

    def __init__(self, start: Board, human_side: int, level: int, movetime: int) -> None:
        from .protocol.backend import Backend  # compiles or loads the search kernel
        from .protocol.options import Options
        self.start, self.pos, self.human_side, self.movetime = start, start, human_side, movetime
        self.options = Options()
        self.level = level
        self.backend = Backend(self.options, lambda line: None, start.geometry)
        self.colour = None if not os.environ.get("NO_COLOR") else False

    def echo(self, text: str = "") -> None:
        click.echo(text, color=self.colour)

    def show(self) -> None:
        lines = render(self.pos).splitlines()
        board = [" ".join(click.style(c, fg=SYMBOL_COLOURS[c], bold=True) if c in SYMBOL_COLOURS else c
                          for c in line.split()) for line in lines[:-1]]
        self.echo("\n".join(board + lines[-1:]) + "\n")

    def search(self, level: int, subject: str) -> tuple[int, str, float]:
        """The move the engine chooses at ``level``, the verdict of its search for the
        mover (``subject``), and the seconds it took."""
        from .search.pool import StopSignal
        self.options.store("Skill Level", level)
        began = time.perf_counter()
        limits = self.backend.limits(self.pos, GoParams(movetime=self.movetime), timed=True)
        result = self.backend.search(self.pos, limits, StopSignal(), drops=False)
        seconds = time.perf_counter() - began
        assert result.move is not None and result.report is not None, "the game is not over"
        report = result.report
        words = verdict(report.best.score, report.exact, self.pos, report.depth, subject)
        return result.move, words, seconds

    def engine_move(self) -> None:
        move, words, seconds = self.search(self.level, "it")
        self.pos = self.pos.play(move)
        self.echo(f"c4engine plays {move + 1}: {words} ({seconds:.1f} s)")

    def hint(self) -> None:
        move, words, seconds = self.search(FULL_STRENGTH, "you")
        self.echo(f"hint: column {move + 1}: {words} ({seconds:.1f} s)")

    def undo(self) -> None:
        """Back to the person's previous turn: their move and the engine's answer."""
        moves = list(self.pos.history)
        if len(moves) <= len(self.start.history):
            self.echo("nothing to undo")
            return
        moves.pop()
        while len(moves) > len(self.start.history) and len(moves) % 2 != self.human_side:
            moves.pop()
        self.pos = Board(geometry=self.start.geometry).play_all(moves)

    def finished(self) -> None:
        """Say how the game ended, if it has."""
        if not self.pos.is_over():
            return
        if self.pos.last_mover_won():
            winner = (self.pos.stones - 1) % 2
            self.echo("You win." if winner == self.human_side else "c4engine wins.")
        else:
            self.echo("Draw.")
        self.echo("Type new, undo or quit.")

    @property
    def width(self) -> int:
        return self.start.geometry.width

    def run(self) -> None:
        geometry = self.start.geometry
        if not geometry.is_standard:
            self.echo(f"{geometry.width} columns, {geometry.height} rows, {geometry.connect} in a row; "
                      "no opening book on this board (the book covers 7x6): every move is searched.")
        self.echo(f"Type a column 1-{self.width}, or help.")
        shown: Board | None = None
        while True:
            if not self.pos.is_over() and self.pos.side_to_move != self.human_side:
                self.engine_move()
                shown = None
            if self.pos != shown:
                self.show()
                self.finished()
                shown = self.pos
            try:
                answer = click.prompt("your move", type=str, prompt_suffix="> ").strip().lower()
            except click.Abort:
                self.echo()
                return
            if not self.command(answer):
                return

    def command(self, answer: str) -> bool:
        """Do what the person typed; False when they want to leave."""
        if answer == "quit":
            return False
        if answer == "help":
            self.echo(HELP.format(width=self.width))
        elif answer == "new":
            self.pos = self.start
        elif answer == "undo":
            self.undo()
        elif answer == "hint":
            if self.pos.is_over():
                self.echo("the game is over: type new, undo or quit")
            else:
                self.hint()
        elif column_of(answer, self.width) is not None:
            try:
                self.pos = self.pos.play(column_of(answer, self.width))
            except RulesError as err:
                self.echo(f"{err}")
        else:
            self.echo(f"'{answer}' is not a column 1-{self.width} or a command (type help)")
        return True


def column_of(answer: str, width: int) -> int | None:
    """The 0-based column a typed move names: its number (``12`` on a wide board), or
    its file letter as the board is labelled beyond 9 columns; None for neither."""
    if is_digit_string(answer) and len(answer) <= 2:
        return int(answer) - 1
    if width > MAX_DIGIT_COLUMNS and len(answer) == 1 and answer in FILES[:width]:
        return FILES.index(answer)
    return None


def verdict(score: int, exact: bool, pos: Board, depth: int, subject: str = "it") -> str:
    """A search's score in words, for the side to move of ``pos`` (``subject``: "it" or
    "you"): the move (stone number) by which the game is won or lost, a draw, or the
    heuristic value while unproven."""
    stones = pos.stones
    third = subject == "it"
    win, lose, draw = ("wins", "loses", "draws") if third else ("win", "lose", "draw")
    if is_proven(score):
        distance = mate_distance(score, stones, pos.geometry.cells)
        bound = "" if exact else " at the latest"
        if distance > 0:
            return f"{subject} {win} by move {stones + 2 * distance - 1}{bound}"
        return f"{subject} {lose} by move {stones - 2 * distance}{bound}"
    if exact:
        return f"{subject} {draw} with best play"
    return f"not proven yet; the evaluation is {score:+d} at depth {depth}"


@click.command("play")
@click.option("--second", is_flag=True, help="Let the engine move first.")
@click.option("--movetime", type=click.IntRange(1, 600_000), default=1000, show_default=True,
              help="Engine thinking time per move, in ms.")
@click.option("--level", type=click.IntRange(0, 20), default=20, show_default=True,
              help="Difficulty: the protocol's Skill Level (20 is full strength).")
@click.option("--moves", default="", help="Start after these moves (column digits 1-W, up to 9 columns).")
@board_option
def play_command(second: bool, movetime: int, level: int, moves: str, geometry: Geometry) -> None:
    """Play a game against the engine in the terminal (type help for the commands)."""
    try:
        start = parse_digits(moves, geometry)
    except RulesError as err:
        raise click.BadParameter(str(err), param_hint="--moves") from None
    if start.is_over():
        raise click.BadParameter("the game is already over", param_hint="--moves")
    Game(start, 1 if second else 0, level, movetime).run()
    sys.exit(0)
