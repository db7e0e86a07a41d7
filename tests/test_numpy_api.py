"""Differential tests of the jax.numpy surface against real JAX (values, dtypes, weak types,
shapes) and NumPy, plus gradients compared with jax.grad and a few jit/vmap checks."""

from __future__ import annotations

import math

import pytest

import webjax
import webjax.numpy as jnp

np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")
rjnp = pytest.importorskip("jax.numpy")

R = np.random.RandomState(0)
F = R.randn(3, 4).astype(np.float32)
F3 = R.randn(2, 3, 4).astype(np.float32)
V = R.randn(5).astype(np.float32)
I = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
NANS = np.array([1.0, np.nan, -np.inf, np.inf, 0.0, -0.0, 2.5], np.float32)
B = np.array([[True, False, True], [False, False, True]])
SQ = R.randn(4, 4).astype(np.float32)


def _conv(x, mod):
    if isinstance(x, np.ndarray):
        return mod.asarray(x)
    if isinstance(x, list) and x and isinstance(x[0], np.ndarray):
        return [mod.asarray(a) for a in x]
    return x


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check(name, *args, rtol=1e-5, atol=1e-6, **kw):
    ours = getattr(jnp, name)(*[_conv(a, jnp) for a in args], **kw)
    ref = getattr(rjnp, name)(*[_conv(a, rjnp) for a in args], **kw)
    got, want = _leaves(ours), _leaves(ref)
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        g_np, w_np = np.asarray(g), np.asarray(w)
        assert g_np.shape == w_np.shape, (name, g_np.shape, w_np.shape)
        assert str(g.dtype) == str(w.dtype), (name, g.dtype, w.dtype)
        assert g.weak_type == w.weak_type, (name, "weak_type", g.weak_type, w.weak_type)
        if w_np.dtype.kind == "f":
            np.testing.assert_allclose(g_np, w_np, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g_np, w_np)


