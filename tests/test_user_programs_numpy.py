"""jax.numpy and jax.lax as real user programs use them, differentially tested against real JAX:
values, dtypes, weak types, shapes, warnings and exception types, on every backend.

Each case is a function of the modules (jnp, lax, jax) run once with webjax and once with JAX;
the results (arrays, or nested tuples/lists of them, or Python values) must agree."""

from __future__ import annotations

import re

import numpy as np
import pytest

import jax_compare
import webjax
import webjax.numpy as wjnp
from webjax import lax as wlax

jax = pytest.importorskip("jax")
rjnp = pytest.importorskip("jax.numpy")
rlax = pytest.importorskip("jax.lax")

pytestmark = pytest.mark.filterwarnings("ignore:Explicitly requested dtype")

WJ = (wjnp, wlax, webjax)
JX = (rjnp, rlax, jax)

SUITE = jax_compare.Cases(WJ, JX, rtol=2e-5, atol=2e-6, warnings_too=True)
case = SUITE.case


# ---- quantiles ---------------------------------------------------------------------------------
Q8 = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], np.float32)


@case
def percentile_int_q_array_axis_tuple(jnp, lax, jx):
    x = jnp.asarray(Q8.reshape(2, 4))
    return jnp.percentile(x, jnp.array([25, 75]), axis=(0, 1)), jnp.percentile(x, 40, axis=1)


@case
def quantile_methods(jnp, lax, jx):
    x = jnp.asarray(Q8)
    q = jnp.array([0.0, 0.2, 0.5, 0.9, 1.0])
    ms = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]
    return [jnp.quantile(x, q, method=m) for m in ms]


@case
def quantile_nearest_ties_round_down(jnp, lax, jx):
    x = jnp.arange(8.0)
    return jnp.quantile(x, jnp.array([0.5, 1.5 / 7, 2.5 / 7]), method="nearest")


@case
def median_propagates_nan(jnp, lax, jx):
    x = jnp.array([[3.0, 1.0, 4.0, np.nan], [5.0, 9.0, 2.0, 6.0]])
    return jnp.median(x, axis=1), jnp.quantile(x, 0.5), jnp.percentile(x, 50, axis=0)


@case
def quantile_weights_inverted_cdf(jnp, lax, jx):
    x = jnp.asarray(Q8.reshape(2, 4))
    w = jnp.array([1.0, 2.0, 0.0, 3.0])
    return (
        jnp.quantile(x, 0.5, axis=1, weights=w, method="inverted_cdf"),
        jnp.percentile(x, jnp.array([10.0, 90.0]), axis=1, weights=w, method="inverted_cdf"),
        jnp.nanquantile(x, 0.3, weights=x, method="inverted_cdf"),
    )


@case
def quantile_weights_need_inverted_cdf(jnp, lax, jx):
    return jnp.quantile(jnp.asarray(Q8), 0.5, weights=jnp.asarray(Q8))


@case
def quantile_int_input_keepdims(jnp, lax, jx):
    x = jnp.arange(24).reshape(2, 3, 4)
    return jnp.quantile(x, 0.25, axis=(0, 2), keepdims=True), jnp.median(x, axis=-1)


# ---- integer arithmetic ------------------------------------------------------------------------
@case
def power_integer_array_exponents(jnp, lax, jx):
    a = jnp.array([2, -2, 0, 1, -1, 3])
    b = jnp.array([3, 2, 0, 5, 3, 4])
    return (
        jnp.power(a, b),
        a**b,
        jnp.power(4, 3),
        2 ** jnp.arange(5),
        jnp.power(jnp.array([3], jnp.uint8), jnp.array([5, 6], jnp.uint8)),
        jnp.power(True, jnp.array([True, False])),
        jnp.array([2, 3]) ** jnp.array(2),
    )


@case
def power_integer_negative_array_exponents(jnp, lax, jx):
    return jnp.power(jnp.array([2, -2, 0, 1, -1]), jnp.array([-1, -2, -1, -3, -3]))


@case
def power_integer_negative_static_exponent(jnp, lax, jx):
    return jnp.power(jnp.array([2, 3]), -1)


