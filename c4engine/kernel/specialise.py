"""One compiled kernel per board: the kernel's modules for a geometry, made once.

numba freezes module globals into the machine code and into its on-disk cache,
whose key ignores them; so the board constants cannot be arguments of one
compiled kernel without a loop over them at run time.  Instead every geometry
gets its own copy of the kernel's source files, with its own
:mod:`~c4engine.kernel.constants`, in a folder of its own; numba caches each
copy beside it, so each geometry is compiled once per installation and loaded
from the cache afterwards (docs/design.md, "One kernel per board").

The 7x6 four-in-a-row kernel is this package itself.  A copy's folder is named
after the hash of the sources it is made from (the kernel's files, the bit
tricks, the scores and the geometry): an edit to any of them makes a new folder,
so a copy never runs stale code.  The rules' bit tricks and scores, which the
kernel compiles in, are copied too: numba specialises them on each board's
constants, and a cache file shared by the boards would be written by every
process compiling one, which numba's cache does not survive (docs/design.md).
The folders live beside the package when it is writable (as numba's own cache
does), else in the user's cache folder (``$XDG_CACHE_HOME/c4engine/kernels``);
``C4ENGINE_KERNEL_CACHE`` names another.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
import shutil
import sys
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ..geometry import STANDARD, Geometry
from . import portable
from .int128 import Wide
from .sources import COMPILED_RULES, KERNEL_DIR, cache_root, compiled_rules, publish, sources_hash

MODULES = ("constants", "jit", "layout", "table", "ntuple", "evaluation", "book", "built_book", "resolve", "negamax",
           "solve")
_GEOMETRY_LINE = re.compile(r"^GEOMETRY = .*$", re.MULTILINE)
_FULL_LINE = re.compile(r"^FULL = .*$", re.MULTILINE)
_WORDS_LINE = re.compile(r"^BOARD_WORDS = .*$", re.MULTILINE)
_PARENT_IMPORT = re.compile(r"^(\s*)from \.\.(\w)", re.MULTILINE)
_RULES_IMPORT = re.compile(r"^(\s*)from \.\.rules(?:\.(\w+))? import (.+)$", re.MULTILINE)
_OWN_SEARCH = f"{__package__ or 'c4engine.kernel'}.negamax"  # 7x6's whole kernel, compiled at its import
# kernel modules every copy imports from the package: numba's extensions, and the
# portable kernel's choice, made once per process
SHARED = ("int128", "typing_memo", "portable")
_SHARED_IMPORT = re.compile(rf"^(\s*)from \.({'|'.join(SHARED)}) import", re.MULTILINE)


@dataclass(frozen=True)
class Kernel:
    """The compiled modules of one geometry's kernel."""

    geometry: Geometry
    constants: ModuleType
    jit: ModuleType
    layout: ModuleType
    table: ModuleType
    ntuple: ModuleType
    evaluation: ModuleType
    book: ModuleType
    built_book: ModuleType
    resolve: ModuleType
    negamax: ModuleType
    solve: ModuleType

    def bits(self, current: int, mask: int) -> tuple[int, int]:
        """A position's two bitboards as this kernel's entry points take them: as they
        are, or as :class:`~c4engine.kernel.int128.Wide` on a board past 64 bits."""
        if self.constants.BOARD_WORDS == 1:
            return current, mask
        return Wide(current), Wide(mask)

    def perft(self, current: int, mask: int, depth: int) -> int:
        """The protocol's ``perft`` count (:mod:`c4engine.kernel.perft`), compiled or
        loaded at its first call."""
        module = importlib.import_module(f"{self.solve.__package__}.perft")
        return int(module.perft(*self.bits(current, mask), depth))


@functools.cache
def kernel_for(geometry: Geometry, full: bool = True, two_words: bool = False) -> Kernel:
    """The kernel compiled for ``geometry``: loaded from numba's cache, or compiled
    and cached at its first use on this installation.  Once per process.

    ``full=False`` asks for a kernel that only solves exactly, which on a new
    board compiles in about half the time: the copy leaves out the evaluation of
    the depth-limited search and the probes of the opening books.  The whole
    kernel serves instead when it has been compiled already, or, on 7x6 (whose
    whole kernel is this package), loaded in this process; or when it is
    shipped compiled (:mod:`.portable`).

    ``two_words`` asks for the kernel of boards past 64 bits on a board that fits
    one word, which the tests compare with the one-word kernel (docs/design.md,
    "Boards past 64 bits")."""
    own = geometry == STANDARD and not two_words
    full = full or (own and _OWN_SEARCH in sys.modules) or _whole_kernel_ready(geometry, two_words)
    if own and full:
        package = __package__ or "c4engine.kernel"
    else:
        package = _import_copy(geometry, full, _copy_folder(geometry, full, two_words), two_words)
    modules = {name: importlib.import_module(f"{package}.{name}") for name in MODULES}
    _stamp_compiled(geometry, full, two_words)
    return Kernel(geometry, **modules)


