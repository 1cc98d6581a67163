"""The HTML report of a grading: one offline file, its plots drawn by matplotlib as
inline SVG, its boards as HTML tables; nothing is loaded from anywhere.

The page is ``templates/report.html`` (package data) with its ``$`` fields
filled.  The reference rows are the grades of known agents on the reference
sets (``data/reference.json``, made with the commands the docs give, see
docs/guides/grading.md); they are drawn beside the agent's when the board is
the same.
"""

from __future__ import annotations

import html
import io
import json
from importlib.resources import files
from pathlib import Path
from string import Template

from .metrics import Grade, Summary, by_phase, by_set, worst
from .report import WORST_SHOWN, Grading, percent

REFERENCE_FILE = "data/reference.json"


def write_report(path: Path, grading: Grading) -> None:
    Path(path).write_text(report_html(grading), encoding="utf-8")


def report_html(grading: Grading) -> str:
    template = Template(files(__package__).joinpath("templates/report.html").read_text(encoding="utf-8"))
    total = grading.total
    references = reference_rows(grading.board)
    failures = [g for g in grading.grades if g.failure]
    return template.substitute(
        agent=html.escape(grading.agent), board=html.escape(grading.board),
        sets=html.escape(", ".join(grading.sets)), positions=total.positions, unknown=grading.unknown,
        failures=total.failures, command=html.escape(grading.command or "(from Python)"),
        rates=rates_table(grading), phase_plot=phase_plot(by_phase(grading.grades)),
        reference_plot=reference_plot(grading.agent, total, references),
        reference_note=html.escape(_reference_note(references)),
        mistakes="\n".join(board_html(g, grading.board) for g in worst(grading.grades, WORST_SHOWN)) or "<p>None.</p>",
        failure_list=_failure_list(failures))


def rates_table(grading: Grading) -> str:
    rows = [("all", grading.total), *by_set(grading.grades).items(),
            *((f"stones {k}", v) for k, v in by_phase(grading.grades).items())]
    body = "".join(f"<tr><td>{html.escape(name)}</td><td>{s.positions}</td><td>{percent(s.perfect)}</td>"
                   f"<td>{percent(s.good)}</td><td>{100 * s.mistake.value:.1f}</td><td>{s.failures}</td></tr>"
                   for name, s in rows)
    return ("<table class=\"rates\"><tr><th></th><th>positions</th><th>perfect % [95% CI]</th>"
            f"<th>good % [95% CI]</th><th>mistake %</th><th>failures</th></tr>{body}</table>")


def _svg(figure: object) -> str:
    """The figure as SVG text for inlining (no XML prologue), then closed."""
    import matplotlib.pyplot as plt
    out = io.StringIO()
    figure.savefig(out, format="svg", bbox_inches="tight",  # type: ignore[attr-defined]
                   metadata={"Date": None})  # the same grades, the same file
    plt.close(figure)  # type: ignore[arg-type]
    text = out.getvalue()
    return text[text.index("<svg"):]


def _pyplot():  # type: ignore[no-untyped-def]
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.fonttype"] = "none"  # text as text: smaller, and no font is embedded
    return plt


def phase_plot(phases: dict[str, Summary]) -> str:
    """Perfect and good rates by phase, each with its interval as an error bar."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(8, 3.6))
    names = list(phases)
    xs = range(len(names))
    for offset, (label, rate_of, colour) in enumerate((("perfect", lambda s: s.perfect, "#1b7f2a"),
                                                         ("good", lambda s: s.good, "#2456a6"))):
        values = [100 * rate_of(s).value for s in phases.values()]
        lows = [v - 100 * rate_of(s).interval[0] for v, s in zip(values, phases.values())]
        highs = [100 * rate_of(s).interval[1] - v for v, s in zip(values, phases.values())]
        axes.errorbar([x + (offset - 0.5) * 0.15 for x in xs], values, yerr=[lows, highs], marker="o",
                      capsize=3, label=label, color=colour)
    axes.set_xticks(list(xs), names)
    axes.set_xlabel("stones played")
    axes.set_ylabel("% of moves")
    axes.set_ylim(0, 102)
    axes.grid(axis="y", alpha=0.3)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(figure)


def reference_rows(board: str) -> list[dict[str, object]]:
    """The reference rows graded on ``board``'s reference sets."""
    rows: list[dict[str, object]] = json.loads(files(__package__).joinpath(REFERENCE_FILE).read_text())
    return [row for row in rows if row["board"] == board]


def _reference_note(references: list[dict[str, object]]) -> str:
    if not references:
        return "No reference rows for this board yet."
    sets = sorted({str(s) for row in references for s in row["sets"]})  # type: ignore[attr-defined]
    return (f"Reference rows graded on {', '.join(sets)} (docs/guides/grading.md gives each row's command); "
            f"the agent's bar is on the sets above, comparable where those are the same sets.")


def reference_plot(agent: str, total: Summary, references: list[dict[str, object]]) -> str:
    """The agent's perfect and good rates beside each reference row's, as bars."""
    plt = _pyplot()
    rows = [(f"{agent} (graded)", 100 * total.perfect.value, 100 * total.good.value)]
    rows += [(str(r["name"]), 100 * float(r["perfect"]), 100 * float(r["good"])) for r in references]  # type: ignore[arg-type]
    figure, axes = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.2))
    ys = range(len(rows))
    axes.barh([y + 0.2 for y in ys], [r[2] for r in rows], height=0.4, label="good", color="#2456a6")
    axes.barh([y - 0.2 for y in ys], [r[1] for r in rows], height=0.4, label="perfect", color="#1b7f2a")
    axes.set_yticks(list(ys), [r[0] for r in rows])
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("% of moves")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(figure)


def board_html(grade: Grade, board_name: str) -> str:
    """The position before the move as a board, with every column's exact score under it."""
    from ..rules.notation import parse_board
    position = grade.position
    geometry = parse_board(board_name)
    board = position.board(geometry)
    rows = []
    for row in range(geometry.height - 1, -1, -1):
        cells = "".join(f"<td><span class=\"p{board.cell(col, row)}\"></span></td>" for col in range(geometry.width))
        rows.append(f"<tr>{cells}</tr>")
    best = set(position.best_columns())
    scores = "".join(
        f"<td class=\"{'best ' if col in best else ''}{'played' if col == grade.played else ''}\">"
        f"{'x' if score is None else score}</td>" for col, score in enumerate(position.scores or ()))
    played = grade.failure or f"played column {grade.played + 1 if grade.played is not None else '-'} ({grade.score})"
    return (f"<div class=\"mistake\"><p>{html.escape(grade.set_name)} {html.escape(position.label)}: "
            f"{html.escape(position.moves or '(start)')}</p><table class=\"board\">{''.join(rows)}"
            f"<tr class=\"scores\">{scores}</tr></table><p>{html.escape(played)}; best {position.best}</p></div>")


def _failure_list(failures: list[Grade]) -> str:
    if not failures:
        return "<p>None.</p>"
    items = "".join(f"<li>{html.escape(g.set_name)} {html.escape(g.position.moves or '(start)')}: "
                    f"{html.escape(g.failure)}</li>" for g in failures)
    return f"<ul>{items}</ul>"
