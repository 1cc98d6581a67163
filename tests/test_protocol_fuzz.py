"""A seeded fuzz test of the protocol process: random batches of valid and invalid
commands, piped into real engine processes, and the invariants protocol.md
promises checked on everything that comes back.

- exactly one ``bestmove`` per accepted ``go`` (the generator knows which ``go``
  lines are well formed: those are accepted, even in a finished game, where the
  answer is ``bestmove (none)``);
- every ``isready`` answered with ``readyok``, every ``uci`` with ``uciok``;
- no traceback or anything else on standard error, exit status 0;
- every output line one of the forms of protocol.md (``protocol_grammar.py``), with
  no control character in it.

A slow variant runs the same on six boards switched mid-stream, with book and
variants files that cannot be used and lines holding control characters.

Each process reads its whole script through a pipe and ends at the end of input,
which lets every bounded search finish and stops the others (``quit`` has its
own tests).  The commands keep the searches short (small depths, node counts,
movetimes and clocks), so the whole run takes some seconds.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from protocol_grammar import BESTMOVE_RE, is_known_line

SEED = 20261122
PROCESSES = 4
BATCHES_PER_PROCESS = 75
COMMANDS_PER_BATCH = (4, 14)
NUMBER_KEYS = ("depth", "nodes", "movetime", "wtime", "btime", "winc", "binc", "movestogo", "mate")
BAD_NUMBERS = ("x", "1_0", "+2", "\u0663", "", "1.5", "-0x1", "9" * 40, "\u00b2")
FILES = "abcdefg"
CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f]")  # never in an output line (protocol.md, Errors)


@dataclass
class Script:
    """The command lines of one process and what they must provoke."""

    lines: list[str] = field(default_factory=list)
    accepted_gos: int = 0
    isready: int = 0
    uci: int = 0


class Generator:
    """Random protocol commands, about half of them malformed in some way."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def moves(self) -> str:
        """A random digit string, sometimes illegal (a full column, column 8 or 0)."""
        rng = self.rng
        heights = [0] * 7
        out = []
        for _ in range(rng.randint(0, 16)):
            col = rng.randrange(7)
            if heights[col] < 6:
                heights[col] += 1
                out.append(str(col + 1))
        if rng.random() < 0.15:
            out.append(rng.choice(["8", "0", "4444444", "P@d6", "p@a1", "x"]))
        if rng.random() < 0.2 and out and out[0] in tuple("1234567"):  # drops, as cutechess sends them
            first = int(out[0]) - 1
            out[0] = f"P@{FILES[first]}1"
        return rng.choice(["", " "]).join(out) if out else ""

    def position(self) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.6:
            moves = self.moves()
            return f"position startpos moves {moves}" if moves else "position startpos"
        if roll < 0.75:
            rows = "/".join(rng.choice(["7", "3p3", "P6", "16", "2pP3", "8", "0", "PPPPPPP"]) for _ in range(6))
            return f"position fen {rows} {rng.choice(['w', 'b', 'x'])}"
        return rng.choice(["position", "position moves 4", "position fen", "position startpos moves",
                           "position start", "position fen 7/7/7/7/7/3P3 b moves 4"])

    def go(self) -> tuple[str, bool]:
        """A ``go`` line and whether it is well formed."""
        rng = self.rng
        values = {"depth": lambda: rng.randint(1, 5), "nodes": lambda: rng.randint(0, 20000),
                  "movetime": lambda: rng.randint(0, 30), "wtime": lambda: rng.randint(-50, 300),
                  "btime": lambda: rng.randint(-50, 300), "winc": lambda: rng.randint(0, 20),
                  "binc": lambda: rng.randint(0, 20), "movestogo": lambda: rng.randint(0, 10),
                  "mate": lambda: rng.randint(1, 5)}
        words: list[str] = []
        for key in rng.sample(NUMBER_KEYS, rng.randint(0, 3)):
            words += [key, str(values[key]())]
        for flag in ("infinite", "ponder"):
            if rng.random() < 0.1:
                words.append(flag)
        if rng.random() < 0.1:  # now and then out of order, mostly a malformed line then
            rng.shuffle(words)
        valid = self.well_formed(words)
        if rng.random() < 0.3:
            words, valid = self.spoil(words), False
        return " ".join(["go"] + words), valid

    def well_formed(self, words: list[str]) -> bool:
        """Whether shuffled words still make a valid ``go`` (each key once, a number after
        each numeric key, numbers in range)."""
        seen, i = set(), 0
        while i < len(words):
            key = words[i]
            if key in seen:
                return False
            seen.add(key)
            if key in ("infinite", "ponder"):
                i += 1
                continue
            if key not in NUMBER_KEYS or i + 1 >= len(words):
                return False
            value = words[i + 1]
            digits = value[1:] if value.startswith("-") else value
            if not digits.isascii() or not digits.isdigit():
                return False
            number = int(value)
            if number < 0 and key not in ("wtime", "btime", "winc", "binc"):
                return False
            if number < 1 and key in ("depth", "mate"):
                return False
            i += 2
        return True

    def spoil(self, words: list[str]) -> list[str]:
        rng = self.rng
        kind = rng.randrange(4)
        if kind == 0:
            return words + [rng.choice(["searchmoves", "foo", "Depth"]), "4"]
        if kind == 1:
            return words + [rng.choice(NUMBER_KEYS)]  # a key with no value
        if kind == 2:
            return words + [rng.choice(NUMBER_KEYS), rng.choice([b for b in BAD_NUMBERS if b])]
        return words + ["depth", "0"] if "depth" not in words else words + ["depth", "3"]

    def setoption(self) -> str:
        rng = self.rng
        good = [("Hash", str(rng.randint(2, 8))), ("Clear Hash", None), ("Move Overhead", str(rng.randint(0, 50))),
                ("MultiPV", str(rng.randint(1, 3))), ("Ponder", rng.choice(["true", "false"])),
                ("OwnBook", rng.choice(["true", "false", "TRUE"])), ("Evaluation", rng.choice(["learned", "ntuple", "threats", "centre"])),
                ("Skill Level", str(rng.randint(0, 20))), ("UCI_LimitStrength", rng.choice(["true", "false"])),
                ("UCI_Variant", "cfour"), ("multipv", "2")]
        bad = [("MultiPV", "99"), ("Hash", "0"), ("Hash", rng.choice(BAD_NUMBERS)), ("Nope", "1"),
               ("Ponder", "maybe"), ("Evaluation", "random"), ("UCI_Variant", "chess"), ("Skill Level", "-1")]
        name, value = rng.choice(good if rng.random() < 0.6 else bad)
        if rng.random() < 0.05:
            return rng.choice(["setoption", "setoption foo", "setoption name", "setoption value 3"])
        return f"setoption name {name}" + ("" if value is None else f" value {value}")

    def other(self) -> str:
        rng = self.rng
        return rng.choice([
            "ucinewgame", "stop", "ponderhit", "d", "eval", f"perft {rng.randint(1, 3)}",
            rng.choice(["perft 0", "perft 11", "perft x", "perft"]), "debug on", "debug off", "debug maybe",
            "", "   ", "hello", "h\u00e9llo w\u00f6rld", "\u3000", "go-depth 2",
            "bench now",
        ])

    def batch(self, script: Script) -> None:
        rng = self.rng
        for _ in range(rng.randint(*COMMANDS_PER_BATCH)):
            roll = rng.random()
            if roll < 0.25:
                line, valid = self.go()
                script.accepted_gos += valid
            elif roll < 0.45:
                line = self.position()
            elif roll < 0.6:
                line = self.setoption()
            elif roll < 0.65:
                line = "isready"
                script.isready += 1
            elif roll < 0.66:
                line = "uci"
                script.uci += 1
            elif roll < 0.662:
                line = "bench"
            else:
                line = self.other()
            script.lines.append(line)
        script.lines.append("isready")
        script.isready += 1


