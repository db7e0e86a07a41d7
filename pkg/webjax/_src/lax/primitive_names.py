"""JAX's public `*_p` names (`jax.lax.add_p`, ...): the primitives of lax.py, which keeps most
of them only in its `prims` catalogue, and the composite primitives for those of JAX's that webjax
builds from others (argmax_p, square_p, igamma_p, reduce_p, ...). The primitives of the other lax
modules (gather_p, conv_general_dilated_p, ...) are public under their own modules' names.
"""

from __future__ import annotations

from typing import Any

from .. import core
from . import lax, reductions, slicing, sorting, special, windowed

_P = lax.prims
abs_p = _P["abs"]
acos_p = _P["acos"]
acosh_p = _P["acosh"]
add_p = _P["add"]
and_p = _P["and"]
asin_p = _P["asin"]
asinh_p = _P["asinh"]
atan2_p = _P["atan2"]
atan_p = _P["atan"]
atanh_p = _P["atanh"]
bitcast_convert_type_p = _P["bitcast_convert_type"]
broadcast_in_dim_p = _P["broadcast_in_dim"]
cbrt_p = _P["cbrt"]
ceil_p = _P["ceil"]
clamp_p = _P["clamp"]
clz_p = _P["clz"]
concatenate_p = _P["concatenate"]
convert_element_type_p = _P["convert_element_type"]
cos_p = _P["cos"]
cosh_p = _P["cosh"]
digamma_p = _P["digamma"]
div_p = _P["div"]
dot_general_p = _P["dot_general"]
dynamic_slice_p = _P["dynamic_slice"]
dynamic_update_slice_p = _P["dynamic_update_slice"]
eq_p = _P["eq"]
erf_inv_p = _P["erf_inv"]
erf_p = _P["erf"]
erfc_p = _P["erfc"]
exp2_p = _P["exp2"]
exp_p = _P["exp"]
expm1_p = _P["expm1"]
floor_p = _P["floor"]
ge_p = _P["ge"]
gt_p = _P["gt"]
integer_pow_p = _P["integer_pow"]
iota_p = _P["iota"]
is_finite_p = _P["is_finite"]
le_p = _P["le"]
lgamma_p = _P["lgamma"]
log1p_p = _P["log1p"]
log_p = _P["log"]
logistic_p = _P["logistic"]
lt_p = _P["lt"]
max_p = _P["max"]
min_p = _P["min"]
mul_p = _P["mul"]
ne_p = _P["ne"]
neg_p = _P["neg"]
nextafter_p = _P["nextafter"]
not_p = _P["not"]
or_p = _P["or"]
pad_p = _P["pad"]
population_count_p = _P["population_count"]
pow_p = _P["pow"]
reduce_and_p = _P["reduce_and"]
reduce_max_p = _P["reduce_max"]
reduce_min_p = _P["reduce_min"]
reduce_or_p = _P["reduce_or"]
reduce_prod_p = _P["reduce_prod"]
reduce_sum_p = _P["reduce_sum"]
reduce_xor_p = _P["reduce_xor"]
rem_p = _P["rem"]
reshape_p = _P["reshape"]
rev_p = _P["rev"]
round_p = _P["round"]
rsqrt_p = _P["rsqrt"]
select_n_p = _P["select_n"]
shift_left_p = _P["shift_left"]
shift_right_arithmetic_p = _P["shift_right_arithmetic"]
shift_right_logical_p = _P["shift_right_logical"]
sign_p = _P["sign"]
sin_p = _P["sin"]
sinh_p = _P["sinh"]
slice_p = _P["slice"]
sqrt_p = _P["sqrt"]
squeeze_p = _P["squeeze"]
stop_gradient_p = _P["stop_gradient"]
sub_p = _P["sub"]
tan_p = _P["tan"]
tanh_p = _P["tanh"]
transpose_p = _P["transpose"]
xor_p = _P["xor"]


# ---- JAX's primitives that webjax builds from others --------------------------------------------
# Each binds with the operands and params of JAX's primitive of that name and applies webjax's
# function for it (core.CompositePrimitive): `lax.argmax_p.bind(x, axes=(1,), index_dtype=...)`
# works under every transformation, as the function does.
def _composite(name: str, decompose: Any, multiple_results: bool = False) -> core.Primitive:
    return core.CompositePrimitive(name, decompose, multiple_results)