CASES = [
    # selection and clipping
    ("where", (F > 0, F, 0.0), {}),
    ("where", (B, 1, 2.5), {}),
    ("where", (np.array([0, 2, 0, 3]),), {}),
    ("where", (np.array([0, 2, 0, 3]),), {"size": 3, "fill_value": -1}),
    ("clip", (F,), {"min": -0.5, "max": 0.5}),
    ("clip", (I, 0), {}),
    ("clip", (I,), {"max": np.int32(3)}),
    # products
    ("matmul", (F, F.T), {}),
    ("matmul", (F3, V[:4]), {}),
    ("matmul", (V[:3], F), {}),
    ("matmul", (I, I.T), {}),
    ("dot", (F, F.T), {}),
    ("dot", (F3, F.T), {}),
    ("dot", (I, 2.0), {}),
    ("vdot", (F, F), {}),
    ("inner", (F, F), {}),
    ("outer", (V, V[:3]), {}),
    ("tensordot", (F3, F[:, :, None] * np.ones((1, 1, 2), np.float32)), {"axes": 2}),
    ("tensordot", (F3, F), {"axes": ((1, 2), (0, 1))}),
    ("einsum", ("ij,jk->ik", F, F.T), {}),
    ("einsum", ("ii", SQ), {}),
    ("einsum", ("ii->i", SQ), {}),
    ("einsum", ("...ij,jk", F3, F.T), {}),
    ("einsum", ("bij,bjk->bki", F3, np.swapaxes(F3, 1, 2)), {}),
    ("einsum", ("i,i,i", V, V, V), {}),
    ("einsum", ("ij->", I), {}),
    ("kron", (F[:2, :2], SQ[:2, :3]), {}),
    # shapes
    ("matrix_transpose", (F3,), {}),
    ("moveaxis", (F3, 0, -1), {}),
    ("moveaxis", (F3, (0, 1), (2, 0)), {}),
    ("flip", (F3,), {}),
    ("flip", (F3, (0, 2)), {}),
    ("fliplr", (F,), {}),
    ("flipud", (F,), {}),
    ("rot90", (F,), {"k": 3}),
    ("roll", (F, 2), {}),
    ("roll", (F, (1, -3)), {"axis": (0, 1)}),
    ("tile", (V[:3], (2, 2)), {}),
    ("tile", (F, 2), {}),
    ("repeat", (F, 2), {"axis": 1}),
    ("repeat", (I, np.array([1, 0, 2])), {"axis": 0}),
    ("repeat", (F, 2), {}),
    ("split", (F3, 2), {"axis": 2}),
    ("split", (V, [1, 3]), {}),
    ("array_split", (V, 3), {}),
    ("hstack", ([F, F],), {}),
    ("vstack", ([V, V],), {}),
    ("dstack", ([F, F],), {}),
    ("column_stack", ([V, V],), {}),
    ("atleast_2d", (V,), {}),
    ("atleast_3d", (F,), {}),
    ("broadcast_arrays", (V, F[:, :1, None]), {}),
    ("meshgrid", (V[:2], V[:3]), {}),
    ("meshgrid", (V[:2], V[:3], V[:4]), {"indexing": "ij"}),
    ("diff", (F,), {}),
    ("diff", (I,), {"n": 2, "axis": 0}),
    ("append", (V, V), {}),
    # padding
    ("pad", (F, 1), {}),
    ("pad", (I, ((1, 2), (0, 3))), {"constant_values": 7}),
    ("pad", (F, 2), {"mode": "edge"}),
    ("pad", (F, ((2, 3), (5, 1))), {"mode": "reflect"}),
    ("pad", (F, ((2, 3), (5, 1))), {"mode": "symmetric"}),
    ("pad", (F, ((2, 3), (5, 9))), {"mode": "wrap"}),
    ("pad", (F, 1), {"mode": "mean"}),
    # triangles and diagonals
    ("tril", (F,), {}),
    ("triu", (F3, 1), {}),
    ("diag", (V, -1), {}),
    ("diag", (F, 1), {}),
    ("diagonal", (F3, 1, 1, 2), {}),
    ("trace", (F,), {}),
    ("trace", (I,), {"offset": -1}),
    ("tri", (3, 4, 1), {}),
    # reductions
    ("var", (F,), {}),
    ("var", (I,), {"axis": 1, "ddof": 1, "keepdims": True}),
    ("std", (F,), {"axis": 0}),
    ("average", (F,), {"axis": 1, "weights": V[:4]}),
    ("average", (F,), {}),
    ("sum", (F,), {"where": F > 0, "initial": 1.0}),
    ("sum", (I,), {"axis": 0, "initial": 3}),
    ("prod", (F,), {"where": F > 0}),
    ("max", (F,), {"axis": 1, "initial": 0.5}),
    ("min", (F,), {"where": F > 0, "initial": 10.0}),
    ("mean", (F,), {"where": F > 0}),
    ("sum", (2.0,), {}),
    ("nansum", (NANS[:2],), {}),
    ("nanmean", (NANS[[0, 1, 4, 6]],), {}),
    ("nanmax", (NANS[[0, 1, 6]],), {}),
    ("nanmin", (np.array([np.nan, np.nan], np.float32),), {}),
    ("cumsum", (F,), {"axis": 1}),
    ("cumsum", (I,), {}),
    ("cumsum", (np.arange(5, dtype=np.int8),), {}),
    ("cumprod", (B,), {"axis": 1}),
    ("cumprod", (F[:, :3],), {"axis": 0}),
    ("cumulative_sum", (V,), {"include_initial": True}),
    ("nancumsum", (NANS[[0, 1, 4, 6]],), {}),
    ("argmax", (F,), {}),
    ("argmax", (F,), {"axis": 1, "keepdims": True}),
    ("argmin", (I,), {"axis": 0}),
    ("argmax", (NANS,), {}),
    ("argmin", (np.array([3, 1, 1, 2], np.int32),), {}),
    ("nanargmax", (NANS[[0, 1, 6]],), {}),
    ("count_nonzero", (I,), {"axis": 1}),
    ("ptp", (F,), {"axis": 0}),
    # elementwise
    ("logical_and", (B, True), {}),
    ("logical_or", (I, 0), {}),
    ("logical_xor", (B, B[::-1]), {}),
    ("isinf", (NANS,), {}),
    ("isnan", (NANS,), {}),
    ("isfinite", (NANS,), {}),
    ("isposinf", (NANS,), {}),
    ("isneginf", (NANS,), {}),
    ("signbit", (NANS[[0, 2, 4, 5]],), {}),
    ("nan_to_num", (NANS,), {}),
    ("nan_to_num", (NANS,), {"nan": 5.0, "posinf": 9.0}),
    ("isclose", (F, F + 1e-6), {}),
    ("isclose", (NANS, NANS), {"equal_nan": True}),
    ("allclose", (F, F + 1e-3), {}),
    ("array_equal", (I, I), {}),
    ("array_equal", (F, F[:2]), {}),
    ("sign", (NANS[[0, 2, 4]],), {}),
    ("heaviside", (NANS[[0, 2, 4, 5]], 0.5), {}),
    ("hypot", (F, 2.0), {}),
    ("hypot", (I, I), {}),
    ("exp2", (F,), {}),
    ("log2", (np.abs(F) + 0.1,), {}),
    ("log10", (np.abs(F) + 0.1,), {}),
    ("logaddexp", (F, F.T[:3, :4] if False else F[::-1]), {}),
    ("logaddexp", (NANS, NANS), {}),
    ("logaddexp2", (F, 1.0), {}),
    ("deg2rad", (F,), {}),
    ("rad2deg", (I,), {}),
    ("degrees", (F,), {}),
    ("radians", (F,), {}),
    ("sinc", (np.array([0.0, 0.5, -1.5, 2.0], np.float32),), {}),
    ("round", (np.array([0.5, 1.5, 2.5, -0.5, 1.2345], np.float32),), {}),
    ("round", (F,), {"decimals": 2}),
    ("around", (I,), {}),
    ("rint", (np.array([0.5, 1.5, -2.5], np.float32),), {}),
    ("trunc", (F * 3,), {}),
    ("fmod", (I, 3), {}),
    ("fmod", (F * 5, 1.5), {}),
    ("divmod", (I, 4), {}),
    ("copysign", (F, -1.0), {}),
    ("copysign", (V, NANS[[0, 2, 4, 5, 6]]), {}),
    ("float_power", (np.abs(I) + 1, 0.5), {}),
    ("right_shift", (I, 1), {}),
    ("right_shift", (np.array([200, 7], np.uint8), 2), {}),
    ("gcd", (np.array([12, -18, 0, 7], np.int32), np.array([8, 12, 5, 0], np.int32)), {}),
    ("lcm", (np.array([4, -6, 0, 7], np.int32), 6), {}),
    ("fmax", (NANS, 1.0), {}),
    ("fmin", (NANS, NANS[::-1]), {}),
    ("fabs", (I,), {}),
    ("real", (F,), {}),
    ("imag", (F,), {}),
    ("conj", (I,), {}),
    # gathers and nonzero
    ("take", (V, np.array([-1, 7, 2, -6])), {}),
    ("take", (I, np.array([[0, 2]])), {"axis": 1}),
    ("take", (np.arange(5, dtype=np.int32), np.array([-1, 7])), {}),
    ("take", (np.arange(5, dtype=np.uint8), np.array([9])), {}),
    ("take", (F, np.array([1, 9])), {"axis": 1, "mode": "clip"}),
    ("take", (F, np.array([1, 9])), {"axis": 1, "mode": "wrap"}),
    ("take_along_axis", (F, np.argsort(F, axis=1)), {"axis": 1}),
    ("take_along_axis", (F3, np.array([[[0], [3], [1]]])), {"axis": 2}),
    ("nonzero", (B,), {}),
    ("flatnonzero", (I,), {}),
    ("argwhere", (B,), {}),
    # creation and dtype helpers
    ("logspace", (0, 2, 5), {}),
    ("logspace", (0.0, 1.0, 4), {"base": 2.0, "endpoint": False}),
    ("astype", (I, "float32"), {}),
    ("array", ([jnp.float32(1.0), 2.0],), {}) if False else ("array", ([1, 2.5],), {}),
    ("array", (F,), {"ndmin": 4}),
    ("full_like", (I, 2.5), {}),
]


