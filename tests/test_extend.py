"""jax.extend, jax.interpreters, jax.api_util, jax.test_util and the `jax._src` paths: the same
user code (a library defining its own primitives) run on webjax and on real JAX."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import webjax
import webjax.custom_derivatives

# A library's primitives, written once against the `jax` API: `ns` is webjax or jax.
PRIMITIVES = """
import functools
jnp = ns.numpy
Primitive = ns.extend.core.Primitive
ad, batching, mlir = ns.interpreters.ad, ns.interpreters.batching, ns.interpreters.mlir
ShapedArray = ns.core.ShapedArray

# a multiple-results primitive with a hand-written jvp and batching rule
sincos_p = Primitive("my_sincos")
sincos_p.multiple_results = True

def sincos_impl(x, *, scale):
    return [jnp.sin(x) * scale, jnp.cos(x) * scale]

sincos_p.def_impl(sincos_impl)
sincos_p.def_abstract_eval(lambda x, *, scale: [ShapedArray(x.shape, x.dtype)] * 2)
mlir.register_lowering(sincos_p, mlir.lower_fun(sincos_impl, multiple_results=True))

def sincos_jvp(primals, tangents, *, scale):
    (x,), (t,) = primals, tangents
    s, c = sincos_p.bind(x, scale=scale)
    t = ad.instantiate_zeros(t)
    return [s, c], [c * t, -s * t]

ad.primitive_jvps[sincos_p] = sincos_jvp

def sincos_batch(args, dims, *, scale):
    return sincos_p.bind(args[0], scale=scale), [dims[0], dims[0]]

batching.primitive_batchers[sincos_p] = sincos_batch

# a linear primitive: deflinear2 gives jvp and transpose, defvectorized the batching rule
scale_p = Primitive("my_scale")
scale_impl = lambda x, *, k: x * k
scale_p.def_impl(scale_impl)
scale_p.def_abstract_eval(lambda x, *, k: ShapedArray(x.shape, x.dtype))
mlir.register_lowering(scale_p, mlir.lower_fun(scale_impl, multiple_results=False))
ad.deflinear2(scale_p, lambda ct, x, *, k: [scale_p.bind(ct, k=k)])
batching.defvectorized(scale_p)

# a binary elementwise primitive: defjvp rules per operand, broadcasting batching
hyp_p = Primitive("my_hyp")
hyp_impl = lambda x, y: jnp.sqrt(x * x + y * y)
hyp_p.def_impl(hyp_impl)
hyp_p.def_abstract_eval(lambda x, y: ShapedArray(jnp.broadcast_shapes(x.shape, y.shape), x.dtype))
mlir.register_lowering(hyp_p, mlir.lower_fun(hyp_impl, multiple_results=False))
ad.defjvp(hyp_p, lambda g, x, y: g * x / hyp_p.bind(x, y), lambda g, x, y: g * y / hyp_p.bind(x, y))
batching.defbroadcasting(hyp_p)

def f(x, y):
    s, c = sincos_p.bind(x, scale=2.0)
    return jnp.sum(scale_p.bind(s * c, k=3.0) + hyp_p.bind(x, y))

