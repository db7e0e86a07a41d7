"""Typical user programs (transformations, control flow, pytrees, random, nn) run under webjax
and under real JAX: values, dtypes, weak types, shapes, output pytree structure, printed output
and exception types/messages must agree.

Each program is source text run with `jax`/`jnp` bound to webjax and then to real JAX; it sets
`result` (compared) or raises (the exception type and message start are compared).
"""

from __future__ import annotations

import contextlib
import io
import textwrap
from typing import Any

import pytest

import webjax
import webjax.ad_checkpoint
import webjax.custom_derivatives
import webjax.dtypes
import webjax.numpy

np = pytest.importorskip("numpy")


def _describe(x: Any, jax_mod: Any) -> Any:
    """A comparable description: arrays as (dtype, weak, shape, values), containers by type."""
    if hasattr(x, "dtype") and hasattr(x, "shape") and not isinstance(x, np.ndarray):
        if "key<" in str(x.dtype):
            return ("key", str(x.dtype), tuple(x.shape), _describe(jax_mod.random.key_data(x), 0))
        a = np.asarray(x)
        return ("array", str(a.dtype), bool(getattr(x, "weak_type", False)), a.shape, a.tolist())
    if isinstance(x, np.ndarray):
        return ("ndarray", str(x.dtype), x.shape, x.tolist())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return ("namedtuple", type(x).__name__, [_describe(v, jax_mod) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_describe(v, jax_mod) for v in x])
    if isinstance(x, dict):
        return ("dict", [(k, _describe(v, jax_mod)) for k, v in x.items()])
    if isinstance(x, (bool, int, float, str, type(None))):
        return (type(x).__name__, x)
    return ("other", type(x).__name__)


