"""Layering rules that import-linter cannot express (DESIGN.md section 3).

Only webjax/_src/hosts/ may import the host bindings (js and pyodide in the browser; wasmtime
and wgpu natively), browser bindings only from browser hosts and native ones only from native
hosts, and `import webjax` must work where none of them can be imported. Every module of
`_src` has a layer (pyproject's "layers" contract), the upward imports that contract lets pass
are all inside functions and listed, and no module is named for when it was written.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import import_graph

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pkg" / "webjax"
HOSTS = PACKAGE / "_src" / "hosts"
BROWSER_BINDINGS = {"js", "pyodide", "pyodide_js"}
NATIVE_BINDINGS = {"wasmtime", "wgpu"}
BINDINGS = BROWSER_BINDINGS | NATIVE_BINDINGS


def imported_top_level_names(path: Path) -> set[str]:
    """Top-level module names imported by `path`, including importlib/__import__ literals."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id == "__import__")
            )
        ):
            names.add(node.args[0].value.split(".")[0])
    return names


def package_files() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    if not files:
        pytest.fail(f"no Python files under {PACKAGE}")
    return files


def test_only_hosts_import_host_bindings():
    offenders = [
        f"{path.relative_to(ROOT)} imports {sorted(bad)}"
        for path in package_files()
        if HOSTS not in path.parents and (bad := imported_top_level_names(path) & BINDINGS)
    ]
    assert not offenders, "host bindings imported outside webjax/_src/hosts/:\n" + "\n".join(
        offenders
    )


def test_browser_and_native_hosts_stay_apart():
    offenders = []
    for path in sorted(HOSTS.rglob("*.py")):
        names = imported_top_level_names(path)
        relative = str(path.relative_to(HOSTS))
        if "native" in relative and names & BROWSER_BINDINGS:
            offenders.append(f"{relative} imports {sorted(names & BROWSER_BINDINGS)}")
        if "browser" in relative and names & NATIVE_BINDINGS:
            offenders.append(f"{relative} imports {sorted(names & NATIVE_BINDINGS)}")
    assert not offenders, "\n".join(offenders)


def test_import_webjax_without_any_host_binding():
    # As on a bare CPython: none of the bindings can be imported. Nothing may need them eagerly.
    code = (
        "import sys\n"
        f"for name in {sorted(BINDINGS)!r}:\n"
        "    sys.modules[name] = None\n"
        "import webjax, webjax.numpy\n"
        f"loaded = sorted(n for n in {sorted(BINDINGS)!r} if sys.modules.get(n) is not None)\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "pkg"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_import_linter_contracts_name_existing_modules():
    # import-linter fails on a missing module; this says which one in plain words.
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)["tool"]["importlinter"]
    named = set()
    for contract in config["contracts"]:
        for key in ("source_modules", "forbidden_modules", "modules"):
            named.update(contract.get(key, []))
        for layer in import_graph.layers() if contract.get("id") == "layers" else []:
            named.update(layer)
    missing = []
    for module in sorted(named):
        base = ROOT / "pkg" / Path(*module.split("."))
        if not (base.with_suffix(".py").exists() or (base / "__init__.py").exists()):
            missing.append(module)
    assert not missing, f"pyproject.toml [tool.importlinter] names missing modules: {missing}"


def test_every_src_module_has_a_layer():
    stack = import_graph.layers()
    loose = [
        name
        for name in import_graph.modules()
        if name.startswith("webjax._src.") and import_graph.layer_of(name, stack) is None
    ]
    assert not loose, f"modules in no layer of pyproject's 'layers' contract: {loose}"


def test_upward_imports_are_listed_and_inside_functions():
    # The layers contract ignores the imports in ignore_imports; each must be a real upward
    # import made inside a function (breaking a cycle), so the list only shrinks.
    stack = import_graph.layers()
    up = import_graph.upward(import_graph.edges(), stack)
    listed = set(import_graph.contract().get("ignore_imports", []))
    found = {f"{e.source} -> {e.target}" for e in up}
    assert not [e for e in up if not e.in_function], "upward imports at module level"
    assert found <= listed, f"upward imports not in ignore_imports: {sorted(found - listed)}"
    assert listed <= found, f"ignore_imports entries that are gone: {sorted(listed - found)}"


def test_no_import_cycles():
    cycles = import_graph.cycles(import_graph.edges())
    assert not cycles, "import cycles (function-level imports count):\n" + "\n".join(
        ", ".join(c) for c in cycles
    )


HISTORY_NAMES = ("extra", "more", "misc", "helpers", "new", "old", "other")


def test_modules_are_named_for_what_they_are():
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    offenders = [
        str(path.relative_to(ROOT))
        for path in files
        if any(part in HISTORY_NAMES for part in path.stem.split("_"))
    ]
    assert not offenders, f"modules named for their history, not their subject: {offenders}"


def _where_things_live() -> list[str]:
    """The backticked `_src/...` paths of docs/ARCHITECTURE.md's "Where things live" table."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    section = text.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    paths = []
    for line in section.splitlines():
        if line.startswith("|"):
            paths += [m for m in re.findall(r"`([^`]+)`", line) if m.startswith("_src/")]
    return paths


def test_where_things_live_matches_the_tree():
    paths = _where_things_live()
    src = PACKAGE / "_src"
    missing = [p for p in paths if not (PACKAGE / p).exists()]
    assert not missing, f"docs/ARCHITECTURE.md names paths that do not exist: {missing}"
    named = [
        f"_src/{p.name}" if p.is_file() else f"_src/{p.name}/"
        for p in sorted(src.iterdir())
        if (p.suffix == ".py" and p.name != "__init__.py")
        or (p.is_dir() and (p / "__init__.py").exists())
    ]
    unnamed = [n for n in named if not any(p == n or p.startswith(n) for p in paths)]
    assert not unnamed, f"docs/ARCHITECTURE.md's table does not say where these live: {unnamed}"
