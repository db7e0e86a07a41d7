"""How much of JAX's public API webjax has: for each `jax` module that `install_as_jax()` maps
(pkg/webjax/_src/api/__init__.py `_JAX_MODULES`; the private `jax._src` paths left out), the public
names of real JAX's module (the test-only oracle) and how many of them webjax's module has.

    .venv/bin/python tests/api_coverage.py [--missing]

Presence only: whether each name works as JAX's is what the test suite checks.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))


def public(module: object) -> set[str]:
    names = getattr(module, "__all__", None) or dir(module)
    return {n for n in names if not n.startswith("_")}


def main(show_missing: bool) -> int:
    from webjax._src.api import _JAX_MODULES

    total_have = total = 0
    rows = []
    for jax_name, ours in sorted(_JAX_MODULES.items()):
        if "._src" in jax_name:  # private paths: only the names libraries use are provided
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = importlib.import_module(jax_name)
        except ImportError:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mine = importlib.import_module(ours)
            want = public(theirs)
            have = {n for n in want if hasattr(mine, n)}
        total, total_have = total + len(want), total_have + len(have)
        rows.append((jax_name, len(have), len(want), sorted(want - have)))
    for name, have, want, missing in rows:
        print(f"{name:44s} {have:5d} / {want:5d}")
        if show_missing and missing:
            print("    missing: " + ", ".join(missing))
    print(f"{'all':44s} {total_have:5d} / {total:5d} ({total_have / max(total, 1):.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main("--missing" in sys.argv[1:]))
