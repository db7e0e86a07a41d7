"""The added top-level API (pure_callback, custom_gradient, config context managers, ...),
`jax.nn` additions, `jax.ops`, `jax.image`, `jax.typing`, `jax.experimental` and the module
aliases of `install_as_jax`, against real JAX."""

from __future__ import annotations

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
import webjax.typing
from check_grads import check_grads
from webjax import nn

jax = pytest.importorskip("jax")
jjnp = jax.numpy
R = np.random.RandomState(0)


def close(got: Any, want: Any, rtol: float = 1e-6, atol: float = 0.0) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)


def f32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


# ---- jax.nn -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["mish", "squareplus", "sparse_plus", "sparse_sigmoid", "identity", "log1mexp"]
)
def test_activations(device: Any, name: str) -> None:
    x = np.concatenate([f32(40) * 4, [0.0, -1.0, 1.0, 30.0, -30.0]]).astype(np.float32)
    if name == "log1mexp":
        x = np.abs(x) + 1e-3
    close(getattr(nn, name)(jnp.asarray(x)), getattr(jax.nn, name)(x), 1e-6, 1e-7)
    if name != "identity":
        close(
            webjax.grad(lambda v: getattr(nn, name)(v).sum())(jnp.asarray(x)),
            jax.grad(lambda v: getattr(jax.nn, name)(v).sum())(x),
            1e-5,
            1e-6,
        )


def test_logmeanexp(device: Any) -> None:
    m = f32(3, 4)
    close(nn.logmeanexp(jnp.asarray(m)), jax.nn.logmeanexp(m), 1e-6)
    close(
        nn.logmeanexp(jnp.asarray(m), axis=1, keepdims=True),
        jax.nn.logmeanexp(m, axis=1, keepdims=True),
        1e-6,
    )
    w = m > 0
    close(
        nn.logmeanexp(jnp.asarray(m), axis=0, where=jnp.asarray(w)),
        jax.nn.logmeanexp(m, axis=0, where=w),
        1e-6,
    )


ATTN_CASES = {
    "mha": {},
    "bias_mask": {"bias": True, "mask": True},
    "causal_scale": {"is_causal": True, "scale": 0.3},
    "seq_lengths": {"query_seq_lengths": [3, 5], "key_value_seq_lengths": [6, 2]},
    "window": {"local_window_size": (1, 2)},
    "window_int": {"local_window_size": 1, "is_causal": True},
}


@pytest.mark.parametrize("case", list(ATTN_CASES))
@pytest.mark.parametrize("heads", [(4, 4), (4, 2), (4, 1)])
def test_dot_product_attention(device: Any, case: str, heads: tuple[int, int]) -> None:
    b, t, s, h = 2, 5, 6, 8
    n, k = heads
    q, kk, v = f32(b, t, n, h), f32(b, s, k, h), f32(b, s, k, h)
    opts = dict(ATTN_CASES[case])
    wopts, jopts = dict(opts), dict(opts)
    if opts.pop("bias", False):
        bias = f32(1, n, t, s)
        wopts["bias"], jopts["bias"] = jnp.asarray(bias), bias
    if opts.pop("mask", False):
        mask = R.uniform(size=(b, 1, t, s)) > 0.3
        wopts["mask"], jopts["mask"] = jnp.asarray(mask), mask
    for key in ("query_seq_lengths", "key_value_seq_lengths"):
        if key in opts:
            arr = np.array(opts[key], np.int32)
            wopts[key], jopts[key] = jnp.asarray(arr), arr
    got = nn.dot_product_attention(jnp.asarray(q), jnp.asarray(kk), jnp.asarray(v), **wopts)
    want = jax.nn.dot_product_attention(q, kk, v, **jopts)
    close(got, want, 1e-5, 1e-5)


