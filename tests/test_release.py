"""The package as it would be released: an sdist and a wheel that ``twine check``
passes, a wheel with the package's data and nothing else, one version, and a
clean virtual environment in which the wheel alone plays the README's first
command.  Building needs setuptools from the package index (an isolated build),
so these checks are slow."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
from fresh_environment import fresh_environment

from c4engine.geometry import Geometry
from c4engine.kernel import portable
from c4engine.kernel.specialise import module_name
from c4engine.kernel.sources import sources_hash
from c4engine.version import __version__

REPOSITORY = Path(__file__).resolve().parent.parent
DATA_FILES = {"c4engine/data/ntuple-7x6k4.npz", "c4engine/data/ntuple-7x7k4.npz", "c4engine/data/ntuple-6x7k4.npz",
              "c4engine/data/book-7x6-4ply.book", "c4engine/data/evaluation-7x6k4.json",
              "c4engine/data/evaluation-7x7k4.json", "c4engine/data/strength_positions.txt",
              "c4engine/gui/static/index.html", "c4engine/gui/static/app.js", "c4engine/gui/static/style.css",
              "c4engine/kernel/book.py"}
PORTABLE_DIR = "c4engine/kernel/portable/"
PYTHON_TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"



@pytest.mark.slow
def test_the_wheel_carries_the_portable_kernel_for_this_python_and_numba(dist: Path) -> None:
    """7x6's kernel compiled for the baseline CPU (c4engine/kernel/portable.py), in the
    folder of this machine, Python and numba, stamped with the sources it was
    compiled from (those of the wheel)."""
    with zipfile.ZipFile(next(dist.glob("*.whl"))) as wheel:
        names = wheel.namelist()
        folder = f"{PORTABLE_DIR}{portable.tag()}/"
        stamp = wheel.read(f"{folder}{portable.SOURCES_FILE}").decode().strip()
    assert stamp == sources_hash()
    assert len([name for name in names if name.startswith(f"{folder}kernel/") and name.endswith(".nbi")]) > 20
    assert {f"{folder}{module_name(Geometry.parse(board))}/" for board in portable.SHIPPED_BOARDS[1:]} <= {
        name.rsplit("/", 1)[0] + "/" for name in names if name.endswith(".nbi")}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(REPOSITORY)],
                          capture_output=True, text=True, timeout=900, env=fresh_environment())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


@pytest.mark.slow
def test_build_makes_an_sdist_and_a_wheel_that_twine_passes(dist: Path) -> None:
    built = sorted(path.name for path in dist.iterdir())
    assert len(built) == 2 and built[1] == f"c4engine-{__version__}.tar.gz", built
    assert re.fullmatch(rf"c4engine-{re.escape(__version__)}-{PYTHON_TAG}-{PYTHON_TAG}-\w+\.whl", built[0]), built
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


@pytest.mark.slow
def test_the_wheel_holds_the_data_and_nothing_from_the_tests(dist: Path) -> None:
    with zipfile.ZipFile(next(dist.glob("*.whl"))) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"c4engine-{__version__}.dist-info/METADATA").decode()
    assert DATA_FILES <= names
    assert not [name for name in names if name.startswith("tests/") or "__pycache__" in name or name.endswith(".pyc")]
    assert not [name for name in names if name.endswith((".nbi", ".nbc")) and not name.startswith(PORTABLE_DIR)]
    assert {name.split("/")[0] for name in names} == {"c4engine", f"c4engine-{__version__}.dist-info"}
    assert re.search(rf"^Version: {re.escape(__version__)}$", metadata, re.MULTILINE)


def test_the_version_is_defined_in_one_place() -> None:
    """pyproject.toml reads it from c4engine/version.py; the changelog has its section."""
    pyproject = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "c4engine.version.__version__"}
    assert f"## [{__version__}]" in (REPOSITORY / "CHANGELOG.md").read_text(encoding="utf-8")


def readme_first_command() -> str:
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```sh\n(pip install \. && .*?)\n```", readme)
    assert found, "the README's first command"
    return found.group(1)


@pytest.mark.slow
def test_a_clean_venv_with_the_wheel_alone_plays_the_readme_first_command(dist: Path, tmp_path: Path) -> None:
    """The README's first command, with ``pip install .`` installing the built wheel, in a
    virtual environment made for it, away from the checkout: nothing is compiled.
    The host's code compiled in the background after such a start (its own test
    in test_portable_kernel.py) is turned off: it writes numba's cache while this
    test looks, and would run on past it."""
    venv.create(tmp_path / "venv", with_pip=True)
    bin_dir = tmp_path / "venv" / "bin"
    wheel = next(dist.glob("*.whl"))
    command = readme_first_command().replace("pip install .", f"pip install --quiet {wheel}", 1)
    env = {**fresh_environment(), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(bin_dir.parent),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "C4ENGINE_KERNEL_CACHE": str(tmp_path / "kernels"),
           portable.TUNE_ENV: "0"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=tmp_path, capture_output=True,
                          text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1].startswith("bestmove 4"), done.stdout[-2000:]
    assert re.search(r"^info .*score mate \d+ .*pv 4", done.stdout, re.MULTILINE), done.stdout[-2000:]
    where = subprocess.run([str(bin_dir / "python"), "-c", "import c4engine; print(c4engine.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, env=env, check=True)
    assert str(tmp_path / "venv") in where.stdout
    assert not list((tmp_path / "numba").rglob("*.nbi")), "the first start compiled what the wheel carries"
    assert list((tmp_path / "kernels").glob("*/portable-*"))


@pytest.mark.slow
def test_a_new_venv_with_nothing_installed_builds_the_wheel(tmp_path: Path) -> None:
    """``pip install .`` in a virtual environment that has nothing but pip: the build
    compiles the kernel with what pip's isolated build installs (numba, numpy,
    click), not with what the interpreter running it happens to have.  The
    compile step once dropped pip's PYTHONPATH and failed on ``import click``."""
    venv.create(tmp_path / "venv", with_pip=True)
    pip = tmp_path / "venv" / "bin" / "pip"
    done = subprocess.run([str(pip), "wheel", "--no-deps", "--quiet", "--wheel-dir", str(tmp_path / "wheels"),
                           str(REPOSITORY)], cwd=tmp_path, capture_output=True, text=True, timeout=900,
                          env=fresh_environment())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert list((tmp_path / "wheels").glob("c4engine-*.whl"))
