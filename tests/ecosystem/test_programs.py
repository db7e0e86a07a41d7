"""Programs written for real JAX with Flax (NNX and linen), Equinox, Optax and chex, run
unmodified under webjax installed as `jax` and under real JAX, each in its own process: the
results (losses, parameters, predictions, which assertions fired) must agree.

Each program in programs/ defines `main()`; run_program.py runs it and prints the JSON result.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
PROGRAMS = sorted(p.stem for p in (HERE / "programs").glob("*.py"))

# A few optimiser steps on float32 carry rounding differences forward (fused vs. unfused
# reductions, libm ulps), so values compare to a small tolerance; everything else is exact.
RTOL, ATOL = 2e-4, 2e-5


def run(flavour: str, name: str) -> Any:
    proc = subprocess.run(
        [
            sys.executable,
            str(HERE / "run_program.py"),
            flavour,
            str(HERE / "programs" / f"{name}.py"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, f"{name} under {flavour} failed:\n{proc.stderr[-6000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def as_float(v: Any) -> float:
    return float(v)  # "nan", "inf" and "-inf" parse too


def assert_same(got: Any, want: Any, path: str = "result") -> None:
    if isinstance(want, dict) and "values" in want and "dtype" in want:
        assert isinstance(got, dict) and "values" in got, (path, got)
        assert got["dtype"] == want["dtype"], (path, got["dtype"], want["dtype"])
        assert got["shape"] == want["shape"], (path, got["shape"], want["shape"])
        if want["dtype"].startswith(("float", "bfloat", "complex")):
            g = np.array([as_float(v) for v in got["values"]])
            w = np.array([as_float(v) for v in want["values"]])
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=path)
        else:
            assert got["values"] == want["values"], path
    elif isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), (path, got, want)
        for k in want:
            assert_same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (path, got, want)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{path}[{i}]")
    elif isinstance(want, float):
        assert isinstance(got, float) and math.isclose(got, want, rel_tol=RTOL, abs_tol=ATOL), (
            path,
            got,
            want,
        )
    else:
        assert got == want, (path, got, want)


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_jax(name: str) -> None:
    want = run("jax", name)
    got = run("webjax", name)
    assert_same(got, want)
