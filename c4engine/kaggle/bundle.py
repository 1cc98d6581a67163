"""``c4engine connectx bundle``: a Kaggle ConnectX submission that runs without c4engine installed.

The archive holds, at its root, ``main.py`` (:mod:`c4engine.kaggle.main`, with the
bundle's board written in), the ``c4engine`` package's Python files and data
(not the web page, which Kaggle never shows), numba's cache of the kernel
compiled for the board, and on 7x6 the opening book's two files in ``book/``
with bitbully-databases' licence.  Kaggle's image has numpy and numba; the cache
is compiled for a generic x86-64 CPU (``NUMBA_CPU_NAME=generic``, which
``main.py`` sets too), so numba on Kaggle loads it instead of compiling, as long
as its version and Python's are those of the machine that made the bundle;
otherwise it compiles on the warm-up thread while the plain-Python player moves.

numba before 0.68 checks a cached function against its source file's modification
time, to the second once in a tar archive (0.68 hashes the file's content): every
source file is given a whole-second time before the kernel is compiled, and the
archive keeps it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from importlib.metadata import distribution
from pathlib import Path

import click

from ..geometry import STANDARD, Geometry
from ..kernel.book import BOOK_DIR_ENV, database_path

PACKAGE = Path(__file__).resolve().parent.parent
BOOK_FILES = ("12-ply-dist", "8-ply")
SKIPPED = shutil.ignore_patterns("__pycache__", "static", "*.pyc")
# Run in the bundle's folder: the kernel copy for the board (none on 7x6), then, after
# the sources get whole-second times, a warm-up and a search that compile and cache it.
MAKE_COPY = "import sys; from c4engine.geometry import Geometry; from c4engine.kernel.specialise import kernel_for; " \
            "kernel_for(Geometry(*map(int, sys.argv[1:4])))"
COMPILE = "import sys, c4engine; board = dict(zip(('width', 'height', 'connect'), map(int, sys.argv[1:4]))); " \
          "c4engine.warm_up(**board); c4engine.best_move(c4engine.Position(**board), time=0.5)"


def make_bundle(out: Path, geometry: Geometry = STANDARD, say=click.echo) -> int:  # noqa: ANN001
    """Write the submission for ``geometry`` to ``out``; its size in bytes."""
    with tempfile.TemporaryDirectory(prefix="c4engine-bundle-") as scratch:
        root = Path(scratch)
        shutil.copytree(PACKAGE, root / "c4engine", ignore=SKIPPED)
        main = (PACKAGE / "kaggle" / "main.py").read_text(encoding="utf-8")
        board = f"BOARD = ({geometry.width}, {geometry.height}, {geometry.connect})"
        (root / "main.py").write_text(main.replace("BOARD = (7, 6, 4)", board, 1), encoding="utf-8")
        if geometry == STANDARD:
            copy_book(root / "book")
        say(f"compiling the {geometry} kernel for any x86-64 CPU (numba {numba_version()}, "
            f"Python {sys.version_info.major}.{sys.version_info.minor}) ...")
        started = time.perf_counter()
        run_in(root, MAKE_COPY, geometry)
        whole_second_times(root)
        run_in(root, COMPILE, geometry)
        say(f"compiled in {time.perf_counter() - started:.0f} s")
        write_archive(root, out)
    return out.stat().st_size


def copy_book(folder: Path) -> None:
    """The opening book's files as ``<name>.dat`` (what ``C4ENGINE_BOOK_DIR`` reads), and their licence."""
    folder.mkdir()
    for name in BOOK_FILES:
        source = database_path(name)
        shutil.copyfile(source, folder / f"{name}.dat")
    licences = [file for file in distribution("bitbully-databases").files or () if file.name == "LICENSE"]
    for licence in licences[:1]:
        shutil.copyfile(Path(str(licence.locate())), folder / "LICENSE-bitbully-databases")


def numba_version() -> str:
    import numba

    return str(numba.__version__)


def run_in(root: Path, script: str, geometry: Geometry) -> None:
    """Run ``script`` with the bundle's package (not this one) and its book, as main.py will."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("PYTHONPATH", "C4ENGINE_KERNEL_CACHE", "NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")}
    env.update(PYTHONPATH=str(root), NUMBA_CPU_NAME="generic")
    if (root / "book").is_dir():
        env[BOOK_DIR_ENV] = str(root / "book")
    args = [str(geometry.width), str(geometry.height), str(geometry.connect)]
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=root, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise click.ClickException(f"compiling the bundle's kernel failed:\n{done.stderr[-2000:]}")


def whole_second_times(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            stamp = int(path.stat().st_mtime)
            os.utime(path, (stamp, stamp))


def write_archive(root: Path, out: Path) -> None:
    """``main.py`` first, then the rest, without Python's own bytecode caches."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:gz") as archive:
        archive.add(root / "main.py", arcname="main.py")
        for path in sorted(root.rglob("*")):
            if path.is_file() and path != root / "main.py" and path.suffix != ".pyc":
                archive.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)