def test_dot_product_attention_more(device: Any) -> None:
    q, k, v = f32(2, 5, 4, 8), f32(2, 6, 2, 8), f32(2, 6, 2, 8)
    Q, K, V = jnp.asarray(q), jnp.asarray(k), jnp.asarray(v)
    got = nn.dot_product_attention(Q, K, V, return_residual=True)
    want = jax.nn.dot_product_attention(q, k, v, return_residual=True)
    close(got[0], want[0], 1e-5, 1e-5)
    close(got[1], want[1], 1e-5, 1e-5)
    close(
        nn.dot_product_attention(Q[0], K[0], V[0]),
        jax.nn.dot_product_attention(q[0], k[0], v[0]),
        1e-5,
        1e-5,
    )
    fn = lambda a, b, c: nn.dot_product_attention(a, b, c, is_causal=True)
    close(
        webjax.jit(fn)(Q, K, V), jax.nn.dot_product_attention(q, k, v, is_causal=True), 1e-5, 1e-5
    )
    got_g = webjax.grad(lambda a, b, c: fn(a, b, c).sum(), argnums=(0, 1, 2))(Q, K, V)
    want_g = jax.grad(
        lambda a, b, c: jax.nn.dot_product_attention(a, b, c, is_causal=True).sum(),
        argnums=(0, 1, 2),
    )(q, k, v)
    for g, w in zip(got_g, want_g):
        close(g, w, 1e-4, 1e-5)
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        nn.dot_product_attention(
            jnp.ones((1, 2, 3, 4)), jnp.ones((1, 2, 2, 4)), jnp.ones((1, 2, 2, 4))
        )
    with pytest.raises(ValueError, match="Unsupported implementation"):
        nn.dot_product_attention(Q, K, V, implementation="foo")
    with pytest.raises(ValueError, match="mask dtype"):
        nn.dot_product_attention(Q, K, V, mask=jnp.ones((1, 1, 5, 6)))


def test_initializers(device: Any) -> None:
    ji = jax.nn.initializers
    assert sorted(n for n in dir(ji) if not n.startswith("_")) == sorted(
        n for n in dir(nn.initializers) if not n.startswith("_")
    )
    k, jk = webjax.random.PRNGKey(0), jax.random.PRNGKey(0)
    close(nn.initializers.orthogonal()(k, (3, 5)), ji.orthogonal()(jk, (3, 5)), 1e-5, 1e-6)
    close(
        nn.initializers.orthogonal(2.0, column_axis=0)(k, (4, 2, 3)),
        ji.orthogonal(2.0, column_axis=0)(jk, (4, 2, 3)),
        1e-5,
        1e-6,
    )
    close(
        nn.initializers.delta_orthogonal()(k, (3, 3, 2, 4)),
        ji.delta_orthogonal()(jk, (3, 3, 2, 4)),
        1e-5,
        1e-6,
    )
    with pytest.raises(ValueError):
        nn.initializers.orthogonal()(k, (3,))
    with pytest.raises(ValueError):
        nn.initializers.delta_orthogonal()(k, (3, 4, 2))


# ---- jax.ops ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["segment_sum", "segment_prod", "segment_max", "segment_min"])
def test_segments(device: Any, name: str) -> None:
    data = f32(8, 3)
    ids = np.array([0, 0, 1, 3, 3, -1, 5, 2], np.int32)
    wf, jf = getattr(webjax.ops, name), getattr(jax.ops, name)
    close(wf(jnp.asarray(data), jnp.asarray(ids), 4), jf(data, ids, 4), 1e-6)
    close(
        wf(jnp.asarray(data), jnp.asarray(ids), 6, bucket_size=3),
        jf(data, ids, 6, bucket_size=3),
        1e-6,
    )
    pos = np.array([0, 2, 1, 1, 0, 2, 2, 1], np.int32)
    close(wf(jnp.asarray(data), jnp.asarray(pos)), jf(data, pos), 1e-6)
    i = R.randint(-5, 5, 8).astype(np.int32)
    close(wf(jnp.asarray(i), jnp.asarray(pos), 3), jf(i, pos, 3))
    jitted = webjax.jit(lambda d, s: wf(d, s, 4, indices_are_sorted=True))
    srt = np.sort(np.abs(ids) % 4).astype(np.int32)
    close(
        jitted(jnp.asarray(data), jnp.asarray(srt)), jf(data, srt, 4, indices_are_sorted=True), 1e-6
    )


def test_segment_errors_and_grad() -> None:
    with pytest.raises(TypeError):
        webjax.ops.segment_sum(jnp.ones(3), jnp.array([0.0, 1.0, 2.0]))
    with pytest.raises(webjax.errors.ConcretizationTypeError):
        webjax.jit(lambda d, s: webjax.ops.segment_sum(d, s))(jnp.ones(3), jnp.arange(3))
    ids = jnp.array([0, 1, 0, 2])
    check_grads(lambda d: webjax.ops.segment_sum(d, ids, 3), (f32(4, 2),))


