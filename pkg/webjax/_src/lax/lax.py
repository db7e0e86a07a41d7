"""lax: the primitive catalogue (JAX's names and params) and its user-facing functions.

Each primitive is declared with its shape/dtype rule right here; the evaluation rule is
registered by the lowering layer and the transformation rules by the interpreters, each in a
table keyed by the primitive.
"""

from __future__ import annotations

import builtins
import enum
import math
from collections.abc import Sequence
from typing import Any

from .. import core, dtypes
from ..core import Primitive, ShapedArray
from ..dispatch import array as array_mod
from ..dispatch import devices
from ..dtypes import DType
from ..tree_util import tree_map

# ---- elementwise primitives ---------------------------------------------------------------------
# name -> (allowed operand kinds). 'f' float, 'c' complex, 'i' int, 'u' unsigned, 'b' bool.
_NUM = "fiu"
_INT = "iub"
UNARY_PRIMS: dict[str, str] = {
    "neg": _NUM + "c", "sign": _NUM + "c", "floor": "f", "ceil": "f", "round": "f",
    "is_finite": "f", "exp": "fc", "exp2": "fc", "log": "fc", "log1p": "fc", "expm1": "fc",
    "tanh": "fc", "logistic": "fc", "sin": "fc", "cos": "fc", "tan": "fc", "asin": "fc",
    "acos": "fc", "atan": "fc", "sinh": "fc", "cosh": "fc", "asinh": "fc", "acosh": "fc",
    "atanh": "fc", "sqrt": "fc", "rsqrt": "fc", "cbrt": "f", "abs": "fic", "not": _INT,
    "erf": "f", "erfc": "f", "erf_inv": "f", "lgamma": "f", "digamma": "f",
    "population_count": "iu", "clz": "iu",
}  # fmt: skip
BINARY_PRIMS: dict[str, str] = {
    "add": _NUM + "c", "sub": _NUM + "c", "mul": _NUM + "c", "div": _NUM + "c", "rem": _NUM,
    "pow": "fc", "max": _NUM + "bc", "min": _NUM + "bc", "atan2": "fc", "nextafter": "f",
    "and": _INT, "or": _INT, "xor": _INT, "shift_left": "iu", "shift_right_arithmetic": "iu",
    "shift_right_logical": "iu", "eq": _NUM + "bc", "ne": _NUM + "bc", "lt": _NUM + "b",
    "le": _NUM + "b", "gt": _NUM + "b", "ge": _NUM + "b",
}  # fmt: skip
COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
BOOL_OUT_UNARY = frozenset({"is_finite"})

prims: dict[str, Primitive] = {}
# JAX's abs refuses the narrow ints (int2/int4/uint2/uint4)
_NARROW_INTS = frozenset(d for d in dtypes.NARROW if d.kind in "iu")


def _unary_abstract(name: str, kinds: str) -> Any:
    def rule(x: ShapedArray) -> ShapedArray:
        if x.dtype.kind not in kinds or (name == "abs" and x.dtype in _NARROW_INTS):
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}.")
        if name in BOOL_OUT_UNARY:
            return ShapedArray(x.shape, dtypes.bool_)
        if name == "abs" and x.dtype.kind == "c":  # |z| is real
            return ShapedArray(x.shape, dtypes.component(x.dtype), x.weak_type)
        return x

    return rule


def _binary_abstract(name: str, kinds: str) -> Any:
    def rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        if x.dtype is not y.dtype:
            raise TypeError(
                f"lax.{name} requires arguments to have the same dtypes, got "
                f"{x.dtype.name}, {y.dtype.name}. (Tip: jnp.{_JNP.get(name, name)} is a similar "
                "function that does automatic type promotion on inputs)."
            )
        if x.dtype.kind not in kinds:
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}.")
        shape = _broadcast_scalar_shapes(name, x.shape, y.shape)
        if name in COMPARISONS:  # weak when both operands are, as in JAX
            return ShapedArray(shape, dtypes.bool_, x.weak_type and y.weak_type)
        return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)

    return rule


_JNP = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "div": "divide"}


def _broadcast_scalar_shapes(name: str, a: tuple[int, ...], b: tuple[int, ...]) -> tuple:
    if a == b or not b:
        return a
    if not a:
        return b
    if len(a) != len(b):
        raise TypeError(
            f"{name}: arrays must have the same number of dimensions, got {{{len(a)}, {len(b)}}}"
        )
    raise TypeError(f"{name} got incompatible shapes for broadcasting: {a}, {b}.")


def _broadcast_ones(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """lax's binary ops broadcast size-1 dimensions of operands of one rank, as JAX's do
    (lax.add of (3, 1) and (1, 4) is (3, 4)): such operands are broadcast first, so the
    primitive itself sees equal shapes (or a scalar)."""
    a, b = tuple(getattr(x, "shape", ())), tuple(getattr(y, "shape", ()))
    if a == b or not a or not b or len(a) != len(b):
        return x, y
    if any(m != n and m != 1 and n != 1 for m, n in zip(a, b, strict=True)):
        return x, y  # the abstract rule raises JAX's error
    shape = tuple(n if m == 1 else m for m, n in zip(a, b, strict=True))
    dims = tuple(range(len(shape)))
    if a != shape:
        x = broadcast_in_dim(x, shape, dims)
    if b != shape:
        y = broadcast_in_dim(y, shape, dims)
    return x, y


for _name, _kinds in UNARY_PRIMS.items():
    prims[_name] = p = Primitive(_name)
    p.def_abstract_eval(_unary_abstract(_name, _kinds))
for _name, _kinds in BINARY_PRIMS.items():
    prims[_name] = p = Primitive(_name)
    p.def_abstract_eval(_binary_abstract(_name, _kinds))

neg_p, add_p, sub_p, mul_p, div_p = (prims[n] for n in ("neg", "add", "sub", "mul", "div"))
max_p, min_p = prims["max"], prims["min"]


# ---- other primitives ---------------------------------------------------------------------------
def _prim(name: str) -> Primitive:
    prims[name] = p = Primitive(name)
    return p


# ---- complex numbers ----------------------------------------------------------------------------
real_p, imag_p, complex_p, conj_p = (_prim(n) for n in ("real", "imag", "complex", "conj"))


def _complex_part_abstract(name: str) -> Any:
    def rule(x: ShapedArray) -> ShapedArray:
        if x.dtype.kind != "c":
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}.")
        return ShapedArray(x.shape, dtypes.component(x.dtype), x.weak_type)

    return rule


