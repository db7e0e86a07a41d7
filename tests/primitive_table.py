"""The primitive table: one row per lax primitive (an `OpRecord`: the webjax callable, its NumPy
reference, operand shapes, dtypes, an input domain, a tolerance per dtype, and whether it is
differentiable, linear and vmappable), read by tests/test_primitives.py for values on every device,
check_grads, vmap against a loop and jit against eager. Adding a primitive means one row.

After JAX's `lax_test_util.OpRecord` and `jtu.sample_product`: `sample_product` draws a few
(shapes, dtype) cases per row with a fixed seed so the suite stays lean; set
WEBJAX_FULL_OP_SWEEP=1 to run every combination.
"""

from __future__ import annotations

import itertools
import os
import random
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np
import scipy.special as sps

from webjax import lax

Shape = tuple[int, ...]
FULL_SWEEP = os.environ.get("WEBJAX_FULL_OP_SWEEP") == "1"
CASES_PER_RECORD = 2  # (shapes, dtype) cases drawn per row and test, unless FULL_SWEEP


# ---- dtypes and tolerances -----------------------------------------------------------------------
FLOATS = ("float32", "float16", "bfloat16")
SIGNED = ("int32", "int8")
UNSIGNED = ("uint32", "uint8")
INTS = SIGNED + UNSIGNED
# rtol = atol per dtype, as JAX's default tolerances (float32 loosened to 2 ulps of transcendentals)
TOL: Mapping[str, float] = {"float32": 2e-6, "float16": 1e-3, "bfloat16": 1e-2}
NP_DTYPE = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "bool": np.dtype(np.bool_)}


def np_dtype(name: str) -> np.dtype:
    return NP_DTYPE.get(name) or np.dtype(name)


# ---- input domains: (rng, shape, dtype) -> operand -----------------------------------------------
Domain = Callable[[np.random.RandomState, Shape, str], np.ndarray]


def _draw(values: np.ndarray, dtype: str) -> np.ndarray:
    return np.asarray(values).astype(np_dtype(dtype))


def uniform(lo: float, hi: float) -> Domain:
    """Floats in [lo, hi); integers in [ceil(lo), hi) clipped to the dtype; bools at random."""

    def draw(rng: np.random.RandomState, shape: Shape, dtype: str) -> np.ndarray:
        if dtype == "bool":
            return rng.uniform(size=shape) < 0.5
        if dtype in INTS:
            info = np.iinfo(dtype)
            a, b = max(int(np.ceil(lo)), info.min), min(int(hi), info.max)
            return _draw(rng.randint(a, b, size=shape), dtype)
        return _draw(rng.uniform(lo, hi, size=shape), dtype)

    return draw


def away_from_zero(lo: float, hi: float) -> Domain:
    """|x| in [lo, hi) with a random sign (divisors, kinks at 0)."""
    base = uniform(lo, hi)

    def draw(rng: np.random.RandomState, shape: Shape, dtype: str) -> np.ndarray:
        x = base(rng, shape, dtype)
        if dtype in UNSIGNED:
            return x
        return (x * np.where(rng.uniform(size=shape) < 0.5, -1, 1)).astype(x.dtype)

    return draw


def shift_amounts(rng: np.random.RandomState, shape: Shape, dtype: str) -> np.ndarray:
    """Shift counts 0 .. bits (bits shifts out everything)."""
    return _draw(rng.randint(0, np.iinfo(dtype).bits + 1, size=shape), dtype)


def off_integer(rng: np.random.RandomState, shape: Shape, dtype: str) -> np.ndarray:
    """Floats k + (0.3 .. 0.7): with a divisor near +-1 (`near_unit`) the quotient stays away from
    the integers, where rem jumps (finite differences must not straddle a jump)."""
    if dtype not in FLOATS:
        return GENERIC(rng, shape, dtype)
    return _draw(rng.randint(-3, 3, size=shape) + rng.uniform(0.3, 0.7, size=shape), dtype)


def near_unit(rng: np.random.RandomState, shape: Shape, dtype: str) -> np.ndarray:
    """+-(0.95 .. 1.05) for floats, nonzero for integers."""
    if dtype not in FLOATS:
        return NONZERO(rng, shape, dtype)
    sign = np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0)
    return _draw(sign * rng.uniform(0.95, 1.05, size=shape), dtype)


