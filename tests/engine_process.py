"""The real ``c4engine`` process under pexpect, for the end-to-end tests: starting it,
talking to it, reading its answers with timeouts, and the board and checks the
tests judge its answers with.  Shared by the ``test_protocol_*.py`` files and the
tests of the options built on the protocol (``test_levels.py``)."""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import pexpect
import pytest
from protocol_grammar import BESTMOVE_RE, ERROR_RE, INFO_RE, is_known_line

from c4engine.protocol.options import SPECS

READY_TIMEOUT = 30.0  # numba's first compile of the kernel may take a while on a cold cache
# what a 7x6 engine with the default evaluation says at the search's set-up
NETWORK_NOTE = ("info string evaluation ntuple: ntuple-7x6k4.npz for the 7x6 board, "
                "held-out accuracy 0.6958 on 1200 positions")
LINE_TIMEOUT = 10.0
START_FEN = "7/7/7/7/7/7[PPPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] w - - 0 1"
MID_FEN = "7/7/7/7/3p3/2pPP2[PPPPPPPPPPPPPPPPPPPppppppppppppppppppp] w - - 0 3"  # after 4453
WIDTH, HEIGHT = 7, 6
FILES = "abcdefg"
DEFAULT_HASH_MB = next(spec.default for spec in SPECS if spec.name == "Hash")

# ------------------------------------------------------------------ an independent referee

class Board:
    """Connect Four rules written again here, so that the engine's moves are judged by
    code that is not the engine's own."""

    def __init__(self, moves: str = "") -> None:
        self.columns: list[list[int]] = [[] for _ in range(WIDTH)]
        self.plies = 0
        for ch in moves:
            self.play(int(ch))

    def to_move(self) -> int:
        return 1 + self.plies % 2

    def cell(self, col: int, row: int) -> int:
        """Owner (1, 2) of a 0-based cell, 0 when empty or off the board."""
        if 0 <= col < WIDTH and 0 <= row < len(self.columns[col]):
            return self.columns[col][row]
        return 0

    def winner(self) -> int:
        for col in range(WIDTH):
            for row in range(HEIGHT):
                who = self.cell(col, row)
                if who and any(all(self.cell(col + k * dc, row + k * dr) == who for k in range(4))
                               for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1))):
                    return who
        return 0

    def is_over(self) -> bool:
        return self.plies == WIDTH * HEIGHT or self.winner() != 0

    def can_play(self, column: int) -> bool:
        """``column`` is 1-based."""
        return 1 <= column <= WIDTH and len(self.columns[column - 1]) < HEIGHT and not self.is_over()

    def play(self, column: int) -> None:
        assert self.can_play(column), f"illegal move {column} after {self.plies} plies"
        self.columns[column - 1].append(self.to_move())
        self.plies += 1

    def drop(self, column: int) -> str:
        """The cutechess drop for ``column``: the rank is the row the stone lands on."""
        return f"P@{FILES[column - 1]}{len(self.columns[column - 1]) + 1}"

    def parse(self, token: str, drops: bool) -> int:
        """The 1-based column of an engine's move token, checked for the notation in use."""
        if drops:
            m = re.fullmatch(r"P@([a-g])([1-6])", token)
            assert m, f"{token!r} is not a drop P@<file><rank>"
            column = FILES.index(m[1]) + 1
            assert token == self.drop(column), f"{token!r} does not land where it says ({self.drop(column)})"
            return column
        assert re.fullmatch(r"[1-7]", token), f"{token!r} is not a column digit"
        return int(token)

    def play_line(self, tokens: list[str], drops: bool) -> None:
        for token in tokens:
            column = self.parse(token, drops)
            assert self.can_play(column), f"{token!r} is illegal in this line"
            self.play(column)

    def copy(self) -> Board:
        other = Board()
        other.columns = [list(c) for c in self.columns]
        other.plies = self.plies
        return other


