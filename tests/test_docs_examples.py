"""Every example in the README and the documentation runs, so the docs cannot drift from the code.

The fenced blocks of README.md and docs/**/*.md, in page order:

- ``python``: a doctest where it has ``>>>`` prompts, else a script; the blocks
  of one page share their names, as a reader's session would;
- ``console``: each ``$ command`` (a line ending in ``\\`` goes on) runs in
  bash and must succeed; the lines after it are its expected standard output,
  matched as doctest does with ``...`` standing for anything (none: not checked);
- ``sh``: the block runs as a bash script and must succeed;
- any other language (``text``, ``ini``, ``pgn``...) is data, not run.

A comment on the line before a block can say more:
``<!-- example: skip REASON -->`` (it cannot run in the tests: why),
``<!-- example: slow -->`` (minutes: it runs under ``pytest -m slow``), and
``<!-- example: file NAME -->`` (the data block that follows is written to
``NAME`` for the page's later blocks).  A fence without a language is refused,
so that no command hides in an unmarked block.

A page's blocks run in order in a fresh folder that holds links to the
package, ``tools/`` and, beside it, the shared test data (``../shared``), as a
clone of the repository has them.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
PAGES = sorted([REPOSITORY / "README.md", *(page for page in (REPOSITORY / "docs").rglob("*.md")
                                            if "hooks" not in page.parts)])
RUN = {"python", "console", "sh"}
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\s*$")
MARKER = re.compile(r"^\s*<!-- example: (?P<kind>skip|slow|file)\b ?(?P<detail>.*?) ?-->\s*$")
COMMAND_SECONDS = 600
OUTPUT = doctest.OutputChecker()
OUTPUT_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text and what its marker says."""

    page: Path
    line: int
    lang: str
    text: str
    kind: str = ""
    detail: str = ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPOSITORY)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` with the marker just before each, if any."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").split("\n")
    at = 0
    while at < len(lines):
        opening = FENCE.match(lines[at])
        if not opening:
            at += 1
            continue
        indent, end = opening.group("indent"), at + 1
        while not re.match(rf"^{indent}```\s*$", lines[end]):
            end += 1
        text = "\n".join(line[len(indent):] for line in lines[at + 1:end]) + "\n"
        before = lines[at - 1] if at else ""
        marker = MARKER.match(before)
        found.append(Block(page, at + 1, opening.group("lang"), text,
                           *((marker.group("kind"), marker.group("detail")) if marker else ())))
        at = end + 1
    return found


def pages_with(kind: str) -> list[Path]:
    return [page for page in PAGES if any(block.kind == kind for block in blocks(page))]


def test_every_block_says_what_it_is() -> None:
    """A language on every fence; a reason for every skip; markers where they mean something."""
    problems = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        marked = sum(1 for line in text.split("\n") if MARKER.match(line))
        found = blocks(page)
        problems += [f"{b.where}: a fence without a language" for b in found if not b.lang]
        problems += [f"{b.where}: skip without a reason" for b in found if b.kind == "skip" and not b.detail]
        problems += [f"{b.where}: only a data block goes to a file" for b in found
                     if b.kind == "file" and (b.lang in RUN or not b.detail)]
        problems += [f"{b.where}: {b.kind} on a data block" for b in found
                     if b.kind in ("skip", "slow") and b.lang not in RUN]
        if marked != sum(1 for b in found if b.kind):
            problems.append(f"{page.relative_to(REPOSITORY)}: a marker not on the line before a fence")
    assert not problems, "\n".join(problems)


def test_every_public_call_has_an_example() -> None:
    examples = "".join(b.text for page in PAGES for b in blocks(page) if b.lang == "python")
    for name in ("solve(", "analyse(", "best_move(", "warm_up(", "from_moves(", "from_fen(", ".play(",
                 "legal_moves(", "winner(", "side_to_move", ".moves", ".fen(", "print(pos)",
                 "IllegalMoveError", "connectx", "SimpleEngine.popen(", "review(", "use_book("):
        assert name in examples, name


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder laid out as a clone's: the package and tools linked, shared data beside it."""
    work = tmp_path / "repository"
    work.mkdir()
    for name in ("c4engine", "tools"):
        (work / name).symlink_to(REPOSITORY / name)
    shared = REPOSITORY.parent / "shared"
    if shared.is_dir():
        (tmp_path / "shared").symlink_to(shared)
    monkeypatch.chdir(work)
    return work


def run_page(page: Path, work: Path, *, slow: bool) -> int:
    """Run ``page``'s blocks in order (the slow ones too if ``slow``); the number run."""
    names: dict[str, object] = {"__name__": "__main__"}
    ran = 0
    for block in blocks(page):
        if block.kind == "file":
            (work / block.detail).write_text(block.text, encoding="utf-8")
        if block.lang not in RUN or block.kind == "skip" or (block.kind == "slow" and not slow):
            continue
        {"python": run_python, "console": run_console, "sh": run_shell}[block.lang](block, work, names)
        ran += 1
    return ran


def run_python(block: Block, work: Path, names: dict[str, object]) -> None:
    if block.text.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(block.text, names, block.where, str(block.page), block.line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test, clear_globs=False)
        assert runner.failures == 0, f"{block.where}: the doctest above failed"
    else:
        exec(compile(block.text, block.where, "exec"), names)  # noqa: S102 (the docs' own example)


def shell(command: str, work: Path, where: str) -> str:
    """Run ``command`` in bash in ``work``; its standard output. Fails the test on a non-zero exit."""
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=work, capture_output=True,
                          text=True, timeout=COMMAND_SECONDS, env=os.environ.copy(), stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{where}: exit {done.returncode}\n$ {command}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done.stdout


def run_shell(block: Block, work: Path, names: dict[str, object]) -> None:
    shell(block.text, work, block.where)


def console_commands(text: str) -> list[tuple[str, str]]:
    """``(command, expected output)`` pairs of a console block."""
    pairs: list[tuple[str, str]] = []
    command: list[str] = []
    for line in text.rstrip("\n").split("\n"):
        if command and command[-1].endswith("\\"):
            command.append(line)
        elif line.startswith("$ "):
            if command:
                pairs.append(("\n".join(command), "".join(expected)))
            command, expected = [line[2:]], []
        else:
            assert command, f"output before any command: {line!r}"
            expected.append(line + "\n")
    pairs.append(("\n".join(command), "".join(expected)))
    return pairs


def run_console(block: Block, work: Path, names: dict[str, object]) -> None:
    for command, expected in console_commands(block.text):
        output = shell(command, work, block.where)
        if expected:
            assert OUTPUT.check_output(expected, output, OUTPUT_FLAGS), (
                f"{block.where}:\n$ {command}\nexpected:\n{expected}got:\n{output[-4000:]}")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPOSITORY)))
def test_the_page_examples_run(page: Path, workdir: Path) -> None:
    run_page(page, workdir, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("page", pages_with("slow"), ids=lambda page: str(page.relative_to(REPOSITORY)))
def test_the_page_examples_run_with_the_slow_ones(page: Path, workdir: Path) -> None:
    run_page(page, workdir, slow=True)
