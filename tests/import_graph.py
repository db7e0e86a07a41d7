"""The package's import graph measured against its layers (pyproject's import-linter contract).

Every `import` of a webjax module, at module level or inside a function, is an edge. The layers
come from the `layers` contract in pyproject.toml (top first; `:` separates siblings that may
import each other, `|` siblings that may not), so this module, import-linter and the docs read
one list. `python build.py layers` prints the report and, with `--write-docs`, rewrites the
size section of docs/ARCHITECTURE.md from it.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pkg" / "webjax"
SRC = PACKAGE / "_src"
LAYER_CONTRACT = "layers"


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    in_function: bool


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _resolve(mods: dict[str, Path], current: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = current.split(".")
        if mods[current].name != "__init__.py":
            package = package[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]


def edges(mods: dict[str, Path] | None = None) -> list[Edge]:
    """Every import of a webjax module by a webjax module, with where it happens."""
    mods = modules() if mods is None else mods
    found: list[Edge] = []

    def visit(name: str, node: ast.AST, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in _resolve(mods, name, child):
                    while target and target not in mods:
                        target = target.rpartition(".")[0]
                    if target and target != name:
                        found.append(Edge(name, target, child.lineno, depth > 0))
            inner = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(name, child, depth + inner)

    for name, path in mods.items():
        visit(name, ast.parse(path.read_text(), str(path)), 0)
    return found


def contract(name: str = LAYER_CONTRACT) -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    for entry in config["contracts"]:
        if entry.get("id") == name:
            return entry
    raise KeyError(f"no import-linter contract with id = {name!r} in pyproject.toml")


def layers() -> list[list[str]]:
    """The layers, top first, each a list of module names (siblings)."""
    return [re.split(r"\s*[:|]\s*", entry.strip()) for entry in contract()["layers"]]


def layer_of(module: str, stack: list[list[str]]) -> int | None:
    for index, members in enumerate(stack):
        if any(module == m or module.startswith(m + ".") for m in members):
            return index
    return None


def upward(found: list[Edge], stack: list[list[str]]) -> list[Edge]:
    """Imports of a module in a higher layer than the importer's."""
    out = []
    for e in found:
        source, target = layer_of(e.source, stack), layer_of(e.target, stack)
        if source is not None and target is not None and target < source:
            out.append(e)
    return out


def cycles(found: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module (function-level imports count)."""
    graph: dict[str, set[str]] = {}
    for e in found:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components, key=lambda c: (-len(c), c))


def lines_per_layer(mods: dict[str, Path], stack: list[list[str]]) -> list[tuple[str, int, int]]:
    """(layer, files, lines of Python), top first: the public modules first, then each layer
    (independent siblings, `a | b`, on rows of their own), then any `_src` module in none."""
    rows: list[tuple[str, list[str]]] = [("public modules (webjax.*)", [])]
    for entry in contract()["layers"]:
        for group in entry.split("|"):
            members = [m.strip() for m in group.split(":")]
            rows.append((", ".join(m.removeprefix("webjax._src.") for m in members), members))
    counts = {name: [0, 0] for name, _ in rows}
    loose = [0, 0]
    for name, path in mods.items():
        if name == "webjax._src":
            continue  # the package's own one-line docstring
        lines = len(path.read_text().splitlines())
        if not name.startswith("webjax._src"):
            slot = counts["public modules (webjax.*)"]
        else:
            owner = next(
                (row for row, members in rows[1:] if layer_of(name, [members]) is not None), None
            )
            slot = loose if owner is None else counts[owner]
        slot[0] += 1
        slot[1] += lines
    out = [(name, *counts[name]) for name, _ in rows]
    if loose[0]:
        out.append(("(in no layer)", *loose))
    return out  # type: ignore[return-value]


def top_level_files() -> list[Path]:
    return sorted(p for p in SRC.glob("*.py") if p.name != "__init__.py")


def report() -> str:
    mods = modules()
    found = edges(mods)
    stack = layers()
    up = upward(found, stack)
    out = [f"_src top-level files: {len(top_level_files())}"]
    components = cycles(found)
    sizes = ", ".join(str(len(c)) for c in components) or "none"
    out.append(f"import cycles: {len(components)} (sizes {sizes})")
    for c in components:
        out.append("  " + ", ".join(m.removeprefix("webjax._src.") for m in c))
    in_function = [e for e in up if e.in_function]
    out.append(
        f"upward imports: {len(in_function)} inside functions, "
        f"{len(up) - len(in_function)} at module level"
    )
    for e in up:
        where = "function" if e.in_function else "MODULE"
        out.append(f"  {e.source}:{e.line} -> {e.target} ({where})")
    out.append(f"function-level imports in all: {sum(e.in_function for e in found)}")
    out.append("")
    out.append(size_table(mods, stack))
    return "\n".join(out)


def size_table(mods: dict[str, Path] | None = None, stack: list[list[str]] | None = None) -> str:
    mods = modules() if mods is None else mods
    stack = layers() if stack is None else stack
    rows = ["| layer (top first) | files | lines |", "| --- | ---: | ---: |"]
    total = [0, 0]
    for name, files, lines in lines_per_layer(mods, stack):
        rows.append(f"| {name} | {files} | {lines} |")
        total[0] += files
        total[1] += lines
    rows.append(f"| all of pkg/webjax | {total[0]} | {total[1]} |")
    return "\n".join(rows)


SIZE_START = "<!-- size table: `python build.py layers --write-docs` -->"
SIZE_END = "<!-- end of size table -->"


def write_docs() -> None:
    doc = ROOT / "docs" / "ARCHITECTURE.md"
    text = doc.read_text()
    start, end = text.index(SIZE_START) + len(SIZE_START), text.index(SIZE_END)
    doc.write_text(text[:start] + "\n" + size_table() + "\n" + text[end:])


if __name__ == "__main__":
    print(report())
    if "--write-docs" in sys.argv[1:]:
        write_docs()
        print("\nrewrote the size table in docs/ARCHITECTURE.md")