x = jnp.linspace(0.1, 1.0, 4, dtype=jnp.float32)
y = jnp.linspace(-1.0, 0.5, 4, dtype=jnp.float32)
X = jnp.stack([x, 2 * x, -x])
out = {}
out["eager"] = f(x, y)
out["jit"] = ns.jit(f)(x, y)
out["grad"] = ns.grad(f, argnums=(0, 1))(x, y)
out["jit_grad"] = ns.jit(ns.grad(f))(x, y)
out["vmap"] = ns.vmap(f, in_axes=(0, None))(X, y)
out["vmap_grad"] = ns.vmap(ns.grad(f), in_axes=(0, None))(X, y)
out["vmap_axis1"] = ns.vmap(lambda a: hyp_p.bind(a, y[:3]), in_axes=1)(X)
out["jvp"] = ns.jvp(lambda a: sincos_p.bind(a, scale=0.5), (x,), (y,))
out["hessian"] = ns.hessian(lambda a: jnp.sum(sincos_p.bind(a, scale=1.0)[0]))(x)
out["jaxpr"] = str(ns.make_jaxpr(lambda a: scale_p.bind(a, k=2.0))(x))
"""


def _run(program: str, ns: Any) -> dict:
    env: dict = {"ns": ns}
    exec(program, env)
    return env["out"]


@pytest.fixture(scope="module")
def jax():
    return pytest.importorskip("jax")


def _close(got: Any, want: Any) -> None:
    g, gt = webjax.tree_util.tree_flatten(got)
    w, _ = pytest.importorskip("jax").tree_util.tree_flatten(want)
    assert len(g) == len(w), (gt, want)
    for a, b in zip(g, w, strict=True):
        if isinstance(b, str):
            assert a == b
        else:
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=2e-6)


def test_user_primitives_match_jax(jax, device):
    import jax.extend
    import jax.interpreters.ad
    import jax.interpreters.batching
    import jax.interpreters.mlir

    got, want = _run(PRIMITIVES, webjax), _run(PRIMITIVES, jax)
    assert got.keys() == want.keys()
    for k in got:
        _close(got[k], want[k])


def test_primitive_without_evaluation_rule(jax):
    p = webjax.extend.core.Primitive("only_mlir")
    p.def_abstract_eval(lambda x: x)
    webjax.interpreters.mlir.register_lowering(p, lambda ctx, x: [x])
    with pytest.raises(NotImplementedError, match="only an MLIR lowering"):
        p.bind(webjax.numpy.ones(2))
    assert str(webjax.make_jaxpr(p.bind)(1.0)).count("only_mlir") == 1  # staging needs no impl


def test_rule_errors_name_the_primitive():
    p = webjax.extend.core.Primitive("no_rules")
    p.def_impl(lambda x: x * 2)
    p.def_abstract_eval(lambda x: x)
    x = webjax.numpy.ones(3)
    assert p.bind(x).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(NotImplementedError, match="no_rules"):
        webjax.grad(lambda a: p.bind(a).sum())(x)
    with pytest.raises(NotImplementedError, match="no_rules"):
        webjax.vmap(p.bind)(webjax.numpy.ones((2, 3)))


# ---- linear_util, api_util, partial_eval: the way Flax traces by shape ---------------------------
PARTIAL_EVAL = """
lu, pe, core = ns.extend.linear_util, ns.interpreters.partial_eval, ns.core
jnp = ns.numpy

def fn(a, b):
    return {"sum": a + b, "const": jnp.arange(3.0), "prod": a * 2}

args = (jnp.ones((2, 3)), jnp.ones(3))
flat, in_tree = ns.tree_util.tree_flatten(args)
dbg = ns.api_util.debug_info("partial_eval_by_shape", fn, (in_tree,), {})
f_flat, out_tree = ns.api_util.flatten_fun_nokwargs(lu.wrap_init(fn, debug_info=dbg), in_tree)
pvals = [pe.PartialVal.unknown(core.ShapedArray(x.shape, x.dtype)) for x in flat]
jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(f_flat, pvals)
out = [(None if pv is None else (pv.shape, str(pv.dtype)), None if c is None else c.tolist())
       for pv, c in out_pvals]
out.append(str(out_tree()))
out.append(len(jaxpr.invars))

@lu.transformation_with_aux2
def count_calls(f, store, *args):
    res = f(*args)
    store.store(len(args))
    return res

g, aux = count_calls(lu.wrap_init(lambda a, b: a - b, debug_info=dbg))
out.append(float(g.call_wrapped(jnp.float32(3.0), jnp.float32(1.0))))
out.append(aux())
jaxpr2, avals2, _ = pe.trace_to_jaxpr_dynamic(
    lu.wrap_init(lambda a: [a * 2, a + 1], debug_info=dbg), [core.ShapedArray((2,), jnp.float32)])