real_p.def_abstract_eval(_complex_part_abstract("real"))
imag_p.def_abstract_eval(_complex_part_abstract("imag"))


@complex_p.def_abstract_eval
def _complex_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.dtype is not y.dtype:
        raise TypeError(
            f"lax.complex requires arguments to have the same dtypes, got {x.dtype.name}, "
            f"{y.dtype.name}."
        )
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"complex does not accept dtype {x.dtype.name}.")
    shape = _broadcast_scalar_shapes("complex", x.shape, y.shape)
    return ShapedArray(shape, dtypes.to_complex(x.dtype), x.weak_type and y.weak_type)


@conj_p.def_abstract_eval
def _conj_abstract(x: ShapedArray, *, input_dtype: Any = None) -> ShapedArray:
    if x.dtype.kind not in "fc":
        raise TypeError(f"conj does not accept dtype {x.dtype.name}.")
    return x.update(dtype=dtypes.to_complex(x.dtype))


def real(x: Any) -> Any:
    """The real part of a complex array (a float array)."""
    return real_p.bind(x)


def imag(x: Any) -> Any:
    """The imaginary part of a complex array (a float array)."""
    return imag_p.bind(x)


def complex(x: Any, y: Any) -> Any:
    """The complex array x + 1j * y of two float arrays of one dtype."""
    return complex_p.bind(x, y)


def conj(x: Any) -> Any:
    """The complex conjugate (float operands become complex, as in JAX)."""
    return conj_p.bind(x, input_dtype=core.get_aval(x).dtype)


convert_element_type_p = _prim("convert_element_type")


@convert_element_type_p.def_abstract_eval
def _convert_abstract(x: ShapedArray, *, new_dtype: DType, weak_type: bool):
    return ShapedArray(x.shape, new_dtype, weak_type)


integer_pow_p = _prim("integer_pow")
integer_pow_p.def_abstract_eval(lambda x, *, y: x)

select_n_p = _prim("select_n")


@select_n_p.def_abstract_eval
def _select_n_abstract(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if which.dtype.kind not in "bi":
        raise TypeError(f"select_n `which` must be boolean or int32, got {which.dtype.name}")
    for c in cases[1:]:
        if c.dtype is not cases[0].dtype or c.shape != cases[0].shape:
            raise TypeError(
                "select_n cases must have the same shapes and dtypes, got "
                f"{[c.str_short(True) for c in cases]}"
            )
    if which.shape and which.shape != cases[0].shape:
        raise TypeError(
            f"select_n `which` must be scalar or have the same shape as cases, got "
            f"{which.shape} and {cases[0].shape}"
        )
    return cases[0].update(weak_type=all(c.weak_type for c in cases))


iota_p = _prim("iota")


@iota_p.def_abstract_eval
def _iota_abstract(*, dtype: DType, shape: tuple[int, ...], dimension: int, sharding: Any = None):
    if dtype.kind == "b":
        raise TypeError(
            "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
            "complexfloating."
        )
    return ShapedArray(shape, dtype)


broadcast_in_dim_p = _prim("broadcast_in_dim")


@broadcast_in_dim_p.def_abstract_eval
def _bid_abstract(
    x: ShapedArray,
    *,
    shape: tuple[int, ...],
    broadcast_dimensions: tuple[int, ...],
    sharding: Any = None,
) -> ShapedArray:
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {broadcast_dimensions} for operand ndim {x.ndim}."
        )
    for j, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape) or x.shape[j] not in (1, shape[d]):
            raise TypeError(
                f"broadcast_in_dim operand dimension sizes must either be 1, or be equal to "
                f"their corresponding dimensions in the target broadcast shape; got operand of "
                f"shape {x.shape}, target broadcast shape {shape}, broadcast_dimensions "
                f"{broadcast_dimensions}"
            )
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError(
            f"broadcast_in_dim broadcast_dimensions must be strictly increasing; got "
            f"broadcast_dimensions {broadcast_dimensions}"
        )
    return ShapedArray(shape, x.dtype, x.weak_type)


reshape_p = _prim("reshape")


@reshape_p.def_abstract_eval
def _reshape_abstract(
    x: ShapedArray, *, new_sizes: tuple[int, ...], dimensions: Any = None, sharding: Any = None
) -> ShapedArray:
    if math.prod(new_sizes) != x.size:
        raise TypeError(
            f"cannot reshape array of shape {x.shape} (size {x.size}) into shape "
            f"{tuple(new_sizes)} (size {math.prod(new_sizes)})"
        )
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


transpose_p = _prim("transpose")


@transpose_p.def_abstract_eval
def _transpose_abstract(x: ShapedArray, *, permutation: tuple[int, ...]) -> ShapedArray:
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {permutation} for operand shape {x.shape}."
        )
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


squeeze_p = _prim("squeeze")


@squeeze_p.def_abstract_eval
def _squeeze_abstract(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    for d in dimensions:
        if x.shape[d] != 1:
            raise ValueError(
                f"cannot select an axis to squeeze out which has size not equal to one, got "
                f"shape={x.shape} and dimensions={dimensions}"
            )
    return x.update(shape=tuple(s for i, s in enumerate(x.shape) if i not in dimensions))


concatenate_p = _prim("concatenate")


@concatenate_p.def_abstract_eval
def _concatenate_abstract(*xs: ShapedArray, dimension: int) -> ShapedArray:
    if not xs:
        raise TypeError("concatenate requires at least one operand")
    nd = xs[0].ndim
    if not 0 <= dimension < nd:
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes "
            + ", ".join(str(x.shape) for x in xs)
        )
    for x in xs:
        if x.dtype is not xs[0].dtype:
            raise TypeError(
                "concatenate requires arguments to have the same dtypes, got "
                + ", ".join(x.dtype.name for x in xs)
            )
        if x.ndim != nd or any(
            a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if i != dimension
        ):
            raise TypeError(
                "Cannot concatenate arrays with shapes that differ in dimensions other than the "
                "one being concatenated: concatenating along dimension "
                f"{dimension} for shapes " + ", ".join(str(x.shape) for x in xs) + "."
            )
    shape = list(xs[0].shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, xs[0].dtype, all(x.weak_type for x in xs))