GENERIC = uniform(-3.0, 3.0)
POSITIVE = uniform(0.5, 3.0)
UNIT = uniform(-0.9, 0.9)
ABOVE_ONE = uniform(1.2, 3.0)
NONZERO = away_from_zero(0.5, 3.0)
SMALL_INT = uniform(-20, 20)


# ---- the record ----------------------------------------------------------------------------------
class OpRecord(NamedTuple):
    name: str  # test id
    prim: str  # the primitive the op binds (coverage is counted per primitive)
    op: Callable[..., Any]  # webjax
    ref: Callable[..., Any]  # NumPy, on host arrays in float64 (floats) or the dtype (others)
    shapes: tuple[tuple[Shape, ...], ...]  # operand shape groups
    dtypes: tuple[str, ...]
    domains: tuple[Domain, ...]  # one per operand (the last repeats)
    tol: Mapping[str, float] = TOL
    out_dtype: str | None = None  # None: the operands' dtype
    differentiable: bool = True
    linear: bool = False
    vmappable: bool = True

    def domain(self, i: int) -> Domain:
        return self.domains[min(i, len(self.domains) - 1)]


UNARY_SHAPES: tuple[tuple[Shape, ...], ...] = (((3,),), ((2, 3),), ((),))
# same shapes, and a rank-0 operand meeting an array (lax allows scalars)
BINARY_SHAPES: tuple[tuple[Shape, ...], ...] = (((3,), (3,)), ((3,), ()), ((), (3,)), ((), ()))


def unary(
    prim: str,
    op: Callable,
    ref: Callable,
    dtypes: Sequence[str],
    domain: Domain = GENERIC,
    *,
    name: str | None = None,
    **kw: Any,
) -> OpRecord:
    return OpRecord(name or prim, prim, op, ref, UNARY_SHAPES, tuple(dtypes), (domain,), **kw)


def binary(
    prim: str,
    op: Callable,
    ref: Callable,
    dtypes: Sequence[str],
    domains: tuple[Domain, ...] = (GENERIC,),
    **kw: Any,
) -> OpRecord:
    return OpRecord(prim, prim, op, ref, BINARY_SHAPES, tuple(dtypes), domains, **kw)


# ---- NumPy references with lax's semantics -------------------------------------------------------
def _round_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C division: the quotient rounds toward zero."""
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) * q).astype(a.dtype)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _int_div(a, b) if a.dtype.kind in "iu" else a / b


def _shift(kind: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """lax's shifts: counts >= the bit width give 0 (or the sign, shifted arithmetically)."""

    def ref(a: np.ndarray, s: np.ndarray) -> np.ndarray:
        bits = np.iinfo(a.dtype).bits
        a, s = np.broadcast_arrays(a, s)
        big = s >= bits
        safe = np.where(big, 0, s).astype(a.dtype)
        if kind == "left":
            out = np.left_shift(a, safe)
            return np.where(big, 0, out).astype(a.dtype)
        if kind == "arithmetic":
            signed = a.view(np.dtype(f"int{bits}"))
            out = np.right_shift(signed, safe.astype(signed.dtype))
            fill = np.where(signed < 0, -1, 0).astype(signed.dtype)
            return np.where(big, fill, out).astype(signed.dtype).view(a.dtype)
        unsigned = a.view(np.dtype(f"uint{bits}"))
        out = np.right_shift(unsigned, safe.astype(unsigned.dtype))
        return np.where(big, 0, out).astype(unsigned.dtype).view(a.dtype)

    return ref


def _clz(x: np.ndarray) -> np.ndarray:
    bits = np.iinfo(x.dtype).bits
    u = x.view(np.dtype(f"uint{bits}")).astype(np.uint64)
    lengths = np.array([int(v).bit_length() for v in u.ravel()], np.int64).reshape(x.shape)
    return (bits - lengths).astype(x.dtype)


def _popcount(x: np.ndarray) -> np.ndarray:
    """Set bits of the two's-complement pattern (np.bitwise_count counts |x|'s)."""
    bits = np.iinfo(x.dtype).bits
    return np.bitwise_count(x.view(np.dtype(f"uint{bits}"))).astype(x.dtype)


def _not(x: np.ndarray) -> np.ndarray:
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


BITWISE = (*INTS, "bool")
F_ONLY = FLOATS
F_SIGNED = (*FLOATS, *SIGNED)

