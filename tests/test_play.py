"""``c4engine play`` on a pseudo-terminal (issue 11): hint, undo, the engine's move
told in words with its time, finished games, new, quit, and --level."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pexpect
import pytest

PROMPT = "your move> "
TIMEOUT = 60  # a first start may compile the kernel
ENGINE_MOVE = r"c4engine plays ([1-7]): (it (wins|loses|draws) [^\r\n]*|not proven yet[^\r\n]*) \(\d+\.\d s\)"


def start(*args: str, colour: bool = False) -> pexpect.spawn:
    env = dict(os.environ)
    if not colour:
        env["NO_COLOR"] = "1"
    child = pexpect.spawn(sys.executable, ["-m", "c4engine", "play", "--movetime", "200", *args],
                          env=env, encoding="utf-8", timeout=TIMEOUT, echo=False)
    child.delaybeforesend = None
    return child


@pytest.fixture
def closing() -> Iterator[list[pexpect.spawn]]:
    children: list[pexpect.spawn] = []
    yield children
    for child in children:
        child.terminate(force=True)


def board_before_prompt(child: pexpect.spawn) -> str:
    """The text printed before the next prompt."""
    child.expect_exact(PROMPT)
    return str(child.before)


def stones(text: str) -> int:
    """Stones in the last board printed in ``text``."""
    rows = [line for line in text.replace("\r", "").splitlines() if len(line) == 13 and line[1::2] == " " * 6]
    return sum(row.count("X") + row.count("O") for row in rows[-6:])


def test_hint_move_and_undo(closing: list[pexpect.spawn]) -> None:
    child = start()
    closing.append(child)
    assert stones(board_before_prompt(child)) == 0
    child.sendline("undo")
    child.expect_exact("nothing to undo")
    child.sendline("hint")
    child.expect(r"hint: column ([1-7]): (you (win|lose|draw) [^\r\n]*|not proven yet[^\r\n]*) \(\d+\.\d s\)")
    child.expect_exact(PROMPT)
    child.sendline("4")
    child.expect(ENGINE_MOVE)
    assert stones(board_before_prompt(child)) == 2
    child.sendline("undo")
    assert stones(board_before_prompt(child)) == 0
    child.sendline("help")
    child.expect_exact("hint    the engine's choice")
    child.sendline("9")
    child.expect_exact("column 9 is not on the board")
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_finished_game_then_new_and_quit(closing: list[pexpect.spawn]) -> None:
    """From 4455 a stone in column 3 makes an open three: whatever the engine does
    (every move loses by move 7), the person wins at an open end."""
    child = start("--moves", "4455")
    closing.append(child)
    child.expect_exact(PROMPT)
    child.sendline("3")
    child.expect(ENGINE_MOVE)
    answer = int(child.match.group(1))
    assert "it loses by move 7" in child.match.group(0)
    child.expect_exact(PROMPT)
    child.sendline("6" if answer == 2 else "2")
    child.expect_exact("You win.")
    child.expect_exact("Type new, undo or quit.")
    child.expect_exact(PROMPT)
    child.sendline("3")
    child.expect_exact("the game is already over")
    child.expect_exact(PROMPT)
    child.sendline("new")
    assert stones(board_before_prompt(child)) == 4
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_the_engine_wins_and_says_so(closing: list[pexpect.spawn]) -> None:
    child = start("--second", "--moves", "445566")
    closing.append(child)
    child.expect(ENGINE_MOVE)
    assert child.match.group(1) in ("3", "7") and "it wins by move 7" in child.match.group(0)
    child.expect_exact("c4engine wins.")
    child.sendline("undo")  # the engine's winning move is taken back, and it plays again
    child.expect(ENGINE_MOVE)
    child.expect_exact("c4engine wins.")
    child.sendeof()
    child.expect(pexpect.EOF)


def test_level_and_colour(closing: list[pexpect.spawn]) -> None:
    child = start("--level", "0", colour=True)
    closing.append(child)
    child.expect_exact(PROMPT)
    child.sendline("4")
    child.expect(r"c4engine plays [1-7]")
    child.expect_exact(PROMPT)
    assert "\x1b[" in str(child.before)  # the stones are coloured on a terminal
    child.sendline("quit")
    child.expect(pexpect.EOF)
    refused = start("--level", "21")
    closing.append(refused)
    refused.expect(pexpect.EOF)
    refused.close()
    assert refused.exitstatus == 2 and "21 is not in the range 0<=x<=20" in str(refused.before)


def test_a_game_on_another_board(closing: list[pexpect.spawn]) -> None:
    child = start("--board", "8x7", "--moves", "88")
    closing.append(child)
    child.expect_exact("8 columns, 7 rows, 4 in a row; no opening book on this board")
    child.expect_exact("Type a column 1-8, or help.")
    text = board_before_prompt(child)
    assert "1 2 3 4 5 6 7 8" in text
    child.sendline("8")
    child.expect(r"c4engine plays ([1-8]): ")
    board_before_prompt(child)
    child.sendline("9")
    child.expect_exact("column 9 is not on the board (1-8)")
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_a_game_past_64_bits(closing: list[pexpect.spawn]) -> None:
    child = start("--board", "9x7", "--moves", "55")
    closing.append(child)
    child.expect_exact("9 columns, 7 rows, 4 in a row; no opening book on this board")
    child.expect_exact("Type a column 1-9, or help.")
    child.sendline("9")
    child.expect(r"c4engine plays ([1-9]): ")
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_a_wide_board_takes_file_letters(closing: list[pexpect.spawn]) -> None:
    child = start("--board", "12x4", "--second")
    closing.append(child)
    child.expect(r"c4engine plays (\d+): ")
    text = board_before_prompt(child)
    assert "a b c d e f g h i j k l" in text
    child.sendline("l")
    child.expect(r"c4engine plays (\d+): ")
    child.sendline("quit")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize(("board", "message"), [
    ("12x10", "needs width x (height + 1) <= 128 bits (here 132)"),
    ("7x6k8", "row length 8 is out of range (3-7 on a 7x6 board)"),
    ("seven", "expected WxH or WxHkK"),
])
def test_a_board_the_engine_cannot_play_is_refused(board: str, message: str) -> None:
    child = start("--board", board)
    child.expect(pexpect.EOF)
    child.close()
    assert message in " ".join(str(child.before).split())  # click wraps its message
    assert child.exitstatus == 2