REDUCTIONS = (
    "reduce_sum",
    "reduce_prod",
    "reduce_max",
    "reduce_min",
    "reduce_and",
    "reduce_or",
    "reduce_xor",
)


def _reduce_abstract(name: str) -> Any:
    def rule(x: ShapedArray, *, axes: tuple[int, ...], out_sharding: Any = None) -> ShapedArray:
        for a in axes:
            if not 0 <= a < x.ndim:
                raise ValueError(f"{name}: axis {a} is out of bounds for array of rank {x.ndim}")
        if name in ("reduce_and", "reduce_or", "reduce_xor") and x.dtype.kind not in "iub":
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}.")
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)

    return rule


for _name in REDUCTIONS:
    _prim(_name).def_abstract_eval(_reduce_abstract(_name))
reduce_sum_p = prims["reduce_sum"]


# ---- user-facing functions ----------------------------------------------------------------------
def _aval(x: Any) -> ShapedArray:
    return core.get_aval(x)


def _is_python_scalar(x: Any) -> bool:
    return type(x) in (builtins.bool, builtins.int, builtins.float, builtins.complex)


def _coerce_scalars(*args: Any) -> list[Any]:
    """Python scalars take the dtype of the array operands (they are weakly typed)."""
    arrays = [a for a in args if not _is_python_scalar(a)]
    if not arrays:
        return list(args)
    target = _aval(arrays[0]).dtype
    out = []
    for a in args:
        if type(a).__module__ == "numpy":
            a = to_array(a)
        elif _is_python_scalar(a):
            if target.kind in "iu" and isinstance(a, float):
                raise TypeError(f"cannot combine a Python float with an {target.name} array")
            if target.kind != "c" and isinstance(a, builtins.complex):
                raise TypeError(f"cannot combine a Python complex with a {target.name} array")
            a = full((), a, target, weak_type=True)
        out.append(a)
    return out


_KIND_NAMES = (("b", "bool"), ("iu", "integer"), ("f", "floating"), ("c", "complexfloating"))


def _check_scalar_kinds(name: str, kinds: str, *args: Any) -> None:
    """A Python scalar operand is checked at its own default dtype (bool, int32, float32,
    complex64) before it takes the other operand's: lax.add(x, True) and lax.atan2(x, 0) raise
    as in JAX, lax.add(int8_x, 1) does not."""
    for i, a in enumerate(args):
        if not _is_python_scalar(a):
            continue
        dt = dtypes.python_scalar_dtype(a)
        if dt.kind not in kinds:
            accepted = ", ".join(n for k, n in _KIND_NAMES if set(k) & set(kinds))
            raise TypeError(
                f"{name} does not accept dtype {dt.name} at position {i}. Accepted dtypes at "
                f"position {i} are subtypes of {accepted}."
            )


def _unary(name: str) -> Any:
    p = prims[name]
    kinds = UNARY_PRIMS[name]

    def fn(x: Any) -> Any:
        _check_scalar_kinds(name, kinds, x)
        return p.bind(*_coerce_scalars(x))

    fn.__name__ = name
    return fn


def _binary(name: str) -> Any:
    p = prims[name]
    kinds = BINARY_PRIMS[name] if name != "pow" else "ifc"  # pow's exponent may be an int

    def fn(x: Any, y: Any) -> Any:
        _check_scalar_kinds(name, kinds, x, y)
        if name == "pow":
            _check_pow_exponent(x, y)
        return p.bind(*_broadcast_ones(name, *_coerce_scalars(x, y)))

    fn.__name__ = name
    return fn


def _check_pow_exponent(x: Any, y: Any) -> None:
    """JAX's pow takes an inexact exponent of its base's own dtype only: a Python float or
    complex exponent is its default type (float32 / complex64 without x64), not the base's."""
    if not _is_python_scalar(y) or isinstance(y, (bool, int)):
        return
    xd = dtypes.python_scalar_dtype(x) if _is_python_scalar(x) else _aval(x).dtype
    yd = dtypes.python_scalar_dtype(y)
    if xd.kind in "fc" and xd != yd:
        raise TypeError(
            "the first argument to pow must have an inexact dtype (float or complex), and the "
            "second argument must have an inexact or integer dtype, and two inexact dtypes must "
            f"match, but got {xd.name} and {yd.name} respectively."
        )


neg, sign, floor, ceil, is_finite = map(_unary, ("neg", "sign", "floor", "ceil", "is_finite"))
exp, exp2, log, log1p, expm1 = map(_unary, ("exp", "exp2", "log", "log1p", "expm1"))
tanh, logistic, sin, cos, tan = map(_unary, ("tanh", "logistic", "sin", "cos", "tan"))
asin, acos, atan, sinh, cosh = map(_unary, ("asin", "acos", "atan", "sinh", "cosh"))
asinh, acosh, atanh, sqrt, rsqrt = map(_unary, ("asinh", "acosh", "atanh", "sqrt", "rsqrt"))
cbrt, abs, bitwise_not, erf, erfc = map(_unary, ("cbrt", "abs", "not", "erf", "erfc"))
erf_inv, lgamma, digamma = map(_unary, ("erf_inv", "lgamma", "digamma"))
population_count, clz = map(_unary, ("population_count", "clz"))
add, sub, mul, div, rem, pow = map(_binary, ("add", "sub", "mul", "div", "rem", "pow"))
max, min, atan2, nextafter = map(_binary, ("max", "min", "atan2", "nextafter"))
_max_fn, _min_fn = max, min
bitwise_and, bitwise_or, bitwise_xor = map(_binary, ("and", "or", "xor"))
shift_left, _shift_right_arithmetic_bits, shift_right_logical = map(
    _binary, ("shift_left", "shift_right_arithmetic", "shift_right_logical")
)
eq, ne, lt, le, gt, ge = map(_binary, ("eq", "ne", "lt", "le", "gt", "ge"))