# ---- the catalogue -------------------------------------------------------------------------------
RECORDS: list[OpRecord] = [
    # elementwise unary: arithmetic and rounding
    unary("neg", lax.neg, np.negative, (*FLOATS, *INTS), linear=True),
    unary("sign", lax.sign, np.sign, (*FLOATS, *INTS), differentiable=False),
    unary("abs", lax.abs, np.abs, (*FLOATS, *SIGNED), NONZERO),
    unary("floor", lax.floor, np.floor, F_ONLY, differentiable=False),
    unary("ceil", lax.ceil, np.ceil, F_ONLY, differentiable=False),
    unary(
        "round",
        lax.round,
        _round_away,
        F_ONLY,
        uniform(-4.0, 4.0),
        name="round_half_away",
        differentiable=False,
    ),
    unary(
        "round",
        lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
        np.round,
        F_ONLY,
        uniform(-4.0, 4.0),
        name="round_half_even",
        differentiable=False,
    ),
    unary("is_finite", lax.is_finite, np.isfinite, F_ONLY, out_dtype="bool", differentiable=False),
    # transcendental
    unary("exp", lax.exp, np.exp, F_ONLY),
    unary("exp2", lax.exp2, np.exp2, F_ONLY),
    unary("log", lax.log, np.log, F_ONLY, POSITIVE),
    unary("log1p", lax.log1p, np.log1p, F_ONLY, UNIT),
    unary("expm1", lax.expm1, np.expm1, F_ONLY),
    unary("tanh", lax.tanh, np.tanh, F_ONLY),
    unary("logistic", lax.logistic, _logistic, F_ONLY),
    unary("sin", lax.sin, np.sin, F_ONLY),
    unary("cos", lax.cos, np.cos, F_ONLY),
    unary("tan", lax.tan, np.tan, F_ONLY, uniform(-1.2, 1.2)),
    unary("asin", lax.asin, np.arcsin, F_ONLY, UNIT),
    unary("acos", lax.acos, np.arccos, F_ONLY, UNIT),
    unary("atan", lax.atan, np.arctan, F_ONLY),
    unary("sinh", lax.sinh, np.sinh, F_ONLY),
    unary("cosh", lax.cosh, np.cosh, F_ONLY),
    unary("asinh", lax.asinh, np.arcsinh, F_ONLY),
    unary("acosh", lax.acosh, np.arccosh, F_ONLY, ABOVE_ONE),
    unary("atanh", lax.atanh, np.arctanh, F_ONLY, UNIT),
    unary("sqrt", lax.sqrt, np.sqrt, F_ONLY, POSITIVE),
    unary("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), F_ONLY, POSITIVE),
    unary("cbrt", lax.cbrt, np.cbrt, F_ONLY, NONZERO),
    unary("erf", lax.erf, sps.erf, F_ONLY),
    unary("erfc", lax.erfc, sps.erfc, F_ONLY),
    unary("erf_inv", lax.erf_inv, sps.erfinv, F_ONLY, UNIT),
    unary("lgamma", lax.lgamma, sps.gammaln, F_ONLY, POSITIVE),
    unary("digamma", lax.digamma, sps.digamma, F_ONLY, POSITIVE),
    # bits
    unary("not", lax.bitwise_not, _not, BITWISE, SMALL_INT, differentiable=False),
    unary(
        "population_count", lax.population_count, _popcount, INTS, SMALL_INT, differentiable=False
    ),
    unary("clz", lax.clz, _clz, INTS, SMALL_INT, differentiable=False),
    # elementwise binary
    binary("add", lax.add, np.add, (*FLOATS, *INTS), linear=True),
    binary("sub", lax.sub, np.subtract, (*FLOATS, *INTS), linear=True),
    binary("mul", lax.mul, np.multiply, (*FLOATS, *INTS)),
    binary("div", lax.div, _div, (*FLOATS, *INTS), (GENERIC, NONZERO)),
    binary("rem", lax.rem, np.fmod, (*FLOATS, *INTS), (off_integer, near_unit)),
    binary("pow", lax.pow, np.power, F_ONLY, (POSITIVE, GENERIC)),
    binary("max", lax.max, np.maximum, (*FLOATS, *INTS, "bool")),
    binary("min", lax.min, np.minimum, (*FLOATS, *INTS, "bool")),
    binary("atan2", lax.atan2, np.arctan2, F_ONLY, (GENERIC, NONZERO)),
    binary("nextafter", lax.nextafter, np.nextafter, ("float32",), differentiable=False),
    binary("and", lax.bitwise_and, np.bitwise_and, BITWISE, (SMALL_INT,), differentiable=False),
    binary("or", lax.bitwise_or, np.bitwise_or, BITWISE, (SMALL_INT,), differentiable=False),
    binary("xor", lax.bitwise_xor, np.bitwise_xor, BITWISE, (SMALL_INT,), differentiable=False),
    binary(
        "shift_left",
        lax.shift_left,
        _shift("left"),
        INTS,
        (SMALL_INT, shift_amounts),
        differentiable=False,
    ),
    binary(
        "shift_right_arithmetic",
        lax.shift_right_arithmetic,
        _shift("arithmetic"),
        INTS,
        (SMALL_INT, shift_amounts),
        differentiable=False,
    ),
    binary(
        "shift_right_logical",
        lax.shift_right_logical,
        _shift("logical"),
        INTS,
        (SMALL_INT, shift_amounts),
        differentiable=False,
    ),
]
for _name, _ref in [
    ("eq", np.equal),
    ("ne", np.not_equal),
    ("lt", np.less),
    ("le", np.less_equal),
    ("gt", np.greater),
    ("ge", np.greater_equal),
]:
    RECORDS.append(
        binary(
            _name,
            getattr(lax, _name),
            _ref,
            (*FLOATS, *INTS, "bool"),
            (uniform(-2, 3),),
            out_dtype="bool",
            differentiable=False,
        )
    )
# reductions, one row per set of axes
for _name, _ref, _dtypes, _diff in [
    ("reduce_sum", np.sum, (*FLOATS, *INTS), True),
    ("reduce_prod", np.prod, ("float32", "int32"), True),
    ("reduce_max", np.max, (*FLOATS, *INTS), True),
    ("reduce_min", np.min, (*FLOATS, *INTS), True),
    ("reduce_and", np.all, ("bool",), False),
    ("reduce_or", np.any, ("bool",), False),
    ("reduce_xor", np.bitwise_xor.reduce, INTS, False),
]:
    for _axes in [(0,), (1,), (0, 1)]:
        RECORDS.append(
            OpRecord(
                f"{_name}{list(_axes)}",
                _name,
                (lambda fn, axes: lambda x: fn(x, axes))(getattr(lax, _name), _axes),
                (lambda fn, axes: lambda x: fn(x, axis=axes))(_ref, _axes),
                (((2, 3),), ((3, 4),)),
                _dtypes,
                (uniform(0.5, 2.5) if _name == "reduce_prod" else GENERIC,),
                differentiable=_diff,
                linear=_name == "reduce_sum",
                tol={**TOL, "float16": 4e-3, "bfloat16": 3e-2},  # summation rounds each step
            )
        )


# ---- the sampler ---------------------------------------------------------------------------------
class Case(NamedTuple):
    record: OpRecord
    shapes: tuple[Shape, ...]
    dtype: str

    @property
    def id(self) -> str:
        shapes = "_".join("x".join(map(str, s)) or "s" for s in self.shapes)
        return f"{self.record.name}-{self.dtype}-{shapes}"

    def operands(self) -> list[np.ndarray]:
        """The operands, drawn with a seed fixed by the case id."""
        rng = np.random.RandomState(zlib.crc32(self.id.encode()))
        return [self.record.domain(i)(rng, s, self.dtype) for i, s in enumerate(self.shapes)]


def sample_product(
    records: Sequence[OpRecord],
    *,
    dtypes: Sequence[str] | None = None,
    per_record: int = CASES_PER_RECORD,
    seed: int = 0,
) -> list[Case]:
    """`per_record` (shapes, dtype) cases of each row's product, drawn with a fixed seed (all of
    them with WEBJAX_FULL_OP_SWEEP=1); `dtypes` narrows each row's dtypes."""
    cases = []
    for r in records:
        ds = [d for d in r.dtypes if dtypes is None or d in dtypes]
        product = [Case(r, s, d) for s, d in itertools.product(r.shapes, ds)]
        if not FULL_SWEEP and len(product) > per_record:
            rng = random.Random(seed * 7919 + zlib.crc32(r.name.encode()))
            product = rng.sample(product, per_record)
        cases += product
    return cases
