"""What a review writes: the annotated PGN, each player's table, the progress line,
and the JSON document of ``c4engine review --json``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..referee.pgn import BOOK, PgnGame, PgnMove
from ..rules.notation import format_move
from .verdict_text import review_dict, score_text, summary_dict
from .verdicts import GameReview, PlayerSummary
from .games import GameInput, InputProblem


def annotated(game: PgnGame, review: GameReview) -> PgnGame:
    """``game`` with each move's annotation (``?!``, ``?``, ``??``) and a comment with
    the move's exact score from the mover's side (``{+M7}``), the best move and its
    score where the move was worse (``{-M12, best P@d3 +M7}``), ``book`` first for
    an opening move."""
    board = game.start_position()
    moves = []
    for move, verdict in zip(game.moves, review.moves):
        parts = [BOOK] if verdict.opening else []
        parts.append(score_text(verdict.after, verdict.stones, review.geometry))
        if verdict.mark not in (None, "kept") and verdict.best:
            best = format_move(verdict.best[0] - 1, board, drops=True)
            parts.append(f"best {best} {score_text(verdict.before, verdict.stones, review.geometry)}")
        moves.append(PgnMove(move.col, ", ".join(parts), verdict.nag))
        board = board.play(move.col)
    return replace(game, moves=tuple(moves))


def player_names(review: GameReview) -> tuple[str, str]:
    """The two players' names, or which side they played when the input has none."""
    return (review.white if review.white != "?" else "first player",
            review.black if review.black != "?" else "second player")


def summary_table(totals: dict[str, PlayerSummary]) -> str:
    """Each player's moves by mark, and accuracy (the share of result-keeping moves)."""
    width = max([len(name) for name in totals] + [6])
    rows = [f"{'player':<{width}}  moves  kept  slower  mistakes  blunders  unproven  accuracy"]
    for name, s in totals.items():
        accuracy = "-" if s.accuracy is None else f"{100 * s.accuracy:.1f}%"
        rows.append(f"{name:<{width}}  {s.moves:5d}  {s.kept:4d}  {s.slower:6d}  {s.mistakes:8d}  "
                    f"{s.blunders:8d}  {s.unproven:8d}  {accuracy:>8}")
    return "\n".join(rows)


def progress_line(number: int, total: int, review: GameReview, seconds: float) -> str:
    marks = [v.mark for v in review.moves]
    counts = ", ".join(f"{marks.count(m)} {m}{'s' if marks.count(m) > 1 and m != 'slower' else ''}"
                       for m in ("slower", "mistake", "blunder") if m in marks)
    return (f"game {number}/{total}: {len(review.moves)} moves reviewed in {seconds:.1f} s"
            + (f" ({counts})" if counts else ""))


def totals(reviews: list[GameReview]) -> dict[str, PlayerSummary]:
    """Each player's summary over all the games, by name."""
    by_player: dict[str, PlayerSummary] = {}
    for review in reviews:
        for name, summary in zip(player_names(review), (review.first, review.second)):
            by_player[name] = by_player.get(name, PlayerSummary()) + summary
    return by_player


def json_document(games: list[GameInput], reviews: list[GameReview],
                  problems: list[InputProblem]) -> dict[str, Any]:
    """``c4engine review --json``'s output: each game's review, the games that could
    not be read, and each player's summary."""
    return {"games": [{"number": item.number, "line": item.line, **review_dict(review)}
                      for item, review in zip(games, reviews)],
            "errors": [{"number": p.number, "line": p.line, "message": p.message} for p in problems],
            "players": {name: summary_dict(s) for name, s in totals(reviews).items()}}
