"""John Tromp's Fhourstones88 as an oracle for boards past 64 bits (8x8, 9x7).

Fhourstones88 is the program Tromp solved 8x8 with (2014-15); it is built from
its public source (github.com/tromp/fhourstones88) outside this repository, one
binary a board, named ``C4<W><H>`` (``C488``, ``C497``), in the folder that
``FHOURSTONES88_DIR`` names.  It reads a line of column digits, plays them and
solves the position weakly, printing ``score +``, ``=`` or ``-`` for the side to move, and the milliseconds its search took.  One process a
position, so that every solve starts from an empty table as ``c4engine solve``'s
do; its book file (which it opens first and appends to only for solves of more
work than the build's ``BOOKWORK``: never, at 99) is an empty file of its own.
The build, for 8x8::

    g++ -std=c++11 -O3 -DWIDTH=8 -DHEIGHT=8 -DBOOKWORK=99 -DLOCKSIZE=50 -DTRANSIZE=8306069 \
        -o C488 C4.cpp Search.cpp Window.cpp

CI cannot build it (it reaches no GitHub, and no package registry carries it), so
``tools/record_fhourstones.py`` records its results for ``tests/test_fhourstones.py``.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from c4engine.geometry import Geometry
from c4engine.rules.board import Board

DIR_ENV = "FHOURSTONES88_DIR"
_RESULT = re.compile(r"score ([-=+])\s+work \d+\s+(\d+) pos / (\d+) msec")
SIGN = {"-": -1, "=": 0, "+": 1}


@dataclass(frozen=True)
class Solved:
    sign: int  # for the side to move: -1 loss, 0 draw, 1 win
    nodes: int
    seconds: float


def binary(geometry: Geometry) -> Path | None:
    """The Fhourstones88 binary for ``geometry``, or None when none was built."""
    folder = os.environ.get(DIR_ENV)
    path = Path(folder) / f"C4{geometry.width}{geometry.height}" if folder else None
    return path if path is not None and os.access(path, os.X_OK) else None


def solve(program: Path, moves: str, scratch: Path, timeout: float = 600.0) -> Solved:
    """Fhourstones88's weak solution of the position after ``moves`` (digits 1-9)."""
    book = scratch / "book"
    book.write_bytes(b"")
    done = subprocess.run([str(program), str(book)], input=f"{moves}\n", capture_output=True, text=True,
                          timeout=timeout, cwd=scratch, check=True)
    match = _RESULT.search(done.stdout)
    if match is None:
        raise RuntimeError(f"Fhourstones88 gave no score for {moves}: {done.stdout!r}")
    sign, nodes, msecs = match.groups()
    return Solved(SIGN[sign], int(nodes), int(msecs) / 1000.0)


def random_positions(geometry: Geometry, count: int, stones: tuple[int, int], seed: int) -> list[Board]:
    """``count`` positions of ``stones[0]..stones[1]`` stones from random games in which
    neither side completes a line nor lets the other complete one next: open
    positions, not over and not won at once."""
    rng = random.Random(seed)
    out: list[Board] = []
    while len(out) < count:
        pos, target = Board(geometry=geometry), rng.randint(*stones)
        while pos.stones < target:
            safe = [col for col in pos.legal_moves()
                    if not pos.is_winning_move(col) and not pos.play(col).can_win_now()]
            if not safe:
                break
            pos = pos.play(rng.choice(safe))
        if pos.stones == target:
            out.append(pos)
    return out


def digits(pos: Board) -> str:
    return "".join(str(col + 1) for col in pos.history)
