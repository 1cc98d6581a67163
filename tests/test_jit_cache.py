"""numba's cache: edits to the files the kernel compiles in (kernel.jit.drop_stale_entries),
and boards compiled at once by several processes (kernel.specialise)."""

from __future__ import annotations

import ast
import builtins
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from c4engine.geometry import Geometry
from c4engine.kernel import sources, specialise
from c4engine.kernel.jit import drop_stale_entries, jitted_sources

KERNEL_ENTRY = ["kernel.search_node-421.py311.nbi", "kernel.search_node-421.py311.1.nbc",
                "kernel.search_node-421.py311.2.nbc"]
BOOK_ENTRY = ["book.book_score-170.py311.nbi", "book.book_score-170.py311.1.nbc"]
OTHER_MODULE_ENTRY = ["other.f-1.py311.nbi", "other.f-1.py311.1.nbc"]


def at(path: Path, mtime: float) -> Path:
    path.touch()
    os.utime(path, (mtime, mtime))
    return path


def cache_of(tmp_path: Path, names: list[str], mtime: float) -> Path:
    cache = tmp_path / "cache"
    cache.mkdir(exist_ok=True)
    for name in names:
        at(cache / name, mtime)
    return cache


def test_a_cache_newer_than_every_source_is_kept(tmp_path: Path) -> None:
    sources = [at(tmp_path / "kernel.py", 100), at(tmp_path / "book.py", 100)]
    cache = cache_of(tmp_path, KERNEL_ENTRY + BOOK_ENTRY, 200)
    drop_stale_entries([cache], sources)
    assert sorted(p.name for p in cache.iterdir()) == sorted(KERNEL_ENTRY + BOOK_ENTRY)


def test_an_edit_to_a_callee_drops_the_callers_entries_too(tmp_path: Path) -> None:
    """book.py edited after the kernel was cached: the kernel's entry (index and data
    files) goes with the book's; a stale entry of a module not listed stays."""
    sources = [at(tmp_path / "kernel.py", 100), at(tmp_path / "book.py", 300)]
    cache = cache_of(tmp_path, KERNEL_ENTRY + BOOK_ENTRY + OTHER_MODULE_ENTRY, 200)
    drop_stale_entries([cache], sources)
    assert sorted(p.name for p in cache.iterdir()) == sorted(OTHER_MODULE_ENTRY)


def test_an_entry_goes_with_its_own_data_files_only(tmp_path: Path) -> None:
    """A stale ``search_node-42`` entry beside a fresh ``search_node-421`` one (a
    function that moved in the file): only the stale index and its data go."""
    sources = [at(tmp_path / "kernel.py", 300)]
    cache = cache_of(tmp_path, KERNEL_ENTRY, 400)
    stale = ["kernel.search_node-42.py311.nbi", "kernel.search_node-42.py311.1.nbc"]
    cache_of(tmp_path, stale, 200)
    drop_stale_entries([cache], sources)
    assert sorted(p.name for p in cache.iterdir()) == sorted(KERNEL_ENTRY)


PACKAGE = Path(__file__).resolve().parent.parent / "c4engine"
# Modules outside the kernel whose cached functions call only their own (and numpy's):
# numba's cache, keyed on a function's own file, stays true for them without the
# kernel's stale-entry sweep (their functions that call a board kernel are not cached).
SELF_CONTAINED = {"selfplay": PACKAGE / "training" / "selfplay.py"}


def test_every_module_with_compiled_functions_is_listed() -> None:
    """A module that compiles functions but is missing from jitted_sources() would
    leave the kernel stale after its edits."""
    compiling = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if "@jit" in text or "numba.njit" in text:
            compiling.add(path.stem)
        compiling.update(re.findall(r"\bjit\((\w+)\.", text))  # jit(bits.popcount)
    assert {"negamax", "book", "bits"} <= compiling
    assert compiling - SELF_CONTAINED.keys() <= {source.stem for source in jitted_sources()}


