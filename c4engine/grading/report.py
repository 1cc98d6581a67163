"""What a grading writes: the terminal table and the JSON document (the HTML
report is :mod:`.html`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .metrics import Grade, Rate, Summary, by_phase, by_set, summarise, worst
from .sets import GradeSet

WORST_SHOWN = 12


@dataclass(frozen=True)
class Grading:
    """An agent's grades on some sets (or games), with what was left out: the
    positions too dear to score (``unknown``)."""

    agent: str
    board: str
    grades: list[Grade]
    sets: list[str]
    unknown: int = 0
    command: str = ""

    @property
    def total(self) -> Summary:
        return summarise(self.grades)


def percent(rate: Rate) -> str:
    low, high = rate.interval
    return f"{100 * rate.value:5.1f} [{100 * low:4.1f}-{100 * high:5.1f}]"


def table_lines(grading: Grading) -> list[str]:
    """The plain table: a row per set and class, per phase, and in all; the failures."""
    head = f"{'':<28} {'positions':>9}  {'perfect % [95% CI]':<19} {'good % [95% CI]':<19} {'mistake %':>9} {'failures':>8}"
    lines = [f"agent {grading.agent} on {grading.board}", head]

    def rows(title: str, summaries: dict[str, Summary]) -> None:
        lines.append(title)
        for name, s in summaries.items():
            lines.append(f"  {name:<26} {s.positions:>9}  {percent(s.perfect):<19} {percent(s.good):<19} "
                         f"{100 * s.mistake.value:>9.1f} {s.failures:>8}")

    rows("by set", by_set(grading.grades))
    rows("by phase (stones)", by_phase(grading.grades))
    rows("all", {"all": grading.total})
    if grading.unknown:
        lines.append(f"{grading.unknown} positions too dear to score exactly: left out, never guessed")
    failures = [g for g in grading.grades if g.failure]
    if failures:
        lines.append(f"failures ({len(failures)}):")
        lines += [f"  {g.set_name} {g.position.moves or '(start)'}: {g.failure}" for g in failures[:50]]
        if len(failures) > 50:
            lines.append(f"  ... and {len(failures) - 50} more (all in --json)")
    return lines


def grade_dict(grade: Grade) -> dict[str, object]:
    position = grade.position
    return {"set": grade.set_name, "class": position.label, "moves": position.moves,
            "scores": list(position.scores or ()), "best": list(c + 1 for c in position.best_columns()),
            "played": None if grade.played is None else grade.played + 1, "score": grade.score,
            "perfect": grade.perfect, "good": grade.good, "failure": grade.failure or None,
            "seconds": round(grade.seconds, 6)}


def json_document(grading: Grading) -> dict[str, object]:
    """Everything the table says, and every position's grade."""
    return {"agent": grading.agent, "board": grading.board, "sets": grading.sets, "command": grading.command,
            "all": grading.total.as_dict(), "unknown": grading.unknown,
            "by_set": {k: v.as_dict() for k, v in by_set(grading.grades).items()},
            "by_phase": {k: v.as_dict() for k, v in by_phase(grading.grades).items()},
            "failures": [grade_dict(g) for g in grading.grades if g.failure],
            "worst": [grade_dict(g) for g in worst(grading.grades, WORST_SHOWN)],
            "positions": [grade_dict(g) for g in grading.grades]}


def set_names(sets: Sequence[GradeSet]) -> list[str]:
    return [s.name for s in sets]