@case
def power_float_base_integer_exponent_weak_type(jnp, lax, jx):
    return (
        2.0 ** jnp.arange(3),
        jnp.array(2.0) ** jnp.array([1, 2], jnp.uint8),
        jnp.array([2, 3], jnp.int8) ** 2.0,
        jnp.arange(3.0) ** jnp.arange(3),
    )


@case
def power_integer_under_jit(jnp, lax, jx):
    return jx.jit(lambda x, y: x**y)(jnp.arange(5), jnp.arange(5))


@case
def integer_division_by_zero(jnp, lax, jx):
    a = jnp.array([5, 0, -3])
    return a // 0, a % 0, jnp.remainder(a, jnp.array([0, 2, 0])), jnp.divmod(a, 0)


@case
def unsigned_division_by_zero(jnp, lax, jx):
    a = jnp.array([5, 0, 3], jnp.uint8)
    return a // 0, a % 0


@case
def bool_floor_divide_and_remainder(jnp, lax, jx):
    a = jnp.array([True, False])
    return a % True, a // True, jnp.remainder(5, 3), jnp.floor_divide(jnp.int8(-5), 3)


# ---- indexing ----------------------------------------------------------------------------------
@case
def static_index_out_of_bounds_clamps(jnp, lax, jx):
    x = jnp.arange(10.0)
    return x[12], x[-12], x.at[12].get(), x[jnp.array([3, -1, 20, -20])]


@case
def at_get_fill_with_static_and_traced_ints(jnp, lax, jx):
    x = jnp.arange(12.0).reshape(3, 4)
    f = jx.jit(lambda x, i: x.at[i].get(mode="fill", fill_value=-5.0))
    return (
        jnp.arange(10.0).at[12].get(mode="fill", fill_value=-1),
        jnp.arange(10).at[jnp.array([3, 11])].get(mode="fill"),
        x.at[5, 1].get(mode="fill", fill_value=0),
        x.at[1:, 7].get(mode="fill"),
        f(x, 1),
        f(x, 3),
        f(x, -4),
    )


@case
def at_set_static_out_of_bounds_modes(jnp, lax, jx):
    x = jnp.arange(10.0)
    return x.at[12].set(1.0), x.at[-11].add(1.0), x.at[12].set(1.0, mode="clip")


@case
def at_set_traced_index_drops_out_of_bounds(jnp, lax, jx):
    x = jnp.arange(12.0).reshape(3, 4)
    f = jx.jit(lambda x, i: x.at[i].set(-1.0))
    g = jx.jit(lambda x, i: x.at[i].set(-1.0, mode="clip"))
    h = jx.jit(lambda x, i, j: x.at[i, j].add(100.0))
    k = jx.jit(lambda x, i: x.at[i, 1:3].set(jnp.array([7.0, 8.0])))
    return f(x, 1), f(x, 3), f(x, -4), g(x, 3), g(x, -4), h(x, 1, 7), h(x, -1, -1), k(x, 3)


@case
def bool_masks_mixed_with_other_indices(jnp, lax, jx):
    x = jnp.arange(24.0).reshape(2, 3, 4)
    m = jnp.array([True, False, True])
    return (
        x[:, m],
        x[1, m, 1:],
        x[..., jnp.array([True, False, True, True])],
        x[jnp.array([True, False]), ..., 0],
        x[x > 15],
        x[0][jnp.array([[True, False, True, False]] * 3)],
        x[0][jnp.array([True, False, True]), jnp.array([0, 3])],
        x[np.array([False, False])],
    )


@case
def bool_mask_updates(jnp, lax, jx):
    x = jnp.arange(12.0).reshape(3, 4)
    return (
        x.at[x > 5].set(0.0),
        x.at[jnp.array([True, False, True])].add(1.0),
        x.at[:, jnp.array([True, False, False, True])].mul(2.0),
    )


@case
def bool_mask_shape_mismatch(jnp, lax, jx):
    return jnp.arange(12.0).reshape(3, 4)[jnp.array([True, False])]


@case
def bare_list_index_is_rejected(jnp, lax, jx):
    return jnp.arange(12.0).reshape(3, 4)[[0, 1]]