@pytest.mark.parametrize("name", sorted(SELF_CONTAINED))
def test_a_self_contained_module_caches_only_functions_that_call_its_own(name: str) -> None:
    tree = ast.parse(SELF_CONTAINED[name].read_text())
    own = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    cached = [node for node in tree.body if isinstance(node, ast.FunctionDef)
              and any("cache=True" in ast.unparse(decorator) for decorator in node.decorator_list)]
    assert cached
    for function in cached:
        called = {node.func.id for node in ast.walk(function)
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        assert called <= own | set(dir(builtins)), function.name


def test_kernel_copies_of_edited_sources_go_beside_the_package(tmp_path: Path, monkeypatch) -> None:
    """A checkout being edited makes a folder of board kernels per edit; the old ones
    are dropped when a new one is made beside the package, never in a shared cache
    where another installation may still run them."""
    monkeypatch.setattr(specialise, "KERNEL_DIR", tmp_path)
    boards = tmp_path / "__pycache__" / "boards"
    for sources in ("old", "new"):
        (boards / sources / "c4engine_kernel_8x7k4").mkdir(parents=True)
    specialise._drop_stale_copies(boards / "new")
    assert [p.name for p in boards.iterdir()] == ["new"]
    shared = tmp_path / "user-cache"
    for sources in ("old", "new"):
        (shared / sources).mkdir(parents=True)
    specialise._drop_stale_copies(shared / "new")
    assert sorted(p.name for p in shared.iterdir()) == ["new", "old"]


def test_a_board_copy_compiles_its_own_rules_functions(tmp_path: Path, monkeypatch) -> None:
    """numba specialises the rules' bit tricks on each board's constants; a copy
    importing them from c4engine.rules would put every board's entries in one
    cache file, which two processes compiling at once corrupt (docs/design.md)."""
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path))
    folder = specialise._copy_folder(Geometry(6, 5, 4))
    for name in sources.COMPILED_RULES:
        own = folder / f"{name}.py"
        assert own.read_text() == (sources.RULES_DIR / f"{name}.py").read_text()
    copies = "".join(path.read_text() for path in folder.glob("*.py"))
    assert "from . import bits, scores" in (folder / "jit.py").read_text()
    assert not re.search(r"^\s*from (c4engine|\.\.)\.?rules", copies, re.MULTILINE)


# A first use of each board at once on a fresh cache (6x4 twice: one board's first
# use by two processes); their weak solves of the empty board.
CONCURRENT_BOARDS = {"6x4": "-1", "5x4": "0", "4x5": "0"}


def solve_empty_board(board: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "c4engine", "solve", "--weak", "--board", board],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def modules_with_cache_entries(numba_cache: Path) -> set[str]:
    """The packages whose functions have entries: numba names a folder of
    ``NUMBA_CACHE_DIR`` after the source folder and the hash of its path."""
    return {index.parent.name.rsplit("_", 1)[0] for index in numba_cache.rglob("*.nbi")}


@pytest.mark.slow
def test_boards_compiled_at_once_on_a_fresh_cache(tmp_path: Path, monkeypatch) -> None:
    """Every process answers right, and no numba cache file is written for two
    boards: each board's entries are in its copy's folder only (the kernels
    compiled by the processes or by the children compiling them for the
    interpreted tier's time)."""
    numba_cache = tmp_path / "numba"
    env = {**os.environ, sources.CACHE_ENV: str(tmp_path / "kernels"), "NUMBA_CACHE_DIR": str(numba_cache)}
    boards = [*CONCURRENT_BOARDS, "6x4"]
    processes = [solve_empty_board(board, env) for board in boards]
    for board, process in zip(boards, processes):
        out, err = process.communicate("\n", timeout=600)
        assert process.returncode == 0, err
        assert out.split()[0] == CONCURRENT_BOARDS[board], (board, out)
    wait_for_kernel_builds(CONCURRENT_BOARDS, env, monkeypatch)
    assert modules_with_cache_entries(numba_cache) == {
        specialise.module_name(Geometry.parse(board), full=False) for board in CONCURRENT_BOARDS}