out.append([str(a) for a in avals2])
"""


def test_partial_eval_by_shape_matches_jax(jax):
    import jax.api_util
    import jax.extend.linear_util
    import jax.interpreters.partial_eval

    assert _run(PARTIAL_EVAL, webjax) == _run(PARTIAL_EVAL, jax)


def test_generator_transformation_and_stores():
    lu = webjax.extend.linear_util

    @lu.transformation
    def add_one(*args):
        out = yield args, {}
        yield out + 1

    @lu.transformation_with_aux
    def with_aux(*args):
        out = yield args, {}
        yield out, "aux"

    wrapped = lu.wrap_init(lambda a: a * 10, debug_info=None)
    assert add_one(wrapped).call_wrapped(2) == 21
    g, aux = with_aux(wrapped)
    assert g.call_wrapped(3) == 30 and aux() == "aux"
    empty, full = webjax._src.linear_util.Store(), webjax._src.linear_util.Store()
    full.store(5)
    with pytest.raises(lu.StoreException):
        _ = empty.val
    with pytest.raises(lu.StoreException):
        full.store(6)
    empty_val = lambda: empty.val
    assert lu.merge_linear_aux(lambda: full.val, empty_val) == (True, 5)
    assert lu.merge_linear_aux(empty_val, lambda: full.val) == (False, 5)
    with pytest.raises(lu.StoreException):
        lu.merge_linear_aux(empty_val, empty_val)


# ---- extend.core helpers, extend.random, extend.backend, source info -----------------------------
def test_extend_core_helpers_match_jax(jax):
    jc, wc = jax.extend.core, webjax.extend.core
    a = webjax.core.ShapedArray((4, 3), "float32")
    ra = jax.core.ShapedArray((4, 3), jax.numpy.float32)
    assert str(wc.mapped_aval(4, 0, a)) == str(jc.mapped_aval(4, 0, ra))
    assert str(wc.unmapped_aval(5, 1, a)) == str(jc.unmapped_aval(5, 1, ra))
    assert str(wc.unmapped_aval(5, None, a)) == str(jc.unmapped_aval(5, None, ra))
    for dt in ("int32", "bool", "float32"):
        assert str(wc.primal_dtype_to_tangent_dtype(dt)) == str(
            jc.primal_dtype_to_tangent_dtype(dt)
        )
    assert webjax.extend.core.primitives.add_p is webjax.lax.add_p
    assert webjax.extend.core.primitives.jit_p.name == jc.primitives.jit_p.name

    def under(ns: Any) -> list:
        c = ns.extend.core
        seen: list = []

        def f(x: Any) -> Any:
            seen.append(
                (c.unsafe_am_i_under_a_jit_DO_NOT_USE(), c.unsafe_am_i_under_a_vmap_DO_NOT_USE())
            )
            return x

        f(1.0)
        ns.jit(f)(1.0)
        ns.vmap(f)(ns.numpy.ones(2))
        return seen

    assert under(webjax) == under(jax)
    s0 = wc.get_opaque_trace_state()
    inside: list = []

    def g(x: Any) -> Any:
        inside.append(wc.get_opaque_trace_state())
        return x

    webjax.jit(g)(1.0)
    assert s0 == wc.get_opaque_trace_state() and inside[0] != s0
    jaxpr = webjax.make_jaxpr(lambda x: webjax.jit(lambda y: y * 2)(x))(1.0).jaxpr
    assert [len(j.eqns) for j in wc.subjaxprs(jaxpr)] == [1]


def test_extend_random_and_backend(jax):
    for shape in [(5,), (2, 3)]:
        c = (np.arange(int(np.prod(shape)), dtype=np.uint32).reshape(shape) * 7) + 3
        got = webjax.extend.random.threefry_2x32((np.uint32(1), np.uint32(42)), c)
        want = jax.extend.random.threefry_2x32((np.uint32(1), np.uint32(42)), c)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    k = webjax.extend.random.random_seed(7, webjax.extend.random.threefry_prng_impl)
    assert (
        webjax.random.key_data(k).tolist() == webjax.random.key_data(webjax.random.key(7)).tolist()
    )
    be = webjax.extend.backend.get_backend()
    assert be.platform == webjax.default_backend() and be.devices() == webjax.devices()
    assert set(webjax.extend.backend.backends()) >= {be.platform}


def test_source_info_name_stack():
    si = webjax.extend.source_info_util
    with si.extend_name_stack("outer"), si.extend_name_stack("inner"):
        assert str(si.current_name_stack()) == "outer/inner"
        with si.transform_name_stack("jvp"):
            assert str(si.current_name_stack()) == "jvp(outer)/jvp(inner)"
    assert str(si.current_name_stack()) == ""
    info = si.current()
    assert info.traceback and info.traceback[0].file_name == __file__
    assert __file__ in si.summarize(info)


# ---- jax.test_util -------------------------------------------------------------------------------
def test_check_grads_passes_and_catches_a_wrong_rule():
    jnp = webjax.numpy
    x = jnp.array([0.3, -0.7, 1.1])
    webjax.test_util.check_grads(lambda a: jnp.sin(a) * a**2, (x,), order=2)
    webjax.test_util.check_grads(lambda a, b: jnp.tanh(a @ b), (x, x), order=1, modes=("rev",))

    @webjax.custom_jvp
    def wrong(a):
        return jnp.sin(a)

    wrong.defjvp(lambda p, t: (jnp.sin(p[0]), 2.0 * jnp.cos(p[0]) * t[0]))
    with pytest.raises(AssertionError, match="tangent"):
        webjax.test_util.check_grads(wrong, (x,), order=1, modes=("fwd",))


# ---- install_as_jax: the jax._src paths Equinox, Flax and chex import ----------------------------
def test_jax_src_paths_after_install_as_jax():
    code = textwrap.dedent("""
        import sys
        import webjax
        webjax.install_as_jax()
        import jax
        import jax._src.traceback_util as traceback_util
        from jax._src import dtypes, core, compiler
        from jax._src.tree_util import _registry
        from jax._src.dtypes import TypePromotionError
        import jax._src.dispatch
        traceback_util.register_exclusion("/some/library")
        assert "/some/library" in traceback_util._exclude_paths
        assert traceback_util.api_boundary(len)([1]) == 1
        assert TypePromotionError is webjax._src.dtypes.TypePromotionError
        assert tuple in _registry and type(jax.random.key(0)) not in _registry
        assert jax._src.dispatch.wait_for_tokens() is None
        assert jax.__version_info__ == (0, 10, 2) and jax.version.__version__ == "0.10.2"
        assert not hasattr(webjax._src, "traceback_util")  # webjax's _src is not touched
        try:
            compiler.backend_compile
        except NotImplementedError as e:
            assert "no XLA compiler" in str(e)
        else:
            raise AssertionError("compiler.backend_compile should raise")
        from jax.experimental import checkify, io_callback
        import jax.test_util, jax.extend.core, jax.interpreters.ad
        print("ok")
    """)
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(root / "pkg"), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_ensure_compile_time_eval_stages_traced_values(jax):
    # JAX 0.10.2: concrete operations fold at trace time, traced ones are staged (no error)
    def run(ns: Any) -> list:
        kinds: list = []

        @ns.jit
        def f(x):
            with ns.ensure_compile_time_eval():
                y = ns.numpy.arange(3.0) * 2
                z = x + 1
                kinds.append((isinstance(y, ns.core.Tracer), isinstance(z, ns.core.Tracer)))
            return z + y

        return [kinds, np.asarray(f(1.0)).tolist()]

    assert run(webjax) == run(jax)


def test_effectful_primitive_is_kept_when_staged():
    class Log(webjax.extend.core.Effect):
        pass

    seen: list = []
    p = webjax.extend.core.Primitive("my_log")
    p.multiple_results = True
    p.def_impl(lambda x: seen.append(float(x)) or [])
    p.def_effectful_abstract_eval(lambda x: ([], {Log()}))
    webjax.interpreters.mlir.register_lowering(p, webjax.interpreters.mlir.lower_fun(p.impl))

    def f(x):
        p.bind(x * 2)  # no outputs: only its effect keeps it
        return x + 1

    assert "my_log" in str(webjax.make_jaxpr(f)(1.0))
    jf = webjax.jit(f)
    assert float(jf(1.0)) == 2.0 and float(jf(3.0)) == 4.0 and seen == [2.0, 6.0]


SYMBOLIC_ZEROS = """
cd, jnp = ns.custom_derivatives, ns.numpy
seen = []