@case
def at_set_float_into_int_warns(jnp, lax, jx):
    return jnp.arange(5).at[1].set(2.7), jnp.arange(5).at[jnp.array([1, 2])].set(jnp.ones(2))


@case
def at_set_in_range_python_int_does_not_warn(jnp, lax, jx):
    x = jnp.arange(10, dtype=jnp.uint8)
    return x.at[2].set(255), jnp.arange(3.0).at[1].set(True), jnp.arange(3.0).at[2].set(3)


@case
def at_divide_power_apply(jnp, lax, jx):
    x = jnp.arange(5.0)
    i = jnp.array([1, 1, 2])
    return (
        x.at[i].multiply(2.0),
        x.at[i].divide(2.0),
        x.at[1:3].power(2),
        jnp.arange(5).at[2].divide(2),
        jnp.arange(5).at[1:].power(2),
        x.at[1:3].apply(jnp.exp),
        jnp.arange(5).at[2].apply(lambda v: v * 3),
    )


@case
def at_strided_and_ellipsis_updates(jnp, lax, jx):
    x = jnp.ones((4, 4))
    y = jnp.zeros((2, 3, 4))
    return (
        x.at[::2, 1::2].set(0.0),
        x.at[::-1, 0].add(jnp.arange(4.0)),
        y.at[..., 0].set(1.0),
        y.at[0, ..., 1:].add(jnp.ones(3)),
    )


@case
def traced_bool_mask_error(jnp, lax, jx):
    return jx.jit(lambda x: x[x > 3])(jnp.arange(6.0))


# ---- lax ---------------------------------------------------------------------------------------
@case
def reduce_window_any_computation(jnp, lax, jx):
    x = jnp.arange(16.0).reshape(4, 4)
    return (
        lax.reduce_window(x, 1.0, lax.mul, (2, 1), (1, 1), ((1, 0), (0, 0))),
        lax.reduce_window(x, 0.0, lambda a, b: a + 2 * b, (3, 3), (1, 2), "SAME"),
        lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), "VALID", (1, 2), (2, 1)),
        lax.reduce_window(x > 5, False, lax.bitwise_or, (2, 2), (1, 1), "SAME"),
        jx.jit(lambda x: lax.reduce_window(x, 1.0, lax.mul, (3, 3), (1, 1), "SAME"))(x / 8),
    )


@case
def reduce_window_several_operands(jnp, lax, jx):
    x = jnp.arange(16.0).reshape(4, 4)
    i = lax.broadcasted_iota(jnp.int32, (4, 4), 1)

    def argmax_pair(a, b):
        return lax.max(a[0], b[0]), lax.select(a[0] >= b[0], a[1], b[1])

    return lax.reduce_window((x, i), (-jnp.inf, 0), argmax_pair, (1, 2), (1, 2), "VALID")


@case
def index_in_dim_keeps_dims_by_default(jnp, lax, jx):
    x = jnp.arange(6.0).reshape(2, 3)
    return lax.index_in_dim(x, 1, axis=1), lax.index_in_dim(x, -1), lax.index_in_dim(x, 0, 0, False)


@case
def top_k_list_and_axis(jnp, lax, jx):
    x = jnp.array([[3.0, 1.0, 4.0, 1.0], [5.0, 9.0, 2.0, 6.0]])
    return lax.top_k(x, 2), lax.top_k(x, 1, axis=0)


@case
def bitcast_convert_type_between_widths(jnp, lax, jx):
    x = jnp.array([1.0, -2.0, 0.5])
    b = jnp.array([[0, 0, 128, 63], [0, 0, 0, 192]], jnp.uint8)
    return (
        lax.bitcast_convert_type(x, jnp.uint8),
        lax.bitcast_convert_type(x, jnp.int16),
        lax.bitcast_convert_type(b, jnp.float32),
        lax.bitcast_convert_type(b.reshape(4, 2), jnp.int16),
        lax.bitcast_convert_type(jnp.array([-1, 5], jnp.int32), jnp.int8),
        jx.jit(lambda x: lax.bitcast_convert_type(x, jnp.uint8))(x),
    )


