"""Source conventions a formatter cannot hold by itself.

ruff format lays out every statement; `# fmt: skip` is kept only where the layout of a table
literal carries meaning (aligned rows of a catalogue: primitive tables, coefficient lists), never on
signatures or ordinary statements.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "pkg" / "webjax").rglob("*.py"), *(ROOT / "tests").rglob("*.py")])


def _is_table(value: ast.expr | None) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        return True
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("frozenset", "set", "dict", "tuple", "list")
        and bool(value.args)
        and _is_table(value.args[0])
    )


def _table_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_table(node.value):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fmt_skip_only_on_table_literals(path):
    text = path.read_text()
    if "# fmt: skip" not in text:
        return
    tables = _table_lines(ast.parse(text))
    marked = [
        i for i, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith("# fmt: skip")
    ]
    stray = [i for i in marked if i not in tables]
    assert not stray, f"`# fmt: skip` outside a table literal at lines {stray}"