@pytest.mark.parametrize("name,args,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_jax(name, args, kw):
    check(name, *args, **kw)


def test_weak_type_promotion_rules():
    w = jnp.asarray(2.0)
    rw = rjnp.asarray(2.0)
    for name in ["sum", "max", "mean", "var", "cumsum", "argmax"]:
        assert getattr(jnp, name)(w).weak_type == getattr(rjnp, name)(rw).weak_type, name
    wv, rwv = jnp.full((3,), w), jax.lax.broadcast(rw, (3,))
    assert wv.weak_type and rwv.weak_type
    for fn in [
        lambda m, x: m.dot(x, x),
        lambda m, x: m.matmul(x, x),
        lambda m, x: m.where(True, x, 1),
        lambda m, x: m.clip(x, 1, 2),
        lambda m, x: m.roll(x, 1),
        lambda m, x: m.pad(x, 1),
        lambda m, x: m.tile(x, 2),
        lambda m, x: m.einsum("i,i", x, x),
        lambda m, x: m.round(x),
        lambda m, x: m.flip(x),
        lambda m, x: m.take(x, m.array([0])),
        lambda m, x: x[m.array([0, 2])],
        lambda m, x: m.sum(x),
        lambda m, x: m.tril(m.outer(x, x)),
        lambda m, x: m.diag(x),
        lambda m, x: m.take_along_axis(x, m.array([1, 0]), 0),
        lambda m, x: m.cumsum(x),
        lambda m, x: m.repeat(x, 2),
        lambda m, x: m.split(x, 3)[0],
        lambda m, x: m.hypot(x, 1.0),
        lambda m, x: m.fmax(x, 1.0),
        lambda m, x: m.nan_to_num(x),
        lambda m, x: m.sinc(x),
        lambda m, x: m.logaddexp(x, x),
        lambda m, x: m.pad(x, 2, mode="wrap"),
    ]:
        ours, ref = fn(jnp, wv), fn(rjnp, rwv)
        assert (ours.dtype, ours.weak_type) == (ref.dtype, ref.weak_type), ref


def test_scalar_constructors_and_info():
    x = jnp.float32(3)
    assert x.dtype == jnp.float32 and not x.weak_type and x.shape == ()
    assert jnp.int8(300 % 128).dtype == jnp.int8
    for name in ["float16", "bfloat16", "float32"]:
        ours, ref = jnp.finfo(name), rjnp.finfo(name)
        for attr in ["eps", "max", "min", "tiny", "smallest_normal", "epsneg"]:
            assert getattr(ours, attr) == float(getattr(ref, attr)), (name, attr)
        assert ours.bits == ref.bits and ours.dtype == ref.dtype
    for name in ["int8", "uint8", "int32", "uint32", "int16"]:
        ours, ref = jnp.iinfo(name), rjnp.iinfo(name)
        assert (ours.min, ours.max, ours.bits) == (int(ref.min), int(ref.max), ref.bits)
    assert jnp.result_type(jnp.int8, jnp.uint8) == rjnp.result_type(rjnp.int8, rjnp.uint8)
    assert jnp.result_type(jnp.ones(2, jnp.int8), 2.0) == rjnp.result_type(
        rjnp.ones(2, "int8"), 2.0
    )
    assert jnp.promote_types("int32", "float16") == rjnp.promote_types("int32", "float16")
    assert jnp.promote_types(jnp.uint8, jnp.int8) == rjnp.promote_types(rjnp.uint8, rjnp.int8)
    for a, b in [("int8", "int16"), ("int32", "float32"), ("uint8", "int8"), ("float32", "int32")]:
        assert jnp.can_cast(a, b) == rjnp.can_cast(a, b), (a, b)
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert jnp.issubdtype(jnp.int8, jnp.integer) and not jnp.issubdtype(jnp.int8, jnp.floating)
    assert jnp.issubdtype(jnp.uint8, jnp.unsignedinteger)
    assert jnp.issubdtype(jnp.ones(2).dtype, np.floating)
    assert jnp.size(jnp.ones((2, 3))) == 6 and jnp.shape(jnp.ones((2, 3))) == (2, 3)
    assert jnp.ndim(3.0) == 0 and jnp.size(jnp.ones((2, 3)), 1) == 3


def _as_index(m, idx):
    if isinstance(idx, list):
        return m.asarray(idx)
    return tuple(m.asarray(i) if isinstance(i, list) else i for i in idx)


def _as_index(m, idx):
    if isinstance(idx, list):
        return m.asarray(idx)
    return tuple(m.asarray(i) if isinstance(i, list) else i for i in idx)


def test_integer_array_indexing_matches_jax():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    ours, ref = jnp.asarray(x), rjnp.asarray(x)
    for idx in [
        [1, 0, 1],
        (slice(None), [2, 0]),
        (0, [1, 2], slice(1, 3)),
        ([0, 1], [1, 2], [3, 0]),
        ([0, 1], slice(None), [3, 0]),
        (Ellipsis, [[0], [3]]),
        (None, [1], None, slice(None), [0, 2]),
        (slice(None), [[2], [-1]], [1, -4]),
        ([-3, 5],),  # out of bounds clamps, as in JAX
    ]:
        got = ours[_as_index(jnp, idx)]
        np.testing.assert_array_equal(np.asarray(got), np.asarray(ref[_as_index(rjnp, idx)]))


def test_errors_match_jax():
    for fn, exc in [
        (lambda m: m.max(m.ones(3), where=m.ones(3) > 0), ValueError),
        (lambda m: m.max(m.ones((0,))), ValueError),
        (lambda m: m.matmul(m.ones(()), m.ones(3)), ValueError),
        (lambda m: m.matmul(m.ones((2, 3)), m.ones((2, 3))), TypeError),
        (lambda m: m.split(m.ones(5), 2), ValueError),
        (lambda m: m.where(m.ones(3) > 0, 1), TypeError),
        (lambda m: m.moveaxis(m.ones((2, 3)), (0, 1), 0), ValueError),
        (lambda m: m.argmax(m.ones((0,))), ValueError),
    ]:
        with pytest.raises(exc):
            fn(rjnp)
        with pytest.raises(exc):
            fn(jnp)
    assert jnp.array([3.0, 1.0, 2.0]).sort().tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(webjax._src.core.ConcretizationTypeError):
        webjax.jit(lambda x: jnp.nonzero(x))(jnp.ones(3))


GRAD_CASES = [
    ("matmul", lambda m, x: m.matmul(x, m.transpose(x)).sum(), F),
    ("einsum", lambda m, x: m.einsum("ij,kj,k->i", x, x, x[:, 0]).sum(), F),
    ("tensordot", lambda m, x: m.tensordot(x, x, ((0, 1), (0, 1))), F),
    ("var", lambda m, x: m.var(x, axis=0, ddof=1).sum(), F),
    ("std", lambda m, x: m.std(x), F),
    ("cumsum", lambda m, x: (m.cumsum(x, axis=1) ** 2).sum(), F),
    ("cumprod", lambda m, x: m.cumprod(x, axis=0).sum(), F),
    ("where", lambda m, x: m.where(x > 0, x**2, -x).sum(), F),
    ("clip", lambda m, x: m.clip(x, -0.5, 0.5).sum(), F),
    ("take", lambda m, x: (m.take(x, m.array([3, 0, 3]), axis=1) ** 2).sum(), F),
    ("take_along_axis", lambda m, x: m.take_along_axis(x, m.array([[1], [0], [2]]), 1).sum(), F),
    ("getitem", lambda m, x: (x[m.array([2, 0, 2])] * x[0]).sum(), F),
    ("pad", lambda m, x: (m.pad(x, 2, mode="reflect") ** 2).sum(), F),
    ("roll_tile", lambda m, x: (m.roll(m.tile(x, 2), 3, 1) * m.arange(8.0)).sum(), F),
    ("diag_trace", lambda m, x: m.trace(x) + m.diag(m.diagonal(x)).sum() + m.tril(x).sum(), SQ),
    ("logaddexp", lambda m, x: m.logaddexp(x, 0.3).sum(), F),
    ("hypot", lambda m, x: m.hypot(x, 2.0).sum(), F),
    ("sinc", lambda m, x: m.sinc(x).sum(), np.array([0.0, 0.3, -1.2], np.float32)),
    ("max_where", lambda m, x: m.max(x, axis=1, where=x < 1, initial=-5.0).sum(), F),
    ("nanmean", lambda m, x: m.nanmean(x), F),
    ("average", lambda m, x: m.average(x, axis=1, weights=m.arange(4.0) + 1).sum(), F),
    ("repeat", lambda m, x: (m.repeat(x, 2, axis=0) * m.arange(4.0)).sum(), F),
    ("split_stack", lambda m, x: (m.hstack(m.split(x, 2, axis=1)[::-1]) * m.arange(4.0)).sum(), F),
]


@pytest.mark.parametrize("name,fn,x", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grad_matches_jax(name, fn, x):
    ours = webjax.grad(lambda v: fn(jnp, v))(jnp.asarray(x))
    ref = jax.grad(lambda v: fn(rjnp, v))(rjnp.asarray(x))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-4, atol=1e-5)


def test_jit_matches_eager():
    def f(x):
        y = jnp.einsum("ij,kj->ik", x, x) @ x
        return jnp.cumsum(y, axis=0)[jnp.argmax(x, axis=1)] + jnp.var(x) - jnp.clip(x, 0, None)

    x = jnp.asarray(F)
    np.testing.assert_allclose(np.asarray(webjax.jit(f)(x)), np.asarray(f(x)), rtol=1e-5)
    idx = webjax.jit(lambda v: jnp.nonzero(v > 0, size=4, fill_value=-1))(x)
    ref = rjnp.nonzero(rjnp.asarray(F) > 0, size=4, fill_value=-1)
    for a, b in zip(idx, ref):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_vmap_matches_loop():
    fns = [
        lambda v: jnp.take(v, jnp.array([3, 0])),
        lambda v: jnp.roll(v, 1),
        lambda v: jnp.cumsum(v),
        lambda v: jnp.argmax(v),
        lambda v: jnp.outer(v, v),
        lambda v: jnp.where(v > 0, v, 0.0),
    ]
    x = jnp.asarray(F)
    for fn in fns:
        batched = np.asarray(webjax.vmap(fn)(x))
        looped = np.stack([np.asarray(fn(x[i])) for i in range(3)])
        np.testing.assert_allclose(batched, looped, rtol=1e-6)


def test_on_every_backend(device):
    x = jnp.asarray(F)
    np.testing.assert_allclose(np.asarray(x @ x.T), F @ F.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.cumsum(x, axis=1)), np.cumsum(F, 1), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(jnp.argmax(x, axis=0)), np.argmax(F, 0))
    np.testing.assert_allclose(np.asarray(jnp.var(x, axis=1)), np.var(F, 1), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(jnp.take(x, jnp.array([2, 0]), axis=1)), F[:, [2, 0]])
    np.testing.assert_array_equal(
        np.asarray(jnp.pad(x, 1, mode="reflect")), np.pad(F, 1, mode="reflect")
    )
    np.testing.assert_allclose(
        np.asarray(jnp.einsum("ij,kj->ik", x, x)), F @ F.T, rtol=1e-5, atol=1e-6
    )
    assert math.isnan(float(jnp.take(x, jnp.array([100]))[0]))