# ---- jnp functions -----------------------------------------------------------------------------
@case
def einsum_sublist_form(jnp, lax, jx):
    a = jnp.arange(6.0).reshape(2, 3)
    return (
        jnp.einsum(a, [0, 1], a, [0, 1], [1]),
        jnp.einsum(a, [0, 1], a, [2, 1], [0, 2]),
        jnp.einsum(a, [Ellipsis, 1], [Ellipsis]),
        jnp.einsum(a, [1, 0]),
    )


@case
def pad_odd_reflection_and_median(jnp, lax, jx):
    x = jnp.arange(5.0)
    y = jnp.array([[1.0, 4.0, 2.0], [3.0, 0.0, 5.0]])
    return (
        jnp.pad(x, 2, mode="reflect", reflect_type="odd"),
        jnp.pad(x, 11, mode="symmetric", reflect_type="odd"),
        jnp.pad(y, ((1, 2), (2, 1)), mode="reflect", reflect_type="odd"),
        jnp.pad(y, 1, mode="median"),
        jnp.pad(y, ((1, 2),), mode="median", stat_length=2),
        jnp.pad(jnp.array([1, 4, 2, 8]), 2, mode="median"),
    )


# ---- dtype requests and Python ints ------------------------------------------------------------
@case
def x64_requests_warn_and_truncate(jnp, lax, jx):
    x = jnp.ones(2)
    return (
        jnp.array([1, 2], dtype=jnp.float64),
        jnp.asarray([1, 2], dtype="int64"),
        jnp.zeros(3, jnp.int64),
        jnp.arange(3, dtype=jnp.float64),
        jnp.linspace(0, 1, 3, dtype=jnp.float64),
        jnp.eye(2, dtype=jnp.float64),
        x.astype(jnp.float64),
        jnp.sum(x, dtype=jnp.float64),
        jnp.mean(x, dtype=jnp.float64),
        jnp.cumsum(x, dtype=jnp.float64),
        jnp.zeros_like(x, dtype=jnp.float64),
        jnp.float64(1),
        jnp.int64(1),
    )


@case
def python_types_do_not_warn(jnp, lax, jx):
    x = jnp.ones(2)
    return (
        jnp.array([1, 2], dtype=float),
        jnp.ones(2, dtype=complex),
        x.astype(int),
        jnp.zeros(2, bool),
    )


@case
def python_int_out_of_range_default(jnp, lax, jx):
    return jnp.array(2**40)


@case
def python_int_list_out_of_range(jnp, lax, jx):
    return jnp.array([1, 2**31])


@case
def python_int_out_of_range_explicit_dtype(jnp, lax, jx):
    return jnp.uint8(300)


@case
def python_int_operand_out_of_range(jnp, lax, jx):
    return jnp.arange(3) + 2**31


@case
def python_ints_in_range(jnp, lax, jx):
    return (
        jnp.array([1, 2**31], dtype=jnp.uint32),
        jnp.array(2**31 - 1),
        jnp.array(-(2**31)),
        jnp.arange(3, dtype=jnp.uint8) + 300,
        jnp.uint32(2**32 - 1),
    )


def test_dtypes_interoperate_with_numpy():
    """NumPy takes webjax dtypes and scalar types wherever it takes a dtype, as JAX's."""
    x = wjnp.ones(3)
    assert np.dtype(x.dtype) == np.float32
    assert np.zeros(2, x.dtype).dtype == np.float32
    assert np.zeros(2, dtype=wjnp.int8).dtype == np.int8
    assert np.dtype(wjnp.uint16) == np.uint16
    assert np.issubdtype(x.dtype, np.floating)
    assert np.finfo(x.dtype).eps == np.finfo(np.float32).eps
    assert np.asarray(x, dtype=x.dtype).dtype == np.float32
    assert wjnp.float32.dtype == rjnp.float32.dtype
    assert wjnp.finfo(rjnp.float32.dtype).eps == rjnp.finfo(rjnp.float32.dtype).eps
    assert wjnp.iinfo(np.dtype("uint8")).max == 255
    assert wjnp.ones(2, wjnp.float16.dtype).dtype == wjnp.float16
    # a dtype's scalar type is NumPy's class, as JAX's (np.iscomplexobj reads it)
    assert x.dtype.type is rjnp.ones(3).dtype.type is np.float32
    assert not np.iscomplexobj(x) and np.iscomplexobj(wjnp.ones(2, wjnp.complex64))
    assert issubclass(wjnp.zeros(2, wjnp.int8).dtype.type, np.signedinteger)
    assert issubclass(webjax.errors.NonConcreteBooleanIndexError, IndexError)


