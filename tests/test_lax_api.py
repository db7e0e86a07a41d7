"""lax's functions beyond one-primitive wrappers, against real JAX: argmax/argmin,
associative_scan, reduce, *_in_dim slicing, split/stack/collapse/tile, full_like and friends,
batch_matmul and precision arguments, conv_general_dilated_patches, reduce_precision,
scatter_sub/scatter_apply, nextafter in 16-bit formats and the `*_p` names."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from check_grads import check_grads
from webjax import lax

jax = pytest.importorskip("jax")
jlax = jax.lax
jjnp = jax.numpy
R = np.random.RandomState(0)


def same(got: Any, want: Any) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_array_equal(g, w)


def close(got: Any, want: Any, rtol: float = 1e-6, atol: float = 0.0) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)


def f32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


# ---- argmax / argmin ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(device: Any, name: str) -> None:
    x = f32(4, 5)
    x[1, 2] = x[1, 4] = np.nan
    x[2, 1] = x[2, 3] = 7.0  # ties: the first wins
    x[3, 0] = x[3, 4] = -7.0
    for axis in (0, 1):
        for idt in ("int32", "uint8", "int16"):
            got = getattr(lax, name)(jnp.asarray(x), axis, idt)
            same(got, getattr(jlax, name)(x, axis, idt))
    i = np.array([[3, 1, 3], [-2, 5, 5]], np.int32)
    same(getattr(lax, name)(jnp.asarray(i), 1, jnp.int32), getattr(jlax, name)(i, 1, jjnp.int32))
    b = np.array([[False, True, True], [False, False, False]])
    same(getattr(lax, name)(jnp.asarray(b), 1, jnp.int32), getattr(jlax, name)(b, 1, jjnp.int32))
    jitted = webjax.jit(lambda v: getattr(lax, name)(v, 1, jnp.int32))
    same(jitted(jnp.asarray(x)), getattr(jlax, name)(x, 1, jjnp.int32))


def test_argmax_errors() -> None:
    x = jnp.ones((3, 2))
    with pytest.raises(TypeError, match="index_dtype"):
        lax.argmax(x, 0, jnp.float32)
    with pytest.raises(ValueError, match="Invalid axis"):
        lax.argmax(x, 2, jnp.int32)
    with pytest.raises(ValueError, match="Invalid axis"):
        lax.argmin(x, -1, jnp.int32)
    with pytest.raises(ValueError):
        lax.argmax(jnp.ones((0, 2)), 0, jnp.int32)


# ---- associative_scan ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 7, 8, 13])
def test_associative_scan_add(device: Any, n: int) -> None:
    x = f32(n, 3)
    for reverse in (False, True):
        for axis in (0, 1, -1):
            got = lax.associative_scan(lax.add, jnp.asarray(x), reverse=reverse, axis=axis)
            # (JAX itself rejects reverse=True with a negative axis; webjax normalizes it)
            want_axis = axis % 2 if reverse else axis
            same(got, jlax.associative_scan(jlax.add, x, reverse=reverse, axis=want_axis))


def test_associative_scan_pytree_and_jit(device: Any) -> None:
    # a linear recurrence h_t = a_t h_{t-1} + b_t as the classic (a, b) monoid
    a, b = f32(9) * 0.5, f32(9)

    def fn(ns: Any) -> Any:
        def op(x: Any, y: Any) -> Any:
            return (x[0] * y[0], y[0] * x[1] + y[1])

        return lambda u, v: ns.associative_scan(op, (u, v))

    want = fn(jlax)(a, b)
    got = fn(lax)(jnp.asarray(a), jnp.asarray(b))
    got_jit = webjax.jit(fn(lax))(jnp.asarray(a), jnp.asarray(b))
    for g, gj, w in zip(got, got_jit, want):
        close(g, w, 1e-6, 1e-6)
        close(gj, w, 1e-6, 1e-6)
    m = np.array([[1, 5, 2, 8, 3]], np.int32)
    same(lax.associative_scan(lax.max, jnp.asarray(m), axis=1), jlax.cummax(m, axis=1))
    with pytest.raises(ValueError, match="same first dimension"):
        lax.associative_scan(lax.add, (jnp.ones(3), jnp.ones(4)))


def test_associative_scan_grad() -> None:
    check_grads(lambda x: lax.associative_scan(lax.mul, x), (f32(6) * 0.5 + 1.0,))


# ---- reduce -------------------------------------------------------------------------------------
def test_reduce_monoids(device: Any) -> None:
    x = f32(3, 4)
    for comp, init in ((lax.add, 0.0), (lax.mul, 1.0), (lax.max, -np.inf), (lax.min, np.inf)):
        for dims in ((0,), (1,), (0, 1)):
            w = jlax.reduce(x, np.float32(init), getattr(jlax, comp.__name__), dims)
            close(lax.reduce(jnp.asarray(x), np.float32(init), comp, dims), w, 1e-6)
    # a non-identity init value is combined with the reduction
    close(
        lax.reduce(jnp.asarray(x), 10.0, lambda a, b: a + b, (1,)),
        jlax.reduce(x, 10.0, lambda a, b: a + b, (1,)),
        1e-6,
    )
    i = R.randint(0, 7, (3, 4)).astype(np.int32)
    for comp, init in ((lax.bitwise_and, -1), (lax.bitwise_or, 0), (lax.max, -(2**31))):
        jcomp = {"and": jlax.bitwise_and, "or": jlax.bitwise_or}.get(comp.__name__, jlax.max)
        same(
            lax.reduce(jnp.asarray(i), np.int32(init), comp, (0,)),
            jlax.reduce(i, np.int32(init), jcomp, (0,)),
        )
    # tuples of operands with per-operand monoids, jnp functions and operators
    got = lax.reduce(
        (jnp.asarray(x), jnp.asarray(x)),
        (0.0, -np.inf),
        lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])),
        (0,),
    )
    want = jlax.reduce(
        (x, x), (0.0, -np.inf), lambda a, b: (a[0] + b[0], jjnp.maximum(a[1], b[1])), (0,)
    )
    for g, w in zip(got, want):
        close(g, w, 1e-6)
    jitted = webjax.jit(lambda v: lax.reduce(v, 0.0, lax.add, (0,)))
    close(jitted(jnp.asarray(x)), jlax.reduce(x, 0.0, jlax.add, (0,)), 1e-6)


def test_reduce_unsupported_computation() -> None:
    with pytest.raises(NotImplementedError, match="monoid"):
        lax.reduce(jnp.ones(3), 0.0, lambda a, b: a * b + 1, (0,))
    with pytest.raises(NotImplementedError, match="monoid"):
        lax.reduce((jnp.ones(3), jnp.ones(3)), (0.0, 0.0), lambda a, b: (a[0] + b[1], a[1]), (0,))


# ---- slicing ------------------------------------------------------------------------------------
def test_in_dim_slicing(device: Any) -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    X = jnp.asarray(x)
    for start in (-3, 0, 2, 5, 7):
        same(lax.dynamic_slice_in_dim(X, start, 2, 1), jlax.dynamic_slice_in_dim(x, start, 2, 1))
        same(
            lax.dynamic_index_in_dim(X, start, 1, keepdims=False),
            jlax.dynamic_index_in_dim(x, start, 1, keepdims=False),
        )
        upd = np.full((4, 2), -1.0, np.float32)
        same(
            lax.dynamic_update_slice_in_dim(X, jnp.asarray(upd), start, 1),
            jlax.dynamic_update_slice_in_dim(x, upd, start, 1),
        )
        same(
            lax.dynamic_update_index_in_dim(X, jnp.zeros(6), start % 4, 0),
            jlax.dynamic_update_index_in_dim(x, np.zeros(6, np.float32), start % 4, 0),
        )
    same(lax.dynamic_slice(X, (-1, -3), (1, 2)), jlax.dynamic_slice(x, (-1, -3), (1, 2)))
    same(
        lax.dynamic_update_slice(X, jnp.zeros((1, 2)), (-1, -3)),
        jlax.dynamic_update_slice(x, np.zeros((1, 2), np.float32), (-1, -3)),
    )
    jitted = webjax.jit(lambda v, i: lax.dynamic_slice_in_dim(v, i, 3, 1))
    for i in (-2, 1, 4):
        same(jitted(X, i), jlax.dynamic_slice_in_dim(x, i, 3, 1))
    for args in ((1, 3), (-3, None), (None, -1), (0, 6, 2), (4, 4)):
        same(lax.slice_in_dim(X, *args, axis=1), jlax.slice_in_dim(x, *args, axis=1))
    with pytest.raises(TypeError):
        lax.slice_in_dim(X, 5, 1, axis=1)


def test_split_stack_unstack_collapse_tile(device: Any) -> None:
    x = f32(2, 7, 3)
    for g, w in zip(lax.split(jnp.asarray(x), (2, 0, 5), 1), jlax.split(x, (2, 0, 5), 1)):
        same(g, w)
    with pytest.raises(ValueError, match="Sum of sizes"):
        lax.split(jnp.ones(5), (2, 2))
    parts = [f32(2, 3) for _ in range(3)]
    for axis in (0, 1, 2, -1):
        same(lax.stack([jnp.asarray(p) for p in parts], axis), jlax.stack(parts, axis))
        for g, w in zip(lax.unstack(jnp.asarray(x), axis), jlax.unstack(x, axis)):
            same(g, w)
    for lo, hi in ((0, None), (1, None), (0, 2), (1, -1), (1, 3)):
        same(lax.collapse(jnp.asarray(x), lo, hi), jlax.collapse(x, lo, hi))
    same(lax.broadcast_to_rank(jnp.asarray(x[0]), 4), jlax.broadcast_to_rank(x[0], 4))
    same(lax.tile(jnp.asarray(x), (2, 1, 3)), jlax.tile(x, (2, 1, 3)))
    assert lax.broadcast_shapes((2, 1), (3,), ()) == jlax.broadcast_shapes((2, 1), (3,), ())


def test_elementwise_and_creation(device: Any) -> None:
    x = f32(5)
    same(lax.square(jnp.asarray(x)), jlax.square(x))
    same(lax.square(jnp.arange(4)), jlax.square(jjnp.arange(4)))
    same(lax.reciprocal(jnp.asarray(x)), jlax.reciprocal(x))
    i = jnp.ones((2, 3), jnp.int32)
    same(lax.full_like(i, 7), jlax.full_like(jjnp.ones((2, 3), jjnp.int32), 7))
    same(
        lax.full_like(i, 2.5, jnp.float32, (4,)),
        jlax.full_like(jjnp.ones((2, 3), jjnp.int32), 2.5, jjnp.float32, (4,)),
    )
    assert lax.full_like(jnp.float32(1), 3).dtype == jnp.float32
    same(lax.empty((2, 3), jnp.float32).shape and lax.full((2, 3), 0.0), np.zeros((2, 3), "f4"))
    same(lax.optimization_barrier((jnp.asarray(x), 1))[0], x)


def test_batch_matmul_and_precision(device: Any) -> None:
    a, b = f32(2, 3, 4), f32(2, 4, 5)
    # (absolute tolerances too: an output whose four products cancel has no relative one)
    close(
        lax.batch_matmul(jnp.asarray(a), jnp.asarray(b), lax.Precision.HIGHEST),
        jlax.batch_matmul(a, b, jlax.Precision.HIGHEST),
        1e-5,
        1e-6,
    )
    with pytest.raises(ValueError, match="at least 2D"):
        lax.batch_matmul(jnp.ones(3), jnp.ones(3))
    with pytest.raises(ValueError, match="same ndim"):
        lax.batch_matmul(jnp.ones((2, 3, 4)), jnp.ones((4, 5)))
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
    assert str(lax.Precision.HIGH) == "HIGH" and repr(lax.Precision.HIGH) == "Precision.HIGH"
    assert [p.value for p in lax.Precision] == [p.value for p in jlax.Precision]
    # accepted (and ignored) wherever JAX takes precision=
    for p in (lax.Precision.HIGHEST, "highest", (lax.Precision.HIGH, lax.Precision.HIGH), None):
        close(lax.dot(jnp.asarray(a[0]), jnp.asarray(b[0]), precision=p), a[0] @ b[0], 1e-5, 1e-6)
        close(
            lax.dot_general(
                jnp.asarray(a), jnp.asarray(b), (((2,), (1,)), ((0,), (0,))), precision=p
            ),
            np.einsum("bij,bjk->bik", a, b),
            1e-5,
            1e-6,
        )
        close(jnp.matmul(jnp.asarray(a), jnp.asarray(b), precision=p), a @ b, 1e-5, 1e-6)
    img, ker = f32(1, 2, 5, 5), f32(3, 2, 3, 3)
    want = jlax.conv(img, ker, (1, 1), "SAME")
    close(
        lax.conv(
            jnp.asarray(img), jnp.asarray(ker), (1, 1), "SAME", precision=lax.Precision.HIGHEST
        ),
        want,
        1e-5,
        1e-5,
    )
    close(
        lax.conv_general_dilated(
            jnp.asarray(img), jnp.asarray(ker), (1, 1), "SAME", precision="highest"
        ),
        want,
        1e-5,
        1e-5,
    )


@pytest.mark.parametrize(
    "dn,filt,strides,padding,dil",
    [
        (None, (2, 3), (1, 2), "SAME", None),
        (("NHWC", "OIHW", "NHWC"), (3, 2), (2, 1), "VALID", (1, 2)),
        (("NHWC", "HWIO", "NCHW"), (2, 2), (1, 1), ((1, 0), (0, 2)), None),
    ],
)
def test_conv_general_dilated_patches(
    device: Any, dn: Any, filt: Any, strides: Any, padding: Any, dil: Any
) -> None:
    x = f32(2, 3, 6, 5) if dn is None else f32(2, 6, 5, 3)
    got = lax.conv_general_dilated_patches(
        jnp.asarray(x), filt, strides, padding, rhs_dilation=dil, dimension_numbers=dn
    )
    want = jlax.conv_general_dilated_patches(
        x, filt, strides, padding, rhs_dilation=dil, dimension_numbers=dn
    )
    close(got, want, 0, 0)


# ---- reduce_precision ---------------------------------------------------------------------------
def test_reduce_precision(device: Any) -> None:
    z = np.array(
        [
            np.nan,
            -np.nan,
            1.0,
            -3.7,
            1e-39,
            -1e-39,
            1e30,
            -1e30,
            np.inf,
            -np.inf,
            65504,
            65520,
            1.00048828125,
            1.5,
            6e-5,
            6.1e-5,
            3e-8,
            -0.0,
            0.0,
            3.3e38,
        ],
        np.float32,
    )
    z = np.concatenate([z, f32(200) * 10.0 ** R.randint(-40, 38, 200)]).astype(np.float32)
    for e, m in ((5, 10), (8, 7), (5, 0), (2, 1), (8, 23), (4, 3), (1, 0), (11, 52), (6, 5)):
        g = np.asarray(lax.reduce_precision(jnp.asarray(z), e, m))
        w = np.asarray(jlax.reduce_precision(z, e, m))
        np.testing.assert_array_equal(g.view(np.uint32), w.view(np.uint32), err_msg=f"{e},{m}")
    h = np.array([1.3, 65504, 1e-7, np.nan, -2.5], np.float16)
    same(lax.reduce_precision(jnp.asarray(h), 4, 2), jlax.reduce_precision(h, 4, 2))
    with pytest.raises(TypeError):
        lax.reduce_precision(jnp.ones(2, jnp.int32), 5, 2)


# ---- scatters -----------------------------------------------------------------------------------
def test_scatter_sub_and_apply(device: Any) -> None:
    x = f32(5, 3)
    idx = np.array([[1], [3], [1]], np.int32)
    upd = f32(3, 3)
    dn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    jdn = jlax.ScatterDimensionNumbers((1,), (0,), (0,))
    close(
        lax.scatter_sub(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(upd), dn),
        jlax.scatter_sub(x, idx, upd, jdn),
        1e-6,
        1e-6,  # duplicate indices: the accumulation order (and rounding) may differ
    )
    got = lax.scatter_apply(
        jnp.asarray(x), jnp.asarray(idx), lambda v: v * 2 + 1, dn, update_shape=(3, 3)
    )
    want = jlax.scatter_apply(x, idx, lambda v: v * 2 + 1, jdn, update_shape=(3, 3))
    close(got, want, 1e-6)
    uidx = np.array([[0], [4]], np.int32)
    close(
        lax.scatter_apply(
            jnp.asarray(x), jnp.asarray(uidx), jnp.exp, dn, update_shape=(2, 3), unique_indices=True
        ),
        jlax.scatter_apply(x, uidx, jjnp.exp, jdn, update_shape=(2, 3), unique_indices=True),
        1e-6,
    )


# ---- primitive names ----------------------------------------------------------------------------
def test_primitive_names_match_jax() -> None:
    names = [n for n in dir(lax) if n.endswith("_p")]
    assert len(names) > 100
    for n in names:
        p = getattr(lax, n)
        assert hasattr(jlax, n), n
        assert p.name == getattr(jlax, n).name, (n, p.name, getattr(jlax, n).name)
    jaxpr = webjax.make_jaxpr(lambda x: lax.sin(x) * 2)(1.0)
    assert [e.primitive for e in jaxpr.jaxpr.eqns] == [lax.sin_p, lax.mul_p]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_nextafter_steps_in_the_narrow_format(device: Any, dtype: str) -> None:
    """lax.nextafter on 16-bit floats steps one ulp of that format (not of float32)."""
    import ml_dtypes

    npdt = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    x = np.array([1.0, 0.0, -2.0, 65504.0, np.inf, np.nan, -0.0, 3.0], npdt)
    y = np.array([2.0, 1.0, -3.0, np.inf, 0.0, 1.0, 1.0, 3.0], npdt)
    got = np.asarray(lax.nextafter(jnp.asarray(x), jnp.asarray(y))).astype(np.float32)
    bits = x.view(np.uint16).astype(np.int64)
    # the reference: one step of the bit pattern toward y (C semantics, y when x == y)
    want = []
    for xi, yi, b in zip(x.astype(np.float32), y.astype(np.float32), bits, strict=True):
        if np.isnan(xi) or np.isnan(yi):
            want.append(np.nan)
        elif xi == yi:
            want.append(yi)
        elif xi == 0:
            tiny = np.array([1], np.uint16).view(npdt).astype(np.float32)[0]
            want.append(tiny if yi > 0 else -tiny)
        else:
            step = 1 if (yi > xi) == (xi > 0) else -1
            want.append(np.array([b + step], np.uint16).view(npdt).astype(np.float32)[0])
    np.testing.assert_array_equal(got, np.array(want, np.float32))