def _reduce(*args: Any, computation: Any, jaxpr: Any = None, dimensions: Any) -> Any:
    # JAX's params: `computation` takes the flat operand scalars, then the flat accumulators
    n = len(args) // 2

    def one(out: Any) -> Any:
        return out[0] if isinstance(out, (list, tuple)) else out

    if n == 1:
        return [
            reductions.reduce(args[0], args[1], lambda a, b: one(computation(a, b)), dimensions)
        ]
    out = reductions.reduce(
        tuple(args[:n]), tuple(args[n:]), lambda a, b: tuple(computation(*a, *b)), dimensions
    )
    return list(out)


def _reduce_window(*args: Any, jaxpr: Any, consts: Any = (), **params: Any) -> Any:
    n = len(args) // 2
    closed = jaxpr if isinstance(jaxpr, core.ClosedJaxpr) else core.ClosedJaxpr(jaxpr, consts)
    fun = core.jaxpr_as_fun(closed)

    def computation(x: Any, y: Any) -> Any:
        out = fun(*x, *y) if n > 1 else fun(x, y)
        return tuple(out) if n > 1 else out[0]

    out = windowed.reduce_window(
        list(args[:n]) if n > 1 else args[0],
        list(args[n:]) if n > 1 else args[n],
        computation,
        params["window_dimensions"],
        params.get("window_strides"),
        params.get("padding", "VALID"),
        params.get("base_dilation"),
        params.get("window_dilation"),
    )
    return list(out) if n > 1 else [out]


def _approx_top_k(
    x: Any,
    *,
    k: int,
    reduction_dimension: int = -1,
    is_max_k: bool = True,
    aggregate_to_topk: bool = True,
    **tuning: Any,  # recall_target, reduction_input_size_override: exact here, as on CPU
) -> Any:
    fn = sorting.approx_max_k if is_max_k else sorting.approx_min_k
    return fn(x, k, reduction_dimension, aggregate_to_topk=aggregate_to_topk)


def _scatter_sub(
    operand: Any,
    indices: Any,
    updates: Any,
    *,
    dimension_numbers: Any,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
    **update_jaxpr: Any,  # the subtraction, implied
) -> Any:
    return slicing.scatter_sub(
        operand,
        indices,
        updates,
        dimension_numbers,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )


def _argmax(x: Any, *, axes: Any, index_dtype: Any) -> Any:
    return reductions.argmax(x, axes[0], index_dtype)


def _argmin(x: Any, *, axes: Any, index_dtype: Any) -> Any:
    return reductions.argmin(x, axes[0], index_dtype)


def _reduce_precision(x: Any, *, exponent_bits: int, mantissa_bits: int) -> Any:
    return lax.reduce_precision(x, exponent_bits, mantissa_bits)


argmax_p = _composite("argmax", _argmax)
argmin_p = _composite("argmin", _argmin)
square_p = _composite("square", lax.square)
tile_p = _composite("tile", lambda x, *, reps: lax.tile(x, reps))
split_p = _composite("split", lambda x, *, sizes, axis: slicing.split(x, sizes, axis), True)
copy_p = _composite("copy", lambda x: x)  # arrays are immutable: a copy is the array
mulhi_p = _composite("mulhi", lax.mulhi)
reduce_precision_p = _composite("reduce_precision", _reduce_precision)
optimization_barrier_p = _composite(
    "optimization_barrier", lambda *xs: lax.optimization_barrier(list(xs)), True
)
# one device: every sharding constraint holds already
sharding_constraint_p = _composite("sharding_constraint", lambda x, **sharding: x)
bessel_i0e_p = _composite("bessel_i0e", special.bessel_i0e)
bessel_i1e_p = _composite("bessel_i1e", special.bessel_i1e)
igamma_p = _composite("igamma", special.igamma)
igammac_p = _composite("igammac", special.igammac)
igamma_grad_a_p = _composite("igamma_grad_a", special.igamma_grad_a)
polygamma_p = _composite("polygamma", special.polygamma)
zeta_p = _composite("zeta", special.zeta)
regularized_incomplete_beta_p = _composite("regularized_incomplete_beta", special.betainc)
reduce_p = _composite("reduce", _reduce, True)
reduce_window_p = _composite("reduce_window", _reduce_window, True)
approx_top_k_p = _composite("approx_top_k", _approx_top_k, True)
scatter_sub_p = _composite("scatter-sub", _scatter_sub)