def is_compiled(geometry: Geometry, full: bool = True) -> bool:
    """Whether :func:`kernel_for` would load ``geometry``'s kernel rather than compile it,
    as its stamps and the shipped kernel tell (a numba cache cleared since a stamp
    was made compiles all the same)."""
    return _whole_kernel_ready(geometry, False) or (not full and _compiled_stamp(geometry, False, False).exists())


def _whole_kernel_ready(geometry: Geometry, two_words: bool) -> bool:
    """Whether ``geometry``'s whole kernel loads without compiling: compiled once
    here (its stamp), or shipped compiled."""
    return _compiled_stamp(geometry, True, two_words).exists() or _shipped_compiled(geometry, two_words)


def _shipped_compiled(geometry: Geometry, two_words: bool) -> bool:
    """Whether ``geometry``'s whole kernel is in the portable kernel in use, shipped
    compiled (:mod:`.portable`; chosen when the kernel's first module is imported)."""
    importlib.import_module(f"{__package__ or 'c4engine.kernel'}.jit")
    own = geometry == STANDARD and not two_words
    return portable.holds("kernel" if own else module_name(geometry, True, two_words))


def _compiled_stamp(geometry: Geometry, full: bool, two_words: bool) -> Path:
    """A file beside a copy that says its modules have been imported once, so that
    numba holds their compiled code (unless its own cache was cleared since)."""
    folder = _folder(geometry, full, two_words)
    return folder.with_name(f"{folder.name}.compiled")


def _stamp_compiled(geometry: Geometry, full: bool, two_words: bool) -> None:
    """Stamp the kernel just imported (7x6's whole kernel, this package, has no copy
    beside its stamp)."""
    stamp = _compiled_stamp(geometry, full, two_words)
    with suppress(OSError):  # a read-only cache: the next start just checks again
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()


def module_name(geometry: Geometry, full: bool = True, two_words: bool = False) -> str:
    name = f"c4engine_kernel_{geometry.width}x{geometry.height}k{geometry.connect}"
    name = f"{name}_two_words" if two_words else name
    return name if full else f"{name}_exact"


def _folder(geometry: Geometry, full: bool, two_words: bool = False) -> Path:
    return cache_root() / sources_hash() / module_name(geometry, full, two_words)


def _copy_folder(geometry: Geometry, full: bool = True, two_words: bool = False) -> Path:
    """The folder of ``geometry``'s copy for the current sources, written if missing.

    Written under a temporary name and renamed into place, so that two processes
    starting at once never import a half-written copy (the second rename loses,
    and its copy is dropped)."""
    folder = _folder(geometry, full, two_words)
    if folder.is_dir():
        return folder

    def write(staging: Path) -> None:
        staging.mkdir()
        for source in [*_copied_kernel_files(), *compiled_rules()]:
            (staging / source.name).write_text(_copied_source(source, geometry, full, two_words))

    publish(folder, write)
    _drop_stale_copies(folder.parent)
    return folder


def _copied_kernel_files() -> list[Path]:
    """The kernel's files a copy holds: all but the SHARED ones, which register numba
    types once per process."""
    return [path for path in KERNEL_DIR.glob("*.py") if path.stem not in SHARED]


def _drop_stale_copies(current: Path) -> None:
    """Delete the copies made from other sources beside the package: a checkout being
    edited makes a new folder at each edit, and the old ones never run again.  In a
    shared cache folder (another installation may run those sources) they stay."""
    if current.parent != KERNEL_DIR / "__pycache__" / "boards":
        return
    for other in current.parent.iterdir():
        if other != current and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)


def _copied_source(source: Path, geometry: Geometry, full: bool, two_words: bool = False) -> str:
    """A kernel file as its copy for ``geometry`` reads: imports of the compiled rules
    modules taken from the copy's own, other imports from the rest of the package
    made absolute, and the constants' geometry, evaluation and words replaced."""
    text = _RULES_IMPORT.sub(_own_rules_import, source.read_text())
    text = _PARENT_IMPORT.sub(r"\1from c4engine.\2", text)
    text = _SHARED_IMPORT.sub(r"\1from c4engine.kernel.\2 import", text)
    if source.stem == "constants":
        text = _GEOMETRY_LINE.sub(
            f"GEOMETRY = Geometry({geometry.width}, {geometry.height}, {geometry.connect})", text, count=1)
        text = _FULL_LINE.sub(f"FULL = {full}", text, count=1)
        if two_words:
            text = _WORDS_LINE.sub("BOARD_WORDS = 2", text, count=1)
    return text


def _own_rules_import(match: re.Match[str]) -> str:
    """``from ..rules.bits import x`` or ``from ..rules import bits`` as the copy's own
    ``from .bits import x`` or ``from . import bits``; other rules imports unchanged."""
    indent, module, names = match.groups()
    imported = [module] if module else [name.strip() for name in names.split(",")]
    if not all(name in COMPILED_RULES for name in imported):
        return match.group(0)
    return f"{indent}from .{module or ''} import {names}"


def _import_copy(geometry: Geometry, full: bool, folder: Path, two_words: bool = False) -> str:
    """Import the copy in ``folder`` as a package of its own; its name."""
    name = module_name(geometry, full, two_words)
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import the {geometry} kernel from {folder}")
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
    return name