@ns.custom_jvp
def f(x, y):
    return x * y

def f_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    seen.append(("jvp", type(tx) is cd.SymbolicZero, type(ty) is cd.SymbolicZero))
    zx, zy = type(tx) is cd.SymbolicZero, type(ty) is cd.SymbolicZero
    if zx and zy:
        out_t = cd.SymbolicZero(ns.core.ShapedArray(x.shape, x.dtype))
    else:
        out_t = cd.zero_from_primal(x) + (0 if zx else tx * y) + (0 if zy else x * ty)
    return f(x, y), out_t

f.defjvp(f_jvp, symbolic_zeros=True)

@ns.custom_vjp
def g(x, y):
    return jnp.sin(x) * y

def g_fwd(x, y):
    seen.append(("fwd", x.perturbed, y.perturbed))
    xv, yv = cd.custom_vjp_primal_tree_values((x, y))
    return g(xv, yv), (xv, yv, True)

def g_bwd(res, ct):
    xv, yv, flag = res
    seen.append(("bwd", type(flag).__name__))
    return jnp.cos(xv) * yv * ct, cd.SymbolicZero(ns.core.ShapedArray(yv.shape, yv.dtype))

g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)
x, y = jnp.array([0.5, 1.5]), jnp.array([2.0, 3.0])
out = [np.asarray(ns.jvp(lambda a: f(a, y), (x,), (x,))[1]).tolist()]
out.append(np.asarray(ns.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(x, y)).tolist())
out.append(np.asarray(ns.grad(lambda a: g(a, y).sum())(x)).tolist())
out.append(np.asarray(ns.jit(ns.grad(lambda a: g(a, y).sum()))(x)).tolist())
out.append(seen)
"""


def test_symbolic_zeros_in_custom_rules_match_jax(jax):
    import jax.custom_derivatives

    def run(ns: Any) -> list:
        env: dict = {"ns": ns, "np": np}
        exec(SYMBOLIC_ZEROS, env)
        return env["out"]

    got, want = run(webjax), run(jax)
    assert got[-1] == want[-1]  # which tangents were symbolic, perturbed flags, residual types
    for a, b in zip(got[:-1], want[:-1], strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_aval_sharding_matches_jax(jax):
    def run(ns: Any) -> list:
        a = ns.core.ShapedArray((2, 3), ns.numpy.float32)
        seen: list = []

        def f(x):
            seen.append(repr(x.aval.sharding))
            return x

        ns.jit(f)(ns.numpy.ones(3))
        b = ns.core.ShapedArray((2, 3), ns.numpy.float32, sharding=a.sharding)
        return [repr(a.sharding), seen, str(b), b == a]

    assert run(webjax) == run(jax)


def test_api_util_helpers_match_jax(jax):
    import jax.api_util
    import jax.extend.linear_util

    def run(ns: Any) -> list:
        a, lu = ns.api_util, ns.extend.linear_util
        t = ns.tree_util.tree_structure(((1, 2), {"a": 3}))
        out: list = [a.flatten_axes("in_axes", t, (0, None))]
        out.append(a.flatten_axes("in_axes", t, ((0, 1), {"a": None})))
        try:
            a.flatten_axes("in_axes", t, (0, 1, 2))
        except ValueError as e:
            out.append(str(e).split(";")[0].split(",")[0])
        out.append([str(a.shaped_abstractify(ns.numpy.ones(3))), str(a.shaped_abstractify(1.0))])
        out.append(list(a.safe_map(lambda x, y: x + y, [1, 2], [3, 4])))
        dbg = a.debug_info("test", len, (), {})
        g, dyn = a.argnums_partial(
            lu.wrap_init(lambda x, s, y: x * s + y, debug_info=dbg),
            (0, 2),
            (2.0, 3, 1.0),
            require_static_args_hashable=False,
        )
        out.append([g.call_wrapped(*dyn), dyn])
        return out

    assert run(webjax) == run(jax)
