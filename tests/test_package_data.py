"""Every data file the package reads is one that ``pip install .`` installs.

The tests import the checkout, where every file is present; an installed
package has only the files ``[tool.setuptools.package-data]`` names.  A data
file left out of it (the n-tuple network once was) makes the installed engine
quietly fall back to the hand-written evaluation."""

from __future__ import annotations

import ast
import re
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "c4engine"


def package_data_globs() -> list[str]:
    """The globs ``pyproject.toml`` installs with the ``c4engine`` package itself."""
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    found = re.search(r"^c4engine = (\[.*\])$", section, re.MULTILINE)
    assert found, section
    return ast.literal_eval(found[1])


def test_every_data_file_is_installed() -> None:
    globs = package_data_globs()
    files = [path.relative_to(PACKAGE).as_posix() for path in (PACKAGE / "data").iterdir() if path.is_file()]
    assert "data/ntuple-7x6k4.npz" in files
    assert [name for name in files if not any(fnmatch(name, glob) for glob in globs)] == []
