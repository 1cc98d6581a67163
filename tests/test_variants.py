"""Variants: the built-in names and Fairy-Stockfish's variants files.

One variants file must drive c4engine and Fairy-Stockfish in one match, so the
file is read as Fairy-Stockfish reads it (inheritance, ``maxFile`` as a letter
or a number), and a rule c4engine does not play is refused, never ignored:
an ignored rule would make the two engines play different games.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from c4engine.geometry import STANDARD, Geometry
from c4engine.rules.variants import VariantError, VariantSet, built_in, variant_name

DATA = Path(__file__).resolve().parent / "data"
SHARED_FILE = str(DATA / "variants.ini")
CFOUR_SECTION = (DATA / "variants.ini").read_text().split("[cfour8x7")[0]


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "variants.ini"
    path.write_text(text)
    return str(path)


def test_built_in_names() -> None:
    variants = VariantSet()
    assert variants.names()[0] == "cfour"
    assert variants.find("cfour").geometry == STANDARD
    assert variants.find("CFOUR").geometry == STANDARD
    assert "cfour-8x7" in variants.names()
    assert variants.find("cfour-10x5k5").geometry == Geometry(10, 5, 5)
    assert variant_name(Geometry(9, 6, 5)) == "cfour-9x6k5"
    assert variant_name(STANDARD) == "cfour"


@pytest.mark.parametrize("name, message", [
    ("chess", "no variant named 'chess'"),
    ("cfour-12x10", "needs width x \\(height \\+ 1\\) <= 128"),
    ("cfour-7x6k8", "row length 8 is out of range"),
    ("cfour-7x6x", "expected WxH or WxHkK"),
    ("cfour-٧x٦", "expected WxH or WxHkK"),  # digits are ASCII: not Arabic-Indic ones,
    ("cfour-７x６", "expected WxH or WxHkK"),  # nor fullwidth ones
    ("cfour-7x6k４", "expected WxH or WxHkK"),
    ("cfour-27x1k3", "at most 26 columns"),
])
def test_unknown_names_are_refused(name: str, message: str) -> None:
    with pytest.raises(VariantError, match=message):
        VariantSet().find(name)


def test_the_shared_file() -> None:
    """Fairy-Stockfish's [cfour] section is the built-in game; sections inherit from it."""
    variants = VariantSet().with_file(SHARED_FILE)
    assert variants.find("cfour").geometry == STANDARD
    assert variants.find("cfour8x7").geometry == Geometry(8, 7)
    assert variants.find("five9x6").geometry == Geometry(9, 6, 5)
    assert variants.names()[-2:] == ["cfour8x7", "five9x6"]
    assert VariantSet().names() == [n for n in variants.names() if n not in ("cfour8x7", "five9x6")]


def test_a_section_inherits_from_a_built_in(tmp_path: Path) -> None:
    path = write(tmp_path, "[big:cfour-8x7]\nconnectN = 5\n")
    assert VariantSet().with_file(path).find("big").geometry == Geometry(8, 7, 5)


@pytest.mark.parametrize("text, message", [
    ("[x:cfour]\ncapturesToHand = true\n", r"\[x\]: the rule 'capturesToHand = true' is not supported"),
    ("[x:cfour]\nenclosingDrop = anyside\n", "enclosingDrop = anyside is not supported"),
    ("[x:cfour]\nconnectValue = loss\n", "connectValue = loss is not supported"),
    ("[x:cfour]\nmaxFile = 8\n", "expected 7 rows|describes 7 cells, expected 8"),
    ("[x:cfour]\nmaxFile = 12\nmaxRank = 10\n", "needs width x \\(height \\+ 1\\) <= 128"),
    ("[x:cfour]\nconnectN = 8\n", "row length 8 is out of range"),
    ("[x:cfour]\nstartFen = 7/7/7/7/7/3P3[PPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] b - - 0 1\n",
     "startFen must be the empty board"),
    ("[x:cfour]\nnMoveRule = 10\n", "nMoveRule = 10 could end a game on 7x6 early"),
    ("[x]\nmaxFile = 7\nmaxRank = 6\nconnectN = 4\n", "pieceDrops = false is not supported"),
    ("[x:chess]\n", r"no variant 'chess' is built in or defined earlier"),
    ("[cfour:cfour]\nmaxFile = 8\nmaxRank = 7\nstartFen = 8/8/8/8/8/8/8 w\n",
     r"\[cfour\] is already the 7x6 game"),
    ("[x:cfour]\nthis line has no equals sign\n", "expected 'key = value'"),
    ("[x y]\n", "is not \\[name\\] or \\[name:parent\\]"),
], ids=["capture rule", "any-side drops", "misere", "size without startFen", "too big",
        "K too long", "start with stones", "move rule", "no parent, no drops", "unknown parent",
        "cfour redefined", "no equals", "space in name"])
