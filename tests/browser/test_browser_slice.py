"""The first webjax slice inside Pyodide, checked against what real JAX gives.

CASES is the spec: expressions and the values JAX 0.10 returns for them (JSON-converted:
tuples become lists, non-JSON values their repr). `test_cases_match_real_jax` re-derives the
table from real JAX natively where it is installed; the browser tests run every case with
webjax on every device that Pyodide offers.
"""

from __future__ import annotations

import json

import pytest

PLATFORMS = ["default", "cpu", "wasm", "webgpu", "webgl"]

CASES = [
    ("(jnp.arange(6).reshape(2, 3) * 2).sum().item()", 30),
    ("str((jnp.arange(6).reshape(2, 3) * 2).sum())", "30"),
    ("repr((jnp.arange(6).reshape(2, 3) * 2).sum())", "Array(30, dtype=int32)"),
    ("type(jnp.arange(3).sum().item()).__name__", "int"),
    ("jnp.array([1.5, 2.5]).tolist()", [1.5, 2.5]),
    ("jnp.array(3.0).tolist()", 3.0),
    ("repr(jnp.zeros(3))", "Array([0., 0., 0.], dtype=float32)"),
    ("repr(jnp.arange(6).reshape(2, 3))", "Array([[0, 1, 2],\n       [3, 4, 5]], dtype=int32)"),
    ("str(jnp.arange(6).reshape(2, 3))", "[[0 1 2]\n [3 4 5]]"),
    ("repr(jnp.array([True, False]))", "Array([ True, False], dtype=bool)"),
    ("jnp.ones((2, 2)).tolist()", [[1.0, 1.0], [1.0, 1.0]]),
    ("(jnp.ones(3, dtype=jnp.int32) * 2).tolist()", [2, 2, 2]),
    ("(jnp.arange(4) + 1).tolist()", [1, 2, 3, 4]),
    ("(jnp.arange(4) - 1.5).tolist()", [-1.5, -0.5, 0.5, 1.5]),
    ("(2 - jnp.arange(3)).tolist()", [2, 1, 0]),
    ("(jnp.arange(1, 5) / 2).tolist()", [0.5, 1.0, 1.5, 2.0]),
    ("(1 / jnp.arange(1, 4)).tolist()", [1.0, 0.5, 0.3333333432674408]),  # float32, widened
    ("str((jnp.arange(1, 5) / 2).dtype)", "float32"),
    ("str(jnp.arange(3).dtype)", "int32"),
    ("str((jnp.arange(3) + 2.5).dtype)", "float32"),  # weak-typed Python scalar
    ("str(jnp.zeros(3).dtype)", "float32"),
    ("jnp.asarray([[1, 2], [3, 4]]).shape", [2, 2]),
    ("(jnp.asarray([[1, 2], [3, 4]]) * jnp.asarray([10, 20])).tolist()", [[10, 40], [30, 80]]),
    ("jnp.arange(6).reshape(3, 2).sum(axis=0).tolist()", [6, 9]),
    ("jnp.arange(10.0).reshape(2, 5).sum(axis=1).tolist()", [10.0, 35.0]),
    ("jnp.arange(6).reshape(2, -1).shape", [2, 3]),
    ("jnp.zeros((2, 0)).shape", [2, 0]),
    ("jnp.arange(5).ndim", 1),
    ("len(jnp.arange(5))", 5),
]


def _evaluate(namespace):
    out = []
    for source, _ in CASES:
        try:
            out.append(json.loads(json.dumps(eval(source, namespace), default=repr)))
        except Exception as e:
            out.append(f"raised {type(e).__name__}: {e}")
    return out


def test_cases_match_real_jax():
    jax = pytest.importorskip("jax", reason="real JAX (the oracle extra) is not installed")
    import jax.numpy as jnp

    got = _evaluate({"jax": jax, "jnp": jnp})
    mismatches = [(src, want, g) for (src, want), g in zip(CASES, got) if g != want]
    assert not mismatches, f"JAX {jax.__version__} disagrees with CASES: {mismatches}"


@pytest.mark.browser
def test_import_webjax(webjax_page):
    info = webjax_page.run_py(
        "import webjax, webjax.numpy\n"
        "[webjax.__name__, len(webjax.devices()) > 0, str(webjax.devices()[0])]"
    )
    assert info[:2] == ["webjax", True]


# Runs CASES in Pyodide with `platform`'s first device as the default device; returns
# ["skip", reason] when webjax has no such platform here, else ["ok", [results], device check].
_RUN_CASES = """
import json
import webjax as jax
import webjax.numpy as jnp

def _run_cases(platform, sources):
    if platform == "default":
        device = jax.devices()[0]
    else:
        try:
            device = jax.devices(platform)[0]
        except RuntimeError as e:
            return ["skip", f"{type(e).__name__}: {e}"]
    results = []
    with jax.default_device(device):
        for source in sources:
            try:
                results.append(json.loads(json.dumps(eval(source), default=repr)))
            except Exception as e:
                results.append(f"raised {type(e).__name__}: {e}")
        placed = (jnp.arange(3) + 1).device
    return ["ok", results, [str(placed), str(device)]]
"""


@pytest.mark.browser
@pytest.mark.parametrize("platform", PLATFORMS)
def test_slice_matches_jax(webjax_page, platform):
    webjax_page.run_py(_RUN_CASES)
    sources = json.dumps([source for source, _ in CASES])
    outcome = webjax_page.run_py(f"_run_cases({platform!r}, {sources})")
    if outcome[0] == "skip":
        pytest.skip(f"webjax has no {platform} device in Pyodide: {outcome[1]}")
    _, got, (placed, device) = outcome
    mismatches = [
        f"{src}\n    JAX:    {want!r}\n    webjax: {g!r}"
        for (src, want), g in zip(CASES, got)
        if g != want
    ]
    assert not mismatches, f"{len(mismatches)} cases differ on {platform}:\n" + "\n".join(
        mismatches
    )
    assert placed == device


@pytest.mark.browser
def test_install_as_jax(webjax_page):
    assert webjax_page.run_py(
        "import webjax\nwebjax.install_as_jax()\n"
        "import jax, jax.numpy\n"
        "[jax.jit is webjax.jit, jax.numpy is webjax.numpy, int(jax.numpy.arange(4).sum())]"
    ) == [True, True, 6]