def test_a_copy_for_exact_solves_leaves_the_whole_kernel_out(tmp_path: Path, monkeypatch) -> None:
    """``c4engine solve`` asks for a copy whose constants say FULL = False, in a folder of
    its own, so that the whole kernel of the same board is never mistaken for it."""
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path))
    board = Geometry(6, 5, 4)
    solving = specialise._copy_folder(board, full=False)
    constants = (solving / "constants.py").read_text()
    assert "\nFULL = False\n" in constants and "\nGEOMETRY = Geometry(6, 5, 4)\n" in constants
    assert "\nFULL = True\n" in (specialise._copy_folder(board) / "constants.py").read_text()
    assert solving.name == specialise.module_name(board, full=False) != specialise.module_name(board)


def cache_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, sources.CACHE_ENV: str(tmp_path / "kernels"), "NUMBA_CACHE_DIR": str(tmp_path / "numba")}


def compiled_modules(tmp_path: Path) -> set[str]:
    """``package.module`` of every function numba cached (its index files)."""
    return {f"{index.parent.name.rsplit('_', 1)[0]}.{index.name.split('.')[0]}"
            for index in (tmp_path / "numba").rglob("*.nbi")}


def run_command(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "c4engine", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=600)


def wait_for_kernel_builds(boards: Iterable[str], env: dict[str, str], monkeypatch, whole: bool = False) -> None:
    """Wait until each board's kernel for exact solves (``whole``: its whole kernel) is
    compiled in ``env``'s caches: a ``solve`` that the interpreted tier answered
    exits while its child process goes on compiling."""
    monkeypatch.setenv(sources.CACHE_ENV, env[sources.CACHE_ENV])
    deadline = time.monotonic() + 600
    while not all(specialise.is_compiled(Geometry.parse(board), full=whole) for board in boards):
        assert time.monotonic() < deadline, f"no kernel compiled for {boards}"
        time.sleep(0.2)


@pytest.mark.slow
def test_a_new_board_is_answered_while_its_kernel_compiles_in_a_child(tmp_path: Path, monkeypatch) -> None:
    """``solve`` on a board whose kernel is not compiled answers a position the
    interpreted tier finishes at once (8x8 after 44445555: a win with the mover's
    5th stone, 3 of the tier's nodes) and exits, while a child process compiles the
    kernel into the caches; the next run loads it, and the kernel answers (1 node)."""
    env = cache_env(tmp_path)
    first = run_command("solve", "--board", "8x8", env=env, stdin="44445555 27\n")
    assert first.returncode == 0, first.stderr
    assert first.stdout.split()[:3] == ["44445555", "27", "3"]
    assert "kernel ready" not in first.stderr
    assert "the interpreted tier answered while the kernel compiled" in first.stderr
    wait_for_kernel_builds(["8x8"], env, monkeypatch)
    second = run_command("solve", "--board", "8x8", env=env, stdin="44445555 27\n")
    assert second.returncode == 0, second.stderr
    assert second.stdout.split()[:3] == ["44445555", "27", "1"] and "kernel ready" in second.stderr


API_FIRST_SOLVE = """
import c4engine
from c4engine import api
print(c4engine.solve(c4engine.Position.from_moves("44445555", width=8, height=8)), api.is_warm(8, 8, 4))
"""