def shift_right_arithmetic(x: Any, y: Any) -> Any:
    """x >> y with the sign bit copied in. An unsigned x's bits are shifted as the signed
    type's, as XLA does (uint8 255 >> 3 is 255); a shift by the width or more fills with the
    sign bit."""
    _check_scalar_kinds("shift_right_arithmetic", "iu", x, y)
    x, y = _broadcast_ones("shift_right_arithmetic", *_coerce_scalars(x, y))
    dt = _aval(x).dtype
    if dt.kind != "u" or _aval(y).dtype is not dt or dt in dtypes.NARROW:
        return _shift_right_arithmetic_bits(x, y)
    signed = dtypes.dtype(f"int{dt.bits}")
    # amounts of the width or more give the same as width - 1, and stay non-negative signed
    last = full((), dt.bits - 1, dt)
    y = select(ge(y, full((), dt.bits, dt)), broadcast_in_dim(last, _aval(y).shape, ()), y)
    out = _shift_right_arithmetic_bits(
        bitcast_convert_type(x, signed), bitcast_convert_type(y, signed)
    )
    return bitcast_convert_type(out, dt)


class RoundingMethod(enum.IntEnum):
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Any, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Round to an integral value: halves away from zero (JAX's default) or to even."""
    if int(rounding_method) == RoundingMethod.TO_NEAREST_EVEN:
        return prims["round"].bind(x)
    dt = _aval(x).dtype
    if dt in dtypes.NARROW:  # in the type it computes in (a - floor(a) may not be narrow)
        wide = convert_element_type(x, dtypes.compute_type(dt))
        return convert_element_type(round(wide, rounding_method), dt)
    # round has no derivative (its tangent is a symbolic zero, as the primitive's): the -0 case
    # below must not pass x's tangent on, where a zero cotangent times inf would make NaN
    x = stop_gradient(x)
    # |x| = r + f with r = floor(|x|) and f in [0, 1) exactly; round up when f >= 1/2
    a = abs(x)
    r = floor(a)
    dt = _aval(x).dtype
    up = ge(sub(a, r), full((), 0.5, dt))
    mag = select(up, add(r, full((), 1.0, dt)), r)
    zero = full((), 0.0, dt)
    return select(eq(x, zero), x, select(lt(x, zero), neg(mag), mag))  # -0 stays -0


def integer_pow(x: Any, y: int) -> Any:
    return integer_pow_p.bind(x, y=int(y))


def convert_element_type(x: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    new_dtype = dtypes.canonicalize(dtypes.dtype(new_dtype))
    if _is_python_scalar(x):
        return full((), x, new_dtype, weak_type=weak_type)
    aval = _aval(x)
    if aval.dtype is new_dtype and aval.weak_type == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


def select_n(which: Any, *cases: Any) -> Any:
    if not cases:
        raise ValueError("select_n must have at least one case")
    return select_n_p.bind(which, *cases)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    return select_n(pred, on_false, on_true)


def iota(dtype: Any, size: int) -> Any:
    return iota_p.bind(dtype=dtypes.dtype(dtype), shape=(int(size),), dimension=0, sharding=None)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    shape = core.canonicalize_shape(shape)
    return iota_p.bind(
        dtype=dtypes.dtype(dtype), shape=shape, dimension=int(dimension), sharding=None
    )


def broadcast_in_dim(x: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    shape = core.canonicalize_shape(shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    if _aval(x).shape == shape and dims == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims, sharding=None)


def broadcast(x: Any, sizes: Sequence[int]) -> Any:
    nd = _aval(x).ndim
    shape = tuple(sizes) + _aval(x).shape
    return broadcast_in_dim(x, shape, tuple(range(len(sizes), len(sizes) + nd)))


def reshape(x: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Any:
    new_sizes = core.canonicalize_shape(new_sizes)
    if dimensions is not None and tuple(dimensions) != tuple(range(_aval(x).ndim)):
        x = transpose(x, dimensions)
    if _aval(x).shape == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes, dimensions=None, sharding=None)


def transpose(x: Any, permutation: Sequence[int]) -> Any:
    perm = tuple(int(p) for p in permutation)
    if perm == tuple(range(len(perm))) and len(perm) == _aval(x).ndim:
        return x
    return transpose_p.bind(x, permutation=perm)


def squeeze(x: Any, dimensions: Sequence[int]) -> Any:
    nd = _aval(x).ndim
    dims = tuple(sorted(int(d) % nd if nd else int(d) for d in dimensions))
    if not dims:
        return x
    return squeeze_p.bind(x, dimensions=dims)


def expand_dims(x: Any, dimensions: Sequence[int]) -> Any:
    shape = list(_aval(x).shape)
    nd = len(shape) + len(dimensions)
    for d in sorted(int(d) % nd for d in dimensions):
        shape.insert(d, 1)
    return reshape(x, shape)


def _reducer(name: str) -> Any:
    p = prims[name]

    def fn(x: Any, axes: Sequence[int]) -> Any:
        av = _aval(x)
        given = tuple(int(a) for a in axes)
        if name in ("reduce_and", "reduce_or", "reduce_xor") and av.dtype.kind not in "iub":
            raise TypeError(  # (JAX checks the dtype of logical reductions before the axes)
                f"logical reduction requires operand dtype bool or int, got {av.dtype.name}."
            )
        if len(set(given)) != len(given):
            raise ValueError(f"duplicate value in 'axes' of reduction: {given}")
        if not all(0 <= a < av.ndim for a in given):  # lax takes no negative axes, as JAX
            raise ValueError(
                f"reduction axes {given} contains out-of-bounds indices for "
                f"{av.dtype.name}[{','.join(map(str, av.shape))}]."
            )
        if name in ("reduce_sum", "reduce_prod") and av.dtype.kind == "b":
            raise TypeError(
                f"{name} does not accept dtype bool. Accepted dtypes are subtypes of number."
            )
        return p.bind(x, axes=tuple(sorted(given)), out_sharding=None)

    fn.__name__ = name
    return fn


reduce_sum, reduce_prod, reduce_max, reduce_min = map(
    _reducer, ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min")
)
reduce_and, reduce_or, reduce_xor = map(_reducer, ("reduce_and", "reduce_or", "reduce_xor"))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None, weak_type: bool = False) -> Any:
    shape = core.canonicalize_shape(shape)
    if isinstance(fill_value, core.Tracer) or hasattr(fill_value, "aval"):
        dt = dtypes.dtype(dtype) if dtype is not None else _aval(fill_value).dtype
        v = convert_element_type(fill_value, dt, weak_type)
        return broadcast(v, shape)
    if dtype is None:
        dt = dtypes.python_scalar_dtype(fill_value)
        weak_type = weak_type or type(fill_value) is not builtins.bool
    else:
        dt = dtypes.canonicalize(dtypes.dtype(dtype))
    return array_mod.full(shape, fill_value, dt, weak_type, devices.default_device())


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


# ---- slicing and padding ------------------------------------------------------------------------
slice_p = _prim("slice")


@slice_p.def_abstract_eval
def _slice_abstract(
    x: ShapedArray,
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> ShapedArray:
    if not (len(start_indices) == len(limit_indices) == x.ndim):
        raise TypeError(
            f"slice start_indices {start_indices} and limit_indices {limit_indices} must have "
            f"the same length as the operand rank {x.ndim}"
        )
    st = strides or (1,) * x.ndim
    shape = []
    for d, lo, hi, s in zip(x.shape, start_indices, limit_indices, st, strict=True):
        if not 0 <= lo <= hi <= d or s < 1:
            raise TypeError(
                f"slice indices must satisfy 0 <= start <= limit <= shape with positive "
                f"strides, got start_indices={start_indices}, limit_indices={limit_indices}, "
                f"strides={strides} for operand shape {x.shape}"
            )
        shape.append(0 if hi == lo else (hi - lo + s - 1) // s)
    return x.update(shape=tuple(shape))


def slice(
    operand: Any,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Any:
    st = None if strides is None or all(s == 1 for s in strides) else tuple(map(int, strides))
    return slice_p.bind(
        operand,
        start_indices=tuple(map(int, start_indices)),
        limit_indices=tuple(map(int, limit_indices)),
        strides=st,
    )


pad_p = _prim("pad")


@pad_p.def_abstract_eval
def _pad_abstract(
    x: ShapedArray, padding_value: ShapedArray, *, padding_config: tuple[tuple[int, int, int], ...]
) -> ShapedArray:
    if padding_value.shape:
        raise TypeError(f"padding_value must be a scalar, got shape {padding_value.shape}")
    if x.dtype is not padding_value.dtype:
        raise TypeError(
            f"pad operand and padding_value must have the same dtype, got {x.dtype.name} and "
            f"{padding_value.dtype.name}"
        )
    if len(padding_config) != x.ndim:
        raise ValueError(
            f"length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand shape {x.shape}"
        )
    shape = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config, strict=True):
        if interior < 0:
            raise ValueError(
                f"interior padding in padding_config must be nonnegative, got {interior}"
            )
        n = lo + hi + d + builtins.max(d - 1, 0) * interior
        if n < 0:
            raise ValueError(f"Dimension size after padding is not at least 0, got {n}")
        shape.append(n)
    return x.update(shape=tuple(shape))


def pad(operand: Any, padding_value: Any, padding_config: Sequence[Sequence[int]]) -> Any:
    cfg = tuple((int(lo), int(hi), int(i)) for lo, hi, i in padding_config)
    return pad_p.bind(operand, padding_value, padding_config=cfg)


stop_gradient_p = _prim("stop_gradient")
stop_gradient_p.def_abstract_eval(lambda x: x)


def stop_gradient(x: Any) -> Any:
    """Identity whose derivative is zero (applied to every leaf of a pytree)."""

    def stop(v: Any) -> Any:
        if _is_python_scalar(v):
            return v
        return stop_gradient_p.bind(v)

    return tree_map(stop, x)


rev_p = _prim("rev")


@rev_p.def_abstract_eval
def _rev_abstract(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    if any(not 0 <= d < x.ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise ValueError(
            f"rev dimensions must be unique and within the operand rank, got {dimensions} for "
            f"operand shape {x.shape}"
        )
    return x


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    dims = tuple(int(d) for d in dimensions)
    if not dims:
        return operand
    return rev_p.bind(operand, dimensions=dims)


dynamic_slice_p = _prim("dynamic_slice")


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract(
    x: ShapedArray, *starts: ShapedArray, slice_sizes: tuple[int, ...]
) -> ShapedArray:
    if len(starts) != x.ndim or len(slice_sizes) != x.ndim:
        raise TypeError(
            f"dynamic_slice start_indices and slice_sizes must have one entry per operand "
            f"dimension; got {len(starts)} start indices and slice_sizes {slice_sizes} for "
            f"operand shape {x.shape}"
        )
    for s in starts:
        if s.shape or s.dtype.kind not in "iu":
            raise TypeError("dynamic_slice start_indices must be scalar integers")
    for d, n in zip(x.shape, slice_sizes, strict=True):
        if not 0 <= n <= d:
            raise TypeError(
                f"slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
                f"{slice_sizes} for operand shape {x.shape}"
            )
    return x.update(shape=tuple(slice_sizes))


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> Any:
    starts = [_index_scalar(s) for s in start_indices]
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=tuple(int(n) for n in slice_sizes))


def _index_scalar(s: Any) -> Any:
    if _is_python_scalar(s):
        return full((), int(s), dtypes.int32)
    aval = _aval(s)
    if aval.dtype is not dtypes.int32 and aval.dtype.kind in "iu":
        return convert_element_type(s, dtypes.int32)
    return s


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True) -> Any:
    aval = _aval(operand)
    starts = [0] * aval.ndim
    starts[axis] = index
    sizes = list(aval.shape)
    sizes[axis] = 1
    out = dynamic_slice(operand, starts, sizes)
    return out if keepdims else squeeze(out, (axis,))


dynamic_update_slice_p = _prim("dynamic_update_slice")


@dynamic_update_slice_p.def_abstract_eval
def _dus_abstract(x: ShapedArray, update: ShapedArray, *starts: ShapedArray) -> ShapedArray:
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape, strict=True)):
        raise TypeError(
            f"dynamic_update_slice update shape must be smaller than operand shape, got update "
            f"shape {update.shape} for operand shape {x.shape}"
        )
    if update.dtype is not x.dtype:
        raise TypeError(
            f"dynamic_update_slice update must have the operand's dtype, got {update.dtype.name} "
            f"and {x.dtype.name}"
        )
    if len(starts) != x.ndim:
        raise TypeError("dynamic_update_slice needs one start index per operand dimension")
    return x


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    starts = [_index_scalar(s) for s in start_indices]
    return dynamic_update_slice_p.bind(operand, update, *starts)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int) -> Any:
    aval = _aval(operand)
    starts: list[Any] = [0] * aval.ndim
    starts[axis] = index
    if _aval(update).ndim == aval.ndim - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice(operand, update, starts)


clamp_p = _prim("clamp")


@clamp_p.def_abstract_eval
def _clamp_abstract(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    for b, name in ((lo, "min"), (hi, "max")):
        if b.dtype is not x.dtype:
            raise TypeError(
                f"lax.clamp requires arguments to have the same dtypes, got {lo.dtype.name}, "
                f"{x.dtype.name}, {hi.dtype.name}."
            )
        if b.shape and b.shape != x.shape:
            raise TypeError(
                f"Clamp with non-scalar {name} requires {name} and operand shapes to match, got "
                f"{b.shape} and {x.shape}"
            )
    return x.update(weak_type=lo.weak_type and x.weak_type and hi.weak_type)


def clamp(min: Any, x: Any, max: Any) -> Any:
    """Elementwise min(max(x, min), max) (JAX's argument order). As in JAX, Python scalars
    are not coerced to the array's dtype: each takes its own default dtype (weakly typed), so
    `clamp(0, float_array, 1)` is a dtype mismatch (TypeError)."""
    args = [
        full((), a, dtypes.python_scalar_dtype(a), weak_type=type(a) is not builtins.bool)
        if _is_python_scalar(a)
        else to_array(a)
        for a in (min, x, max)
    ]
    return clamp_p.bind(*args)


# ---- contractions ------------------------------------------------------------------------------
dot_general_p = _prim("dot_general")


def _dot_free(ndim: int, contract: Sequence[int], batch: Sequence[int]) -> list[int]:
    return [i for i in range(ndim) if i not in contract and i not in batch]


@dot_general_p.def_abstract_eval
def _dot_general_abstract(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers: Any,
    preferred_element_type: Any = None,
    **_: Any,
) -> ShapedArray:
    (lc, rc), (lb, rb) = dimension_numbers
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(
            "dot_general requires equal numbers of lhs and rhs contracting/batch dimensions, "
            f"got dimension_numbers {dimension_numbers}."
        )
    for a, b in zip(lb, rb, strict=True):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(
                "dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
                f"same shape, got {tuple(lhs.shape[i] for i in lb)} and "
                f"{tuple(rhs.shape[i] for i in rb)}."
            )
    for a, b in zip(lc, rc, strict=True):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(
                "dot_general requires contracting dimensions to have the same shape, got "
                f"{tuple(lhs.shape[i] for i in lc)} and {tuple(rhs.shape[i] for i in rc)}."
            )
    if lhs.dtype is not rhs.dtype and preferred_element_type is None:
        raise TypeError(
            f"dot_general requires operands of the same dtype, got {lhs.dtype.name} and "
            f"{rhs.dtype.name}."
        )
    shape = (
        tuple(lhs.shape[i] for i in lb)
        + tuple(lhs.shape[i] for i in _dot_free(lhs.ndim, lc, lb))
        + tuple(rhs.shape[i] for i in _dot_free(rhs.ndim, rc, rb))
    )
    dt = preferred_element_type if preferred_element_type is not None else lhs.dtype
    return ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)


def dot_general(
    lhs: Any,
    rhs: Any,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb))))
    pet = (
        None
        if preferred_element_type is None
        else dtypes.canonicalize(dtypes.dtype(preferred_element_type))
    )
    return dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=dn,
        precision=None,
        preferred_element_type=pet,
        out_sharding=None,
    )


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
    la, ra = _aval(lhs), _aval(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise TypeError(f"dot only supports rank 1 or 2 operands, got {la.shape} and {ra.shape}")
    return dot_general(
        lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision, preferred_element_type
    )


bitcast_convert_type_p = _prim("bitcast_convert_type")


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract(x: ShapedArray, *, new_dtype: DType) -> ShapedArray:
    if x.dtype.itemsize != new_dtype.itemsize:
        raise NotImplementedError(
            "bitcast_convert_type between types of different widths "
            f"({x.dtype.name} -> {new_dtype.name}) is not supported yet"
        )
    return ShapedArray(x.shape, new_dtype)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of `operand` as `new_dtype`. A narrower type adds a trailing axis
    of (little-endian) pieces; a wider one consumes the trailing axis, which must have one
    entry per piece."""
    operand = to_array(operand)
    dt = dtypes.canonicalize(dtypes.dtype(new_dtype))
    aval = _aval(operand)
    src = aval.dtype
    if src is dt:
        return operand
    if src.itemsize == dt.itemsize:
        return bitcast_convert_type_p.bind(operand, new_dtype=dt)
    if src.itemsize > dt.itemsize:  # split each element into its pieces
        ratio = src.itemsize // dt.itemsize
        wide = _unsigned(src.itemsize)
        bits = bitcast_convert_type(operand, wide)
        narrow = _unsigned(dt.itemsize)
        mask = full((), (1 << dt.bits) - 1, wide)
        pieces = [
            convert_element_type(
                bitwise_and(shift_right_logical(bits, full((), k * dt.bits, wide)), mask), narrow
            )
            for k in range(ratio)
        ]
        out = concatenate([expand_dims(p, (aval.ndim,)) for p in pieces], aval.ndim)
        return bitcast_convert_type(out, dt)
    ratio = dt.itemsize // src.itemsize
    if not aval.shape or aval.shape[-1] != ratio:
        raise ValueError(
            f"bitcast_convert_type from {src.name} to {dt.name} needs a last dimension of size "
            f"{ratio}; got operand shape {aval.shape}"
        )
    wide = _unsigned(dt.itemsize)
    parts = convert_element_type(bitcast_convert_type(operand, _unsigned(src.itemsize)), wide)
    acc = None
    for k in range(ratio):
        lo, hi = [0] * aval.ndim, list(aval.shape)
        lo[-1], hi[-1] = k, k + 1
        piece = shift_left(
            squeeze(slice(parts, lo, hi), (aval.ndim - 1,)), full((), k * src.bits, wide)
        )
        acc = piece if acc is None else bitwise_or(acc, piece)
    return bitcast_convert_type(acc, dt)


def _unsigned(itemsize: int) -> DType:
    return {1: dtypes.uint8, 2: dtypes.uint16, 4: dtypes.uint32, 8: dtypes.uint64}[itemsize]


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = False) -> Any:
    """operand[..., index, ...] along `axis` for a static index."""
    shape = _aval(operand).shape
    i = int(index) % shape[axis] if shape[axis] else int(index)
    lo = [0] * len(shape)
    hi = list(shape)
    lo[axis], hi[axis] = i, i + 1
    out = slice(operand, lo, hi)
    return out if keepdims else squeeze(out, (axis,))


to_array = array_mod.to_array


# ---- composite functions (JAX's lax.py): types ---------------------------------------------------
class Precision(enum.Enum):
    """Matmul precision (accepted everywhere JAX takes `precision=`; webjax computes in the
    operands' dtype on every backend, so all three behave as HIGHEST)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        return _PRECISION_NAMES.get(value) if isinstance(value, str) else None

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_NAMES = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST, "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
}  # fmt: skip

PrecisionLike = None | str | Precision | tuple[str, str] | tuple[Precision, Precision]
DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]