class BoardGenerator(Generator):
    """The same commands on several boards, switched mid-stream (boards past 64 bits
    and odd ones among them), with moves as drops on the board in play, book and
    variants files that cannot be used, and lines with control characters."""

    BOARDS = {"cfour": (7, 6), "cfour-8x8": (8, 8), "cfour-9x7": (9, 7), "cfour-4x4": (4, 4),
              "cfour-10x6": (10, 6), "cfour-6x5k3": (6, 5)}

    def __init__(self, rng: random.Random, unusable_files: list[str]) -> None:
        super().__init__(rng)
        self.unusable_files = unusable_files
        self.width, self.height = 7, 6

    def moves(self) -> str:
        """Drops on the board in play, now and then one too many in a column or off it."""
        rng = self.rng
        heights = [0] * self.width
        out = []
        for _ in range(rng.randint(0, 14)):
            col = rng.randrange(self.width)
            if heights[col] < self.height or rng.random() < 0.05:
                heights[col] += 1
                out.append(f"P@{chr(ord('a') + col)}{heights[col]}")
        if rng.random() < 0.1:
            out.append(rng.choice(["P@z1", "P@a0", "P@a99", "10", "P@"]))
        return " ".join(out)

    def setoption(self) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.15:
            name = rng.choice(list(self.BOARDS))
            self.width, self.height = self.BOARDS[name]
            return f"setoption name UCI_Variant value {name}"
        if roll < 0.25:
            option = rng.choice(["BookFile", "VariantPath"])
            return f"setoption name {option} value {rng.choice(self.unusable_files)}"
        if roll < 0.3:
            return rng.choice(["setoption name UCI_Variant value cfour-12x10", "setoption name Threads value 2",
                               "setoption name Threads value 1", "setoption name Hash value 99999999999999"])
        line = super().setoption()
        if line == "setoption name UCI_Variant value cfour":
            self.width, self.height = self.BOARDS["cfour"]
        return line

    def other(self) -> str:
        rng = self.rng
        if rng.random() < 0.1:
            return rng.choice(["he\x00llo", "go\x00 depth 1", "\x1b[2Jd", "position startpos moves\x7f"])
        return super().other()


