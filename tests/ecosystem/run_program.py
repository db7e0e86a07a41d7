"""Run one ecosystem program under real JAX or under webjax installed as `jax`, and print its
result as JSON on the last line of stdout.

    python run_program.py jax|webjax programs/<name>.py

Under `webjax`, `webjax.install_as_jax()` runs before the program (and so before the library it
uses) is imported, exactly as a user would do it. Arrays become {"dtype", "shape", "values"};
NaN and infinities are spelled as strings so the JSON stays strict.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

PKG = Path(__file__).resolve().parents[2] / "pkg"


def encode(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): encode(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [encode(v) for v in x]
    if isinstance(x, float):
        return x if math.isfinite(x) else repr(x)
    if isinstance(x, (bool, int, str)) or x is None:
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        import numpy as np

        a = np.asarray(x)
        values = a.astype(np.float64) if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else a
        flat = [encode(v) for v in values.ravel().tolist()]
        return {"dtype": str(a.dtype), "shape": list(a.shape), "values": flat}
    raise TypeError(f"cannot encode a {type(x).__name__} result")


def main(flavour: str, program: str) -> None:
    if flavour == "webjax":
        sys.path.insert(0, str(PKG))
        import webjax

        webjax.install_as_jax()
    elif flavour != "jax":
        raise SystemExit(f"unknown flavour {flavour!r}: use jax or webjax")
    spec = importlib.util.spec_from_file_location("program", program)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.main()
    print(json.dumps(encode(result)))


if __name__ == "__main__":
    main(*sys.argv[1:])
