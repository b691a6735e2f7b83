"""The package's layers, checked from its source: imports run downward, never in a cycle,
and nothing outside ``memvara/store/`` reaches into a store's private module.

Layers, lowest first (``../shared/ARCHITECTURE.md``; the tree's map is in INTERNALS):
errors, the domain, the store and the plug-ins, the services (write and read paths), the
facade, the edges. A module may import its own layer or any below it, except that the
store and the plug-ins do not import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "memvara"

LAYERS: dict[str, int] = {
    "memvara._errors": 0,
    "memvara._optional": 0,
    "memvara._caller": 0,
    "memvara._domain": 1,
    "memvara.schema": 1,
    "memvara.store": 2,
    "memvara.embed": 2,
    "memvara.llm": 2,
    "memvara.redact": 2,
    "memvara.rerank": 2,
    "memvara.telemetry": 2,
    "memvara._write": 3,
    "memvara._read": 3,
    "memvara._facade": 4,
    "memvara": 4,  # the package's __init__: the public surface
    "memvara.cli": 5,
    "memvara.server": 5,
    "memvara.integrations": 5,  # framework adapters: edges, like the CLI
    "memvara.compat": 5,  # the mem0 shim and importer: an edge, on the public API
}
PLUG_INS = {"memvara.embed", "memvara.llm", "memvara.redact", "memvara.rerank", "memvara.telemetry"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def area(module: str) -> str:
    """The entry of ``LAYERS`` a module belongs to: its longest matching prefix."""
    for length in range(module.count(".") + 1, 0, -1):
        prefix = ".".join(module.split(".")[:length])
        if prefix in LAYERS:
            return prefix
    raise AssertionError(f"{module} is in no layer; add it to LAYERS")


def imports(path: Path) -> set[str]:
    """The memvara modules ``path`` imports when it runs (not those imported only for
    type checking, nor inside functions: those are lazy by design)."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "memvara":
                continue
            for alias in node.names:  # ``from . import graph`` imports a module
                candidate = f"{target}.{alias.name}"
                sub = PACKAGE.parent / candidate.replace(".", "/")
                found.add(candidate if sub.with_suffix(".py").exists() or sub.is_dir() else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "memvara")
    found.discard(module)
    return found


GRAPH = {module_name(p): imports(p) for p in PACKAGE.rglob("*.py")}


def test_every_module_is_in_a_layer() -> None:
    for module in GRAPH:
        area(module)


def test_imports_run_downward() -> None:
    upward = []
    for module, targets in GRAPH.items():
        here = area(module)
        for target in targets:
            there = area(target)
            if LAYERS[there] > LAYERS[here]:
                upward.append(f"{module} -> {target}")
            elif LAYERS[there] == LAYERS[here] == 2 and here != there and (
                    (here in PLUG_INS) != (there in PLUG_INS)):
                upward.append(f"{module} -> {target} (store and plug-ins are apart)")
    assert upward == []


def test_no_module_outside_the_store_imports_a_store_private_module() -> None:
    reaching = [f"{module} -> {target}" for module, targets in GRAPH.items()
                for target in targets
                if target.startswith("memvara.store.") and not module.startswith("memvara.store")
                and any(part.startswith("_") for part in target.split(".")[2:])]
    assert reaching == []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk of ``graph`` meets, each as the modules on it."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    found: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                found.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_there_is_no_import_cycle() -> None:
    assert cycles(GRAPH) == []


def test_no_module_is_over_600_lines() -> None:
    long = {module_name(p): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
