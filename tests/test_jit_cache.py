"""numba's cache and edits to the files the kernel compiles in (kernel.jit.drop_stale_entries)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from c4engine.kernel import specialise
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


def test_every_module_with_compiled_functions_is_listed() -> None:
    """A module that compiles functions but is missing from jitted_sources() would
    leave the kernel stale after its edits."""
    package = Path(__file__).resolve().parent.parent / "c4engine"
    compiling = set()
    for path in package.rglob("*.py"):
        text = path.read_text()
        if "@jit" in text or "numba.njit" in text:
            compiling.add(path.stem)
        compiling.update(re.findall(r"\bjit\((\w+)\.", text))  # jit(bits.popcount)
    assert {"negamax", "book", "bits"} <= compiling
    assert compiling <= {source.stem for source in jitted_sources()}


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