# ---- helpers ------------------------------------------------------------------------------------
def _arr(x: Any) -> Any:
    return to_array(x)


def _axis(axis: int, ndim: int, what: str = "axis") -> int:
    a = int(axis)
    if not -ndim <= a < builtins.max(ndim, 1):
        raise ValueError(f"{what} {a} is out of bounds for array of dimension {ndim}")
    return a % ndim if ndim else 0


# ---- elementwise and shape functions ------------------------------------------------------------
def square(x: Any) -> Any:
    """x * x, elementwise."""
    return integer_pow(_arr(x), 2)


def reciprocal(x: Any) -> Any:
    """1 / x, elementwise."""
    return integer_pow(_arr(x), -1)


def full_like(
    x: Any, fill_value: Any, dtype: Any = None, shape: Any = None, sharding: Any = None
) -> Any:
    """An array like `x` (its shape and dtype unless given) filled with `fill_value`."""
    if not (isinstance(x, core.Tracer) or hasattr(x, "_exp")) and hasattr(x, "dtype"):
        aval = ShapedArray(tuple(x.shape), dtypes.canonicalize(dtypes.dtype(x.dtype)))
    else:
        aval = _aval(_arr(x))
    fill_shape = aval.shape if shape is None else core.canonicalize_shape(shape)
    weak = dtype is None and aval.weak_type
    dt = aval.dtype if dtype is None else dtypes.canonicalize(dtypes.dtype(dtype))
    return full(fill_shape, fill_value, dt, weak_type=weak)


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of `shape` and `dtype` (zeros: JAX's contents are unspecified)."""
    return full(shape, 0, dtype)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy broadcast of `shapes` (ValueError when they are incompatible)."""
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        sizes = {int(s[len(s) - nd + i]) for s in shapes if len(s) - nd + i >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(
                f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}"
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """`x` with leading 1s added until it has rank `rank`."""
    x = _arr(x)
    nd = _aval(x).ndim
    if nd == rank:
        return x
    return broadcast(x, (1,) * (rank - nd))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge dimensions [start_dimension, stop_dimension) into one."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    nd = len(shape)
    lo = _axis(start_dimension, nd + 1, "start_dimension") if nd else 0
    hi = nd if stop_dimension is None else int(stop_dimension)
    if hi < 0:
        hi += nd
    if not 0 <= lo <= hi <= nd:
        raise ValueError(
            f"collapse: invalid dimensions [{start_dimension}, {stop_dimension}) for shape {shape}"
        )
    new = (*shape[:lo], math.prod(shape[lo:hi]), *shape[hi:])
    return reshape(operand, new)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """`operand` repeated `reps[i]` times along each axis i."""
    operand = _arr(operand)
    shape = _aval(operand).shape
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape):
        raise ValueError(
            f"len(reps) must equal operand.ndim, got reps={reps} for operand shape {shape}"
        )
    inter = tuple(x for r, d in zip(reps, shape) for x in (r, d))
    dims = tuple(range(1, 2 * len(shape), 2))
    b = broadcast_in_dim(operand, inter, dims)
    return reshape(b, tuple(r * d for r, d in zip(reps, shape)))


# ---- stacking and unstacking --------------------------------------------------------------------
def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Stack arrays of one shape along a new axis."""
    operands = [_arr(x) for x in operands]
    if not operands:
        raise ValueError("stack requires at least one operand")
    nd = _aval(operands[0]).ndim
    axis = _axis(axis, nd + 1)
    return concatenate([expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of `x` along `axis`, as a tuple."""
    x = _arr(x)
    shape = _aval(x).shape
    axis = _axis(axis, len(shape))
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))


# ---- contractions -------------------------------------------------------------------------------
def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Batched matrix product over all leading dimensions (equal in lhs and rhs)."""
    lhs, rhs = _arr(lhs), _arr(rhs)
    ls, rs = _aval(lhs).shape, _aval(rhs).shape
    if len(ls) < 2 or len(rs) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {ls}, {rs}")
    if len(ls) != len(rs):
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {len(ls)}, {len(rs)}")
    batch = tuple(range(len(ls) - 2))
    dn = (((len(ls) - 1,), (len(rs) - 2,)), (batch, batch))
    return dot_general(lhs, rhs, dn, precision=precision)


# ---- barriers and precision ---------------------------------------------------------------------
def optimization_barrier(operand: Any, /) -> Any:
    """Identity on a pytree (webjax does not reorder across it either way)."""
    return tree_map(lambda x: x, operand)


_FLOAT_LAYOUT = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}
_UINT_OF = {16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Round `operand` to a float with `exponent_bits` and `mantissa_bits` (to nearest even;
    overflow to inf, values at or below the smallest normal exponent to signed zero), keeping
    its dtype, as XLA's ReducePrecision."""
    x = _arr(operand) if not isinstance(operand, float) else full((), operand, dtypes.float32)
    dt = _aval(x).dtype
    if dt.kind != "f":
        raise TypeError(f"reduce_precision does not accept dtype {dt.name}")
    ebits, mbits = int(exponent_bits), int(mantissa_bits)
    if ebits < 1 or mbits < 0:
        raise ValueError(
            f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got "
            f"{exponent_bits} and {mantissa_bits}"
        )
    src_e, src_m = _FLOAT_LAYOUT[dt.name]
    nbits = 1 + src_e + src_m
    ut = _UINT_OF[nbits]
    u = lambda v: full((), v, ut)
    bits = bitcast_convert_type(x, ut)
    if mbits < src_m:
        shift = src_m - mbits
        last = 1 << shift
        last_bit = shift_right_logical(bitwise_and(bits, u(last)), u(shift))
        bias = add(last_bit, u((last >> 1) - 1))
        bits = bitwise_and(add(bits, bias), u(~(last - 1) & (2**nbits - 1)))
    if ebits < src_e:
        sign_mask = 1 << (nbits - 1)
        exp_mask = ((1 << src_e) - 1) << src_m
        bias_src = (1 << (src_e - 1)) - 1
        bias_dst = (1 << (ebits - 1)) - 1
        max_exp = (bias_src + bias_dst) << src_m
        min_exp = (bias_src - bias_dst) << src_m
        exponent = bitwise_and(bits, u(exp_mask))
        signed_zero = bitwise_and(bits, u(sign_mask))
        signed_inf = bitwise_or(signed_zero, u(exp_mask))
        bits = select(
            gt(exponent, u(max_exp)),
            signed_inf,
            select(le(exponent, u(min_exp)), signed_zero, bits),
        )
    out = bitcast_convert_type(bits, dt)
    if mbits < src_m or ebits < src_e:
        out = select(ne(x, x), x, out)  # NaNs pass through
    return out


# ---- multiply-high --------------------------------------------------------------------------
_UNSIGNED_OF = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def mulhi(x: Any, y: Any, /) -> Any:
    """Elementwise multiply-high: the upper N bits of the 2N-bit product of N-bit integers.

    Written on N-bit ops (no wider type needed): with half-words a = ah 2^h + al, the product's
    high word is ah bh + the high halves of the cross terms + the carry out of the middle."""
    x, y = _coerce_scalars(x, y)
    dt = core.get_aval(x).dtype
    if dt.kind not in "iu" or core.get_aval(y).dtype != dt:
        raise TypeError(
            "mulhi requires integer arguments of one dtype, got "
            f"{dt.name} and {core.get_aval(y).dtype.name}"
        )
    nbits = dt.itemsize * 8
    ut, h = _UNSIGNED_OF[nbits], nbits // 2
    a = bitcast_convert_type(x, ut) if dt.kind == "i" else x
    b = bitcast_convert_type(y, ut) if dt.kind == "i" else y
    k, mask = full((), h, ut), full((), (1 << h) - 1, ut)
    al, ah = bitwise_and(a, mask), shift_right_logical(a, k)
    bl, bh = bitwise_and(b, mask), shift_right_logical(b, k)
    ll, lh, hl, hh = mul(al, bl), mul(al, bh), mul(ah, bl), mul(ah, bh)
    mid = add(add(shift_right_logical(ll, k), bitwise_and(lh, mask)), bitwise_and(hl, mask))
    hi = add(
        add(hh, shift_right_logical(lh, k)),
        add(shift_right_logical(hl, k), shift_right_logical(mid, k)),
    )
    if dt.kind == "u":
        return hi
    # signed: (a - 2^N [x<0]) (b - 2^N [y<0]) has high word hi - [x<0] b - [y<0] a (mod 2^N)
    zero = full((), 0, dt)
    hi = sub(hi, mul(b, convert_element_type(lt(x, zero), ut)))
    hi = sub(hi, mul(a, convert_element_type(lt(y, zero), ut)))
    return bitcast_convert_type(hi, dt)


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """`arr` broadcast to the shape of `like_arr` (trailing dimensions aligned)."""
    arr = to_array(arr)
    shape = core.get_aval(to_array(like_arr)).shape
    nd = core.get_aval(arr).ndim
    return broadcast_in_dim(arr, shape, tuple(range(len(shape) - nd, len(shape))))


def complex_logaddexp(
    x1: Any, x2: Any, exp_: Any = None, log1p_: Any = None, half_period: float = math.pi
) -> Any:
    """log(exp(x1) + exp(x2)) of complex numbers, as JAX computes it (its lax logaddexp): the
    larger operand (complex order: real part, then imaginary) plus
    log1p(exp(x1 + x2 - 2 * larger)), its imaginary part wrapped into
    [-half_period, half_period). The doubled operand overflows for parts near the dtype's
    maximum, and infinities give NaN, exactly as on JAX. `exp_`/`log1p_`/`half_period` give
    the base-2 form (exp2, log1p / ln 2, pi / ln 2)."""
    exp_ = exp if exp_ is None else exp_
    log1p_ = log1p if log1p_ is None else log1p_
    dt = core.get_aval(x1).dtype
    amax = max(x1, x2)
    delta = sub(add(x1, x2), mul(amax, full((), 2, dt)))
    out = add(amax, log1p_(exp_(delta)))
    im = imag(out)
    rdt = core.get_aval(im).dtype
    half, period = full((), half_period, rdt), full((), 2 * half_period, rdt)
    wrapped = rem(add(im, half), period)
    wrapped = select(lt(wrapped, full((), 0, rdt)), add(wrapped, period), wrapped)
    return complex(real(out), sub(wrapped, half))
