"""``c4engine grade --html``: the report is one offline file that opens in headless
Chromium with every request refused, with its plots (matplotlib's SVG) and boards."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from c4engine.geometry import STANDARD
from c4engine.grading.build import build_set
from c4engine.grading.html import report_html, write_report
from c4engine.grading.metrics import Grade
from c4engine.grading.report import Grading
from c4engine.grading.runner import grade_sets
from c4engine.grading.agents import RandomAgent

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="needs Playwright for Python: pip install playwright (never "
    "'playwright install': the browser comes from the OS, apt-get install chromium)")

CHROMIUM = os.environ.get("C4ENGINE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def grading() -> Grading:
    grade_set, _ = build_set(STANDARD, 11, 3)
    grades = grade_sets(RandomAgent(1), [grade_set])
    failed = Grade(grade_set.positions[0], grade_set.name, None, "raised RuntimeError: boom")
    return Grading("random <seed 1>", "7x6", [*grades, failed], [grade_set.name], 2, "c4engine grade run x")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium (Debian), or set C4ENGINE_CHROMIUM")
    with playwright_api.sync_playwright() as play:
        chromium = play.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def test_the_report_is_one_file_that_loads_nothing(grading: Grading) -> None:
    text = report_html(grading)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?(https?:|//)|@import""", text)
    assert "<script" not in text
    assert text.count("<svg") == 2  # the phases' plot and the reference rows'
    assert "random &lt;seed 1&gt;" in text and "<seed" not in text  # names are escaped


def test_the_report_opens_offline_in_chromium_with_plots_boards_and_failures(
        browser, grading: Grading, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "report.html"
    write_report(path, grading)
    context = browser.new_context(offline=True, viewport={"width": 1100, "height": 900})
    requests: list[str] = []
    context.route(lambda url: not url.startswith("file:"),
                  lambda route: (requests.append(route.request.url), route.abort()))
    page = context.new_page()
    page.goto(path.as_uri())
    assert page.locator("svg").count() == 2
    boards = page.locator(".mistake table.board")
    assert boards.count() >= 1
    first = boards.first
    assert first.locator("tr").count() == STANDARD.height + 1  # the rows and the scores
    assert first.locator("tr.scores td.best").count() >= 1
    assert "raised RuntimeError: boom" in page.locator("body").inner_text()
    assert page.locator("svg text").filter(has_text="stones played").count() == 1
    page.screenshot(path=os.environ.get("GRADING_SCREENSHOT", str(tmp_path / "report.png")), full_page=True)
    assert requests == []  # nothing but the file itself
    context.close()
