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
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gui_process import GuiServer
from service_process import ServiceProcess

from c4engine.engine.limits import PREPARE_TIMEOUT
from c4engine.geometry import Geometry
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


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as play:
        chromium = play.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def compiled() -> Callable[[Geometry], None]:
    """Compiles a board's kernel before a page asks for the board (``c4engine
    warm-up``), once per board.  On a cold kernel cache (CI's) the engine's first
    ``readyok`` on a board new to it waits for that compile: 7-9 s on an idle
    machine, 22 s under two CPU hogs, past the page's WAIT_MS on a busier one.
    That is the engine's preparation, which the project bounds by
    PREPARE_TIMEOUT, not what the pages' waits are for."""
    done: set[Geometry] = set()

    def compile_board(geometry: Geometry) -> None:
        if geometry not in done:
            subprocess.run([sys.executable, "-m", "c4engine", "warm-up", "--board", str(geometry)],
                           check=True, capture_output=True, timeout=PREPARE_TIMEOUT)
            done.add(geometry)
    return compile_board


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
    check_analysis_shown(page)


def test_analysis_asked_of_a_service_is_shown(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``c4engine gui --service``: the page says where its analysis comes from and
    shows that server's exact scores."""
    with ServiceProcess(tmp_path / "cache.sqlite", "--threads", "1") as service:
        gui = GuiServer("--service", service.url)
        tab = browser.new_page(viewport=DESKTOP)
        tab.set_default_timeout(WAIT_MS)
        try:
            tab.goto(gui.url)
            tab.wait_for_function("url => document.getElementById('analysis-source').textContent === ` from ${url}`",
                                  arg=service.url)
            check_analysis_shown(tab)
        finally:
            tab.close()
            gui.close()


def check_analysis_shown(page) -> None:  # type: ignore[no-untyped-def]
    """With analysis on, the page shows every column's exact score for ``ANALYSED``."""
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


# ------------------------------------------------------------------ review (issue 22)

REVIEW_GAMES = Path(__file__).parent / "data" / "review_games.pgn"


def review_of(number: int) -> dict:
    """``c4engine review --json``'s verdicts on game ``number`` of the stored match games."""
    out = subprocess.run([sys.executable, "-m", "c4engine", "review", "--json", str(REVIEW_GAMES)],
                         capture_output=True, text=True, check=True)
    import json
    return json.loads(out.stdout)["games"][number - 1]


def wait_review_done(tab) -> None:  # type: ignore[no-untyped-def]
    tab.wait_for_function("document.getElementById('review-status').textContent.includes('done')")


def test_review_a_pgn_chart_clicks_keys_and_marks(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page.fill("#pgn-text", REVIEW_GAMES.read_text())
    page.click("#review-pgn")
    page.wait_for_selector("#pick-game-label:not([hidden])")
    titles = page.eval_on_selector_all("#pick-game option", "os => os.map(o => o.textContent)")
    assert len(titles) == 1 + REVIEW_GAMES.read_text().count("[Event ")
    number = 4
    page.select_option("#pick-game", str(number))
    wait_review_done(page)
    expected = review_of(number)
    moves = expected["moves"]
    points = page.eval_on_selector_all("#chart circle.point", "cs => cs.map(c => [+c.dataset.ply, c.getAttribute('class')])")
    assert [ply for ply, _ in points] == list(range(1, len(moves) + 1))
    assert [cls.split()[1] for _, cls in points] == [m["mark"] for m in moves]
    page.locator("#chart").screenshot(path=str(tmp_path / "review-chart.png"))
    # the move list: each move's mark, and the best move where it differed
    shown = page.eval_on_selector_all("#moves .move", "bs => bs.map(b => b.textContent)")
    for text, move in zip(shown, moves):
        assert text.startswith(f"{'✕' if move['player'] == 1 else '◯'}{move['column']}{move['nag']}")
        if move["mark"] != "kept":
            assert f"best {' or '.join(map(str, move['best']))}" in text
    # click a point: the board shows the game after that move
    columns = [m["column"] for m in moves]
    target = min(5, len(moves))
    page.click(f"#chart circle.point[data-ply='{target}']")
    wait_stones(page, target)
    assert board_of(page) == expected_board(parse_digits("".join(map(str, columns[:target]))))
    # arrow keys step back and forth
    page.keyboard.press("ArrowLeft")
    wait_stones(page, target - 1)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    wait_stones(page, target + 1)
    assert board_of(page) == expected_board(parse_digits("".join(map(str, columns[:target + 1]))))
    assert page.eval_on_selector("#chart circle.current", "c => +c.dataset.ply") == target + 1
    # the position's score in words, from the side to move and from the first player
    verdict = moves[target + 1] if target + 1 < len(moves) else None
    if verdict:
        score_text = page.text_content("#position-score")
        assert verdict["before"]["words"] in score_text and "From the first player's (✕) side" in score_text
        best = page.eval_on_selector_all("#scores .score.best", "ss => ss.map(s => +s.dataset.col)")
        assert best == verdict["best"]
    assert page.evaluate("location.search") == "?pos=" + "".join(map(str, columns[:target + 1]))


def test_review_the_game_just_played_on_a_phone(page) -> None:  # type: ignore[no-untyped-def]
    page.select_option("#mode", "humans")
    for col in (1, 4, 4):  # 1 throws the first player's win away
        count = stones(page)
        click_column(page, col)
        wait_stones(page, count + 1)
    page.click("#review-played")
    wait_review_done(page)
    classes = page.eval_on_selector_all("#chart circle.point", "cs => cs.map(c => c.getAttribute('class').split(' ')[1])")
    assert classes == ["blunder", "kept", "kept"]
    assert "??" in page.text_content("#moves")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # chart and board fit
    box = page.eval_on_selector("#chart", "c => c.getBoundingClientRect().right")
    assert box <= 390


def test_a_link_opens_its_position(browser, server: GuiServer) -> None:  # type: ignore[no-untyped-def]
    tab = browser.new_page(viewport=DESKTOP)
    tab.set_default_timeout(WAIT_MS)
    tab.goto(server.url + "?pos=4453")
    wait_stones(tab, 4)
    assert board_of(tab) == expected_board(parse_digits("4453"))
    tab.close()


def test_animation_is_off_when_the_system_asks_for_reduced_motion(browser, server: GuiServer) -> None:  # type: ignore[no-untyped-def]
    for motion, checked in (("reduce", False), ("no-preference", True)):
        context = browser.new_context(reduced_motion=motion)
        tab = context.new_page()
        tab.goto(server.url)
        assert tab.is_checked("#animate") is checked
        context.close()


# ------------------------------------------------------------------ other boards

EIGHT_BY_SEVEN = Geometry(8, 7)


def choose_board(tab, width: int, height: int, connect: int = 4) -> None:  # type: ignore[no-untyped-def]
    tab.fill("#board-width", str(width))
    tab.fill("#board-height", str(height))
    tab.fill("#board-connect", str(connect))
    tab.click("#board-apply")


def board_shown(tab, geometry: Geometry) -> dict[tuple[int, int], int]:  # type: ignore[no-untyped-def]
    """The board once the page draws ``geometry``'s cells, as :func:`board_of` reads it."""
    tab.wait_for_function(f"document.querySelectorAll('#board .cell').length === {geometry.cells}"
                          " && document.getElementById('status').textContent.startsWith('Your move')")
    return board_of(tab)


def test_the_chooser_and_a_whole_8x7_game(page, compiled: Callable[[Geometry], None]) -> None:  # type: ignore[no-untyped-def]
    compiled(EIGHT_BY_SEVEN)
    choose_board(page, 8, 7)
    shown = board_shown(page, EIGHT_BY_SEVEN)
    assert set(shown) == {(col, row) for col in range(1, 9) for row in range(1, 8)}
    assert page.eval_on_selector_all("#scores .score", "s => s.length") == 8
    assert "board=8x7" in page.url
    page.select_option("#movetime", "250")
    while not page.eval_on_selector("#status", "s => /wins|Draw/.test(s.textContent)"):
        count = stones(page)
        board = board_of(page)
        playable = [col for col in range(1, 9) if board[(col, 7)] == 0]
        page.click(f"#board .cell[data-col='{playable[-1]}'][data-row='7']")  # column 8 first: off 7x6
        page.wait_for_function(
            f"document.querySelectorAll('#board .cell:not([data-owner=\"0\"])').length >= {count + 2}"
            " || /wins|Draw/.test(document.getElementById('status').textContent)")
    pos = parse_digits(page.text_content("#digits"), EIGHT_BY_SEVEN)
    assert pos.is_over() and board_of(page) == {
        (col + 1, row + 1): pos.cell(col, row) for col in range(8) for row in range(7)}
    assert page.text_content("#status") == "The engine wins."  # column by column loses to it
    assert (8, 1) in {(c, r) for (c, r), owner in board_of(page).items() if owner}


WORDS_WHOLE_OVER_THEIR_COLUMNS = """scores => scores.every((score, i) => {
    const cell = document.querySelector(`#board .cell[data-col='${i + 1}']`).getBoundingClientRect();
    const box = score.getBoundingClientRect(), centre = box.left + box.width / 2;
    const text = score.firstChild, range = document.createRange();
    for (const word of text.data.matchAll(/\\S+/g)) {
        range.setStart(text, word.index);
        range.setEnd(text, word.index + word[0].length);
        if (range.getClientRects().length > 1) return false;
    }
    return cell.left <= centre && centre <= cell.right;
})"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_8x7_scores_keep_their_words_whole_over_their_columns(browser, server: GuiServer,  # type: ignore[no-untyped-def]
                                                             viewport: dict[str, int],
                                                             compiled: Callable[[Geometry], None]) -> None:
    """Eight columns' scores ("loses in 13") were broken inside words, and their row's
    gaps were 7x6's."""
    compiled(EIGHT_BY_SEVEN)
    tab = browser.new_page(viewport=viewport)
    tab.set_default_timeout(WAIT_MS)
    tab.goto(server.url + "?board=8x7&pos=4184444663455553313")
    tab.check("#analysis")
    tab.wait_for_function("[...document.querySelectorAll('#scores .score')].every(s => s.classList.contains('proven'))")
    assert tab.eval_on_selector_all("#scores .score", WORDS_WHOLE_OVER_THEIR_COLUMNS)
    tab.close()


def test_the_chooser_plays_8x8_past_64_bits(page, compiled: Callable[[Geometry], None]) -> None:  # type: ignore[no-untyped-def]
    compiled(Geometry(8, 8))
    choose_board(page, 8, 8)
    board_shown(page, Geometry(8, 8))
    assert "board=8x8" in page.url
    page.click("#board .cell[data-col='1'][data-row='8']")  # column 1: the stone lands at the bottom
    wait_stones(page, 2)
    assert board_of(page)[(1, 1)] == 1


def test_a_board_the_engine_cannot_play_is_refused_naming_the_limit(page) -> None:  # type: ignore[no-untyped-def]
    choose_board(page, 12, 10)
    page.wait_for_selector("#error:not([hidden])")
    assert "needs width x (height + 1) <= 128 bits (here 132)" in page.text_content("#error")
    assert page.eval_on_selector_all("#board .cell", "c => c.length") == 42
    choose_board(page, 7, 6, 8)
    page.wait_for_function("document.getElementById('error').textContent.includes('row length 8')")


def test_a_9x6k5_link_and_a_5x4_review_on_a_phone(browser, server: GuiServer, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                  compiled: Callable[[Geometry], None]) -> None:
    compiled(Geometry(9, 6, 5))
    compiled(Geometry(5, 4))
    tab = browser.new_page(viewport=PHONE)
    tab.set_default_timeout(WAIT_MS)
    tab.goto(server.url + "?board=9x6k5&pos=5566")
    wait_stones(tab, 4)
    nine = Geometry(9, 6, 5)
    assert board_shown(tab, nine) == {(col + 1, row + 1): parse_digits("5566", nine).cell(col, row)
                                      for col in range(9) for row in range(6)}
    assert tab.input_value("#board-connect") == "5"
    assert tab.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    tab.screenshot(path=str(tmp_path / "9x6k5_phone.png"), full_page=True)
    choose_board(tab, 5, 4)  # small enough for the review to prove every move in time
    board_shown(tab, Geometry(5, 4))
    assert "board=5x4" in tab.url
    tab.select_option("#mode", "humans")
    for count, col in enumerate((3, 3, 1), start=1):
        tab.click(f"#board .cell[data-col='{col}'][data-row='4']")
        wait_stones(tab, count)
    tab.click("#review-played")
    wait_review_done(tab)
    marks = tab.eval_on_selector_all("#chart circle.point", "cs => cs.map(c => c.getAttribute('class').split(' ')[1])")
    assert len(marks) == 3 and "unproven" not in marks
    assert tab.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    tab.screenshot(path=str(tmp_path / "5x4_review_phone.png"), full_page=True)
    tab.close()
