"""What the fuzzer calls, and with what: the op specs (public `jnp`, `lax`, `nn`,
`scipy.special`, `random` and `numpy.linalg` functions, each with its argument kind) and the
hypothesis strategy drawing a `Case` of one: shapes (0-size, scalars, broadcasting, rank up to
5), dtypes (every one; the 64-bit ones under x64), axes (negative, repeated, out of range),
keyword arguments, values with the special ones mixed in (NaN, +-inf, -0.0, subnormals,
int min/max), and the mode (eager, jit, grad, vmap).

A case's array operands are NumPy arrays (the oracle puts them on the device); a `Key` is a PRNG
key made from a seed; anything else is a static Python value, closed over under jit and vmap."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

# ---- dtypes --------------------------------------------------------------------------------------
BOOL = ("bool",)
SIGNED = ("int8", "int16", "int32")
UNSIGNED = ("uint8", "uint16", "uint32")
INTS = SIGNED + UNSIGNED
FLOATS = ("float16", "bfloat16", "float32")
COMPLEX = ("complex64",)
X64_ONLY = ("int64", "uint64", "float64", "complex128")
NUMERIC = INTS + FLOATS + COMPLEX
ALL = BOOL + NUMERIC
REAL = INTS + FLOATS
INEXACT = FLOATS + COMPLEX


def np_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def widen(dtypes: tuple[str, ...], x64: bool) -> tuple[str, ...]:
    """The 64-bit sibling of each dtype joins under x64."""
    if not x64:
        return dtypes
    extra = {"int32": "int64", "uint32": "uint64", "float32": "float64", "complex64": "complex128"}
    return dtypes + tuple(extra[d] for d in dtypes if d in extra)


@dataclass(frozen=True)
class Key:
    """A PRNG key operand: `random.key(seed)` in each library."""

    seed: int


# ---- specs ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Spec:
    op: str  # "jnp.sin": module alias (jnp, lax, nn, special, random, linalg) and attribute
    kind: str  # how its arguments are drawn (see KINDS)
    dtypes: tuple[str, ...] = ALL
    grad: bool = True  # differentiable in its first operand (for floats)
    vmap: bool = True
    jit: bool = True
    kwargs: dict[str, Any] = field(default_factory=dict)  # keyword -> strategy of its value
    tol: float = 1.0  # multiplies the per-dtype tolerance (accumulating ops, linear algebra)
    # values: any | positive | unit (|x| < 1) | small (ints near 0) | no_int_min (ints)
    domain: str = "any"


def _specs(kind: str, names: str, prefix: str = "jnp", **kw: Any) -> list[Spec]:
    return [Spec(n if "." in n else f"{prefix}.{n}", kind, **kw) for n in names.split()]


_bool = st.booleans()
JNP_UNARY = (
    "abs absolute negative positive sign floor ceil trunc rint exp exp2 expm1 log log2 log10 "
    "log1p sqrt cbrt square reciprocal sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh "
    "arccosh arctanh deg2rad rad2deg isnan isinf isfinite signbit logical_not conj real imag "
    "angle sinc isreal iscomplex isneginf isposinf fabs spacing i0 frexp modf"
)
JNP_BINARY = (
    "add subtract multiply divide true_divide floor_divide mod remainder fmod power float_power "
    "maximum minimum fmax fmin arctan2 hypot logaddexp logaddexp2 copysign nextafter heaviside "
    "equal not_equal less less_equal greater greater_equal logical_and logical_or logical_xor "
    "divmod"
)
JNP_INT_BINARY = "bitwise_and bitwise_or bitwise_xor left_shift right_shift"
# JAX's gcd/lcm loop forever on a signed type's minimum (its absolute value stays negative),
# in XLA where no watchdog can stop it: their operands never hold it
JNP_GCD = "gcd lcm"
LAX_UNARY_F = (
    "exp exp2 log log1p expm1 tanh logistic sin cos tan asin acos atan sinh cosh asinh acosh "
    "atanh sqrt rsqrt cbrt erf erfc erf_inv lgamma digamma floor ceil round is_finite "
    "bessel_i0e bessel_i1e"
)
LAX_BINARY = "add sub mul div rem max min eq ne lt le gt ge"
NN_UNARY = (
    "relu relu6 sigmoid softplus silu swish log_sigmoid elu celu selu hard_tanh hard_sigmoid "
    "hard_silu soft_sign sparse_plus squareplus mish tanh"
)
SPECIAL_UNARY = (
    "erf erfc erfinv gammaln digamma expit logit ndtr ndtri log_ndtr i0 i0e i1 i1e entr erfcx "
    "gamma loggamma"
)
SPECIAL_BINARY = "xlogy xlog1py gammainc gammaincc zeta rel_entr kl_div"
_AXES_KW = {"keepdims": _bool}

SPECS: list[Spec] = [
    *_specs("unary", JNP_UNARY),
    Spec("jnp.round", "unary", NUMERIC, grad=False, kwargs={"decimals": st.integers(-2, 3)}),
    Spec(
        "jnp.nan_to_num",
        "unary",
        NUMERIC,
        kwargs={"nan": st.sampled_from([0.0, 1.5]), "posinf": st.sampled_from([None, 9.0])},
    ),
    Spec("jnp.clip", "clip", REAL),
    *_specs("binary", JNP_BINARY, dtypes=ALL),
    *_specs("binary", JNP_INT_BINARY, dtypes=INTS + BOOL, grad=False),
    *_specs("binary", JNP_GCD, dtypes=INTS + BOOL, grad=False, domain="no_int_min"),
    Spec("jnp.ldexp", "ldexp", FLOATS),
    *_specs("reduce", "sum prod mean max min amax amin all any ptp", kwargs=_AXES_KW),
    *_specs("reduce", "nansum nanprod nanmean nanmax nanmin", dtypes=INEXACT, kwargs=_AXES_KW),
    *_specs("reduce", "count_nonzero", grad=False),
    *_specs("reduce", "std var", kwargs={**_AXES_KW, "ddof": st.integers(0, 2)}),
    Spec("jnp.median", "reduce", REAL, kwargs=_AXES_KW),
    *_specs("reduce1", "argmax argmin", dtypes=REAL + BOOL, grad=False, kwargs=_AXES_KW),
    *_specs("reduce1", "cumsum cumprod nancumsum nancumprod", dtypes=NUMERIC, tol=4.0),
    Spec("jnp.sort", "reduce1", REAL + BOOL, kwargs={"descending": _bool, "stable": _bool}),
    Spec("jnp.argsort", "reduce1", REAL + BOOL, grad=False, kwargs={"descending": _bool}),
    Spec("jnp.flip", "reduce", ALL),
    Spec("jnp.diff", "reduce1", NUMERIC, kwargs={"n": st.integers(0, 2)}),
    Spec("jnp.roll", "roll", ALL),
    Spec("jnp.expand_dims", "expand_dims", ALL),
    Spec("jnp.squeeze", "squeeze", ALL),
    Spec("jnp.transpose", "transpose", ALL),
    Spec("jnp.swapaxes", "two_axes", ALL),
    Spec("jnp.moveaxis", "two_axes", ALL),
    Spec("jnp.reshape", "reshape", ALL),
    Spec("jnp.ravel", "unary", ALL),
    Spec("jnp.broadcast_to", "broadcast_to", ALL),
    Spec("jnp.tile", "tile", ALL),
    Spec("jnp.repeat", "repeat", ALL),
    Spec("jnp.concatenate", "concatenate", ALL),
    Spec("jnp.stack", "stack", ALL),
    Spec("jnp.where", "where", ALL),
    Spec("jnp.tril", "matrix", ALL, kwargs={"k": st.integers(-2, 2)}),
    Spec("jnp.triu", "matrix", ALL, kwargs={"k": st.integers(-2, 2)}),
    Spec("jnp.diagonal", "matrix", ALL, kwargs={"offset": st.integers(-2, 2)}),
    Spec("jnp.trace", "matrix", NUMERIC, kwargs={"offset": st.integers(-2, 2)}),
    Spec("jnp.take", "take", ALL),
    Spec("jnp.pad", "pad", ALL),
    Spec("jnp.matmul", "matmul", NUMERIC, tol=4.0),
    Spec("jnp.dot", "matmul", NUMERIC, tol=4.0),
    Spec("jnp.outer", "outer", NUMERIC),
    *_specs("lax_unary", "lax.neg lax.sign lax.abs", dtypes=FLOATS + SIGNED),
    *_specs("lax_unary", LAX_UNARY_F, "lax", dtypes=FLOATS),
    Spec("lax.population_count", "lax_unary", INTS, grad=False),
    Spec("lax.clz", "lax_unary", INTS, grad=False),
    Spec("lax.bitwise_not", "lax_unary", INTS + BOOL, grad=False),
    *_specs("lax_binary", LAX_BINARY, "lax", dtypes=REAL),
    Spec("lax.pow", "lax_binary", FLOATS),
    Spec("lax.atan2", "lax_binary", FLOATS),
    Spec("lax.nextafter", "lax_binary", ("float32",), grad=False),
    *_specs("lax_binary", "lax.shift_left lax.shift_right_logical", dtypes=INTS, grad=False),
    Spec("lax.shift_right_arithmetic", "lax_binary", INTS, grad=False),
    *_specs("lax_reduce", "lax.reduce_sum lax.reduce_max lax.reduce_min", dtypes=REAL),
    Spec("lax.reduce_prod", "lax_reduce", REAL, tol=4.0),
    *_specs("lax_reduce", "lax.reduce_and lax.reduce_or", dtypes=BOOL + INTS, grad=False),
    *_specs("lax_cum", "lax.cumsum lax.cumprod lax.cummax lax.cummin", dtypes=REAL, tol=4.0),
    Spec("lax.cumlogsumexp", "lax_cum", FLOATS, tol=4.0),
    Spec("lax.top_k", "top_k", REAL),
    Spec("lax.clamp", "clamp", REAL),
    *_specs("unary", NN_UNARY, "nn", dtypes=FLOATS),
    Spec("nn.gelu", "unary", FLOATS, kwargs={"approximate": _bool}),
    Spec("nn.leaky_relu", "unary", FLOATS, kwargs={"negative_slope": st.sampled_from([0.01, 0.3])}),
    Spec("nn.softmax", "reduce1", FLOATS, tol=4.0),
    Spec("nn.log_softmax", "reduce1", FLOATS, tol=4.0),
    Spec("nn.logsumexp", "reduce", FLOATS, tol=4.0, kwargs=_AXES_KW),
    Spec("nn.standardize", "reduce1", ("float32",), tol=8.0),
    Spec("nn.one_hot", "one_hot", INTS, grad=False),
    *_specs("unary", SPECIAL_UNARY, "special", dtypes=(*FLOATS, "int32"), tol=4.0),
    *_specs("binary", SPECIAL_BINARY, "special", dtypes=FLOATS, tol=4.0),
    Spec("special.polygamma", "polygamma", FLOATS, tol=8.0),
    *(
        Spec("random." + n, "random", FLOATS, grad=False, vmap=False)
        for n in ["normal", "uniform", "gumbel", "laplace", "logistic", "cauchy", "exponential"]
    ),
    Spec("random.randint", "randint", INTS, grad=False, vmap=False),
    Spec("random.bernoulli", "bernoulli", ("float32",), grad=False, vmap=False),
    Spec("random.permutation", "permutation", REAL, grad=False, vmap=False),
    Spec("random.categorical", "categorical", FLOATS, grad=False, vmap=False),
    *(
        Spec("linalg." + n, "square", ("float32", "complex64"), tol=300.0)
        for n in ["det", "inv", "slogdet", "eigvalsh", "matrix_power"]
    ),
    Spec("linalg.cholesky", "square", ("float32",), tol=300.0, domain="spd"),
    Spec("linalg.svdvals", "matrix", ("float32",), tol=300.0),
    Spec("linalg.solve", "solve", ("float32",), tol=300.0),
    Spec(
        "linalg.norm",
        "norm",
        ("float32", "complex64"),
        tol=8.0,
        kwargs={"keepdims": _bool},
    ),
]


# ---- values --------------------------------------------------------------------------------------
def special_values(dtype: str) -> list[Any]:
    """The values users feed that nobody tests: int min/max, NaN, infinities, -0.0, subnormals."""
    if dtype == "bool":
        return [True, False]
    dt = np_dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return [info.min, info.max, 0, 1, info.max - 1, *([-1] if dt.kind == "i" else [])]
    fi = ml_dtypes.finfo(dt) if dtype == "bfloat16" else np.finfo(dt)
    real = [np.nan, np.inf, -np.inf, -0.0, 0.0, float(fi.smallest_subnormal), float(fi.tiny)]
    real += [float(fi.max), -float(fi.max), 1.0, -1.0, 0.5]
    if dt.kind == "c":
        return [complex(a, b) for a, b in zip(real, real[3:] + real[:3])]
    return real


def draw_values(
    rng: np.random.RandomState, shape: tuple[int, ...], dtype: str, domain: str, special: float
) -> np.ndarray:
    """An operand: ordinary values of the domain, a `special` fraction of them special values."""
    dt = np_dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        flat: np.ndarray = rng.uniform(size=n) < 0.5
    elif dt.kind in "iu":
        lo = 0 if dt.kind == "u" or domain in ("positive", "spd") else -10
        flat = rng.randint(lo, 11, size=n)
    else:
        if domain in ("positive", "spd"):
            flat = rng.uniform(0.1, 4.0, size=n)
        elif domain == "unit":
            flat = rng.uniform(-0.95, 0.95, size=n)
        else:
            flat = rng.standard_normal(size=n) * 3
        if dt.kind == "c":
            flat = flat + 1j * rng.standard_normal(size=n) * 3
    out = flat.astype(dt)
    if special > 0 and n and domain not in ("spd",):
        specials = special_values(dtype)
        if domain == "no_int_min" and dt.kind == "i":
            specials = [v for v in specials if v != np.iinfo(dt).min]
        mask = rng.uniform(size=n) < special
        picks = rng.randint(0, len(specials), size=n)
        for i in np.flatnonzero(mask):
            out[i] = specials[picks[i]]
    return out.reshape(shape)


# ---- shapes and axes -----------------------------------------------------------------------------
Shape = tuple[int, ...]
MAX_SIZE = 400
_DIMS = st.sampled_from([0, 1, 1, 2, 2, 3, 3, 3, 4, 4, 5, 6])


@st.composite
def shapes(draw: Any, min_rank: int = 0, max_rank: int = 5) -> Shape:
    rank = draw(st.sampled_from([r for r in (0, 1, 1, 2, 2, 2, 3, 3, 4, 5) if min_rank <= r]))
    rank = min(rank, max_rank)
    dims = [draw(_DIMS) for _ in range(rank)]
    while int(np.prod(dims, dtype=np.int64)) > MAX_SIZE:
        dims[dims.index(max(dims))] //= 2
    return tuple(dims)


@st.composite
def broadcast_partner(draw: Any, shape: Shape) -> Shape:
    """A shape broadcasting with `shape`; now and then one that does not."""
    how = draw(st.sampled_from(["same", "same", "suffix", "ones", "scalar", "prefix", "bad"]))
    if how == "same":
        return shape
    if how == "suffix":
        return shape[draw(st.integers(0, len(shape))) :]
    if how == "ones":
        return tuple(1 if draw(st.booleans()) else d for d in shape)
    if how == "scalar":
        return ()
    if how == "prefix":
        return (draw(st.integers(1, 2)), *shape)
    big = [i for i, d in enumerate(shape) if d > 1]
    if not big:
        return shape
    i = draw(st.sampled_from(big))
    return shape[:i] + (shape[i] + 1,) + shape[i + 1 :]


@st.composite
def axis(draw: Any, ndim: int, none: bool = True, tuples: bool = True) -> Any:
    """None, an axis (negative too), a tuple of them; rarely out of range or repeated."""
    how = draw(st.sampled_from(["int"] * 4 + ["none"] * none + ["tuple"] * 2 * tuples + ["bad"]))
    if how == "none":
        return None
    if how == "bad":
        bad = [ndim, -ndim - 1]
        if tuples and ndim:
            bad.append((0, -ndim))  # repeated
        return draw(st.sampled_from(bad))
    if ndim == 0:
        return () if how == "tuple" else None if none else 0
    if how == "int":
        return draw(st.integers(-ndim, ndim - 1))
    axes = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return tuple(a - ndim if draw(st.booleans()) else a for a in axes)


# ---- cases ---------------------------------------------------------------------------------------
@dataclass
class Case:
    spec: Spec
    args: list[Any]  # np.ndarray (operand), list of them, Key, or a static value
    kwargs: dict[str, Any]  # static
    mode: str  # eager | jit | grad | vmap
    vmap_arg: int = -1  # under vmap: which argument carries the batch (leading axis)
    seed: int = 0

    def describe(self) -> dict[str, Any]:
        """JSON: enough to rebuild the call by hand (values in full when small)."""
        return {
            "op": self.spec.op,
            "mode": self.mode,
            "args": [_describe(a) for a in self.args],
            "kwargs": {k: _describe(v) for k, v in self.kwargs.items()},
            **({"vmap_arg": self.vmap_arg} if self.mode == "vmap" else {}),
        }

    def __repr__(self) -> str:
        return json.dumps(self.describe())


def _describe(a: Any) -> Any:
    if isinstance(a, np.ndarray):
        d: dict[str, Any] = {"shape": list(a.shape), "dtype": str(a.dtype)}
        if a.size <= 2048:  # (shapes are capped at a few hundred elements)
            v = (
                a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
                if a.dtype.kind in "fcV" or str(a.dtype) == "bfloat16"
                else a
            )
            d["values"] = [repr(x) for x in np.asarray(v).ravel().tolist()]
        return d
    if isinstance(a, (list, tuple)) and any(isinstance(x, np.ndarray) for x in a):
        return [_describe(x) for x in a]
    if isinstance(a, Key):
        return {"key": a.seed}
    if isinstance(a, (np.dtype, type)):
        return str(a)
    return repr(a)


class Draw:
    """The kind functions' helper: shapes and operands of the case's dtype, from one rng."""

    def __init__(
        self, draw: Any, spec: Spec, dtype: str, rng: np.random.RandomState, special: float
    ):
        self.draw, self.spec, self.dtype, self.rng, self.special = draw, spec, dtype, rng, special

    def __call__(self, strategy: Any) -> Any:
        return self.draw(strategy)

    def arr(self, shape: Shape, dtype: str | None = None, domain: str | None = None) -> np.ndarray:
        return draw_values(
            self.rng, shape, dtype or self.dtype, domain or self.spec.domain, self.special
        )

    def shape(self, min_rank: int = 0, max_rank: int = 5) -> Shape:
        return self.draw(shapes(min_rank, max_rank))

    def other_dtype(self) -> str:
        """Mostly the case's dtype; now and then another of the spec's (promotion)."""
        if self.draw(st.integers(0, 3)) == 0:
            return self.draw(st.sampled_from(self.spec.dtypes))
        return self.dtype

    def scalar(self) -> Any:
        kind = np_dtype(self.dtype).kind
        pool: list[Any] = [2, -1, 0, 0.5, 3.0, True]
        if kind == "c":
            pool.append(1 + 2j)
        if kind == "f":
            pool += [float("nan"), float("inf")]
        return self.draw(st.sampled_from(pool))


Args = tuple[list[Any], dict[str, Any]]


def _unary(d: Draw) -> Args:
    return [d.arr(d.shape())], {}


def _binary(d: Draw) -> Args:
    s = d.shape()
    x = d.arr(s)
    y: Any = d.arr(d(broadcast_partner(s)), d.other_dtype())
    if d(st.integers(0, 6)) == 0:
        y = d.scalar()
    return ([x, y] if d(st.booleans()) or not isinstance(y, np.ndarray) else [y, x]), {}


def _clip(d: Draw) -> Args:
    s = d.shape()
    lo = d(st.sampled_from([None, -1, 0.5])) if d(st.booleans()) else d.arr(d(broadcast_partner(s)))
    hi = d(st.sampled_from([None, 2, 1.5]))
    return [d.arr(s)], {"min": lo, "max": hi}


def _ldexp(d: Draw) -> Args:
    s = d.shape()
    return [d.arr(s), d.arr(d(broadcast_partner(s)), "int32")], {}


def _reduce(d: Draw) -> Args:
    x = d.arr(d.shape())
    return [x], {"axis": d(axis(x.ndim))}


def _reduce1(d: Draw) -> Args:
    x = d.arr(d.shape())
    return [x], {"axis": d(axis(x.ndim, none=d.spec.op not in ("nn.softmax",), tuples=False))}


def _roll(d: Draw) -> Args:
    x = d.arr(d.shape())
    ax = d(axis(x.ndim, tuples=False))
    shift = d(st.integers(-5, 5))
    return [x, shift], {"axis": ax}


def _expand_dims(d: Draw) -> Args:
    x = d.arr(d.shape(max_rank=4))
    return [x], {"axis": d(axis(x.ndim + 1, none=False))}


def _squeeze(d: Draw) -> Args:
    s = list(d.shape(max_rank=4))
    for _ in range(d(st.integers(0, 2))):
        s.insert(d(st.integers(0, len(s))), 1)
    x = d.arr(tuple(s))
    ones = tuple(i for i, n in enumerate(s) if n == 1)
    ax = d(st.sampled_from([None, ones, *ones, d(axis(x.ndim, none=False))]))
    return [x], {"axis": ax}


def _transpose(d: Draw) -> Args:
    x = d.arr(d.shape())
    perm = d(st.permutations(range(x.ndim)))
    if d(st.booleans()):
        perm = [p - x.ndim for p in perm]
    if d(st.integers(0, 8)) == 0 and x.ndim:
        perm = perm[:-1]  # wrong length
    return [x], {"axes": None if d(st.integers(0, 4)) == 0 else tuple(perm)}


def _two_axes(d: Draw) -> Args:
    x = d.arr(d.shape(min_rank=1))
    a, b = d(axis(x.ndim, none=False, tuples=False)), d(axis(x.ndim, none=False, tuples=False))
    return [x, a, b], {}


def _reshape(d: Draw) -> Args:
    x = d.arr(d.shape())
    n = x.size
    dims: list[int] = []
    rest = n
    for _ in range(d(st.integers(0, 4))):
        divs = [k for k in range(1, 7) if rest % k == 0] if rest else [0, 1, 2]
        k = d(st.sampled_from(divs))
        dims.append(k)
        rest = rest // k if k else rest
    if rest != 1 or not dims:
        dims.append(rest if n else 0)
    if d(st.booleans()) and n:
        dims[d(st.integers(0, len(dims) - 1))] = -1
    if d(st.integers(0, 8)) == 0:
        dims.append(2)  # a size that does not fit (or fits by chance)
    return [x, tuple(dims)], {}


def _broadcast_to(d: Draw) -> Args:
    s = d.shape(max_rank=4)
    target = d(broadcast_partner(s))
    try:
        full = tuple(np.broadcast_shapes(s, target)) if d(st.integers(0, 5)) else target
    except ValueError:  # a partner that does not broadcast: a target that cannot be reached
        full = target
    return [d.arr(s), (*[2] * d(st.integers(0, 1)), *full)], {}


def _tile(d: Draw) -> Args:
    return [d.arr(d.shape(max_rank=3)), tuple(d(st.lists(st.integers(0, 3), max_size=3)))], {}


def _repeat(d: Draw) -> Args:
    x = d.arr(d.shape(max_rank=3))
    return [x, d(st.integers(0, 3))], {"axis": d(axis(x.ndim, tuples=False))}


def _concatenate(d: Draw) -> Args:
    s = list(d.shape(min_rank=1, max_rank=4))
    ax = d(st.integers(-len(s), len(s) - 1))
    parts = []
    for _ in range(d(st.integers(1, 3))):
        s[ax] = d(st.integers(0, 3))
        parts.append(d.arr(tuple(s), d.other_dtype()))
    return [parts], {"axis": ax if d(st.integers(0, 8)) else len(s)}


def _stack(d: Draw) -> Args:
    s = d.shape(max_rank=4)
    parts = [d.arr(s, d.other_dtype()) for _ in range(d(st.integers(1, 3)))]
    return [parts], {"axis": d(st.integers(-len(s) - 2, len(s) + 1))}


def _where(d: Draw) -> Args:
    s = d.shape()
    cond = d.arr(d(broadcast_partner(s)), "bool")
    return [cond, d.arr(s), d.arr(d(broadcast_partner(s)), d.other_dtype())], {}


def _matrix(d: Draw) -> Args:
    return [d.arr(d.shape(min_rank=2, max_rank=4))], {}


def _take(d: Draw) -> Args:
    x = d.arr(d.shape(min_rank=1, max_rank=4))
    ax = d(axis(x.ndim, tuples=False))
    n = x.size if ax is None else x.shape[ax] if -x.ndim <= ax < x.ndim else 1
    idx = d.rng.randint(-n - 2, n + 2, size=d.shape(max_rank=2)).astype(np.int32)
    kw: dict[str, Any] = {"axis": ax}
    if d(st.booleans()):
        kw["mode"] = d(st.sampled_from(["clip", "wrap", "fill"]))
    return [x, idx], kw


def _pad(d: Draw) -> Args:
    x = d.arr(d.shape(max_rank=4))
    width: Any = d(st.integers(0, 2))
    if d(st.booleans()) and x.ndim:
        width = tuple((d(st.integers(0, 2)), d(st.integers(0, 2))) for _ in range(x.ndim))
    mode = d(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
    return [x, width], {"mode": mode}


def _matmul(d: Draw) -> Args:
    batch = d.shape(max_rank=2)
    m, k, n = (d(st.integers(0, 4)) for _ in range(3))
    a_shape = (*batch, m, k) if d(st.integers(0, 4)) else (k,)
    b_shape = (*d(broadcast_partner(batch)), k, n) if d(st.integers(0, 4)) else (k,)
    if d(st.integers(0, 10)) == 0:
        b_shape = (*b_shape[:-2], k + 1, n) if len(b_shape) >= 2 else (k + 1,)
    return [d.arr(a_shape), d.arr(b_shape, d.other_dtype())], {}


def _outer(d: Draw) -> Args:
    return [d.arr(d.shape(max_rank=2)), d.arr(d.shape(max_rank=2))], {}


def _lax_binary(d: Draw) -> Args:
    s = d.shape()
    y: Any = d.arr(s if d(st.integers(0, 8)) else d(broadcast_partner(s)), d.dtype)
    if d(st.integers(0, 10)) == 0:
        y = d.arr(s, d(st.sampled_from(d.spec.dtypes)))
    elif d(st.integers(0, 8)) == 0:
        y = d.scalar()
    return [d.arr(s), y], {}


def _lax_reduce(d: Draw) -> Args:
    x = d.arr(d.shape())
    axes = d(st.lists(st.integers(0, max(x.ndim - 1, 0)), unique=True, max_size=x.ndim))
    if d(st.integers(0, 10)) == 0:
        axes.append(x.ndim)
    return [x, tuple(axes)], {}


def _lax_cum(d: Draw) -> Args:
    x = d.arr(d.shape(min_rank=1))
    return [x], {"axis": d(st.integers(0, x.ndim - 1)), "reverse": d(st.booleans())}


def _top_k(d: Draw) -> Args:
    x = d.arr(d.shape(min_rank=1))
    return [x, d(st.integers(0, x.shape[-1] + 1))], {}


def _clamp(d: Draw) -> Args:
    s = d.shape()
    lo = d.arr(() if d(st.booleans()) else s)
    hi = d.arr(() if d(st.booleans()) else s)
    return [lo, d.arr(s), hi], {}


def _one_hot(d: Draw) -> Args:
    x = d.arr(d.shape(max_rank=3))
    return [x, d(st.integers(0, 6))], {"axis": d(st.sampled_from([-1, 0]))}


def _polygamma(d: Draw) -> Args:
    s = d.shape()
    n = d.rng.randint(0, 4, size=s).astype(d.dtype if d.dtype != "bfloat16" else "float32")
    return [n.astype(np_dtype(d.dtype)), d.arr(s, domain="positive")], {}


def _random(d: Draw) -> Args:
    return [Key(d(st.integers(0, 2**31 - 1))), d.shape(max_rank=3)], {"dtype": d.dtype}


def _randint(d: Draw) -> Args:
    lo = d(st.integers(-130, 10))
    return [
        Key(d(st.integers(0, 2**31 - 1))),
        d.shape(max_rank=3),
        lo,
        lo + d(st.integers(0, 300)),
    ], {"dtype": d.dtype}


def _bernoulli(d: Draw) -> Args:
    p = d(st.sampled_from([0.0, 0.3, 0.5, 1.0]))
    return [Key(d(st.integers(0, 2**31 - 1))), p, d.shape(max_rank=3)], {}


def _permutation(d: Draw) -> Args:
    x: Any = (
        d.arr(d.shape(min_rank=1, max_rank=3)) if d(st.integers(0, 3)) else d(st.integers(0, 6))
    )
    return [Key(d(st.integers(0, 2**31 - 1))), x], {}


def _categorical(d: Draw) -> Args:
    x = d.arr(d.shape(min_rank=1, max_rank=3))
    return [Key(d(st.integers(0, 2**31 - 1))), x], {"axis": d(st.integers(-x.ndim, x.ndim - 1))}


def _square(d: Draw) -> Args:
    n = d(st.integers(0, 4))
    s = (*d.shape(max_rank=1), n, n)
    a = d.arr(s)
    if d.spec.domain == "spd":
        a = (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(a.dtype)
    elif d.spec.op == "linalg.matrix_power":
        return [a, d(st.integers(-2, 3))], {}
    return [a], {}


def _solve(d: Draw) -> Args:
    n = d(st.integers(1, 4))
    a = (d.arr((n, n), domain="unit") + 2 * np.eye(n)).astype(np_dtype(d.dtype))
    b = d.arr((n,) if d(st.booleans()) else (n, d(st.integers(0, 3))))
    return [a, b], {}


def _norm(d: Draw) -> Args:
    x = d.arr(d.shape(min_rank=1, max_rank=2))
    ords: list[Any] = [None, 1, 2, np.inf, -np.inf] + (["fro", "nuc"] if x.ndim == 2 else [0, 3])
    return [x], {"ord": d(st.sampled_from(ords))}


KINDS: dict[str, Callable[[Draw], Args]] = {
    "unary": _unary, "binary": _binary, "clip": _clip, "ldexp": _ldexp, "reduce": _reduce,
    "reduce1": _reduce1, "roll": _roll, "expand_dims": _expand_dims, "squeeze": _squeeze,
    "transpose": _transpose, "two_axes": _two_axes, "reshape": _reshape,
    "broadcast_to": _broadcast_to, "tile": _tile, "repeat": _repeat,
    "concatenate": _concatenate, "stack": _stack, "where": _where, "matrix": _matrix,
    "take": _take, "pad": _pad, "matmul": _matmul, "outer": _outer, "lax_unary": _unary,
    "lax_binary": _lax_binary, "lax_reduce": _lax_reduce, "lax_cum": _lax_cum, "top_k": _top_k,
    "clamp": _clamp, "one_hot": _one_hot, "polygamma": _polygamma, "random": _random,
    "randint": _randint, "bernoulli": _bernoulli, "permutation": _permutation,
    "categorical": _categorical, "square": _square, "solve": _solve, "norm": _norm,
}  # fmt: skip

MODES = ("eager", "jit", "grad", "vmap")


def is_operand(a: Any) -> bool:
    return isinstance(a, np.ndarray) or (
        isinstance(a, list) and bool(a) and all(isinstance(x, np.ndarray) for x in a)
    )


@st.composite
def cases(
    draw: Any, specs: list[Spec] | None = None, x64: bool = False, modes: tuple[str, ...] = MODES
) -> Case:
    spec = draw(st.sampled_from(specs or SPECS))
    pool = widen(spec.dtypes, x64)
    dtype = draw(
        st.sampled_from(pool if draw(st.integers(0, 19)) else ALL)
    )  # now and then a wrong one
    seed = draw(st.integers(0, 2**32 - 1))
    allowed = [m for m in modes if m == "eager" or getattr(spec, m, True)]
    if not (spec.grad and np_dtype(dtype).kind == "f"):
        allowed = [m for m in allowed if m != "grad"]
    mode = draw(st.sampled_from(allowed or ["eager"]))
    # derivatives at NaN and infinities are each library's artefact: grad sees finite values
    # and linear algebra of matrices with infinities is each LAPACK's own
    finite = mode == "grad" or spec.op.startswith("linalg.")
    special = 0.0 if finite else draw(st.sampled_from([0.0, 0.0, 0.1, 0.5]))
    d = Draw(draw, spec, dtype, np.random.RandomState(seed), special)
    args, kwargs = KINDS[spec.kind](d)
    for kw, strategy in spec.kwargs.items():
        if draw(st.booleans()):
            kwargs[kw] = draw(strategy)
    operands = [i for i, a in enumerate(args) if is_operand(a)]
    if (mode == "grad" and not isinstance(args[0], np.ndarray)) or (
        mode == "vmap" and not operands
    ):
        mode = "eager"
    case = Case(spec, args, kwargs, mode, seed=seed)
    if mode == "vmap":
        i = draw(st.sampled_from(operands))
        size = draw(st.integers(1, 3))

        def batched(a: np.ndarray) -> np.ndarray:
            more = [
                draw_values(
                    d.rng,
                    a.shape,
                    str(a.dtype) if str(a.dtype) != "bfloat16" else "bfloat16",
                    spec.domain,
                    special,
                )
                for _ in range(size - 1)
            ]
            return np.stack([a, *more])

        args[i] = (
            batched(args[i]) if isinstance(args[i], np.ndarray) else [batched(a) for a in args[i]]
        )
        case.vmap_arg = i
    return case
