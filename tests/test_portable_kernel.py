"""The portable kernel (c4engine/kernel/portable.py): 7x6's kernel compiled for a baseline
CPU into the package, as the wheel's build does it, then a first start on empty caches
that loads it and compiles nothing; a shipped kernel that does not fit (another numba,
another CPU, other sources) is ignored, and the engine compiles as before.

The package is copied to a temporary folder and its portable kernel compiled there
once for the module (seconds of CPU, the cost of one first start before this work)."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fresh_environment import fresh_environment

from c4engine.kernel import portable

REPOSITORY = Path(__file__).resolve().parent.parent
SHIPPED_COPY = "5x4"  # a board shipped in the test's build beside 7x6, as the wheel ships those with a network
README_COMMAND = "uci\nisready\nposition startpos\ngo movetime 1000\n"
START_CEILING_S = 120.0  # a fresh start's readyok, on a loaded machine: generous, it only catches a hang


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package with its portable kernel compiled in: the folder to put
    on PYTHONPATH."""
    root = tmp_path_factory.mktemp("installed")
    shutil.copytree(REPOSITORY / "c4engine", root / "c4engine",
                    ignore=shutil.ignore_patterns("__pycache__", "portable"))
    scratch = tmp_path_factory.mktemp("build-caches")
    done = subprocess.run([sys.executable, "-m", "c4engine", "warm-up", "--board", "7x6", "--board", SHIPPED_COPY],
                          env=engine_env(root, scratch, C4ENGINE_PORTABLE_BUILD=str(root / "c4engine" / "kernel")),
                          capture_output=True, text=True, timeout=900, cwd=root)
    assert done.returncode == 0, done.stderr
    return root


def engine_env(package: Path, caches: Path, **more: str) -> dict[str, str]:
    """The copy first on the path, empty numba and kernel caches in ``caches``."""
    return {**fresh_environment(), "PYTHONPATH": str(package), "NUMBA_CACHE_DIR": str(caches / "numba"),
            "C4ENGINE_KERNEL_CACHE": str(caches / "kernels"), portable.TUNE_ENV: "0", **more}


def shipped(package: Path) -> Path:
    folders = list((package / "c4engine" / "kernel" / "portable").iterdir())
    assert len(folders) == 1, folders
    return folders[0]


def first_start(package: Path, caches: Path) -> tuple[float, str]:
    """README's first command on empty caches: seconds to ``readyok``, and the output."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "c4engine"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=engine_env(package, caches), cwd=caches)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(README_COMMAND)
    proc.stdin.close()
    ready_at = None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.strip() == "readyok":
            ready_at = time.perf_counter() - started
    assert proc.wait(timeout=START_CEILING_S) == 0
    assert ready_at is not None, lines
    return ready_at, "".join(lines)


def compiled_files(caches: Path) -> list[Path]:
    """What numba wrote to its own cache folder: the kernel's functions it compiled."""
    return sorted((caches / "numba").rglob("*.nbi")) if (caches / "numba").exists() else []


def added_to_the_portable_kernel(package: Path, caches: Path) -> set[str]:
    """The files numba added to the copy of the shipped kernel in use (one per
    function compiled in a process on the portable kernel)."""
    seeded = list((caches / "kernels").glob("*/portable-*"))
    assert len(seeded) == 1, seeded
    return ({str(path.relative_to(seeded[0])) for path in seeded[0].rglob("*")}
            - {str(path.relative_to(shipped(package))) for path in shipped(package).rglob("*")})


def test_the_build_keys_every_entry_on_the_baseline_cpu(package: Path) -> None:
    """Each shipped entry is keyed on the baseline's name and no extra features: a
    process whose numba targets another CPU looks up another key and never loads it."""
    baseline = portable.BASELINES[os.uname().machine][0]
    indexes = list(shipped(package).rglob("*.nbi"))
    assert len(indexes) > 20
    for index in indexes:
        with open(index, "rb") as source:
            pickle.load(source)  # numba's version
            _stamp, overloads = pickle.loads(source.read())
        assert {key[1][1:] for key in overloads} == {(baseline, "")}, index


def test_a_first_start_loads_the_shipped_kernel_and_compiles_nothing(package: Path, tmp_path: Path) -> None:
    ready_s, out = first_start(package, tmp_path)
    print(f"\nfresh caches, shipped kernel: readyok {ready_s:.2f} s")
    assert ready_s < START_CEILING_S
    assert out.splitlines()[-1].startswith("bestmove 4"), out
    assert compiled_files(tmp_path) == []
    assert added_to_the_portable_kernel(package, tmp_path) == set()