def test_segment_max_grad() -> None:
    """The cotangent goes to the maximal update(s) of each segment, ties shared as in JAX."""
    ids = jnp.array([0, 1, 0, 2])
    d = f32(4, 2)
    close(
        webjax.grad(lambda v: webjax.ops.segment_max(v, ids, 3).sum())(jnp.asarray(d)),
        jax.grad(lambda v: jax.ops.segment_max(v, np.array([0, 1, 0, 2]), 3).sum())(d),
    )


# ---- jax.image ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "method", ["nearest", "linear", "cubic", "lanczos3", "lanczos5", "area", "cubic-pytorch"]
)
def test_resize(device: Any, method: str) -> None:
    img = f32(5, 7, 3)
    for antialias in (True, False):
        for shape in ((9, 4, 3), (3, 11, 3), (5, 7, 3)):
            got = webjax.image.resize(jnp.asarray(img), shape, method, antialias=antialias)
            want = jax.image.resize(img, shape, method, antialias=antialias)
            close(got, want, 1e-5, 2e-6)
    i8 = R.randint(0, 255, (4, 4)).astype(np.uint8)
    close(
        webjax.image.resize(jnp.asarray(i8), (6, 3), "linear"),
        jax.image.resize(i8, (6, 3), "linear"),
        1e-5,
        1e-5,
    )


def test_scale_and_translate(device: Any) -> None:
    img = f32(6, 5, 2)
    for method in ("linear", "cubic", "lanczos3"):
        for antialias in (True, False):
            got = webjax.image.scale_and_translate(
                jnp.asarray(img),
                (8, 4, 2),
                (0, 1),
                jnp.array([1.7, 0.8]),
                jnp.array([0.3, -1.0]),
                method,
                antialias,
            )
            want = jax.image.scale_and_translate(
                img,
                (8, 4, 2),
                (0, 1),
                jjnp.array([1.7, 0.8]),
                jjnp.array([0.3, -1.0]),
                method,
                antialias,
            )
            close(got, want, 1e-5, 2e-6)
    with pytest.raises(ValueError, match="Nearest"):
        webjax.image.scale_and_translate(jnp.asarray(img), (8, 4, 2), (0,), [1.0], [0.0], "nearest")


def test_image_errors_and_grad() -> None:
    with pytest.raises(ValueError, match="shape must have length"):
        webjax.image.resize(jnp.ones((2, 2)), (3,), "linear")
    with pytest.raises(ValueError, match="Unknown resize method"):
        webjax.image.resize(jnp.ones((2, 2)), (3, 3), "bogus")
    assert webjax.image.ResizeMethod.from_string("bilinear") is webjax.image.ResizeMethod.LINEAR
    check_grads(lambda x: webjax.image.resize(x, (5, 3), "cubic"), (f32(3, 4),))


# ---- pure_callback ------------------------------------------------------------------------------
def _host_sin(x: Any) -> Any:
    return np.sin(np.asarray(x)) * 2


def test_pure_callback(device: Any) -> None:
    x = f32(5)
    spec = webjax.ShapeDtypeStruct((5,), jnp.float32)
    want = np.sin(x) * 2
    close(webjax.pure_callback(_host_sin, spec, jnp.asarray(x)), want, 1e-6)
    close(
        webjax.jit(lambda v: webjax.pure_callback(_host_sin, spec, v) + 1)(jnp.asarray(x)),
        want + 1,
        1e-6,
    )
    calls: list[int] = []

    def counted(v: Any) -> Any:
        calls.append(1)
        return np.asarray(v) * 3

    f = webjax.jit(lambda v: webjax.pure_callback(counted, spec, v))
    close(f(jnp.asarray(x)), x * 3, 1e-6)
    close(f(jnp.asarray(x + 1)), (x + 1) * 3, 1e-6)  # runs again on the new values
    assert len(calls) >= 2
    # pytrees in and out, keyword arguments, other result dtypes
    out = webjax.pure_callback(
        lambda a, b, scale: {"s": np.asarray(a + b["y"]) * scale, "n": np.int32(3)},
        {"s": spec, "n": jax.ShapeDtypeStruct((), np.int32)},
        jnp.asarray(x),
        {"y": jnp.ones(5)},
        scale=2.0,
    )
    close(out["s"], (x + 1) * 2, 1e-6)
    assert out["n"].dtype == jnp.int32 and int(out["n"]) == 3


