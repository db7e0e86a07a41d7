"""JAX libraries in Pyodide over webjax, installed as a user would: micropip with `deps=False`
(their declared `jax` dependency is webjax, installed as `jax`). Only the NumPy-free ones can be
installed offline (Optax, Flax, Equinox and chex import NumPy, which Pyodide serves from its own
CDN only): jaxtyping and its wadler_lindig, whose wheels the site serves."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

JAXTYPING = """
import micropip
from pyodide.http import pyfetch

import webjax

webjax.install_as_jax()
manifest = await (await pyfetch("manifest.json")).json()
for url in manifest["ecosystem"]:
    name = url.rsplit("/", 1)[1]
    with open("/tmp/" + name, "wb") as f:
        f.write(await (await pyfetch(url)).bytes())
    await micropip.install("emfs:/tmp/" + name, deps=False)

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int, Shaped, jaxtyped

x = jnp.ones((2, 3))
checks = {
    "float_2x3": isinstance(x, Float[Array, "2 3"]),
    "float_3x2": isinstance(x, Float[Array, "3 2"]),
    "int": isinstance(x, Int[Array, "..."]),
    "int_array": isinstance(jnp.arange(4), Int[Array, "n"]),
    "shaped_any": isinstance(x, Shaped[Array, "..."]),
}


@jaxtyped(typechecker=None)
def bound(a):
    same = isinstance(a, Float[Array, "b n"]) and isinstance(a.sum(0), Float[Array, "n"])
    return same, isinstance(a.T, Float[Array, "b n"])


checks["jaxtyped"] = bound(x)
traced = []


@jax.jit
def in_jit(a):
    traced.append(isinstance(a, Float[Array, "2 3"]))
    return a * 2


in_jit(x)
checks["under_jit"] = traced
checks["jax_is_webjax"] = jax.numpy.ones is webjax.numpy.ones
checks
"""


def test_jaxtyping_installs_and_checks_webjax_arrays(pyodide) -> None:
    pyodide.run_py('import pyodide_js\nawait pyodide_js.loadPackage("micropip")')
    pyodide.call_js("py => window.webjaxLoader.installWebjax(py)")
    checks = pyodide.run_py(JAXTYPING)
    assert checks == {
        "float_2x3": True,
        "float_3x2": False,
        "int": False,
        "int_array": True,
        "shaped_any": True,
        "jaxtyped": [True, False],
        "under_jit": [True],
        "jax_is_webjax": True,
    }
