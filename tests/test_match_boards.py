"""``c4engine match`` on other boards: ``--board``, ``--variant`` and ``--variants`` choose
the game, the engines are told it (UCI_Variant, VariantPath), the referee judges the
moves on that board, and the PGN names the variant and shows the board's FEN."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from c4engine.geometry import Geometry
from c4engine.referee.pgn import read_games
from c4engine.rules.variants import VariantSet

ROOT = Path(__file__).resolve().parent.parent
SHARED_FILE = str(ROOT / "tests" / "data" / "variants.ini")
ENGINE = f"{sys.executable} -m c4engine"


def run_match(*args: str, timeout: float = 300, **env_vars: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **env_vars)
    return subprocess.run([sys.executable, "-m", "c4engine", "match", "--engine", ENGINE,
                           "--engine", ENGINE, *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def test_a_board_out_of_range_is_refused() -> None:
    done = run_match("--depth", "2", "--board", "12x10")
    assert done.returncode == 2
    assert "board 12x10: needs width x (height + 1) <= 128 bits" in done.stderr


def test_a_variant_on_another_board_than_asked_is_refused() -> None:
    done = run_match("--depth", "2", "--variants", SHARED_FILE, "--variant", "five9x6", "--board", "8x7")
    assert done.returncode == 2
    assert "--variant five9x6 is played on 9x6k5, not --board 8x7" in done.stderr


def test_match_on_8x7(tmp_path: Path) -> None:
    """Two c4engine processes play 8x7 from the file's variant; no forfeit, and the PGN
    reads back as 8x7 games that end as the rules say."""
    pgn = tmp_path / "games.pgn"
    done = run_match("--depth", "3", "--games", "4", "--variants", SHARED_FILE,
                     "--variant", "cfour8x7", "--pgn", str(pgn))
    assert done.returncode == 0, done.stderr
    text = pgn.read_text()
    assert '[Variant "cfour8x7"]' in text and '[FEN "8/8/8/8/8/8/8[' in text
    assert "illegal move" not in text and "forfeit" not in text and "disconnects" not in text


@pytest.mark.parametrize("board", ["8x7", "8x8"])  # one word, and past 64 bits
def test_match_with_board_alone(tmp_path: Path, board: str) -> None:
    pgn = tmp_path / "games.pgn"
    done = run_match("--depth", "2", "--games", "2", "--board", board, "--pgn", str(pgn))
    assert done.returncode == 0, done.stderr
    games = read_games(pgn.read_text())
    assert [g.variant.name for g in games] == [f"cfour-{board}"] * 2
    for game in games:
        final = game.final_position()
        assert final.geometry == Geometry.parse(board)
        assert final.is_over() or game.termination != "normal"


def test_match_on_9x7_from_a_fairy_stockfish_section(tmp_path: Path) -> None:
    """``[c4_9x7:cfour]`` as Fairy-Stockfish's variants files write a board past 64 bits."""
    variants = tmp_path / "variants.ini"
    variants.write_text("[c4_9x7:cfour]\nmaxFile = 9\nmaxRank = 7\n"
                        f"startFen = {'9/' * 6}9[{'P' * 32}{'p' * 31}] w - - 0 1\n")
    pgn = tmp_path / "games.pgn"
    done = run_match("--depth", "2", "--games", "2", "--variants", str(variants), "--variant", "c4_9x7",
                     "--pgn", str(pgn))
    assert done.returncode == 0, done.stderr
    games = read_games(pgn.read_text(), VariantSet().with_file(str(variants)))
    assert [game.final_position().geometry for game in games] == [Geometry(9, 7)] * 2
    assert "forfeit" not in pgn.read_text() and "illegal move" not in pgn.read_text()


def test_the_first_match_on_a_new_board_prepares_it_once(tmp_path: Path) -> None:
    """Issue 27, item 5: on an empty kernel cache every engine compiled the board's
    kernel at once, and none answered readyok in time.  The referee now starts one
    c4engine first, waits for it to compile (saying so), and the others load the
    kernel from the cache: well within a --handshake-timeout of 10 s that the
    compile alone exceeds (15-25 s of CPU)."""
    done = run_match("--depth", "2", "--games", "2", "--concurrency", "2", "--board", "4x5",
                     "--handshake-timeout", "10", C4ENGINE_KERNEL_CACHE=str(tmp_path / "kernels"))
    assert done.returncode == 0, done.stderr
    assert "waiting for" in done.stderr and "to prepare the 4x5 board" in done.stderr
    assert "2 of 2 games finished" in done.stdout


@pytest.mark.slow
def test_the_first_match_on_8x7_with_every_cache_empty_plays(tmp_path: Path) -> None:
    """The issue's own case: 8x7 with both the kernel copies and numba's cache empty
    (the 7x6 kernel compiles too), the default --handshake-timeout, four engines."""
    done = run_match("--depth", "2", "--games", "2", "--concurrency", "2", "--board", "8x7", timeout=900,
                     C4ENGINE_KERNEL_CACHE=str(tmp_path / "kernels"), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    assert done.returncode == 0, done.stderr
    assert "2 of 2 games finished" in done.stdout


def test_a_first_readyok_too_late_names_the_handshake_timeout() -> None:
    slow = f"{sys.executable} {ROOT / 'tests' / 'engines' / 'misbehaving_engine.py'} slowready 3"
    done = subprocess.run([sys.executable, "-m", "c4engine", "match", "--engine", slow, "--engine", slow,
                           "--depth", "1", "--games", "2", "--handshake-timeout", "0.5"],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 1
    assert "no readyok within 0.5 s: the engine may still be compiling" in done.stderr
    assert "give it longer with --handshake-timeout" in done.stderr
