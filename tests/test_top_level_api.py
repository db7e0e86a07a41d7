"""The small top-level API against real JAX: config context managers (enable_x64,
default_matmul_precision, promotion modes, disable_jit), device_get, typeof, named_scope,
ensure_compile_time_eval, live_arrays, clear_caches, checkpoint_policies, `jax.typing`,
`Array.item`, jit's errors for non-array arguments, and the module aliases of `install_as_jax`
(jax.scipy's submodules included)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import webjax
import webjax.experimental
import webjax.image
import webjax.numpy as jnp
import webjax.ops
import webjax.scipy.cluster.vq as wvq
import webjax.scipy.integrate as wi
import webjax.scipy.interpolate as winterp
import webjax.scipy.ndimage as wn
import webjax.scipy.optimize as wo
import webjax.scipy.signal as wsig
import webjax.scipy.spatial.transform as wtr
import webjax.typing

jax = pytest.importorskip("jax")
jjnp = jax.numpy
import jax.scipy.cluster.vq as jvq  # noqa: E402
import jax.scipy.integrate as ji  # noqa: E402
import jax.scipy.interpolate as jinterp  # noqa: E402
import jax.scipy.ndimage as jn  # noqa: E402
import jax.scipy.optimize as jo  # noqa: E402
import jax.scipy.signal as jsig  # noqa: E402
import jax.scipy.spatial.transform as jtr  # noqa: E402

R = np.random.RandomState(0)


def close(got: Any, want: Any, rtol: float = 1e-6, atol: float = 0.0) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)


def test_config_context_managers() -> None:
    assert not webjax.enable_x64.value
    with webjax.enable_x64(True):
        assert jnp.ones(2).dtype == jnp.float64 and webjax.enable_x64.value
    assert jnp.ones(2).dtype == jnp.float32
    with webjax.experimental.enable_x64():
        assert jnp.arange(3).dtype == jnp.int64
        with webjax.experimental.disable_x64():
            assert jnp.arange(3).dtype == jnp.int32
    with webjax.default_matmul_precision("float32"):
        assert webjax.config.jax_default_matmul_precision == "float32"
    assert webjax.config.jax_default_matmul_precision is None
    with webjax.numpy_dtype_promotion("strict"), webjax.numpy_rank_promotion("raise"):
        assert webjax.config.jax_numpy_rank_promotion == "raise"
    with pytest.raises(ValueError), webjax.numpy_dtype_promotion("bogus"):
        pass
    traced: list[str] = []

    @webjax.jit
    def f(v: Any) -> Any:
        traced.append(type(v).__name__)
        return v + 1

    with webjax.disable_jit():
        close(f(jnp.ones(2)), np.full(2, 2, np.float32))
    assert traced == ["Array"]  # ran op by op on the concrete array
    f(jnp.ones(2))
    assert traced[-1] != "Array"


def test_small_api() -> None:
    got = webjax.device_get({"a": jnp.ones(2), "b": 3, "c": [jnp.int32(4)]})
    assert isinstance(got["a"], np.ndarray) and got["b"] == 3 and got["c"][0] == 4
    assert webjax.float0 == jax.float0
    assert webjax.typeof(jnp.ones((2, 3))).shape == (2, 3)
    assert webjax.typeof(1.0).weak_type
    assert webjax.named_call(jnp.sin, name="s") is jnp.sin
    with webjax.named_scope("block"):
        pass
    with pytest.raises(TypeError), webjax.named_scope(3):  # type: ignore[arg-type]
        pass

    def g(v: Any) -> Any:
        with webjax.ensure_compile_time_eval():
            c = jnp.sin(jnp.ones(2)) * 3
        assert not isinstance(c, webjax.core.Tracer)  # evaluated while tracing
        return v + c

    close(webjax.jit(g)(jnp.ones(2)), 1 + 3 * np.sin(np.ones(2, np.float32)), 1e-6)
    keep = jnp.arange(5.0) + 1
    assert any(a is keep for a in webjax.live_arrays())
    f = webjax.jit(lambda v: v * 2)
    f(keep)
    webjax.clear_caches()
    close(f(keep), np.arange(1, 6, dtype=np.float32) * 2)
    pol = webjax.checkpoint_policies
    assert sorted(n for n in dir(jax.checkpoint_policies) if not n.startswith("_")) == sorted(
        n for n in dir(pol) if not n.startswith("_")
    )
    for policy in (
        pol.dots_saveable,
        pol.nothing_saveable,
        pol.save_only_these_names("x"),
        pol.save_from_both_policies(pol.dots_saveable, pol.everything_saveable),
    ):
        h = webjax.checkpoint(lambda v: jnp.sin(v) @ v, policy=policy)
        close(
            webjax.grad(h)(jnp.ones(3)), jax.grad(lambda v: jjnp.sin(v) @ v)(np.ones(3, "f4")), 1e-6
        )


def test_typing() -> None:
    def f(x: webjax.typing.ArrayLike, dt: webjax.typing.DTypeLike = None) -> webjax.Array:
        return jnp.asarray(x, dtype=dt)

    assert f(1.0).dtype == jnp.float32
    assert webjax.typing.Array is webjax.Array


def test_install_as_jax_submodules() -> None:
    code = textwrap.dedent("""
        import sys
        import webjax
        webjax.install_as_jax()
        import jax, jax.ops, jax.image, jax.typing, jax.experimental
        import jax.scipy.stats, jax.scipy.stats.norm
        from jax.scipy.stats import norm, multivariate_normal
        from jax.scipy.special import gammainc
        import jax.numpy as jnp
        # `jax` is webjax's namespace; only `jax._src` (JAX's private paths) differs
        assert jax.Array is webjax.Array and jax.ops is webjax.ops and jax.image is webjax.image
        assert jax._src is sys.modules["jax._src"] is not webjax._src
        assert jax.scipy.stats.norm is norm
        x = jnp.arange(3.0)
        print(float(jax.ops.segment_sum(x, jnp.array([0, 0, 1]), 2)[0]),
              float(norm.cdf(0.0)), jax.image.resize(x, (6,), "nearest").shape,
              float(jax.lax.argmax(x, 0, jnp.int32)), float(gammainc(1.0, 0.0)))
    """)
    root = Path(__file__).resolve().parents[1]
    env = {"PYTHONPATH": str(root / "pkg"), "PATH": "/usr/bin:/bin", "WEBJAX_PLATFORM": "cpu"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1.0", "0.5", "(6,)", "2.0", "0.0"]


ITEM_ARGS = [(), (4,), (1, 2), ((1, 0),), (-1,), (2, 3), (1, 5), ((1, 5),), (1.0,), (-7,), (7,),
             (1, 1, 1)]  # fmt: skip


@pytest.mark.parametrize("args", ITEM_ARGS, ids=repr)
def test_item_with_indices_as_jax(args):
    rjnp = pytest.importorskip("jax.numpy")
    got, want = webjax.numpy.arange(6.0).reshape(2, 3), rjnp.arange(6.0).reshape(2, 3)
    try:
        expected = want.item(*args)
    except Exception as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            got.item(*args)
        return
    assert got.item(*args) == expected and type(got.item(*args)) is type(expected)


def _jit_argument_message(jax_mod, call):
    with pytest.raises(TypeError) as info:
        call(jax_mod)
    return str(info.value).split(" as an abstract array.")[-1]


@pytest.mark.parametrize(
    "call",
    [
        lambda j: j.jit(lambda x: x)("hello"),
        lambda j: j.jit(lambda x, y: x)(1, {"a": "hello"}),
        lambda j: j.jit(lambda x, y: x, static_argnums=0)("s", ["q"]),
        lambda j: j.jit(lambda a, *, b: a)(1, b=("x", "y")),
    ],
)
def test_jit_names_the_path_of_a_non_array_argument(call):
    jax = pytest.importorskip("jax")
    assert _jit_argument_message(webjax, call) == _jit_argument_message(jax, call)


def test_install_as_jax_names() -> None:
    code = (
        "import webjax; webjax.install_as_jax()\n"
        "import jax.scipy.optimize, jax.scipy.signal, jax.scipy.ndimage, jax.scipy.integrate\n"
        "import jax.scipy.interpolate, jax.scipy.cluster.vq, jax.scipy.spatial.transform\n"
        "from jax.scipy.optimize import minimize, OptimizeResults\n"
        "from jax.scipy.interpolate import RegularGridInterpolator\n"
        "assert jax.scipy.signal.convolve is webjax.scipy.signal.convolve\n"
        "assert jax.scipy.ndimage.map_coordinates is webjax.scipy.ndimage.map_coordinates\n"
        "assert jax.scipy.integrate.trapezoid is webjax.scipy.integrate.trapezoid\n"
        "assert jax.scipy.cluster.vq.vq is webjax.scipy.cluster.vq.vq\n"
        "from jax.scipy.spatial.transform import Rotation, Slerp\n"
        "import numpy as np\n"
        "assert np.dtype('bfloat16').name == 'bfloat16'  # as after importing JAX\n"
        "print('ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "ok"
    pairs = [(wo, jo), (wsig, jsig), (wn, jn), (wi, ji), (winterp, jinterp), (wvq, jvq), (wtr, jtr)]
    for mod, names in pairs:
        ours = set(mod.__all__)
        theirs = {k for k in dir(names) if not k.startswith("_")}
        assert ours <= theirs, ours - theirs