def run_script(script: Script) -> subprocess.CompletedProcess[bytes]:
    data = "".join(line + "\n" for line in script.lines).encode()
    data += b"d \xff\xfe\n"  # one line that is not UTF-8
    return subprocess.run([sys.executable, "-m", "c4engine"], input=data, capture_output=True, timeout=300)


def test_random_command_batches_keep_the_protocols_promises() -> None:
    rng = random.Random(SEED)
    generators = [Generator(random.Random(rng.random())) for _ in range(PROCESSES)]
    check_scripts([make_script(generator, BATCHES_PER_PROCESS) for generator in generators])


@pytest.mark.slow
def test_random_batches_on_switching_boards_keep_the_protocols_promises(tmp_path: Path) -> None:
    """Two processes of 60 batches each on six boards, switched mid-stream (about two
    minutes with the boards' kernels compiled)."""
    garbage = tmp_path / "garbage.book"
    garbage.write_bytes(random.Random(SEED).randbytes(4096))
    unusable = [str(garbage), str(tmp_path), str(tmp_path / "missing.book"), "/dev/null"]
    rng = random.Random(SEED + 1)
    generators = [BoardGenerator(random.Random(rng.random()), unusable) for _ in range(2)]
    check_scripts([make_script(generator, 60) for generator in generators])


def make_script(generator: Generator, batches: int) -> Script:
    script = Script()
    for _ in range(batches):
        generator.batch(script)
    return script


def check_scripts(scripts: list[Script]) -> None:
    """Run each script in a process of its own and check what protocol.md promises."""
    with ThreadPoolExecutor(len(scripts)) as pool:
        results = list(pool.map(run_script, scripts))
    for number, (script, done) in enumerate(zip(scripts, results)):
        where = f"process {number} (seed {SEED})"
        assert done.stderr == b"", f"{where}: stderr\n{done.stderr.decode(errors='replace')[-3000:]}"
        assert done.returncode == 0, where
        lines = done.stdout.decode().split("\n")[:-1]  # splitlines would also cut at control characters
        stray = [line for line in lines if not is_known_line(line) or CONTROL_RE.search(line)]
        assert stray == [], f"{where}: lines outside the protocol's grammar: {stray[:5]}"
        assert lines.count("readyok") == script.isready, where
        assert lines.count("uciok") == script.uci, where
        bestmoves = [line for line in lines if BESTMOVE_RE.fullmatch(line)]
        assert len(bestmoves) == script.accepted_gos, f"{where}: {len(bestmoves)} bestmoves for " \
                                                      f"{script.accepted_gos} accepted go commands"
        print(f"\n{where}: {len(script.lines)} commands, {script.accepted_gos} go, {len(lines)} lines out")
