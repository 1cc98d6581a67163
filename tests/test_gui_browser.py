"""The web board in a real browser (issue 11): Debian's Chromium, headless, driven by
Playwright for Python, against the real ``c4engine gui`` command and engine.

Playwright's own browser download cannot work here (no network beyond the
package registries), so the browser is the OS package, ``/usr/bin/chromium``;
``.ci/run`` installs it when it is missing.  Without it (or without the
``playwright`` package) these tests skip and say how to get them.

Each test opens its own server, so that the engine processes it sees are its
own, and saves a screenshot under pytest's tmp path.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from c4engine.gui.game import winning_four
from c4engine.rules.board import Board
from c4engine.rules.notation import parse_digits, parse_fen

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="needs Playwright for Python: pip install playwright (never "
    "'playwright install': the browser comes from the OS, apt-get install chromium)")

CHROMIUM = os.environ.get("C4ENGINE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DESKTOP = {"width": 1100, "height": 800}
PHONE = {"width": 390, "height": 844}
WAIT_MS = 60_000  # a first engine start may compile the kernel
MID_FEN = "7/7/7/7/3p3/2pPP2[PPPPPPPPPPPPPPPPPPPppppppppppppppppppp] w - - 0 3"  # after 4453
ANALYSED = "7571473112654763"  # 16 stones; its columns win, draw and lose

pytestmark = pytest.mark.skipif(
    not os.access(CHROMIUM, os.X_OK),
    reason=f"no Chromium at {CHROMIUM}: apt-get install chromium (Debian), or set C4ENGINE_CHROMIUM")


class GuiServer:
    """``c4engine gui --no-browser`` as a person starts it, on a free port."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "c4engine", "gui", "--no-browser"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", first)
        assert found, f"no URL in {first!r}"
        self.url = found.group(0)

    def engines(self) -> list[int]:
        """Process ids of the engines the server started: its living children."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
            except (OSError, IndexError):
                continue  # the process ended while we looked
            if int(parent) == self.process.pid and state != "Z":
                found.append(int(stat.parent.name))
        return found

    def interrupt(self) -> int:
        """Ctrl-C, as a person stops it; the exit status."""
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=15)

    def close(self) -> None:
        if self.process.poll() is None:
            self.interrupt()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as play:
        chromium = play.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def server() -> Iterator[GuiServer]:
    gui = GuiServer()
    yield gui
    gui.close()


@pytest.fixture
def page(browser, server: GuiServer, tmp_path: Path, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """A page of the board, ready to play; a screenshot is saved when the test ends."""
    viewport = PHONE if "phone" in request.node.name else DESKTOP
    tab = browser.new_page(viewport=viewport)
    tab.set_default_timeout(WAIT_MS)
    tab.goto(server.url)
    tab.wait_for_function("document.getElementById('status').textContent.startsWith('Your move')")
    yield tab
    tab.screenshot(path=str(tmp_path / f"{request.node.name}.png"), full_page=True)
    tab.close()


# ------------------------------------------------------------------ reading the page

def board_of(tab) -> dict[tuple[int, int], int]:  # type: ignore[no-untyped-def]
    """``(column, row from the bottom)`` -> 0 empty, 1 first player, 2 second, as shown."""
    cells = tab.eval_on_selector_all(
        "#board .cell", "cs => cs.map(c => [+c.dataset.col, +c.dataset.row, +c.dataset.owner])")
    return {(col, row): owner for col, row, owner in cells}


def expected_board(pos: Board) -> dict[tuple[int, int], int]:
    return {(col + 1, row + 1): pos.cell(col, row) for col in range(7) for row in range(6)}


def stones(tab) -> int:  # type: ignore[no-untyped-def]
    return sum(1 for owner in board_of(tab).values() if owner)


def wait_stones(tab, count: int) -> None:  # type: ignore[no-untyped-def]
    tab.wait_for_function(f"document.querySelectorAll('#board .cell:not([data-owner=\"0\"])').length === {count}")


def click_column(tab, col: int) -> None:  # type: ignore[no-untyped-def]
    tab.click(f"#board .cell[data-col='{col}'][data-row='6']")


def score_words(pons: int, stones_before: int) -> str:
    """What the page must show for a column whose exact Pons score is ``pons``."""
    if pons > 0:
        return f"wins in {(22 - pons) - stones_before // 2}"
    if pons < 0:
        return f"loses in {(22 + pons) - (stones_before + 1) // 2}"
    return "draw"


# ------------------------------------------------------------------ tests

def test_a_whole_game_by_clicking(page) -> None:  # type: ignore[no-untyped-def]
    page.select_option("#movetime", "250")
    while not page.eval_on_selector("#status", "s => /wins|Draw/.test(s.textContent)"):
        count = stones(page)
        playable = [col for col in range(1, 8) if board_of(page)[(col, 6)] == 0]
        click_column(page, playable[0])
        page.wait_for_function(
            f"document.querySelectorAll('#board .cell:not([data-owner=\"0\"])').length >= {count + 2}"
            " || /wins|Draw/.test(document.getElementById('status').textContent)")
    pos = parse_digits(page.text_content("#digits"))
    assert board_of(page) == expected_board(pos)
    assert pos.is_over()
    status = page.text_content("#status")
    if pos.last_mover_won():
        assert status == ("You win!" if pos.side_to_move == 1 else "The engine wins.")
        shown = {(int(c.split(",")[0]), int(c.split(",")[1])) for c in page.eval_on_selector_all(
            "#board .cell.win", "cs => cs.map(c => c.dataset.col + ',' + c.dataset.row)")}
        assert shown == {tuple(cell) for cell in winning_four(pos)} and len(shown) >= 4
    else:
        assert status.startswith("Draw")


def test_analysis_shows_every_columns_exact_score(page) -> None:  # type: ignore[no-untyped-def]
    bitbully = pytest.importorskip("bitbully", reason="the oracle: pip install bitbully")
    oracle_board = bitbully.Board()
    for ch in ANALYSED:
        oracle_board.play(int(ch) - 1)
    exact = bitbully.BitBully().score_all_moves(oracle_board)
    page.select_option("#mode", "humans")
    page.fill("#setup-text", ANALYSED)
    page.click("#setup")
    wait_stones(page, len(ANALYSED))
    page.check("#analysis")
    playable = sorted(col + 1 for col in exact)
    page.wait_for_function(
        "cols => cols.every(c => document.querySelector(`#scores .score[data-col='${c}']`)"
        ".classList.contains('proven'))", arg=playable)
    shown = {col: page.text_content(f"#scores .score[data-col='{col}']") for col in range(1, 8)}
    assert shown == {col: score_words(exact[col - 1], len(ANALYSED)) if col - 1 in exact else "–"
                     for col in range(1, 8)}
    assert {"draw"} < set(shown.values()) and any(v.startswith("wins") for v in shown.values())


def test_undo_redo_fen_and_a_bad_fen_on_a_phone(page) -> None:  # type: ignore[no-untyped-def]
    page.select_option("#mode", "humans")
    click_column(page, 4)
    wait_stones(page, 1)
    page.keyboard.press("4")
    wait_stones(page, 2)
    click_column(page, 5)
    wait_stones(page, 3)
    assert board_of(page) == expected_board(parse_digits("445"))
    page.click("#undo")
    wait_stones(page, 2)
    page.click("#undo")
    wait_stones(page, 1)
    page.click("#redo")
    wait_stones(page, 2)
    assert board_of(page) == expected_board(parse_digits("44"))
    assert page.text_content("#digits") == "44"
    page.fill("#setup-text", MID_FEN)
    page.click("#setup")
    wait_stones(page, 4)
    assert board_of(page) == expected_board(parse_fen(MID_FEN))
    assert page.text_content("#fen") == MID_FEN
    page.fill("#setup-text", "7/7/7/7/7/3P3/7 w")
    page.click("#setup")
    page.wait_for_selector("#error:not([hidden])")
    assert "FEN" in page.text_content("#error")
    assert board_of(page) == expected_board(parse_fen(MID_FEN))
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scrolling


def test_killed_engine_mid_search_is_reported_and_restarted(page, server: GuiServer) -> None:  # type: ignore[no-untyped-def]
    page.select_option("#mode", "humans")
    for col in (4, 4, 5, 3):
        count = stones(page)
        click_column(page, col)
        wait_stones(page, count + 1)
    page.check("#analysis")
    page.wait_for_function("document.querySelector('#scores .score').textContent !== '…'")
    engines = server.engines()
    assert len(engines) == 1
    os.kill(engines[0], signal.SIGKILL)
    page.wait_for_selector("#banner:not([hidden])")
    assert "The engine stopped" in page.text_content("#banner-text")
    assert page.is_disabled("#hint-button")
    page.click("#restart")
    page.wait_for_selector("#banner", state="hidden")
    page.wait_for_function("[...document.querySelectorAll('#scores .score')].every(s => s.textContent !== '…')")
    assert board_of(page) == expected_board(parse_digits("4453"))
    assert server.engines() != engines


def test_ctrl_c_stops_the_server_and_its_engines(page, server: GuiServer) -> None:  # type: ignore[no-untyped-def]
    engines = server.engines()
    assert engines
    assert server.interrupt() == 0
    page.wait_for_function("document.body.classList.contains('offline')")
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{pid}").exists() for pid in engines) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{pid}").exists() for pid in engines)


def test_a_reload_keeps_the_game_and_settings(page) -> None:  # type: ignore[no-untyped-def]
    page.select_option("#mode", "humans")
    page.fill("#setup-text", "4453")
    page.click("#setup")
    wait_stones(page, 4)
    page.reload()
    wait_stones(page, 4)
    page.wait_for_function("document.getElementById('mode').value === 'humans'")
    assert board_of(page) == expected_board(parse_digits("4453"))
    assert page.text_content("#digits") == "4453"
