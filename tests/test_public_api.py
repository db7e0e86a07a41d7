"""The public surface never loses a name: every public module (webjax and its non-underscore
submodules) keeps every name recorded in tests/public_names.json. Names may be added; to drop
one on purpose, delete it from the file in the same commit."""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest

RECORDED = json.loads((Path(__file__).parent / "public_names.json").read_text())


@pytest.mark.parametrize("module", sorted(RECORDED))
def test_public_module_keeps_its_names(module):
    mod = importlib.import_module(module)
    missing = sorted(set(RECORDED[module]) - set(dir(mod)))
    assert not missing, f"{module} lost public names: {missing}"


PUBLIC_FILES = sorted(
    p for p in (Path(__file__).parents[1] / "pkg" / "webjax").rglob("*.py") if "_src" not in p.parts
)


@pytest.mark.parametrize(
    "path",
    PUBLIC_FILES,
    ids=lambda p: p.name if p.parent.name == "webjax" else f"{p.parent.name}/{p.name}",
)
def test_public_module_only_re_exports(path):
    # Code lives in webjax/_src; a public module may only import and rename. A module-level
    # __getattr__ (an attribute made on first use, such as float0, which needs NumPy) is allowed.
    tree = ast.parse(path.read_text())
    defined = [
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.name != "__getattr__"
    ]
    assert not defined, f"{path.name} defines {defined}: move them into webjax/_src"