@pytest.mark.parametrize(
    "method",
    ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized"],
)
def test_pure_callback_vmap(method: str) -> None:
    shapes: list[tuple] = []

    def cb(a: Any, b: Any) -> Any:
        shapes.append((np.shape(a), np.shape(b)))
        return np.asarray(a) + np.asarray(b)

    def fn(ns: Any, a: Any, b: Any) -> Any:
        spec = ns.ShapeDtypeStruct(a.shape, a.dtype)
        return ns.pure_callback(cb, spec, a, b, vmap_method=method)

    a, b = f32(3, 2), f32(2)
    got = webjax.vmap(lambda u, v: fn(webjax, u, v), in_axes=(0, None))(jnp.asarray(a), b)
    mine = list(shapes)
    shapes.clear()
    want = jax.vmap(lambda u, v: fn(jax, u, v), in_axes=(0, None))(a, b)
    close(got, want, 1e-6)
    assert mine == shapes  # the callback sees the same shapes as under JAX


def test_pure_callback_errors() -> None:
    spec = webjax.ShapeDtypeStruct((2,), jnp.float32)
    f = lambda v: webjax.pure_callback(lambda a: np.asarray(a), spec, v)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        webjax.vmap(f)(jnp.ones((3, 2)))
    with pytest.raises(ValueError, match="do not support JVP"):
        webjax.grad(lambda v: f(v).sum())(jnp.ones(2))
    with pytest.raises(ValueError, match="vmap_method must be"):
        webjax.pure_callback(lambda a: a, spec, jnp.ones(2), vmap_method="bogus")
    with pytest.raises(RuntimeError, match="shape"):
        webjax.pure_callback(lambda a: np.ones(3, np.float32), spec, jnp.ones(2))


# ---- custom_gradient, closure_convert -----------------------------------------------------------
def test_custom_gradient() -> None:
    def make(ns: Any) -> Any:
        @ns.custom_gradient
        def f(x: Any, y: Any) -> Any:
            out = ns.numpy.sin(x) * y

            def vjp(g: Any) -> Any:
                return (g * 10.0 * y, g * x)

            return out, vjp

        return f

    x, y = f32(4), f32(4)
    for argnums in (0, 1, (0, 1)):
        got = webjax.grad(lambda a, b: make(webjax)(a, b).sum(), argnums)(
            jnp.asarray(x), jnp.asarray(y)
        )
        want = jax.grad(lambda a, b: make(jax)(a, b).sum(), argnums)(x, y)
        for g, w in zip(
            np.atleast_1d(got) if argnums != (0, 1) else got,
            np.atleast_1d(want) if argnums != (0, 1) else want,
        ):
            close(g, w, 1e-6)
    jitted = webjax.jit(webjax.grad(lambda a: make(webjax)(a, jnp.asarray(y)).sum()))
    close(jitted(jnp.asarray(x)), 10.0 * y, 1e-6)
    close(make(webjax)(jnp.asarray(x), jnp.asarray(y)), np.sin(x) * y, 1e-6)


def test_closure_convert() -> None:
    x = jnp.asarray(f32(3))

    def outer(v: Any) -> Any:
        fn, consts = webjax.closure_convert(lambda z: z * v + 1.0, v)
        assert len(consts) == 1  # the traced v is hoisted
        return fn(v, *consts)

    close(webjax.jit(outer)(x), np.asarray(x) ** 2 + 1, 1e-6)
    fn, consts = webjax.closure_convert(lambda z: z * x, x)
    assert consts == []  # concrete values stay closed over, as in JAX
    close(fn(jnp.ones(3)), np.asarray(x), 0)


# ---- small API ----------------------------------------------------------------------------------
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
        assert isinstance(c, webjax.Array)  # evaluated while tracing
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
        assert jax is webjax and jax.ops is webjax.ops and jax.image is webjax.image
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