# ---- the differential test (keep last: it parametrizes over every case above) ---------------
@pytest.mark.parametrize("name", list(SUITE.fns))
def test_matches_jax(device, name):
    SUITE.check(name)


TAKE_X = np.random.RandomState(5).randn(3, 7, 5).astype(np.float32)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
@pytest.mark.parametrize("mode", [None, "clip", "fill", "promise_in_bounds", "wrap"])
def test_take_along_axis_modes_as_jax(device, axis, mode):
    # a gather along the axis (not a one-hot), with JAX's out-of-bounds modes and errors
    shape = list(TAKE_X.shape) if axis is not None else [TAKE_X.size]
    shape[axis if axis is not None else 0] = 4
    idx = np.random.RandomState(6).randint(-9, 9, size=shape)
    if mode == "promise_in_bounds":
        idx = np.abs(idx) % 3
    try:
        want = rjnp.take_along_axis(rjnp.asarray(TAKE_X), idx, axis=axis, mode=mode)
    except ValueError as e:
        with pytest.raises(ValueError, match=str(e).replace('"', ".")):
            wjnp.take_along_axis(wjnp.asarray(TAKE_X), idx, axis=axis, mode=mode)
        return
    got = wjnp.take_along_axis(wjnp.asarray(TAKE_X), idx, axis=axis, mode=mode)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_take_along_axis_of_a_long_argsort(device):
    # top-k by argsort + take_along_axis on 20k elements: gradients flow to the picked entries
    x = np.random.RandomState(7).randn(20000).astype(np.float32)
    f = webjax.jit(lambda x: wjnp.take_along_axis(x, wjnp.argsort(-x), axis=0)[:3].sum())
    np.testing.assert_allclose(float(f(x)), np.sort(x)[-3:].sum(), rtol=1e-5)
    g = np.asarray(webjax.grad(f)(wjnp.asarray(x)))
    assert g.sum() == 3 and set(np.flatnonzero(g)) == set(np.argsort(-x)[:3])


@pytest.mark.parametrize(
    "name", ["add", "subtract", "multiply", "maximum", "equal", "power", "arctan2", "remainder"]
)
def test_incompatible_broadcast_raises_jax_type_error(name):
    # JAX names the lax primitive whose shape check failed, in a TypeError
    with pytest.raises(TypeError) as want:
        getattr(rjnp, name)(rjnp.ones(3), rjnp.ones(4))
    with pytest.raises(TypeError) as got:
        getattr(wjnp, name)(wjnp.ones(3), wjnp.ones(4))
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("shapes", [((3,), (4,)), ((3,), (2, 3)), ((2, 1), (2, 3)), ((), (5,))])
def test_array_equiv_as_jax(shapes):
    a, b = np.ones(shapes[0], np.float32), np.ones(shapes[1], np.float32)
    try:
        want = bool(rjnp.array_equiv(a, b))
    except TypeError as e:  # JAX's equal raises for shapes that do not broadcast
        with pytest.raises(TypeError, match=re.escape(str(e).splitlines()[0])):
            wjnp.array_equiv(a, b)
        return
    assert bool(wjnp.array_equiv(a, b)) == want


def test_numpy_view_of_bfloat16_is_ml_dtypes_bfloat16(device):
    # np.asarray of a bfloat16 array is ml_dtypes' bfloat16 (bit for bit JAX's), not float32
    vals = [1.5, -2.25, 3.1416, 1e30, -0.0, float("nan"), 7.992]
    got = np.asarray(wjnp.asarray(vals, wjnp.bfloat16))
    want = np.asarray(rjnp.asarray(vals, rjnp.bfloat16))
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    assert np.asarray(wjnp.ones((2, 0), wjnp.bfloat16)).dtype == want.dtype
