"""What the kernel is compiled from, and where its compiled forms are kept.

A hash of the kernel's sources names the folders of its per-board copies
(:mod:`.specialise`) and stamps the portable kernel (:mod:`.portable`): an edit
to any of them makes new ones, so that compiled code never outlives its source.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent
PACKAGE_DIR = KERNEL_DIR.parent
CACHE_ENV = "C4ENGINE_KERNEL_CACHE"
RULES_DIR = PACKAGE_DIR / "rules"
COMPILED_RULES = ("bits", "scores")  # the rules modules whose functions the kernel compiles


def source_files() -> list[Path]:
    """What a copy is made from or compiles in: every kernel module, the bit tricks,
    the scores and the geometry."""
    return [*sorted(KERNEL_DIR.glob("*.py")), *compiled_rules(), PACKAGE_DIR / "geometry.py"]


def compiled_rules() -> list[Path]:
    return [RULES_DIR / f"{name}.py" for name in COMPILED_RULES]


@functools.cache
def sources_hash() -> str:
    """Once per process, whose kernel is the one it imported: the portable kernel's
    cache locator asks for every compiled function (150 reads of 20 files took
    a tenth of a shipped board's first start)."""
    digest = hashlib.sha256()
    for path in source_files():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_root() -> Path:
    """Where the copies go: ``C4ENGINE_KERNEL_CACHE``, else beside the package when it
    is writable, else the user's cache folder."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    beside = KERNEL_DIR / "__pycache__" / "boards"
    if os.access(KERNEL_DIR, os.W_OK):
        return beside
    user_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return user_cache / "c4engine" / "kernels"


def publish(folder: Path, write: Callable[[Path], None]) -> None:
    """Make ``folder`` by ``write`` into a temporary one renamed into place, so that
    two processes starting at once never use a half-written folder (the second
    rename loses, and its folder is dropped)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    write(staging)
    try:
        staging.rename(folder)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not folder.is_dir():
            raise