def _run(src: str, jax_mod: Any) -> dict[str, Any]:
    ns: dict[str, Any] = {"jax": jax_mod, "jnp": jax_mod.numpy, "np": np}
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(textwrap.dedent(src), ns)
            jax_mod.effects_barrier()
    except Exception as e:  # the exception itself is what is compared
        return {"error": type(e).__name__, "message": str(e), "stdout": out.getvalue()}
    return {"result": _describe(ns.get("result"), jax_mod), "stdout": out.getvalue()}


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b) or abs(a - b) <= 1e-5 + 1e-5 * abs(b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def check(src: str, *, message_chars: int | None = None) -> dict[str, Any]:
    """Run `src` under webjax and real JAX; compare results, stdout and errors."""
    rjax = pytest.importorskip("jax")
    pytest.importorskip("jax.ad_checkpoint")
    pytest.importorskip("jax.custom_derivatives")
    got, want = _run(src, webjax), _run(src, rjax)
    if "error" in want or "error" in got:
        assert got.get("error") == want.get("error"), (got, want)
        n = message_chars if message_chars is not None else len(want["message"])
        assert got["message"][:n] == want["message"][:n], (got["message"], want["message"])
    else:
        assert _close(got["result"], want["result"]), (got["result"], want["result"])
    assert got["stdout"] == want["stdout"], (got["stdout"], want["stdout"])
    return got


# ---- fori_loop / scan / while_loop: weak types and promotion of the carry -----------------------
FORI_PROGRAMS = {
    "static_int8_carry": "result = jax.lax.fori_loop(0, 10, lambda i, c: c + i, jnp.int8(0))",
    "traced_int8_carry": """
        result = jax.jit(lambda n: jax.lax.fori_loop(0, n, lambda i, c: c + i, jnp.int8(0)))(5)
    """,
    "traced_lower": """
        result = jax.jit(lambda n: jax.lax.fori_loop(n, 10, lambda i, c: c + i, jnp.int8(0)))(5)
    """,
    "index_is_weak": "result = jax.lax.fori_loop(0, 3, lambda i, c: i, 0)",
    "index_is_weak_traced": """
        result = jax.jit(lambda n: jax.lax.fori_loop(0, n, lambda i, c: i, 0))(3)
    """,
    "array_bounds_static": "result = jax.lax.fori_loop(jnp.int32(0), 4, lambda i, c: c + i, 0)",
    "weak_carry_promoted": "result = jax.lax.fori_loop(0, 4, lambda i, c: c + 0.5, 0)",
    "weak_carry_promoted_traced": """
        result = jax.jit(lambda n: jax.lax.fori_loop(0, n, lambda i, c: c + 0.5, 0))(4)
    """,
    "f16_carry": "result = jax.lax.fori_loop(0, 3, lambda i, c: c * i, jnp.float16(1))",
    "unroll": "result = jax.lax.fori_loop(0, 7, lambda i, c: c + i * 2.0, 0.0, unroll=2)",
    "grad_static": """
        result = jax.grad(lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0)
    """,
    "mismatched_bounds": "result = jax.lax.fori_loop(0.0, 3, lambda i, c: c + i, 0)",
    "unroll_traced": """
        result = jax.jit(lambda n: jax.lax.fori_loop(0, n, lambda i, c: c + 1.0, 0.0, unroll=2))(4)
    """,
}


@pytest.mark.parametrize("name", sorted(FORI_PROGRAMS))
def test_fori_loop_types(device, name):
    check(FORI_PROGRAMS[name])


LOOP_PROGRAMS = {
    "scan_weak_int_to_float": "result = jax.lax.scan(lambda c, x: (c + x, c), 0, jnp.ones(3))",
    "scan_weak_f32_to_f16": """
        result = jax.lax.scan(lambda c, x: (c * x, c), 1.0, jnp.ones(3, jnp.float16))
    """,
    "scan_weak_ys": """
        result = jax.lax.scan(lambda c, x: (c + jnp.float32(1), c), 0.0, None, length=2)
    """,
    "scan_unroll_true": """
        result = jax.lax.scan(lambda c, x: (c + x, c), 0., jnp.ones(3), unroll=True)
    """,
    "scan_pytree_carry": """
        def f(c, x):
            return {"h": c["h"] + x["a"], "n": c["n"] + 1}, (x["a"] * 2, c["n"])
        result = jax.lax.scan(f, {"h": jnp.zeros(3), "n": 0}, {"a": jnp.ones((4, 3))})
    """,
    "scan_length_no_xs": "result = jax.lax.scan(lambda c, _: (c + 1, c * 2), 0, None, length=4)",
    "while_weak_promoted": "result = jax.lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0)",
    "while_weak_jnp_array": """
        result = jax.lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, jnp.array(0))
    """,
    "while_weak_same_dtype": """
        result = jax.lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * jnp.float32(2)), (0, 1.0))
    """,
    "map_batch_remainder": """
        result = jax.lax.map(lambda x: (x["a"] ** 2, x["b"]),
                             {"a": jnp.arange(5.), "b": jnp.ones((5, 2))}, batch_size=2)
    """,
    "map_batch_larger_than_length": """
        result = jax.lax.map(lambda x: x * 2, jnp.arange(5.), batch_size=8)
    """,
    "map_batch_divides": """
        result = jax.lax.map(lambda x: x.sum(), jnp.arange(12.).reshape(6, 2), batch_size=3)
    """,
    "map_batch_jit": """
        result = jax.jit(lambda xs: jax.lax.map(lambda x: x * 2, xs, batch_size=4))(jnp.arange(10.))
    """,
    "cond_float_pred": "result = jax.lax.cond(1.5, lambda: 1.0, lambda: 2.0)",
}


@pytest.mark.parametrize("name", sorted(LOOP_PROGRAMS))
def test_loop_types(device, name):
    check(LOOP_PROGRAMS[name])


# ---- control-flow type errors: JAX's messages ---------------------------------------------------
ERROR_PROGRAMS = {
    "while_carry_dtype": """
        jax.lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, jnp.array(0, jnp.int32))
    """,
    "scan_carry_structure": "jax.lax.scan(lambda c, x: ((c, c), x), jnp.zeros(2), jnp.zeros(3))",
    "scan_carry_dict_shape": """
        jax.lax.scan(lambda carry, x: ({"a": carry["a"].sum(), "b": carry["b"]}, x),
                     {"a": jnp.zeros(2), "b": 1.0}, jnp.zeros(3))
    """,
    "fori_carry_dtype": "jax.lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), jnp.zeros(2))",
    "fori_carry_dtype_traced": """
        jax.jit(lambda n: jax.lax.fori_loop(0, n, lambda i, c: c.astype(jnp.int32),
                                            jnp.zeros(2)))(3)
    """,
    "cond_output_dtype": "jax.lax.cond(True, lambda: (1.0, 2), lambda: (1.0, 2.0))",
    "cond_output_shape_and_dtype": """
        jax.lax.cond(True, lambda: 1.0, lambda: jnp.ones(2, jnp.int32))
    """,
    "cond_output_structure": "jax.lax.cond(True, lambda: (1.0,), lambda: [1.0])",
    "switch_output_shape": "jax.lax.switch(0, [lambda: 1.0, lambda: jnp.ones(2)])",
    "switch_third_branch": """
        jax.lax.switch(0, [lambda: 1.0, lambda: 2.0, lambda: jnp.ones(2, jnp.int32)])
    """,
    "switch_float_index": "jax.lax.switch(1.0, [lambda: 1.0, lambda: 2.0])",
    "cond_vector_pred": "jax.lax.cond(jnp.ones(2) > 0, lambda: 1.0, lambda: 2.0)",
    "cond_list_pred": "jax.lax.cond([True], lambda: 1.0, lambda: 2.0)",
    "cond_none_pred": "jax.lax.cond(None, lambda: 1.0, lambda: 2.0)",
    "while_non_bool_cond": "jax.lax.while_loop(lambda c: c, lambda c: c - 1.0, 3.0)",
}


@pytest.mark.parametrize("name", sorted(ERROR_PROGRAMS))
def test_control_flow_errors(name):
    # the messages name the user's functions by file and line: compare up to the first one
    got = check(ERROR_PROGRAMS[name], message_chars=0)
    want = _run(ERROR_PROGRAMS[name], pytest.importorskip("jax"))
    strip = lambda m: "\n".join(ln for ln in m.splitlines() if " is <lambda> at " not in ln)
    # webjax's own classes live in webjax._src where JAX's are in jax._src
    assert strip(got["message"]).replace("webjax._src", "jax._src") == strip(want["message"])


# ---- tracer printing and conversion errors ------------------------------------------------------
def test_tracer_reprs():
    check(
        """
        out = []
        def rec():  # a fresh function each time (JAX caches traces per function)
            return lambda x: out.append((str(x), repr(x))) or x
        jax.jit(rec())(jnp.ones(2))
        jax.grad(rec())(1.0)
        jax.vmap(rec())(jnp.ones(2))
        jax.jvp(rec(), (1.0,), (1.0,))
        jax.make_jaxpr(rec())(1.0)
        jax.eval_shape(rec(), 1.0)
        jax.jit(jax.grad(rec()))(1.0)
        jax.jit(lambda x: jax.jvp(rec(), (x,), (x,)))(1.0)
        jax.vmap(jax.grad(rec()))(jnp.ones(2))
        result = out
        """
    )


def test_print_inside_jit_shows_tracer():
    check(
        """
        @jax.jit
        def f(x):
            print("x:", x)
            print(f"{x}")
            return x * 2
        result = f(jnp.arange(3.))
        """
    )


TRACER_ERRORS = {
    "bool": "jax.jit(lambda x: 1 if x > 0 else 2)(1.0)",
    "int": "jax.jit(lambda x: int(x))(3)",
    "float": "jax.jit(lambda x: float(x))(3.0)",
    "complex": "jax.jit(lambda x: complex(x))(1.0)",
    "index": "jax.jit(lambda n: list(range(n)))(3)",
    "array": "jax.jit(lambda x: np.asarray(x))(jnp.ones(2))",
    "tolist": "jax.jit(lambda x: x.tolist())(jnp.ones(2))",
    "item": "jax.jit(lambda x: x.item())(1.0)",
}


@pytest.mark.parametrize("name", sorted(TRACER_ERRORS))
def test_tracer_conversion_errors(name):
    # JAX goes on to name the traced function and argument; compare the leading lines
    got = check(TRACER_ERRORS[name], message_chars=0)
    want = _run(TRACER_ERRORS[name], pytest.importorskip("jax"))
    lead = want["message"].split("\nThe error occurred")[0].split("\nThis BatchTracer")[0]
    assert got["message"].startswith(lead), (got["message"], want["message"])


def test_tracer_errors_are_concretization_errors():
    check(
        """
        try:
            jax.jit(lambda x: 1 if x > 0 else 2)(1.0)
        except jax.errors.TracerBoolConversionError as e:
            result = [isinstance(e, jax.errors.ConcretizationTypeError), isinstance(e, TypeError)]
        """
    )


# ---- custom derivatives -------------------------------------------------------------------------
CUSTOM_PROGRAMS = {
    "vjp_kwargs_and_defaults": """
        @jax.custom_vjp
        def f(x, scale=2.0):
            return x * scale
        f.defvjp(lambda x, scale=2.0: (x * scale, scale), lambda s, g: (g * s * 10, None))
        result = [jax.grad(lambda x: f(x, scale=3.0))(1.0), jax.grad(f)(1.0)]
    """,
    "jvp_kwargs_and_defaults": """
        @jax.custom_jvp
        def f(x, y=1.0):
            return x * y
        @f.defjvp
        def fj(p, t):
            return f(*p), t[0] * 100 + t[1]
        result = [f(jnp.float32(2.0), y=3.0), jax.grad(lambda x: f(x, y=3.0))(1.0),
                  jax.grad(f)(2.0)]
    """,
    "vjp_none_cotangent": """
        @jax.custom_vjp
        def f(x, y):
            return x * y
        f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1], None))
        result = jax.grad(f, argnums=(0, 1))(2.0, 3.0)
    """,
    "vjp_bwd_not_tuple": """
        @jax.custom_vjp
        def f(x):
            return x
        f.defvjp(lambda x: (x, None), lambda r, g: g)
        result = jax.grad(f)(1.0)
    """,
    "vjp_bwd_wrong_length": """
        @jax.custom_vjp
        def f(x, y):
            return x * y
        f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g,))
        result = jax.grad(f)(1.0, 2.0)
    """,
    "vjp_bwd_wrong_shape": """
        @jax.custom_vjp
        def f(x):
            return x.sum()
        f.defvjp(lambda x: (x.sum(), None), lambda r, g: (jnp.ones(3),))
        result = jax.grad(f)(jnp.ones(2))
    """,
    "vjp_fwd_not_pair": """
        @jax.custom_vjp
        def f(x):
            return x
        def f_fwd(x):
            return x
        f.defvjp(f_fwd, lambda r, g: (g,))
        result = jax.grad(f)(1.0)
    """,
    "jvp_tangent_shape": """
        @jax.custom_jvp
        def f(x):
            return x
        f.defjvp(lambda p, t: (p[0], jnp.ones(2)))
        result = jax.grad(f)(1.0)
    """,
    "jvp_tangent_dtype": """
        @jax.custom_jvp
        def f(x):
            return x
        f.defjvp(lambda p, t: (p[0], t[0].astype(jnp.float16)))
        result = jax.jvp(f, (jnp.float32(1.0),), (jnp.float32(1.0),))
    """,
}


@pytest.mark.parametrize("name", sorted(CUSTOM_PROGRAMS))
def test_custom_derivatives(device, name):
    check(CUSTOM_PROGRAMS[name])


# ---- modules and dtypes -------------------------------------------------------------------------
def test_checkpoint_name_policy(device):
    check(
        """
        def f(x):
            y = jax.ad_checkpoint.checkpoint_name(jnp.sin(x), "y")
            return jnp.sum(y ** 2)
        g = jax.checkpoint(f, policy=jax.checkpoint_policies.save_only_these_names("y"))
        named = jax.ad_checkpoint.checkpoint_name({"a": jnp.ones(2)}, "n")
        result = [jax.grad(g)(jnp.arange(3.)), named]
        """
    )


def test_custom_derivatives_module(device):
    check(
        """
        cd = jax.custom_derivatives
        @cd.custom_jvp
        def f(x):
            return jnp.sin(x)
        f.defjvps(lambda t, ans, x: 3.0 * t)
        result = jax.grad(f)(1.0)
        """
    )


def test_dtypes_module():
    check(
        """
        d = jax.dtypes
        key = jax.random.key(0)
        result = [
            str(d.canonicalize_dtype(jnp.float64)),
            d.issubdtype(jnp.float32, jnp.floating),
            d.issubdtype(key.dtype, d.prng_key),
            d.issubdtype(jnp.float32, d.prng_key),
            d.issubdtype(key.dtype, d.extended),
            d.issubdtype(jnp.int8, jnp.integer),
            str(d.result_type(1.0, jnp.int8)),
            str(d.result_type(jnp.ones(2, jnp.float16), 1)),
            float(d.finfo(jnp.float16).eps),
            int(d.iinfo(jnp.int8).max),
            str(d.float0),
            d.itemsize_bits(jnp.float16),
            d.scalar_type_of(jnp.ones(2)).__name__,
            key.dtype.name,
            str(key.dtype),
            str(jax.random.key_data(key).dtype),
        ]
        """
    )


# ---- nn ------------------------------------------------------------------------------------------
def test_logsumexp_zero_weights_have_finite_derivatives(device):
    # a focal-loss pattern: a weight of 0 on a term whose exponent overflows
    check(
        """
        lab = jnp.array([1.0, 0.0, 0.9])
        def f(z):
            terms = jnp.stack([jax.nn.log_sigmoid(z), jax.nn.log_sigmoid(-z)], -1)
            w = jnp.stack([1 - lab, lab], -1)
            return jnp.sum(jnp.exp(0.5 * jax.nn.logsumexp(terms, axis=-1, b=w)))
        z = jnp.array([50.0, -50.0, 3.0])
        result = [f(z), jax.grad(f)(z), jax.hessian(f)(z),
                  jax.nn.logsumexp(jnp.array([1.0, 2.0]), b=jnp.array([[0.0, 1.0], [2.0, 0.0]]),
                                   axis=-1)]
        """
    )


def test_logsumexp_where(device):
    check(
        """
        x = jnp.arange(6.).reshape(2, 3)
        m = jnp.array([[True, False, True], [False, False, False]])
        result = [
            jax.nn.logsumexp(x, axis=1, where=m),
            jax.scipy.special.logsumexp(x, axis=0, where=m, keepdims=True),
            jax.grad(lambda x: jax.nn.logsumexp(x, where=m[0]))(x[0]),
            jax.nn.logsumexp(x, where=jnp.array([True, False, True]), b=2.0),
            jax.nn.softmax(x[0], where=m[0]),
            jax.nn.log_softmax(x[0], where=m[0]),
        ]
        """
    )
