"""The fuzz tier: seeded differential fuzzing against real JAX on every device (tests/fuzz/).

A fixed seed and a fixed number of cases per device, so a run is the same every time; the long
search is `python3 build.py fuzz --budget SECONDS`. Every failure is printed with its reproducer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz import runner

SEED = 17
CASES = {"cpu": 120, "wasm": 100, "webgpu": 60, "webgl": 60}
X64_CASES = 80


def _explain(failures: list[dict]) -> str:
    return "\n".join(json.dumps(f, default=str)[:1500] for f in failures[:20])


def test_fuzz_against_jax(device) -> None:
    tally = runner.Tally()
    runner.run_device(device.platform, tally, max_cases=CASES[device.platform], seed_value=SEED)
    assert not tally.generator_errors, tally.generator_errors
    assert tally.cases[device.platform]["total"] == CASES[device.platform]
    assert not tally.failures, _explain(tally.failures)


def test_fuzz_against_jax_x64(tmp_path: Path) -> None:
    """64-bit mode in its own process (both libraries read jax_enable_x64 at first use)."""
    report = tmp_path / "fuzz.json"
    script = Path(__file__).parent / "fuzz" / "runner.py"
    cmd = [sys.executable, str(script), "--x64", "--device", "cpu", "--cases", str(X64_CASES)]
    cmd += ["--seed", str(SEED), "--report", str(report)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    result = json.loads(report.read_text())
    assert result["devices"]["cpu"]["cases"] == X64_CASES
    assert not result["failures"], _explain(result["failures"])


@pytest.mark.parametrize(
    "op,mode",
    [
        ("jnp.sum", "eager"),
        ("lax.add", "eager"),
        ("random.normal", "eager"),
        ("jnp.divide", "jit"),  # (past the rules for XLA's bool 0/0 and complex overflow)
        ("jnp.arctan2", "vmap"),  # (past the rule for subnormal inputs)
        ("special.zeta", "grad"),  # (past the rule for JAX's 16-bit series)
        ("jnp.dot", "eager"),  # (past the rule for the order of operations near overflow)
        ("jnp.max", "vmap"),  # (past the rule for complex max/min over NaN elements)
        ("special.digamma", "grad"),  # (past the rule for JAX's trigamma at negative x)
        ("lax.clamp", "vmap"),  # (past the rule for JAX's clamp batching)
        ("lax.reduce_sum", "jit"),  # (past the rule for lax's 16-bit accumulation)
        ("special.gammainc", "vmap"),  # (past the rule for JAX's incomplete gamma at large a)
        ("special.gammaincc", "grad"),
    ],
)
def test_fuzz_detects_a_wrong_result(op: str, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle is not vacuous: a webjax op whose results are off by one is caught, also
    where the oracle's allowances for JAX's own inexact answers apply."""
    import webjax
    from fuzz import oracle

    real = oracle.resolve

    def broken(lib, name):
        fn = real(lib, name)
        if lib is not webjax or name != op:
            return fn
        return lambda *a, **k: webjax.tree_util.tree_map(lambda x: x + 1, fn(*a, **k))

    monkeypatch.setattr(oracle, "resolve", broken)
    spec = [s for s in runner.gen.SPECS if s.op == op]
    tally = runner.Tally()
    runner.run_device("cpu", tally, max_cases=20, seed_value=SEED, specs=spec, modes=(mode,))
    assert tally.failures, f"{op} + 1 went unnoticed"
