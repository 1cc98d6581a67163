"""The solver on boards other than 7x6: exact scores against an independent solver.

``tests/data/c4_scores_<W>x<H>.txt`` hold exact scores of random positions from
Steininger's ``c4`` built for each size (the files' headers say how).  Every
board's kernel is compiled (or loaded) once for the module; the first time on
an installation that costs a few seconds per board.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from c4engine.geometry import Geometry
from c4engine.rules.notation import parse_digits
from c4engine.search.searcher import Searcher

DATA = Path(__file__).resolve().parent / "data"
C4_FILES = sorted(DATA.glob("c4_scores_*x*.txt"))
FAST_POSITIONS = 40  # per board in the default run; all of them under the slow marker


def board_of(path: Path) -> Geometry:
    match = re.fullmatch(r"c4_scores_(\d+)x(\d+)\.txt", path.name)
    assert match, path
    return Geometry(int(match[1]), int(match[2]))


def scored_lines(path: Path) -> list[tuple[str, int]]:
    lines = [line.split() for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return [(moves, int(score)) for moves, score in lines]


@pytest.fixture(scope="module")
def searchers() -> dict[Geometry, Searcher]:
    return {}


def searcher_for(searchers: dict[Geometry, Searcher], geometry: Geometry) -> Searcher:
    if geometry not in searchers:
        searchers[geometry] = Searcher(16, geometry=geometry)
    return searchers[geometry]


def test_the_data_files_are_there() -> None:
    assert len(C4_FILES) >= 5, "tests/data/c4_scores_*.txt are missing"


def check_scores(searcher: Searcher, geometry: Geometry, lines: list[tuple[str, int]]) -> None:
    wrong = []
    for moves, expected in lines:
        searcher.clear()
        score, _ = searcher.solve(parse_digits(moves, geometry))
        if score != expected:
            wrong.append((moves, expected, score))
    assert not wrong, f"{geometry}: {len(wrong)} of {len(lines)} wrong, e.g. {wrong[:5]}"


@pytest.mark.parametrize("path", C4_FILES, ids=[path.stem for path in C4_FILES])
def test_exact_scores_agree_with_c4(searchers: dict[Geometry, Searcher], path: Path) -> None:
    geometry = board_of(path)
    check_scores(searcher_for(searchers, geometry), geometry, scored_lines(path)[:FAST_POSITIONS])


@pytest.mark.slow
@pytest.mark.parametrize("path", C4_FILES, ids=[path.stem for path in C4_FILES])
def test_every_c4_score_agrees(searchers: dict[Geometry, Searcher], path: Path) -> None:
    geometry = board_of(path)
    check_scores(searcher_for(searchers, geometry), geometry, scored_lines(path))
