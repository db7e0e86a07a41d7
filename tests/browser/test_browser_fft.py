"""A real JAX program using jax.numpy.fft and jax.lax.fft, run inside Pyodide (with `import jax`
bound to webjax through `install_as_jax`) on each Pyodide device, and compared with real JAX
run natively in the test process.

Results come back as nested lists (complex numbers as [re, im] pairs) and are compared array by
array with a float32 FFT tolerance relative to the array's largest magnitude.
"""

from __future__ import annotations

import json
import math

import pytest

PRELUDE = """
import json
def _tolist(x):
    if isinstance(x, (list, tuple)):
        return [_tolist(v) for v in x]
    if hasattr(x, "tolist"):
        return _tolist(x.tolist())
    if isinstance(x, complex):
        return [x.real, x.imag]
    return x
"""

PROGRAM = """
t = jnp.arange(64.0)
signal = jnp.cos(t * 0.3) + 0.5 * jnp.sin(t * 1.7)
spectrum = jnp.fft.rfft(signal)
z = jnp.exp(1j * jnp.linspace(0.0, 2.0, 12)).astype(jnp.complex64)
img = jnp.arange(48.0).reshape(6, 8) / 10.0
power = lambda v: jnp.sum(jnp.abs(jnp.fft.rfft(v)) ** 2 * jnp.arange(6.0))
lowpass = jax.jit(lambda v: jnp.fft.irfft(jnp.fft.rfft(v) * (jnp.arange(33) < 8), n=64))
result = [
    jnp.abs(spectrum), jnp.fft.irfft(spectrum, 64), jnp.fft.fft(z),
    jnp.fft.ifft(z, n=16, norm="ortho"), jnp.fft.fft2(img),
    jnp.fft.irfftn(jnp.fft.rfftn(img), img.shape), jnp.fft.rfft2(img, norm="forward"),
    jnp.fft.fftfreq(8, 0.5), jnp.fft.rfftfreq(9), jnp.fft.fftshift(jnp.arange(6.0)),
    jnp.fft.hfft(z[:5]), jnp.fft.ihfft(signal[:10]),
    jax.grad(power)(signal[:10]), lowpass(signal), jax.vmap(jnp.fft.fft)(img),
    jax.lax.fft(z, jax.lax.FftType.IFFT, (12,)), jnp.fft.fft(jnp.cos(jnp.arange(1009.0)))[:6],
    jnp.abs(jnp.fft.fft(jnp.sin(jnp.arange(4096.0) * 0.01)))[::256],
]
"""

PLATFORMS = ["default", "cpu", "webgpu", "webgl"]


def _flat(x):
    if isinstance(x, list):
        return [v for item in x for v in _flat(item)]
    return [float(x)]


def _arrays_close(got, want, tol=2e-5):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = _flat(g), _flat(w)
        assert len(g) == len(w), f"result {i}: {len(g)} values vs {len(w)}"
        scale = max([1.0] + [abs(v) for v in w if math.isfinite(v)])
        err = max((abs(a - b) for a, b in zip(g, w)), default=0.0)
        assert err <= tol * scale, f"result {i}: max error {err} (scale {scale})\n{g}\n{w}"


def _native():
    jax = pytest.importorskip("jax", reason="real JAX (the oracle) is not installed")
    ns = {"jax": jax, "jnp": jax.numpy}
    exec(PRELUDE + PROGRAM + "\nout = json.dumps(_tolist(result))", ns)
    return json.loads(ns["out"])


_RUN = """
def _run_fft_program(platform, source):
    import webjax
    if platform == "default":
        device = webjax.devices()[0]
    else:
        try:
            device = webjax.devices(platform)[0]
        except RuntimeError as e:
            return ["skip", f"{type(e).__name__}: {e}"]
    ns = {"jax": jax, "jnp": jnp}
    with webjax.default_device(device):
        exec(source, ns)
    return ["ok", ns["_tolist"](ns["result"]), str(device)]
"""


@pytest.mark.browser
@pytest.mark.parametrize("platform", PLATFORMS)
def test_fft_program_in_pyodide_matches_jax(webjax_page, platform):
    expected = _native()
    webjax_page.run_py(
        "import webjax\nwebjax.install_as_jax()\nimport jax\nimport jax.numpy as jnp\n" + _RUN
    )
    outcome = webjax_page.run_py(f"_run_fft_program({platform!r}, {PRELUDE + PROGRAM!r})")
    if outcome[0] == "skip":
        pytest.skip(f"webjax has no {platform} device in Pyodide: {outcome[1]}")
    _arrays_close(outcome[1], expected)