def test_a_file_with_other_rules_is_refused_whole(tmp_path: Path, text: str, message: str) -> None:
    """A refused section refuses the file: the set is unchanged, and the message names it."""
    path = write(tmp_path, "[fine:cfour]\n" + text)
    before = VariantSet()
    with pytest.raises(VariantError, match=message):
        before.with_file(path)
    assert before.names() == VariantSet().names()


def test_a_root_section_must_say_everything(tmp_path: Path) -> None:
    """Without a parent a section starts from Fairy-Stockfish's defaults (chess on 8x8),
    so Fairy-Stockfish's own [cfour] section is accepted and a shorter one is not."""
    assert VariantSet().with_file(write(tmp_path, CFOUR_SECTION)).find("cfour").geometry == STANDARD
    short = CFOUR_SECTION.replace("immobile = p\n", "")
    with pytest.raises(VariantError, match="immobile = - is not supported"):
        VariantSet().with_file(write(tmp_path, short))


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(VariantError, match="has no \\[section\\]"):
        VariantSet().with_file(write(tmp_path, "# nothing\nmaxFile = 8\n"))
    with pytest.raises(VariantError, match="cannot read variants file"):
        VariantSet().with_file(str(tmp_path / "missing.ini"))
    (tmp_path / "bin.ini").write_bytes(b"[x:cfour]\n\xff\n")
    with pytest.raises(VariantError, match="not UTF-8"):
        VariantSet().with_file(str(tmp_path / "bin.ini"))


def test_built_in_rules_are_fairy_stockfish_cfour() -> None:
    """The keys a section inherits from ``cfour`` are those of Fairy-Stockfish's [cfour]."""
    rules = dict(built_in(STANDARD).rules)
    for line in CFOUR_SECTION.splitlines():
        if "=" in line:
            key, value = (part.strip() for part in line.split("=", 1))
            assert rules.pop(key) == value
    assert rules == {}


def test_a_section_may_inherit_from_an_earlier_one_in_any_case(tmp_path: Path) -> None:
    path = write(tmp_path, "[Big:cfour-8x7]\nconnectN = 5\n[bigger:BIG]\n[big:cfour-8x7]\nconnectN = 5\n")
    variants = VariantSet().with_file(path)
    assert variants.find("bigger").geometry == Geometry(8, 7, 5)
    assert [v.name for v in variants.loaded] == ["Big", "bigger"]  # a name loaded again keeps the first


def test_a_large_file_loads_in_linear_time(tmp_path: Path) -> None:
    """16,000 sections, each naming the one before as its parent: every look-up by
    name is a dict's, so this takes about a second (the linear scans it replaced took
    minutes, with ``isready`` unanswered).  Run apart, so that a slow load fails
    the test at its time-out instead of holding the suite."""
    sections = "".join(f"[v{i}:{f'v{i - 1}' if i else 'cfour'}]\nnFoldRule = 3\n" for i in range(16_000))
    path = write(tmp_path, sections)
    code = ("import sys; from c4engine.rules.variants import VariantSet; "
            "print(len(VariantSet().with_file(sys.argv[1]).loaded))")
    done = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["16000"], done.stderr
