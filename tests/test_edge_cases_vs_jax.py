"""Inputs at the edges, against real JAX: the cases the differential fuzzer (tests/fuzz/) found
webjax getting wrong, one line each: integer and bool inputs to float functions, out-of-range
indices and axes, 0-size operands, degenerate keyword values. Each runs on every device and
compares structure, dtype, weak type and values (or the exception type)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest

import webjax
import webjax.scipy.special
from jax_compare import assert_same, run

jax = pytest.importorskip("jax")
pytest.importorskip("jax.scipy.special")

I8 = np.array([10, -6, -1], np.int8)
U32 = np.array([[10], [9]], np.uint32)
B = np.array([True, False])
CLAMP_LO = np.float32([1.5, 5.2, 0.3, -3.0])
CLAMP_X = np.float32([0.2, 0.8, 0.5, -4.0])
CLAMP_HI = np.float32([-3.7, 5.2, 2.0, 1.0])
ERFCX_Z = np.complex64([1 + 1j, -2 + 0.5j, 0.5 - 3j, 3, 1e-38 + 1j, np.nan])
C64_ORDER = np.complex64([1 + 2j, -1 + 1j, -1j, 1j, -2 - 3j, 0j, 1.5, -1 - 0.5j, -0.0 - 3e38j])

CASES: dict[str, Any] = {
    # floor/ceil of integers and bools are the identity (dtype kept); rint gives the float
    "floor_int8": lambda jnp, lax: jnp.floor(I8),
    "ceil_int8": lambda jnp, lax: jnp.ceil(I8),
    "floor_uint32": lambda jnp, lax: jnp.floor(U32),
    "ceil_bool": lambda jnp, lax: jnp.ceil(B),
    "rint_python_int": lambda jnp, lax: jnp.rint(3),
    "round_bool_raises": lambda jnp, lax: jnp.round(B),
    # take's clip mode clamps the indices as given (negative ones take element 0)
    "take_clip_negative": lambda jnp, lax: jnp.take(
        np.array([[1], [65535], [65534]], np.uint16),
        np.array([[-1, 2, -3, 0, -2]], np.int32),
        axis=-2,
        mode="clip",
    ),
    "fmod_int_by_zero": lambda jnp, lax: jnp.fmod(jnp.asarray(I8), jnp.asarray(np.int8([0, 4, 0]))),
    "square_bool": lambda jnp, lax: jnp.square(B),
    "reciprocal_bool": lambda jnp, lax: jnp.reciprocal(B),
    "reciprocal_int8": lambda jnp, lax: jnp.reciprocal(I8),
    "lax_abs_unsigned_raises": lambda jnp, lax: lax.abs(jnp.asarray(U32)),
    "categorical_int_logits_raises": lambda jnp, lax: _lib(jnp).random.categorical(
        _lib(jnp).random.key(0), jnp.asarray(I8)
    ),
    "inv_empty_matrices": lambda jnp, lax: jnp.linalg.inv(np.zeros((1, 0, 0), np.float32)),
    "copysign_unsigned_negative_scalar": lambda jnp, lax: jnp.copysign(U32, -1),
    "diff_empty_axis_jit": lambda jnp, lax: _jit(jnp, lambda a: jnp.diff(a, axis=0))(
        np.zeros((0, 0), np.int32)
    ),
    "cumprod_0d_axis_raises": lambda jnp, lax: jnp.cumprod(np.float32(1), axis=0),
    "cumulative_sum_0d_raises": lambda jnp, lax: jnp.cumulative_sum(np.float32(2)),
    "expand_dims_repeated_after_normalizing": lambda jnp, lax: jnp.expand_dims(
        np.ones((2, 2)), (2, 1, -3)
    ),
    # no degrees of freedom left: NaN
    "var_ddof_past_n": lambda jnp, lax: jnp.var(np.float32([[1, 2, 3], [4, 5, 7]]), 1, ddof=3),
    "vmap_var_ddof": lambda jnp, lax: _vmap(jnp, lambda v: jnp.var(v, axis=(), ddof=2))(I8),
    "nanvar_ddof_past_n": lambda jnp, lax: jnp.nanvar(np.float32([[1, 2, 3]]), 0, ddof=1),
    # weak types and bools
    "logaddexp2_weak": lambda jnp, lax: jnp.logaddexp2(np.bool_(False), 2),
    "greater_int_python_float_weak": lambda jnp, lax: jnp.greater(jnp.asarray(I8), 0.5),
    "xlogy_bool_python_int_weak": lambda jnp, lax: _lib(jnp).scipy.special.xlogy(np.bool_(0), 2),
    "left_shift_bool": lambda jnp, lax: jnp.left_shift(B, True),
    "right_shift_bool": lambda jnp, lax: jnp.right_shift(B, B),
    "one_hot_bool_raises": lambda jnp, lax: _lib(jnp).nn.one_hot(B, 3),
    # the exception types JAX gives for shapes that do not broadcast
    "lcm_shapes": lambda jnp, lax: jnp.lcm(np.ones((2, 1), "uint8"), np.ones((3, 1), "uint8")),
    "copysign_shapes": lambda jnp, lax: jnp.copysign(np.ones((2, 1)), np.ones((3, 1))),
    "ldexp_shapes": lambda jnp, lax: jnp.ldexp(np.ones((2, 1)), np.ones((3, 1), "int32")),
    # lax reductions take non-negative, distinct, in-range axes, and numbers for sums/products
    "reduce_sum_negative_axis": lambda jnp, lax: lax.reduce_sum(jnp.ones((2, 3), "int8"), (-1,)),
    "reduce_max_axis_past_rank": lambda jnp, lax: lax.reduce_max(jnp.ones((2, 3)), (2,)),
    "reduce_sum_repeated_axis": lambda jnp, lax: lax.reduce_sum(jnp.ones((2, 3)), (0, 0)),
    "reduce_prod_bool": lambda jnp, lax: lax.reduce_prod(jnp.asarray(B), (0,)),
    "reduce_sum_bool": lambda jnp, lax: lax.reduce_sum(jnp.asarray(B), (0,)),
    "cummax_bool": lambda jnp, lax: lax.cummax(jnp.asarray(B), 0),
    # 0-size batches and operands: gathers whose batch or other dimensions are empty
    "vmap_inv_empty_batch": lambda jnp, lax: _vmap(jnp, jnp.linalg.inv)(np.zeros((1, 0, 2, 2))),
    "vmap_solve_empty_batch": lambda jnp, lax: _vmap(jnp, lambda a: jnp.linalg.solve(a, a))(
        np.zeros((0, 3, 3), np.float32)
    ),
    "median_empty_elsewhere": lambda jnp, lax: _jit(jnp, lambda a: jnp.median(a, axis=-2))(
        np.zeros((0, 1, 3), np.float32)
    ),
    "take_along_axis_empty": lambda jnp, lax: jnp.take_along_axis(
        np.zeros((2, 0, 3), np.float32), np.zeros((2, 0, 3), np.int32), axis=-1
    ),
    # lax takes NumPy arrays and scalars as operands (converted as jnp.asarray would, not weak)
    "lax_add_numpy_scalars": lambda jnp, lax: lax.add(np.float32(1), np.float32(2)),
    "lax_add_python_and_numpy": lambda jnp, lax: lax.add(1.0, np.float32(2)),
    "lax_sin_numpy_float64": lambda jnp, lax: lax.sin(np.ones(3, np.float64)),
    "lax_sin_list_raises": lambda jnp, lax: lax.sin([1.0]),
    "lax_dot_numpy": lambda jnp, lax: lax.dot(np.ones((2, 2), np.float32), np.eye(2, dtype="f4")),
    "lax_reduce_numpy": lambda jnp, lax: lax.reduce(np.ones(3, "f4"), np.float32(0), lax.add, (0,)),
    "lax_select_numpy": lambda jnp, lax: lax.select(B, np.ones(2, "f4"), np.zeros(2, "f4")),
    "lax_sort_numpy": lambda jnp, lax: lax.sort(np.array([3, 1, 2], np.int32)),
    "lax_conv_numpy": lambda jnp, lax: lax.conv(
        np.ones((1, 1, 4, 4), "f4"), np.ones((1, 1, 2, 2), "f4"), (1, 1), "VALID"
    ),
    "jit_lax_mul_numpy_constant": lambda jnp, lax: _jit(jnp, lambda x: lax.mul(x, np.arange(3.0)))(
        np.ones(3, "f4")
    ),
    "grad_lax_sin_numpy": lambda jnp, lax: _lib(jnp).grad(lambda x: lax.sin(x).sum())(
        np.ones(3, "f4")
    ),
    "vmap_lax_add_numpy": lambda jnp, lax: _vmap(jnp, lambda x: lax.add(x, np.ones(3, "f4")))(
        np.ones((2, 3), "f4")
    ),
    # activations of bools: where JAX's formula meets an integer literal, a bool becomes a weak int
    **{
        f"nn_{name}_bool": partial(lambda name, jnp, lax: getattr(_lib(jnp).nn, name)(B), name)
        for name in ("relu", "hard_tanh", "softplus", "soft_sign", "mish", "log_sigmoid")
        + ("softmax", "log_softmax", "sigmoid", "silu", "gelu", "relu6")
    },
    # constant shift amounts past the width (a compile error in WGSL unless masked)
    **{
        f"jit_{op}_{dt}_by_{k}": partial(
            lambda op, dt, k, jnp, lax: _jit(jnp, lambda x: getattr(jnp, op)(x, k))(
                np.array([3, 1, 7], dt)
            ),
            op,
            dt,
            k,
        )
        for op in ("left_shift", "right_shift")
        for dt, k in (("uint16", -1), ("int8", 100), ("uint32", 32), ("int32", -1))
    },
    "slogdet_complex_empty_batch": lambda jnp, lax: jnp.linalg.slogdet(
        np.zeros((2, 0, 0), np.complex64)
    ),
    # float floor division as Python's divmod: -1 // inf is -1, zeros keep the division's sign
    **{
        f"{op}_float_edges": partial(
            lambda op, jnp, lax: getattr(jnp, op)(
                np.float32([-1, 1, -1, 0, -0.0, 3, np.inf, 5, -7, -0.0]),
                np.float32([np.inf, -np.inf, -3.8, -2, 2, 0, 3, -0.0, 2, -3]),
            ),
            op,
        )
        for op in ("floor_divide", "divmod", "remainder")
    },
    "floor_divide_float16_by_inf": lambda jnp, lax: jnp.floor_divide(
        np.float16(-1), np.float16([np.inf, -3.8, 65504])
    ),
    "lax_round_negative_zero": lambda jnp, lax: lax.round(np.float32([-0.0, -0.25, 0.0, -2.5])),
    "transpose_short_axes_raises": lambda jnp, lax: jnp.transpose(np.zeros((2, 3, 4)), (1, 0)),
    "transpose_repeated_axes_raises": lambda jnp, lax: jnp.transpose(np.zeros((2, 3)), (1, 1)),
    "grad_ndtri_outside_unit_interval": lambda jnp, lax: _vmap(
        jnp, _lib(jnp).grad(_lib(jnp).scipy.special.ndtri)
    )(np.float32([0.0, 1.0, -0.5, 1.5, 0.3, np.nan])),
    # found by the Array API test suite (build.py array-api)
    "signbit_of_negative_nan": lambda jnp, lax: jnp.signbit(
        -np.float32([np.nan, -np.nan, 0.0, -0.0, np.inf])
    ),
    "copysign_from_negative_nan": lambda jnp, lax: jnp.copysign(
        np.float32(2), -np.float32([np.nan, -np.nan])
    ),
    "cumulative_sum_widens_small_ints": lambda jnp, lax: [
        jnp.cumulative_sum(np.array(v, dt)) for v, dt in ((B, bool), (I8, np.int8), (I8, np.uint8))
    ],
    "cumulative_prod_keeps_small_ints": lambda jnp, lax: jnp.cumulative_prod(np.uint8([2, 3])),
    "cumulative_sum_empty_include_initial": lambda jnp, lax: jnp.cumulative_sum(
        np.zeros(0, np.uint16), include_initial=True
    ),
    "empty_mask_of_empty_axis": lambda jnp, lax: jnp.asarray(np.zeros((0, 3), np.float32))[
        jnp.asarray(np.zeros(0, bool))
    ],
    "empty_index_of_empty_axis": lambda jnp, lax: jnp.asarray(np.zeros((2, 0), np.int32))[
        :, jnp.asarray(np.zeros((0,), np.int32))
    ],
    "take_from_empty_axis_raises": lambda jnp, lax: jnp.take(
        np.zeros(0, np.float32), np.int32([0])
    ),
    "tanh_complex_nonfinite_imaginary": lambda jnp, lax: jnp.isnan(
        jnp.tanh(np.complex64([30 + 1j * np.inf, 3e15 + 1j * np.nan, 3 + 1j * np.inf]))
    ),
    "asinh_complex_zero_signs": lambda jnp, lax: jnp.signbit(
        jnp.imag(jnp.asinh(np.complex64([0j, complex(-0.0, 0.0), complex(0.0, -0.0), -2 + 0j])))
    ),
    "expm1_complex_negative_zero": lambda jnp, lax: jnp.signbit(
        jnp.real(jnp.expm1(np.complex64([complex(-0.0, 0.0), 0j])))
    ),
    "atanh_complex_nan_infinite": lambda jnp, lax: jnp.imag(
        jnp.atanh(np.complex64([complex(np.nan, np.inf), complex(np.nan, -np.inf)]))
    ),
    "svdvals_past_the_square_root_of_max": lambda jnp, lax: jnp.linalg.svd(
        np.float32([[1e30, 2e29, 0], [3e29, 1e29, 5e28], [1e28, 2e29, 3e29]]), compute_uv=False
    ),
    "svd_of_huge_entries": lambda jnp, lax: jnp.abs(
        jnp.linalg.svd(np.float32([[3e25, -1e25], [1e25, 2e25]]))[0]
    ),
    "can_cast_64_bit_ints_to_float64": lambda jnp, lax: [
        jnp.can_cast(a, b) for a in (jnp.int64, jnp.uint64) for b in (jnp.float64, jnp.complex128)
    ],
    "nn_relu_python_bool": lambda jnp, lax: _lib(jnp).nn.relu(True),
    "nn_softplus_python_bool": lambda jnp, lax: _lib(jnp).nn.softplus(True),
    # complex logaddexp/logaddexp2: the imaginary part wrapped to [-pi, pi) (to [-pi, pi) / ln 2),
    # the doubled larger operand overflowing to NaN near the maximum; exp2 of a complex
    # infinity is NaN (a full complex product with ln 2)
    "logaddexp_complex_wraps_and_overflows": lambda jnp, lax: [
        f(np.complex64([10j, 2 - 7j, 3.4e38 - 1j, 1 + 2j]), np.complex64([10j, 1j, 3.4e38, 0.5]))
        for f in (jnp.logaddexp, jnp.logaddexp2)
    ],
    "exp2_complex_infinities": lambda jnp, lax: jnp.exp2(
        np.complex64([complex(-np.inf, -10), complex(np.inf, 1), complex(3, np.inf), 1 + 1j])
    ),
    # lax's binary ops broadcast size-1 dimensions of operands of one rank (also under vmap
    # and grad); other rank mismatches are JAX's TypeError
    "lax_binary_broadcasts_ones": lambda jnp, lax: [
        lax.add(np.float32([[1], [2], [3]]), np.float32([[1, 2, 3, 4]])),
        lax.lt(np.float32([6.3, -1.0, -2.0]), np.float32([1.7])),
        _vmap(jnp, lambda a, b: lax.max(a, b))(
            np.ones((2, 3, 1), np.uint32), np.ones((2, 1, 4), np.uint32)
        ),
        _lib(jnp).grad(lambda a, b: lax.mul(a, b).sum(), argnums=(0, 1))(
            np.float32([[1], [2]]), np.float32([[3, 4, 5]])
        ),
    ],
    "lax_binary_rank_mismatch_raises": lambda jnp, lax: lax.add(np.ones(3), np.ones((1, 1))),
    "fmod_bool_as_int": lambda jnp, lax: jnp.fmod(
        np.array([True, False, True]), np.array([True, True, False])
    ),
    "diff_n0_any_axis": lambda jnp, lax: jnp.diff(np.ones((2, 3), np.float32), n=0, axis=5),
    "matmul_of_empty_complex_operands": lambda jnp, lax: [
        jnp.matmul(np.zeros((2, 0), np.complex64), np.zeros((0,), np.complex64)),
        jnp.dot(np.zeros((0,), np.complex64), np.zeros((0,), np.int8)),
        _vmap(jnp, jnp.matmul)(
            np.zeros((3, 2, 0), np.complex64), np.zeros((3, 0, 4), np.complex64)
        ),
    ],
    # matrix norms of empty matrices: the largest of none is 0, the smallest an error
    "norm_of_empty_matrices": lambda jnp, lax: [
        jnp.linalg.norm(np.zeros(s, np.complex64 if s == (0, 0) else np.float32), ord=o)
        for s in ((0, 0), (0, 3), (3, 0))
        for o in (1, np.inf, 2, "nuc")
    ],
    "norm_min_of_empty_raises": lambda jnp, lax: jnp.linalg.norm(np.zeros((0, 0)), ord=-1),
    # weak types of functions JAX builds from comparisons, selects and constants: weak for
    # weak scalar operands only (a 0-d bool array with a Python int), strong for arrays
    "weak_types_of_logical_and_select_built_functions": lambda jnp, lax: [
        getattr(jnp, f)(a, b)
        for f in ("logical_and", "logical_xor", "hypot", "lcm", "gcd", "heaviside")
        for a, b in ((np.array(False), 2), (np.array([True, False]), 3), (2, 3))
    ],
    "diff_n0_axis_none_raises": lambda jnp, lax: jnp.diff(np.ones(3, np.float32), n=0, axis=None),
    "take_fill_complex_is_nan_plus_0j": lambda jnp, lax: jnp.take(
        np.complex64([[1 + 1j, 2], [3, 4]]), np.int32([5, 0]), axis=0, mode="fill"
    ),
    # clamp's derivative by a bound: where that bound is the result (lo only while lo < hi);
    # by a scalar bound of an array operand, JAX's select shape error
    "clamp_grad_lower_bound_above_upper": lambda jnp, lax: [
        _lib(jnp).grad(lambda *a: lax.clamp(*a).sum(), argnums=k)(CLAMP_LO, CLAMP_X, CLAMP_HI)
        for k in range(3)
    ],
    "clamp_grad_scalar_bound_raises": lambda jnp, lax: _lib(jnp).grad(
        lambda lo: lax.clamp(lo, CLAMP_X, CLAMP_HI).sum()
    )(np.float32(0.1)),
    # a Python scalar to a lax op is checked at its own dtype (bool, int32) first
    "lax_add_python_bool_raises": lambda jnp, lax: lax.add(np.int8([1, 2]), True),
    "lax_atan2_python_int_raises": lambda jnp, lax: lax.atan2(np.float16([1.5]), 0),
    "lax_shift_left_python_bool_raises": lambda jnp, lax: lax.shift_left(np.uint8([3]), True),
    # XLA shifts an unsigned type's bits arithmetically (the top bit is copied in)
    "shift_right_arithmetic_unsigned": lambda jnp, lax: [
        lax.shift_right_arithmetic(np.uint8([0, 255, 1, 255, 128]), np.uint8([10, 8, 1, 3, 200])),
        lax.shift_right_arithmetic(np.uint32(4294967295), np.uint32(3)),
        _jit(jnp, lax.shift_right_arithmetic)(np.uint16([65535, 7]), np.uint16([1, 1])),
    ],
    # integer softmax shifts by the max in the input's type (wrapping), then exp promotes
    "softmax_of_ints_wraps": lambda jnp, lax: [
        _lib(jnp).nn.softmax(np.int8([[-3, 5], [-128, 127]]), axis=0),
        _lib(jnp).nn.log_softmax(np.uint8([7, 254, 255])),
        _lib(jnp).nn.log_softmax(np.int16([-1, -4, 32766]), axis=None),
    ],
    "softmax_axis_checked_before_dtype": lambda jnp, lax: _lib(jnp).nn.softmax(
        np.bool_(False), axis=0
    ),
    "log_softmax_axis_checked_before_dtype": lambda jnp, lax: _lib(jnp).nn.log_softmax(
        np.zeros((2, 0), bool), axis=2
    ),
    "heaviside_nan": lambda jnp, lax: jnp.heaviside(
        np.float32([np.nan, 0, -1, 2]), np.float32(0.5)
    ),
    # lcm multiplies |x1| by |x2| / gcd: a product past the range wraps, with no |.| after
    "lcm_wraps_int8": lambda jnp, lax: jnp.lcm(np.int8([127, -4, 3]), np.int8(126)),
    "fmod_weak_int": lambda jnp, lax: [jnp.fmod(np.bool_(False), 2), jnp.fmod(np.array([1]), 2)],
    "divmod_int_by_python_float_weak": lambda jnp, lax: jnp.divmod(np.int32([-7, 2, 5]), 3.0),
    "flip_repeated_axis_raises": lambda jnp, lax: jnp.flip(np.ones((2, 2)), (0, -2)),
    "grad_nextafter_raises": lambda jnp, lax: _lib(jnp).grad(lambda x: jnp.nextafter(x, 2.0))(
        np.float32(1.0)
    ),
    "grad_spacing_float16_raises": lambda jnp, lax: _lib(jnp).grad(jnp.spacing)(np.float16(1.0)),
    # complex activations stay complex
    "complex_soft_sign_mish_sparse_plus": lambda jnp, lax: [
        getattr(_lib(jnp).nn, f)(np.complex64([3 - 2j, -0.5 + 1j]))
        for f in ("soft_sign", "mish", "sparse_plus", "softplus")
    ],
    # column-major reshapes (Optax's microbatching), and JAX's errors for the other orders
    "reshape_order_f": lambda jnp, lax: [
        jnp.reshape(jnp.arange(24).reshape(2, 3, 4), (4, -1), order="F"),
        jnp.arange(6.0).reshape(3, 2, order="F", out_sharding=None),
        jnp.ravel(jnp.arange(6).reshape(2, 3), order="F"),
        _jit(jnp, lambda x: x.reshape(-1, *x.shape[2:], order="F"))(np.ones((2, 3, 4))),
    ],
    # repeat to a static total_repeat_length: traced repeats, cut short, padded with the last
    # source element, negative block starts indexed from the end
    "repeat_total_length": lambda jnp, lax: (
        [
            _jit(jnp, lambda a, r, n=n: jnp.repeat(a, r, axis=1, total_repeat_length=n))(
                np.arange(6.0).reshape(2, 3), np.int32(r)
            )
            for r, n in (([1, 2, 0], 5), ([1, 2, 0], 2), ([1, 2, 0], 7), ([-1, 2, 2], 3), (2, 6))
        ]
        + [
            jnp.repeat(np.arange(6.0).reshape(2, 3), np.int32([1, 2, 0]), 1, total_repeat_length=7),
            _jit(jnp, lambda a, r: jnp.repeat(a, r, total_repeat_length=8))(
                np.arange(6.0), np.int32([1, 2, 0, 1, 2, 1])
            ),
            _vmap(jnp, lambda a, r: jnp.repeat(a, r, total_repeat_length=4))(
                np.arange(6.0).reshape(2, 3), np.int32([[1, 2, 1], [0, 0, 4]])
            ),
            _lib(jnp).grad(
                lambda a: (jnp.repeat(a, np.int32([1, 2, 0]), 1, total_repeat_length=3) ** 2).sum()
            )(np.arange(6.0).reshape(2, 3)),
        ]
    ),
    "repeat_traced_without_length_raises": lambda jnp, lax: _jit(
        jnp, lambda a, r: jnp.repeat(a, r, axis=1)
    )(np.ones((2, 3)), np.int32(2)),
    "repeat_negative_raises": lambda jnp, lax: jnp.repeat(np.ones((2, 3)), -1, axis=0),
    "repeat_float_raises": lambda jnp, lax: jnp.repeat(np.ones((2, 3)), 2.0, axis=0),
    "repeat_wrong_length_raises": lambda jnp, lax: jnp.repeat(np.ones((2, 3)), np.int32([1, 2]), 1),
    "reshape_order_a_raises": lambda jnp, lax: jnp.arange(6).reshape(3, 2, order="A"),
    "reshape_order_k_raises": lambda jnp, lax: jnp.reshape(jnp.arange(6), (3, 2), order="K"),
    "ravel_order_k_raises": lambda jnp, lax: jnp.ravel(jnp.arange(6), order="K"),
    "kl_div_complex_raises": lambda jnp, lax: _lib(jnp).scipy.special.kl_div(
        np.complex64([1j]), np.complex64([1])
    ),
    # zeta's special values as XLA: poles at integer q <= 0 are +inf only for even x, x = 1 is
    # +inf whatever q is, q = +inf or NaN and x = +inf are NaN, and so is huge x (0 * inf)
    "zeta_special_values": lambda jnp, lax: _lib(jnp).scipy.special.zeta(
        np.float32([0, -2, 1, 1.5, 3, np.nan, 2, np.inf, 1e10, 1e10, -1, 2]),
        np.float32([0, -1, np.nan, 0, -2, 0, np.inf, 2, 1, 1e10, -np.inf, -np.inf]),
    ),
    # gammainc(0, x) is NaN for 0 < x < 1 (the series' first term 0 / 0) and 1 from x = 1 on
    "gammainc_a_zero": lambda jnp, lax: [
        getattr(_lib(jnp).scipy.special, f)(np.float32(0), np.float32([0.5, 1e-30, 1, 2, 0]))
        for f in ("gammainc", "gammaincc")
    ],
    # det and slogdet of 16-bit floats: closed forms (det up to 3x3, slogdet up to 2x2) work,
    # LU (slogdet of 3x3, det of 4x4) raises NotImplementedError
    "det_slogdet_float16": lambda jnp, lax: (
        [
            f(np.float16([[[2, 1], [1, 3]], [[1, 2], [2, 1]]])[..., :n, :n])
            for f in (jnp.linalg.det, jnp.linalg.slogdet)
            for n in (1, 2)
        ]
        + [_lib(jnp).grad(lambda a: jnp.linalg.slogdet(a)[1])(np.float16([[2, 1], [1, 3]]))]
    ),
    "slogdet_bfloat16_3x3_raises": lambda jnp, lax: jnp.linalg.slogdet(
        np.eye(3, dtype=jnp.bfloat16)
    ),
    "det_float16_4x4_raises": lambda jnp, lax: jnp.linalg.det(np.eye(4, dtype=np.float16)),
    # gradients of sort and top_k of 0-size operands are empty (the sorted axis or another one)
    "grad_sort_top_k_0_size": lambda jnp, lax: (
        [
            _lib(jnp).grad(lambda a, ax=ax: jnp.sort(a, axis=ax).sum())(np.zeros(s, np.float32))
            for s in ((0,), (2, 0), (0, 3))
            for ax in (0, -1)
        ]
        + [
            _lib(jnp).grad(lambda a, k=k: lax.top_k(a, k)[0].sum())(np.zeros(s, np.float32))
            for s, k in (((0,), 0), ((2, 0), 0), ((0, 3), 1))
        ]
        + [_lib(jnp).grad(lambda a: jnp.median(a, axis=0).sum())(np.zeros((2, 0), np.float32))]
    ),
    # cumlogsumexp: complex in, complex out (the principal log); integers raise OverflowError
    # (no -inf to start from) unless empty
    "cumlogsumexp_complex": lambda jnp, lax: (
        [lax.cumlogsumexp(np.complex64([1 + 1j, 2, 3j, -1 - 2j]), reverse=r) for r in (False, True)]
        + [_lib(jnp).grad(lambda a: lax.cumlogsumexp(a).sum().real)(np.complex64([1, 2j]))]
    ),
    # complex infinities as XLA folds each window (lowest index first): -inf real parts give
    # NaN only where they start the fold, +inf ones poison the rest
    "cumlogsumexp_complex_infinities": lambda jnp, lax: [
        lax.cumlogsumexp(np.complex64(v), reverse=r)
        for v in ([-np.inf, 1j, 2], [1j, -np.inf, 2 - 1j], [np.inf, 1 + 1j], [1j, np.inf * 1j])
        for r in (False, True)
    ],
    # complex gamma and loggamma (Lanczos, reflection / shift to Re z >= 1/2 as JAX): the
    # principal branch, nan+nanj at poles and NaN parts; reverse mode through loggamma's
    # shift loop raises as on JAX
    "gamma_loggamma_complex": lambda jnp, lax: (
        [
            f(np.complex64([1 + 1j, -0.5 + 2j, 3, 0.5 - 0.5j, -2.5 + 0.1j, 0, -2, np.nan, 1e-3j]))
            for f in (_lib(jnp).scipy.special.gamma, _lib(jnp).scipy.special.loggamma)
        ]
        + [
            _lib(jnp).scipy.special.gamma(2 + 1j),
            _jit(jnp, _lib(jnp).scipy.special.loggamma)(-7.5j),
        ]
    ),
    "loggamma_complex_grad_raises": lambda jnp, lax: _lib(jnp).grad(
        lambda x: jnp.real(_lib(jnp).scipy.special.loggamma(x * (1 + 0.5j)))
    )(np.float32(1.5)),
    "cumlogsumexp_int_raises": lambda jnp, lax: lax.cumlogsumexp(np.int32([1, 2])),
    # lax's cumulative ops take no negative axes (jnp's do), nor one past the rank
    "lax_cumsum_negative_axis_raises": lambda jnp, lax: lax.cumsum(np.ones((2, 3)), axis=-1),
    "lax_cummax_negative_axis_raises": lambda jnp, lax: lax.cummax(np.ones((2, 3)), axis=-2),
    "lax_cumprod_axis_past_rank_raises": lambda jnp, lax: lax.cumprod(np.ones((2, 3)), axis=2),
    "cumlogsumexp_empty": lambda jnp, lax: [
        lax.cumlogsumexp(np.zeros((0,), np.int32)),
        lax.cumlogsumexp(np.zeros((2, 0), np.complex64), axis=1),
        lax.cumlogsumexp(np.zeros((0, 2), np.float32)),
    ],
    # median is the midpoint of the middle pair, so a lone inf stays inf
    "median_lone_inf": lambda jnp, lax: [
        jnp.median(np.float32([[np.inf, 1], [np.inf, -np.inf], [1, 2]]), axis=()),
        jnp.median(np.float32([[np.inf, 1]]), axis=0),
        jnp.nanmedian(np.float32([[np.inf, np.nan], [np.nan, np.nan]]), axis=1),
        jnp.median(np.int32([1, 2, 3, 4])),
    ],
    # found by the H100 fuzz campaign: vmap of lax binary ops whose examples differ in shape
    # (a batched operand of lower rank gains trailing dimensions, as JAX's batching does)
    "vmap_lax_add_rank_mismatch": lambda jnp, lax: _lib(jnp).vmap(lax.add, in_axes=(0, None))(
        np.arange(2, dtype=np.int32).reshape(1, 2), np.arange(2, dtype=np.int32).reshape(1, 2)
    ),
    "vmap_lax_mul_size_one": lambda jnp, lax: _lib(jnp).vmap(lax.mul, in_axes=(0, None))(
        np.arange(4, dtype=np.uint8).reshape(1, 2, 2), np.arange(8, dtype=np.uint8).reshape(2, 2, 2)
    ),
    "vmap_lax_min_empty": lambda jnp, lax: _lib(jnp).vmap(lax.min, in_axes=(None, 0))(
        np.zeros((0, 0, 0), np.int32), np.zeros((1, 0), np.int32)
    ),
    "grad_cumprod_reverse_empty": lambda jnp, lax: _lib(jnp).grad(
        lambda x: lax.cumprod(x, axis=0, reverse=True).sum()
    )(np.zeros((0, 5, 0, 1), np.float32)),
    "cholesky_empty_complex": lambda jnp, lax: jnp.linalg.cholesky(np.zeros((0, 0), np.complex64)),
    "vmap_repeat_of_scalars": lambda jnp, lax: _vmap(jnp, lambda x: jnp.repeat(x, 2, axis=0))(
        np.float32([0.0, -1.5, 5.25])
    ),
    "selu_complex_jit": lambda jnp, lax: _jit(jnp, _lib(jnp).nn.selu)(
        np.complex64([-0.16 - 4.7j, 1.75 + 3.09j, 1j, -1j])
    ),
    "median_0d_keepdims": lambda jnp, lax: [
        jnp.median(np.float32(0.7), axis=(), keepdims=True),
        jnp.nanmedian(np.float32(0.7), keepdims=True),
        jnp.quantile(np.float32(0.7), 0.5, axis=(), keepdims=False),
    ],
    "round_float16_decimals": lambda jnp, lax: jnp.round(np.float16([65504.0, 1.2345, -3.5]), 3),
    "logaddexp2_int_array_python_float": lambda jnp, lax: [
        jnp.logaddexp2(np.int16([1, 2]), 3.0),
        _vmap(jnp, lambda v: jnp.logaddexp2(v, 3.0))(np.int16([1, 2])),
    ],
    "cumlogsumexp_int_axis_of_zero_length": lambda jnp, lax: lax.cumlogsumexp(
        np.ones((0, 3), np.int16), axis=0
    ),
    "cumlogsumexp_int_empty_elsewhere_raises": lambda jnp, lax: lax.cumlogsumexp(
        np.ones((3, 0), np.int16), axis=0
    ),
    "lax_pow_python_float_exponent_raises": lambda jnp, lax: lax.pow(np.ones(3, "f2"), 3.0),
    "lax_pow_python_int_exponent": lambda jnp, lax: lax.pow(np.ones(3, "f2"), 3),
    # 1^w is 1 for infinite and NaN w too (a bool True promoted to complex, from the fuzzer)
    "complex_pow_of_one": lambda jnp, lax: jnp.power(
        np.array([True]), np.complex64([0.5 - np.inf * 1j, np.nan, np.nan * 1j, 2 + np.inf * 1j])
    ),
    # the complex max/min of one element is that element (NaN - 0i too); mean over one element
    # is the element (XLA folds x / 1: -1 + inf i stays); from the fuzzer
    # (parts apart: NumPy's comparison takes NaN + NaN i for NaN + 0i)
    "complex_max_min_of_nan": lambda jnp, lax: [
        f(z)
        for z in (
            jnp.max(np.complex64([np.nan - 0j])),
            _jit(jnp, jnp.ptp)(np.complex64(complex(np.nan, -0.0))),
            jnp.min(np.complex64([[complex(np.nan, 2)], [complex(np.nan, -1)], [1j]]), axis=1),
        )
        for f in (jnp.real, jnp.imag)
    ],
    "complex_mean_of_one": lambda jnp, lax: [
        _jit(jnp, lambda x: jnp.mean(x, axis=()))(np.complex64([[-1 + np.inf * 1j], [2 + 1j]])),
        jnp.mean(np.complex64([[np.inf + 1j, 1 - np.inf * 1j]]), axis=0),
    ],
    # float16 logistic and gumbel draws are XLA's folded max(tiny, u) (1 - tiny rounds to 1)
    "random_logistic_gumbel_float16": lambda jnp, lax: [
        _lib(jnp).random.logistic(_lib(jnp).random.PRNGKey(73053423), (3, 4, 3), "float16"),
        _lib(jnp).random.gumbel(_lib(jnp).random.PRNGKey(5), (64,), "float16"),
    ],
    # x + (-x) is NaN for infinite x: no shader compiler may fold it to 0 (std's gradient at
    # one element is inf * 0 + -(inf * 0))
    "add_negation_of_itself": lambda jnp, lax: [
        _jit(jnp, lambda x: x + (-x))(np.float32([np.inf, 1.0, np.nan, -np.inf])),
        _lib(jnp).grad(jnp.std)(np.float32(-0.99814987)),
        _jit(jnp, _lib(jnp).grad(jnp.std))(np.float32([2.5])),
    ],
    "standardize_complex_raises": lambda jnp, lax: _lib(jnp).nn.standardize(np.complex64([1j, 2])),
    # digamma's derivative near its poles (sin's argument reduced exactly; 16-bit in float32)
    "grad_digamma_near_poles": lambda jnp, lax: [
        _vmap(jnp, _lib(jnp).grad(lax.digamma))(np.float32([-3.0027583, -0.5, -7.25, 2.5])),
        _vmap(jnp, _lib(jnp).grad(lax.digamma))(np.float16([-3.008, -1.99, 0.25])),
    ],
    # take of empty indices along an empty axis gives the array itself, as JAX's
    "take_empty_axis_empty_indices": lambda jnp, lax: [
        jnp.take(np.zeros((0, 1), np.uint32), np.zeros((0, 1), np.int32), axis=0),
        jnp.take(np.zeros((0, 0), np.uint32), np.zeros((0, 1), np.int32), axis=0),
    ],
    "hypot_inf_with_nan": lambda jnp, lax: jnp.hypot(
        np.float32([-np.inf, np.nan, 3, np.inf]), np.float32([np.nan, np.inf, 4, 1])
    ),
    # top_k orders floats as XLA does: NaN first, 0.0 before -0.0, a negative NaN last
    "top_k_total_order": lambda jnp, lax: [
        lax.top_k(np.float32([0.0, -0.0, np.nan, -np.nan, 1.0, -np.inf, 0.0]), 7),
        lax.top_k(np.float16([-0.0, 0.0, -np.nan, np.inf] * 40), 9),  # (the bitonic network)
    ],
    # JAX checks the dtype before the shapes (or the axes)
    "hypot_complex_shapes": lambda jnp, lax: jnp.hypot(np.ones(3, "c8"), np.ones(4, "c8")),
    "heaviside_complex_shapes": lambda jnp, lax: jnp.heaviside(
        np.ones((0, 3), "c8"), np.ones((0, 4), "u2")
    ),
    "copysign_complex_shapes": lambda jnp, lax: jnp.copysign(
        np.ones((2, 3)), np.ones((2, 2), "c8")
    ),
    "reduce_or_float_bad_axes": lambda jnp, lax: lax.reduce_or(np.ones((1, 1), "f4"), (0, 2)),
    # zeta's derivatives are the Euler-Maclaurin expression's, unmasked: finite for x < 1
    "grad_zeta_x_below_one": lambda jnp, lax: jnp.round(
        _lib(jnp).vmap(_lib(jnp).grad(_lib(jnp).scipy.special.zeta))(
            np.float32([0.25, 0.5, 1.5, 3.0]), np.float32([2.0, 3.5, 2.0, 1.5])
        ),
        3,
    ),
    # true_divide takes integers to the float as they are: a Python -1 never wraps in uint8
    "divide_uint8_by_negative_python_int": lambda jnp, lax: jnp.divide(np.uint8(6), -1),
    # round has no derivative: floor_divide by zero (x / 0 = inf) has a zero gradient, not NaN
    "floor_divide_by_zero_grad": lambda jnp, lax: _lib(jnp).grad(
        lambda x: jnp.floor_divide(x, 0).sum()
    )(np.float16([5.29, 1.2, 0.0])),
    "round_jvp_is_zero": lambda jnp, lax: _lib(jnp).jvp(
        lax.round, (np.float32([0.0, -2.5, 7.5]),), (np.float32([1.0, 1.0, 1.0]),)
    ),
    # nn's comparisons order complex numbers as jnp does (real part, then imaginary part)
    "leaky_relu_complex": lambda jnp, lax: _lib(jnp).nn.leaky_relu(C64_ORDER, 0.01),
    "hard_tanh_complex": lambda jnp, lax: _lib(jnp).nn.hard_tanh(C64_ORDER),
    "sparse_sigmoid_complex_raises": lambda jnp, lax: _lib(jnp).nn.sparse_sigmoid(C64_ORDER),
    # entr / rel_entr reject complex inputs (ValueError) before any lax comparison; rel_entr
    # checks the dtype after broadcasting operands of different ranks, before same-rank shapes
    "entr_complex_raises": lambda jnp, lax: _lib(jnp).scipy.special.entr(np.complex64([1 + 1j])),
    "rel_entr_complex_raises": lambda jnp, lax: _lib(jnp).scipy.special.rel_entr(
        np.complex64([1e-38 + 1j]), np.float32(1e-38)
    ),
    "rel_entr_complex_before_shapes": lambda jnp, lax: _lib(jnp).scipy.special.rel_entr(
        np.ones(2, "c8"), np.ones(3, "f4")
    ),
    "rel_entr_ranks_before_complex": lambda jnp, lax: _lib(jnp).scipy.special.rel_entr(
        np.ones(2, "c8"), np.ones((3, 4), "f4")
    ),
    # erfcx of complex z is the Faddeeva function w(iz), with w's closed-form derivative
    "erfcx_complex": lambda jnp, lax: [
        _lib(jnp).scipy.special.erfcx(ERFCX_Z),
        _jit(jnp, _lib(jnp).scipy.special.erfcx)(1 + 1j),
        _lib(jnp).grad(lambda z: jnp.real(_lib(jnp).scipy.special.erfcx(z)).sum())(ERFCX_Z),
        _lib(jnp).jvp(_lib(jnp).scipy.special.wofz, (ERFCX_Z,), (np.ones(6, "c8"),)),
    ],
}


def _lib(jnp: Any) -> Any:
    return webjax if jnp is webjax.numpy else jax


def _vmap(jnp: Any, f: Any) -> Any:
    return _lib(jnp).vmap(f)


def _jit(jnp: Any, f: Any) -> Any:
    return _lib(jnp).jit(f)


@pytest.mark.parametrize("name", sorted(CASES))
def test_edge_case_as_jax(name: str, device: Any) -> None:
    fn = CASES[name]
    want, _ = run(fn, (jax.numpy, jax.lax))
    got, _ = run(fn, (webjax.numpy, webjax.lax))
    if isinstance(want, Exception):
        assert isinstance(got, Exception), (name, "JAX raised", want, "webjax gave", got)
        assert type(got).__name__ == type(want).__name__, (name, got, want)
        return
    if isinstance(got, Exception):
        raise got
    assert_same(got, want, rtol=1e-6, atol=1e-6)