@pytest.mark.slow
def test_the_apis_first_solve_on_a_new_board_is_answered_while_its_kernel_compiles(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    """``c4engine.solve`` on a board whose kernel is not compiled answers a position the
    interpreted tier finishes at once with no searcher built, and the process exits
    while a child compiles the whole kernel; in the next process the searcher is
    built from the caches at the first call."""
    env = cache_env(tmp_path)
    first = subprocess.run([sys.executable, "-c", API_FIRST_SOLVE], capture_output=True, text=True, env=env,
                           timeout=600)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["27", "False"]
    wait_for_kernel_builds(["8x8"], env, monkeypatch, whole=True)
    second = subprocess.run([sys.executable, "-c", API_FIRST_SOLVE], capture_output=True, text=True, env=env,
                            timeout=600)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["27", "True"]


@pytest.mark.slow
@pytest.mark.parametrize("board, line", [("5x4", "1234512 1"), ("7x6", "7234472553 10")])
def test_the_first_solve_on_a_board_compiles_no_evaluation(tmp_path: Path, board: str, line: str,
                                                           monkeypatch) -> None:
    """The solve command compiles what an exact solve runs, not the depth-limited
    search's evaluation nor the books' probes (docs/design.md): on 7x6 too, whose
    whole kernel (the package's own, ``kernel``) it leaves to the engine."""
    env = cache_env(tmp_path)
    done = run_command("solve", "--board", board, env=env, stdin=f"{line}\n")
    assert done.returncode == 0, done.stderr
    wait_for_kernel_builds([board], env, monkeypatch)
    package = specialise.module_name(Geometry.parse(board), full=False)
    assert f"{package}.negamax" in compiled_modules(tmp_path)
    left_out = {f"{where}.{module}" for where in (package, "kernel") for module in ("evaluation", "ntuple", "book",
                                                                                   "built_book")}
    assert not left_out & compiled_modules(tmp_path)


@pytest.mark.slow
def test_warm_up_compiles_the_whole_kernel_which_solve_then_loads(tmp_path: Path) -> None:
    """After ``c4engine warm-up --board``, neither a search nor a solve on that board
    compiles anything: solve takes the whole kernel rather than make its own copy."""
    env = cache_env(tmp_path)
    done = run_command("warm-up", "--board", "5x4", env=env)
    assert done.returncode == 0, done.stderr
    assert "[1/1] 5x4: ready" in done.stderr
    compiled = compiled_modules(tmp_path)
    assert f"{specialise.module_name(Geometry(5, 4, 4))}.evaluation" in compiled
    assert run_command("solve", "--board", "5x4", env=env, stdin="1234512 1\n").returncode == 0
    assert compiled_modules(tmp_path) == compiled


@pytest.mark.slow
def test_an_engine_told_its_board_before_isready_compiles_that_board_alone(tmp_path: Path) -> None:
    """The engine builds its search for the board in play at the first command that
    needs it (protocol.md, ``isready``): a ``UCI_Variant`` read before then, as a match
    runner sends it, compiles that board's kernel on a first start, and not 7x6's
    (the package's own, ``kernel``) as well."""
    lines = "uci\nsetoption name UCI_Variant value cfour-5x4\nisready\nposition startpos\ngo depth 4\n"
    done = run_command(env=cache_env(tmp_path), stdin=lines)
    assert done.returncode == 0, done.stderr
    assert "readyok" in done.stdout and "bestmove P@" in done.stdout and "error" not in done.stdout, done.stdout
    compiled = compiled_modules(tmp_path)
    assert f"{specialise.module_name(Geometry(5, 4, 4))}.negamax" in compiled
    assert not {module for module in compiled if module.startswith("kernel.")}, compiled


def test_warm_up_needs_a_board() -> None:
    done = run_command("warm-up", env=dict(os.environ))
    assert done.returncode == 2 and "name a board (--board) or --shipped" in done.stderr


KERNEL_MODULE_CALL = re.compile(r"\b(?:evaluation|solve|solver|negamax|layout|built_book|table|resolve|ntuple)"
                                r"\.([a-z_]+)\(")


def test_every_kernel_function_called_from_python_is_an_entry_point() -> None:
    """In a board's copy only the entry points have a Python wrapper, and numba does not
    guard the others: a call from Python to one of them crashes the process."""
    package = Path(__file__).resolve().parent.parent / "c4engine"
    kernel_text = "".join(path.read_text() for path in (package / "kernel").glob("*.py"))
    internal = set(re.findall(r"^@jit\ndef (\w+)\(", kernel_text, re.MULTILINE))
    called = {name for path in package.rglob("*.py") if path.parent.name != "kernel"
              for name in KERNEL_MODULE_CALL.findall(path.read_text())}
    assert {"solve", "side_terms", "cell_score"} <= called
    assert not called & internal
