"""The package's layers, read from its imports: no import circle, none upward.

docs/design.md ("Layers") names the layers; every import counts, module-level,
inside a function or under ``TYPE_CHECKING``, because each is a dependency the
lower module would have on the higher one."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "c4engine"

# Lower numbers sit lower; a module may import its own layer or any lower one.
LAYER_OF_FOLDER = {"rules": 0, "kernel": 1, "search": 2, "protocol": 3, "training": 5}
BOTTOM_MODULES = {"c4engine.geometry", "c4engine.inputs", "c4engine.version"}  # standard library only
CLIENTS = 4
TRAINING = 5  # above the clients it borrows from; the command line loads it by name only
SEARCH_FREE_CLIENTS = ("c4engine.referee", "c4engine.gui", "c4engine.engine", "c4engine.reviewer")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> int:
    parts = module.split(".")
    if module in BOTTOM_MODULES:
        return 0
    if len(parts) > 1 and parts[1] in LAYER_OF_FOLDER:
        return LAYER_OF_FOLDER[parts[1]]
    return TRAINING + 1 if module == "c4engine" else CLIENTS


def resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """The c4engine modules one ``from ... import`` statement imports."""
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not target.startswith("c4engine"):
        return []
    found = []
    for alias in node.names:  # ``from . import kernel`` imports a module, not a name
        candidate = f"{target}.{alias.name}"
        if candidate in MODULES:
            found.append(candidate)
    return found or [target]


def imports_of(path: Path) -> set[str]:
    module = module_name(path)
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            targets.update(resolve(module, path.name == "__init__.py", node))
        elif isinstance(node, ast.Import):
            targets.update(a.name for a in node.names if a.name.startswith("c4engine"))
    return targets - {module}


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}
GRAPH = {module: imports_of(path) for module, path in MODULES.items()}


def test_the_graph_sees_the_layers() -> None:
    """The walk itself works: known edges are found."""
    assert "c4engine.rules.bits" in GRAPH["c4engine.rules.board"]
    assert "c4engine.kernel.negamax" in GRAPH["c4engine.kernel.solve"]
    assert "c4engine.search.searcher" in GRAPH["c4engine.protocol.backend"]


def test_no_import_runs_upward() -> None:
    upward = [f"{source} -> {target}" for source, targets in GRAPH.items() for target in targets
              if target in MODULES and layer(target) > layer(source)]
    assert upward == []


def test_no_import_circle() -> None:
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(GRAPH.get(module, ())):
            if state.get(target) == 1:
                circles.append(path[path.index(target):] + [target])
            elif target in GRAPH and state.get(target) is None:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_no_module_outside_training_imports_it() -> None:
    """The engine, its clients and the library never load the training code: the
    command line reaches ``c4engine train`` by name (``LazyGroup``)."""
    assert layer("c4engine.training.data") == TRAINING > layer("c4engine.cli")
    importers = [f"{source} -> {target}" for source, targets in GRAPH.items()
                 if not source.startswith("c4engine.training") for target in targets
                 if target.startswith("c4engine.training")]
    assert importers == []


def test_the_referee_and_the_board_never_import_the_search() -> None:
    """They talk the protocol, which is what lets them drive rival engines."""
    below = [f"{source} -> {target}" for source, targets in GRAPH.items()
             if source.startswith(SEARCH_FREE_CLIENTS) for target in targets
             if target.startswith(("c4engine.kernel", "c4engine.search"))]
    assert below == []


def test_the_protocol_server_loads_without_the_kernel() -> None:
    """The process answers ``uci`` at once, while numba loads the kernel in the
    background: the process, its server, its option table and the command line
    import neither numpy nor anything compiled."""
    code = ("import sys, c4engine.protocol.process, c4engine.cli; print(sorted(m for m in sys.modules "
            "if m.startswith(('numpy', 'numba', 'c4engine.kernel', 'c4engine.search.s'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