def test_a_shipped_boards_first_solve_compiles_nothing(package: Path, tmp_path: Path) -> None:
    """A board shipped beside 7x6 (the wheel ships those with a network): its first
    ``solve`` loads the whole kernel shipped for it."""
    done = subprocess.run([sys.executable, "-m", "c4engine", "solve", "--board", SHIPPED_COPY], input="1122\n",
                          capture_output=True, text=True, timeout=START_CEILING_S, env=engine_env(package, tmp_path),
                          cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("1122 "), done.stdout + done.stderr
    assert compiled_files(tmp_path) == []
    assert added_to_the_portable_kernel(package, tmp_path) == set()


def test_two_processes_starting_at_once_on_empty_caches_both_answer(package: Path, tmp_path: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-m", "c4engine"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=engine_env(package, tmp_path), cwd=tmp_path) for _ in range(2)]
    outs = [proc.communicate(README_COMMAND, timeout=START_CEILING_S)[0] for proc in procs]
    for out in outs:
        assert out.splitlines()[-1].startswith("bestmove 4"), out
    assert compiled_files(tmp_path) == []
    assert added_to_the_portable_kernel(package, tmp_path) == set()


def uses_portable(package: Path, caches: Path, **more: str) -> bool:
    """Whether a process importing the kernel from ``package`` chooses its portable
    kernel (the choice is made before anything is compiled or loaded)."""
    done = subprocess.run([sys.executable, "-c", "import c4engine.kernel.jit; from c4engine.kernel import portable; "
                           "print(portable.active())"], capture_output=True, text=True, timeout=300,
                          env=engine_env(package, caches, **more), cwd=caches)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip() == "True"


def test_the_shipped_kernel_is_chosen_unless_turned_off(package: Path, tmp_path: Path) -> None:
    assert uses_portable(package, tmp_path)
    assert not uses_portable(package, tmp_path, **{portable.OFF_ENV: "0"})
    assert not uses_portable(package, tmp_path, NUMBA_CPU_NAME="generic")


def tuned_stamp(package: Path, caches: Path) -> Path:
    done = subprocess.run([sys.executable, "-c", "from c4engine.kernel import portable; print(portable._tuned_stamp())"],
                          capture_output=True, text=True, timeout=300, env=engine_env(package, caches), cwd=caches)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip())


def test_once_the_hosts_code_is_compiled_the_portable_kernel_is_not_used(package: Path, tmp_path: Path) -> None:
    """The stamp the host's compilation leaves in numba's cache of the kernel."""
    stamp = tuned_stamp(package, tmp_path)
    assert stamp.parent.is_relative_to(tmp_path / "numba")
    stamp.touch()
    assert not uses_portable(package, tmp_path)


@pytest.mark.slow
def test_the_engine_has_the_hosts_code_compiled_in_the_background(package: Path, tmp_path: Path) -> None:
    """A start on the portable kernel answers at once and leaves a process compiling
    the host's code, at the lowest priority; once it is done, the next start loads it."""
    proc = subprocess.run([sys.executable, "-m", "c4engine"], input=README_COMMAND, capture_output=True, text=True,
                          timeout=START_CEILING_S, env=engine_env(package, tmp_path, **{portable.TUNE_ENV: "1"}),
                          cwd=tmp_path)
    assert proc.stdout.splitlines()[-1].startswith("bestmove 4"), proc.stdout
    stamp = tuned_stamp(package, tmp_path)
    waited = 0.0
    while not stamp.exists() and waited < 900.0:
        time.sleep(1.0)
        waited += 1.0
    assert stamp.exists()
    assert compiled_files(tmp_path)
    assert not uses_portable(package, tmp_path)


def test_a_shipped_kernel_of_other_sources_is_ignored(package: Path, tmp_path: Path) -> None:
    """An edit to the kernel after the build: its sources' hash no longer matches."""
    edited = tmp_path / "edited"
    shutil.copytree(package, edited)
    with open(edited / "c4engine" / "kernel" / "layout.py", "a") as source:
        source.write("\n# an edit\n")
    assert not uses_portable(edited, tmp_path)


def test_a_shipped_kernel_for_another_numba_is_ignored(package: Path, tmp_path: Path) -> None:
    """The folder of another numba version (its tag) is never looked at; an index
    written by another numba in a folder of this one's name numba ignores itself."""
    other = tmp_path / "other"
    shutil.copytree(package, other)
    folder = shipped(other)
    folder.rename(folder.with_name(folder.name.replace("-numba", "-numba0.0.0+")))
    assert not uses_portable(other, tmp_path)


def test_a_cpu_without_the_baseline_features_does_not_use_it() -> None:
    machine = os.uname().machine
    baseline_features = set(portable.BASELINES[machine][1])
    assert portable.host_runs_baseline(baseline_features | {"avx2"})
    if baseline_features:
        assert not portable.host_runs_baseline(baseline_features - {"popcnt"})