def mate_from_pons(score: int, stones: int) -> int | None:
    """docs/design.md's conversion of a Pons score to the protocol's ``mate N`` (None: a draw)."""
    if score > 0:
        return (22 - score) - stones // 2
    if score < 0:
        return -((22 + score) - (stones + 1) // 2)
    return None


# ------------------------------------------------------------------ the process under test

def console_script() -> str:
    """The ``c4engine`` console script of the interpreter running the tests."""
    path = Path(sysconfig.get_path("scripts")) / "c4engine"
    if path.exists():
        return str(path)
    found = pexpect.which("c4engine")
    if found is None:
        pytest.skip("the c4engine console script is not installed")
    return found


class EngineProcess:
    """One engine process on a pty; lines are read with timeouts and checked for form."""

    def __init__(self, command: str = sys.executable, args: list[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        fd, self.stderr_path = tempfile.mkstemp(prefix="c4engine-stderr-", suffix=".txt")
        os.close(fd)
        path = self.stderr_path

        def stderr_to_file() -> None:  # runs in the child, after the pty became fds 0-2
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            os.dup2(fd, 2)
            os.close(fd)

        self.transcript: list[str] = []
        self.child = pexpect.spawn(command, ["-m", "c4engine"] if args is None else args, env=env,
                                   encoding="utf-8", timeout=LINE_TIMEOUT, echo=False,
                                   preexec_fn=stderr_to_file)
        self.child.delaybeforesend = None  # pexpect sleeps 50 ms before every send by default

    # -- writing ----------------------------------------------------------
    def send(self, line: str) -> float:
        """Send one command line; the time just before it was written."""
        now = time.perf_counter()
        self.child.sendline(line)
        return now

    def send_bytes(self, data: bytes) -> float:
        """Write raw bytes (not necessarily UTF-8) to the engine's input."""
        now = time.perf_counter()
        view = memoryview(data)
        while view:
            view = view[os.write(self.child.child_fd, view):]
        return now

    # -- reading ----------------------------------------------------------
    def read_line(self, timeout: float = LINE_TIMEOUT) -> str:
        """The next line of output, which must be one of the protocol's forms."""
        line = self._next_line(timeout)
        if line is None:
            raise AssertionError(f"the engine exited; last lines: {self.transcript[-5:]}{self.stderr_note()}")
        return line

    def _next_line(self, timeout: float) -> str | None:
        """The next line, checked and kept in the transcript; None at the end of output."""
        try:
            self.child.expect_exact("\n", timeout=max(timeout, 0.001))
        except pexpect.TIMEOUT:
            raise AssertionError(f"no line within {timeout:.3f} s; last lines: {self.transcript[-5:]}"
                                 f"{self.stderr_note()}") from None
        except pexpect.EOF:
            return None
        line = self.child.before.rstrip("\r")
        self.transcript.append(line)
        assert is_known_line(line), f"stray output line {line!r}"
        return line

    def read_until(self, prefix: str, timeout: float = LINE_TIMEOUT) -> list[str]:
        """Lines up to and including the first that starts with ``prefix``."""
        deadline = time.perf_counter() + timeout
        lines = []
        while True:
            lines.append(self.read_line(deadline - time.perf_counter()))
            if lines[-1].startswith(prefix):
                return lines

    def sync(self, timeout: float = LINE_TIMEOUT) -> list[str]:
        """``isready``; the lines that came before ``readyok``."""
        self.send("isready")
        return self.read_until("readyok", timeout)[:-1]

    def expect_quiet(self, seconds: float) -> None:
        """Nothing at all is written for ``seconds``."""
        try:
            self.child.expect_exact("\n", timeout=seconds)
        except pexpect.TIMEOUT:
            return
        raise AssertionError(f"unexpected output {self.child.before!r}")

    def command(self, line: str) -> list[str]:
        """Send a command that answers at once; everything it wrote before the next ``readyok``."""
        self.send(line)
        return self.sync()

    # -- ending -----------------------------------------------------------
    def wait_exit(self, timeout: float) -> int:
        """Read to the end of output and wait for the exit status."""
        deadline = time.perf_counter() + timeout
        while self._next_line(deadline - time.perf_counter()) is not None:
            pass
        while self.child.isalive():
            assert time.perf_counter() < deadline, "the process closed its output but did not exit"
            time.sleep(0.005)
        assert self.child.exitstatus is not None, f"killed by signal {self.child.signalstatus}"
        return self.child.exitstatus

    def assert_clean(self) -> None:
        """Everything this process wrote, anything still pending included, is one of the
        protocol's forms (each line is checked as it is read; this also reads what is
        left), and nothing at all went to standard error."""
        self.sync()
        assert "uciok" in self.transcript and self.transcript[-1] == "readyok"
        assert [line for line in self.transcript if not is_known_line(line)] == []
        assert Path(self.stderr_path).read_text(errors="replace") == ""

    def stderr_note(self) -> str:
        text = Path(self.stderr_path).read_text(errors="replace")
        return f"\nstderr:\n{text[-2000:]}" if text else ""

    def close(self) -> None:
        if self.child.isalive():
            try:
                self.send("quit")
                self.wait_exit(5.0)
            except (AssertionError, OSError):
                pass
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close()
        os.unlink(self.stderr_path)


def start_engine(command: str = sys.executable, args: list[str] | None = None) -> EngineProcess:
    """A fresh process, handshaken and ready."""
    proc = EngineProcess(command, args)
    proc.send("uci")
    proc.read_until("uciok", READY_TIMEOUT)
    proc.sync(READY_TIMEOUT)
    return proc


def infos(lines: list[str]) -> list[re.Match[str]]:
    """The parsed ``info depth ...`` lines."""
    found = []
    for line in lines:
        if line.startswith("info depth"):
            match = INFO_RE.fullmatch(line)
            assert match, f"malformed info line {line!r}"
            found.append(match)
    return found


def bestmoves(lines: list[str]) -> list[re.Match[str]]:
    return [m for m in (BESTMOVE_RE.fullmatch(line) for line in lines) if m]


def errors(lines: list[str]) -> list[str]:
    return [line for line in lines if ERROR_RE.fullmatch(line)]


def score_of(info: re.Match[str]) -> tuple[str, int]:
    return info["kind"], int(info["value"])


def check_bestmove(line: str, board: Board, drops: bool = False) -> int:
    """The column of a ``bestmove`` line, which must be legal, with a legal ponder move."""
    match = BESTMOVE_RE.fullmatch(line)
    assert match, f"not a bestmove line: {line!r}"
    column = board.parse(match["move"], drops)
    assert board.can_play(column), f"illegal bestmove {line!r}"
    if match["ponder"]:
        after = board.copy()
        after.play(column)
        assert after.can_play(after.parse(match["ponder"], drops)), f"illegal ponder move {line!r}"
    return column


def bestmove_after(engine: EngineProcess, command: str, board: Board,
                   timeout: float) -> tuple[float, list[str]]:
    """Send ``command`` and read up to the ``bestmove`` it brings, which must be legal
    on ``board``: the milliseconds that took, and the lines read."""
    sent = engine.send(command)
    lines = engine.read_until("bestmove", timeout)
    elapsed_ms = (time.perf_counter() - sent) * 1000
    check_bestmove(lines[-1], board)
    return elapsed_ms, lines


def start_long_search(engine: EngineProcess) -> None:
    """``go infinite`` from the start position without the opening book: it runs for
    minutes, so it is surely still searching whenever the test acts on it."""
    engine.send("setoption name OwnBook value false")
    engine.send("position startpos")
    engine.send("go infinite")
    first = engine.read_line()
    assert INFO_RE.fullmatch(first), first


def ended_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` has ended, or ends within ``seconds`` (a zombie
    waiting for its parent counts as ended: it runs no more)."""
    deadline = time.monotonic() + seconds
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _running(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):  # gone before the open, or between it and the read
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"
