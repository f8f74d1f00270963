"""The project's import graph read from the source with ``ast`` (nothing is imported)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.paths import REPO_ROOT

PACKAGES = ("envs", "agents", "experiments")
#: lower layers first: a module may import its own layer and the ones below, never one above
LAYERS = {"envs": 0, "agents": 1, "experiments": 2}


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    """Every module of the three packages, by dotted name."""
    return {module_name(p): p for package in PACKAGES for p in sorted((REPO_ROOT / package).rglob("*.py"))}


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST, function_level: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Import statements, with whether each sits inside a function; ``if TYPE_CHECKING`` left out."""
    for child in ast.iter_child_nodes(tree):
        if _type_checking_block(child):
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, function_level
        inside = function_level or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        yield from _imports(child, inside)


def imported_modules(path: Path, modules: dict[str, Path]) -> Iterator[tuple[str, int, bool]]:
    """(project module imported, line, inside a function) for every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node, in_function in _imports(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:  # relative imports are not used in this project; resolve them anyway
                base = module_name(path).split(".")[: -node.level if path.name != "__init__.py" else None]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source
                       for a in node.names]
        for target in targets:
            while target and target not in modules:  # "pkg.mod.attr" -> "pkg.mod"
                target = target.rpartition(".")[0]
            if target:
                yield target, node.lineno, in_function


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports (module level and inside functions)."""
    modules = project_modules()
    return {name: {t for t, _, _ in imported_modules(path, modules) if t != name}
            for name, path in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one node (the import cycles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same graph between folders (packages): an arrow when any module of one imports the other."""
    modules = project_modules()

    def folder(name: str) -> str:
        return name if modules[name].name == "__init__.py" else name.rpartition(".")[0]

    folders: dict[str, set[str]] = {}
    for source, targets in graph.items():
        here = folder(source)
        folders.setdefault(here, set())
        for target in targets:
            there = folder(target)
            # a package importing its own sub-package (or the reverse) is containment, not an arrow
            if there != here and not there.startswith(here + ".") and not here.startswith(there + "."):
                folders[here].add(there)
    return folders
