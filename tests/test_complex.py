"""Complex numbers (complex64; complex128 under x64 where the backend has float64) across
webjax's API, differentially tested against real JAX and NumPy on every backend: printing,
elementwise accuracy over wide ranges (against NumPy in complex128), lax primitives, jax.numpy
functions (values, dtypes, weak types, JAX's errors), linear algebra, derivatives (finite
differences, and JAX's jvp/grad/vjp/jacobians with and without holomorphic=True), vmap against
a loop and jit against eager."""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from check_grads import check_grads
from devices import has_float64
from webjax import lax

jax = pytest.importorskip("jax")
rjnp = pytest.importorskip("jax.numpy")
rlax = pytest.importorskip("jax.lax")

# the oracle warns when it drops imaginary parts or is asked for 64-bit types without x64
pytestmark = [
    pytest.mark.filterwarnings("ignore:Casting complex values to real"),
    pytest.mark.filterwarnings("ignore:Casting from complex to real dtypes"),
    pytest.mark.filterwarnings("ignore:Explicitly requested dtype"),
    pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning"),
]

R = np.random.RandomState(0)
INF, NAN = np.inf, np.nan


def crand(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (scale * (R.randn(*shape) + 1j * R.randn(*shape))).astype(np.complex64)


Z = crand(3, 4)
W = crand(3, 4)
ZV, WV = crand(6), crand(6)
RV = R.randn(6).astype(np.float32)
Z2 = crand(4, 4)
W2 = crand(4, 3)
H4 = (Z2 + Z2.conj().T).astype(np.complex64)  # Hermitian
TIES = np.array([1 + 2j, 1 + 1j, -1 + 5j, 0 - 1j, 1 + 2j, 1 - 1j, 3j, -1 + 5j], np.complex64)
WITH_NAN = np.array([1 + 1j, complex(NAN, 0), 2 + 0j, complex(0, NAN), -1j], np.complex64)


@contextlib.contextmanager
def x64() -> Iterator[None]:
    jax.config.update("jax_enable_x64", True)
    try:
        with webjax.enable_x64(True):
            yield
    finally:
        jax.config.update("jax_enable_x64", False)


def _leaves(x: Any) -> list[Any]:
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _same_values(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, what: str) -> None:
    """Values close (NaN where the other has NaN, in each part; infinities exactly)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        for part in (np.real, np.imag):
            _same_values(part(a), part(b), rtol, atol, what)
        return
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        np.testing.assert_array_equal(a, b, err_msg=what)
        return
    np.testing.assert_allclose(
        a.astype(np.float64),
        b.astype(np.float64),
        rtol=rtol,
        atol=atol,
        equal_nan=True,
        err_msg=what,
    )


def assert_like_jax(
    ours: Any, theirs: Any, what: str, rtol: float = 2e-5, atol: float = 2e-6
) -> None:
    """Same structure, shapes, dtypes, weak types and (close) values as the oracle's."""
    a, b = _leaves(ours), _leaves(theirs)
    assert len(a) == len(b), f"{what}: {len(a)} results vs {len(b)}"
    for x, y in zip(a, b):
        if isinstance(y, (bool, int, float, complex)) and not hasattr(y, "dtype"):
            assert type(x) is type(y) and x == y, f"{what}: {x!r} vs {y!r}"
            continue
        assert tuple(np.shape(x)) == tuple(np.shape(y)), (
            f"{what}: shape {np.shape(x)} vs {np.shape(y)}"
        )
        assert str(x.dtype) == str(y.dtype), f"{what}: dtype {x.dtype} vs {y.dtype}"
        if hasattr(y, "weak_type"):
            assert x.aval.weak_type == y.weak_type, f"{what}: weak_type {x.aval.weak_type}"
        _same_values(np.asarray(x), np.asarray(y), rtol, atol, what)


def both(fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    """fn applied to webjax.numpy and to jax.numpy."""
    return fn(jnp), fn(rjnp)


# ---- printing -----------------------------------------------------------------------------------
REPR_CASES = [
    "array([1+2j, 3-4j, -0.5+0.25j])",
    "array(1+2j)",
    "array(2j)",
    "array([0j])",
    "array([1e10+1j, 1e-5-2j])",
    "array([1e-20+1e20j, 3+4j])",
    "array([complex(NAN, 1), complex(1, INF), complex(-INF, -INF)])",
    "array([complex(1.5, NAN), 2+3j])",
    "array([complex(0., -0.), complex(-0., 0.)])",
    "arange(2000).astype(jnp.complex64) * (1+1j)",
    "arange(12).reshape(3, 4).astype(jnp.complex64) / 3 + 1j",
    "array([1/3 + 2j/3, 1e-3j])",
    "exp(1j * jnp.arange(8.))",
    "array([complex(1e38, -1e38), complex(1e-38, 1e-45)])",
    "arange(30.).reshape(2, 3, 5) * (1-1j) / 7",
    "zeros((2, 0), jnp.complex64)",
    "ones((3, 40), jnp.complex64)",
    "full((25,), 1e5 + 2.5j)",
    "array(1e6+1j)",
    "array(0.1+0.2j)",
    "array(123456789+1j)",
    "array(complex(NAN, INF))",
    "array(complex(-0., -2.))",
    "asarray(1j) * 2",
    "array([1, 2]) * 1j",
    "array([1e-5, 1e6])",
    "array(1e6)",
    "array(0.0001)",
    "array([3.4028235e38, -3.4028235e38])",
]


@pytest.mark.parametrize("expr", REPR_CASES)
def test_repr_and_str_match_jax(expr):
    env = {"NAN": NAN, "INF": INF}
    ours = eval("jnp." + expr, {"jnp": jnp, **env})
    theirs = eval("rjnp." + expr.replace("jnp.", "rjnp."), {"rjnp": rjnp, **env})
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


def test_repr_complex128_and_printoptions_match_jax():
    with x64():
        for expr in (
            "array([1/3 + 2j/3, 1e-3j])",
            "array(0.1+0.2j)",
            "array([1e-300+1e300j])",
            "array(1e15+1j)",
            "arange(1500, dtype=jnp.complex128) / 7",
        ):
            ours = eval("jnp." + expr, {"jnp": jnp})
            theirs = eval("rjnp." + expr.replace("jnp.", "rjnp."), {"rjnp": rjnp})
            assert repr(ours) == repr(theirs) and str(ours) == str(theirs), expr
    x = np.array([1 / 3 + 2j / 3, 1e-3j], np.complex64)
    with jnp.printoptions(precision=3), rjnp.printoptions(precision=3):
        assert repr(jnp.asarray(x)) == repr(rjnp.asarray(x))
    with jnp.printoptions(linewidth=30), rjnp.printoptions(linewidth=30):
        assert repr(jnp.arange(10) * (1 + 1j)) == repr(rjnp.arange(10) * (1 + 1j))


# ---- elementwise functions: accuracy ------------------------------------------------------------
def _wide_inputs(n: int = 400, seed: int = 1) -> np.ndarray:
    """Complex64 points over wide magnitudes, near the branch points and cuts (+-1, +-i, the
    axes), on the unit circle and at zero parts (kept clear of subnormals, which some
    backends flush)."""
    rng = np.random.RandomState(seed)
    sign = lambda: rng.choice([-1.0, 1.0], n)
    pts = [
        10.0 ** rng.uniform(-15, 15, n) * np.exp(1j * rng.uniform(-np.pi, np.pi, n)),
        10.0 ** rng.uniform(-4, 2, n) * np.exp(1j * rng.uniform(-np.pi, np.pi, n)),
        sign() * 10.0 ** rng.uniform(-10, 10, n) + 1j * sign() * 10.0 ** rng.uniform(-10, 10, n),
        sign() * (1 + sign() * 10.0 ** rng.uniform(-7, 0, n))
        + 1j * sign() * 10.0 ** rng.uniform(-30, 0, n),
        1j * sign() * (1 + sign() * 10.0 ** rng.uniform(-7, 0, n))
        + sign() * 10.0 ** rng.uniform(-30, 0, n),
        np.exp(1j * rng.uniform(-np.pi, np.pi, n)) * (1 + rng.uniform(-1e-3, 1e-3, n)),
        sign() * 10.0 ** rng.uniform(-15, 15, n) + 0j,
        1j * sign() * 10.0 ** rng.uniform(-15, 15, n),
    ]
    return np.concatenate(pts).astype(np.complex64)


def _ref_log1p(v: np.ndarray) -> np.ndarray:
    x, y = v.real, v.imag
    near = np.abs(x) + np.abs(y) < 0.5
    re = np.where(near, 0.5 * np.log1p(x * (2 + x) + y * y), np.log(np.abs(1 + v)))
    return re + 1j * np.arctan2(y, 1 + x)


def _ref_expm1(v: np.ndarray) -> np.ndarray:
    x, y = v.real, v.imag
    s = np.sin(y / 2)
    return (np.expm1(x) * np.cos(y) - 2 * s * s) + 1j * np.exp(x) * np.sin(y)


# name -> (reference in complex128, p99 bound, max bound) in float32 ulps of each part
ACCURACY = {
    "exp": (np.exp, 2, 4),
    "log": (np.log, 2, 6),
    "sqrt": (np.sqrt, 2, 4),
    "rsqrt": (lambda v: 1 / np.sqrt(v), 4, 8),
    "sin": (np.sin, 3, 6),
    "cos": (np.cos, 3, 6),
    "tan": (np.tan, 4, 8),
    "sinh": (np.sinh, 3, 6),
    "cosh": (np.cosh, 3, 6),
    "tanh": (np.tanh, 4, 8),
    "expm1": (_ref_expm1, 4, 4000),  # cancels where e^a cos b = 1 (the real part's zeros)
    "log1p": (_ref_log1p, 3, 6),
    # XLA's asin/acos/asinh/acosh take zero parts as +0 on their branch cuts: so does webjax
    "asin": (lambda v: np.arcsin(v + 0), 3, 6),
    "acos": (lambda v: np.arccos(v + 0), 3, 6),
    "atan": (np.arctan, 3, 6),
    "asinh": (lambda v: np.arcsinh(v + 0), 3, 6),
    "acosh": (lambda v: np.arccosh(v + 0), 3, 6),
    "atanh": (np.arctanh, 3, 6),
    "sign": (lambda v: v / np.abs(v), 2, 4),
}


def _ulp_errors(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The larger of the parts' errors in float32 ulps of the reference part (0 where both are
    the same NaN/infinity, inf where they disagree on it)."""
    errs = []
    with np.errstate(all="ignore"):
        return _ulp_errors_quiet(got, want, errs)


def _ulp_errors_quiet(got: np.ndarray, want: np.ndarray, errs: list[Any]) -> np.ndarray:
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        w32 = w.astype(np.float32)
        ulp = np.maximum(np.spacing(np.abs(w32)).astype(np.float64), 2.0**-126 * 2.0**-23)
        e = np.abs(g.astype(np.float64) - w) / ulp
        same = (np.isnan(g) & np.isnan(w32)) | ((g == w32) & np.isinf(w32))
        e = np.where(same, 0.0, e)
        errs.append(np.where(np.isnan(e) | (np.isinf(g) != np.isinf(w32)), np.inf, e))
    return np.maximum(*errs)


@pytest.mark.parametrize("name", sorted(ACCURACY))
def test_elementwise_accuracy(device, name):
    ref, p99, worst = ACCURACY[name]
    z = _wide_inputs()
    with np.errstate(all="ignore"):
        want = ref(z.astype(np.complex128))
        w32 = want.astype(np.complex64)
    # judged where the exact result is a normal complex64 number
    ok = np.isfinite(w32.real) & np.isfinite(w32.imag) & np.isfinite(want)
    for part in (want.real, want.imag):
        ok &= (part == 0) | (np.abs(part) >= 2.0**-126)
    got = np.asarray(getattr(lax, name)(jnp.asarray(z)))
    err = _ulp_errors(got, want)[ok]
    assert np.percentile(err, 99) <= p99, (name, np.percentile(err, 99))
    bad = np.argmax(err)
    assert err[bad] <= worst, (name, z[ok][bad], got[ok][bad], want[ok][bad], err[bad])


UNARY = ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "expm1",
         "log1p", "asin", "acos", "atan", "asinh", "acosh", "atanh", "exp2", "logistic", "sign",
         "abs", "neg", "real", "imag", "conj"]  # fmt: skip


@pytest.mark.parametrize("name", UNARY)
def test_lax_unary_matches_jax(device, name):
    z = np.concatenate([Z.ravel(), ZV, crand(8, scale=20.0), [0j, 1 + 0j, -1 + 0j, 2j, -2 + 0j]])
    z = z.astype(np.complex64)
    ours, theirs = getattr(lax, name)(jnp.asarray(z)), getattr(rlax, name)(rjnp.asarray(z))
    assert_like_jax(ours, theirs, name, rtol=5e-6, atol=1e-6)


SPECIAL = np.array(
    [
        0j,
        complex(-0.0, 0.0),
        complex(0.0, -0.0),
        1 + 0j,
        -1 + 0j,
        2 + 0j,
        -2 + 0j,
        complex(-2, -0.0),
        2j,
        -2j,
        complex(INF, 0),
        complex(-INF, 0),
        complex(0, INF),
        complex(INF, INF),
        complex(1, INF),
        complex(INF, 1),
        complex(NAN, 0),
        complex(0, NAN),
        complex(NAN, NAN),
    ],
    np.complex64,
)
# special values (zeros of either sign, infinities, NaNs) where webjax's results equal XLA's up
# to the signs of zero results (XLA's own conventions for those are not C99's, nor consistent)
SPECIAL_NAMES = ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh",
                 "asin", "acos", "asinh", "acosh", "atan", "atanh", "abs", "sign"]  # fmt: skip


@pytest.mark.parametrize("name", SPECIAL_NAMES)
def test_special_values_match_jax(device, name):
    z = SPECIAL
    if name in ("atan", "atanh"):  # XLA returns +-pi/2 parts for NaN inputs here
        z = z[~np.isnan(z)]
    ours = np.asarray(getattr(lax, name)(jnp.asarray(z)))
    theirs = np.asarray(getattr(rlax, name)(rjnp.asarray(z)))
    for a, b in ((np.real(ours), np.real(theirs)), (np.imag(ours), np.imag(theirs))):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, equal_nan=True, err_msg=name)


def test_division_and_power_special_values_match_jax(device):
    a = np.array(
        [
            1 + 1j,
            1 + 1j,
            1 + 1j,
            complex(INF, 0),
            0j,
            1e30 + 1e30j,
            1e-30 + 1e-30j,
            complex(INF, INF),
            1 + 2j,
            3 + 4j,
        ],
        np.complex64,
    )
    b = np.array(
        [
            0j,
            complex(INF, 0),
            complex(INF, INF),
            1 + 1j,
            0j,
            1e30 + 1e30j,
            1e-30 + 1e-30j,
            1 + 0j,
            complex(0, INF),
            2 - 1j,
        ],
        np.complex64,
    )
    assert_like_jax(jnp.asarray(a) / jnp.asarray(b), rjnp.asarray(a) / rjnp.asarray(b), "div")
    base = np.array(
        [0j, 0j, 0j, 0j, 1 + 0j, complex(NAN, 0), -1 + 0j, 2 + 0j, 10 + 0j, 1 + 1j], np.complex64
    )
    expo = np.array(
        [0j, 1 + 1j, 2 + 0j, -1 + 0j, complex(NAN, 0), 0j, 0.5 + 0j, 3 + 0j, 2 + 0j, 0.5 - 2j],
        np.complex64,
    )
    assert_like_jax(jnp.power(base, expo), rjnp.power(base, expo), "pow", rtol=2e-6, atol=1e-6)


BINARY = {
    "mul": lambda m, x, y: m.mul(x, y),
    "div": lambda m, x, y: m.div(x, y),
    "pow": lambda m, x, y: m.pow(x, y),
    "add": lambda m, x, y: m.add(x, y),
    "sub": lambda m, x, y: m.sub(x, y),
    "atan2": lambda m, x, y: m.atan2(x, y),
    "max": lambda m, x, y: m.max(x, y),
    "min": lambda m, x, y: m.min(x, y),
    "eq": lambda m, x, y: m.eq(x, x * (m.real(y) > 0)),
    "ne": lambda m, x, y: m.ne(x, x * (m.real(y) > 0)),
    "clamp": lambda m, x, y: m.clamp(x[0, 0], y, x[1, 1]),
    "scalar": lambda m, x, y: m.mul(x, y[0, 0]),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_lax_binary_matches_jax(device, name):
    f = BINARY[name]
    ours = f(lax, jnp.asarray(Z), jnp.asarray(W))
    assert_like_jax(ours, f(rlax, rjnp.asarray(Z), rjnp.asarray(W)), name, rtol=1e-5, atol=1e-6)


def test_lexicographic_max_min_clamp_match_jax_bitwise(device):
    """max/min are lexicographic (real parts, then imaginary parts); XLA's clamp compares real
    parts only; NaNs included."""
    vals = np.array([0, 1, 2, 3, NAN], np.float32)
    rng = np.random.RandomState(3)

    def pick(n: int) -> np.ndarray:
        return (rng.choice(vals, n) + 1j * rng.choice(vals, n)).astype(np.complex64)

    x, lo, hi = pick(500), pick(500), pick(500)
    for name in ("max", "min"):
        a = np.asarray(getattr(lax, name)(jnp.asarray(x), jnp.asarray(lo)))
        b = np.asarray(getattr(rlax, name)(rjnp.asarray(x), rjnp.asarray(lo)))
        assert np.array_equal(a.view(np.uint64), b.view(np.uint64)), name
    a = np.asarray(lax.clamp(jnp.asarray(lo), jnp.asarray(x), jnp.asarray(hi)))
    b = np.asarray(rlax.clamp(rjnp.asarray(lo), rjnp.asarray(x), rjnp.asarray(hi)))
    assert np.array_equal(a.view(np.uint64), b.view(np.uint64))


LAX_NON_ELEMENTWISE = {  # reductions, scans, sorts, casts, contractions: (lax module, asarray)
    "reduce_max": lambda m, a: m.reduce_max(a(Z), (1,)),
    "reduce_min": lambda m, a: m.reduce_min(a(Z), (0,)),
    "reduce_max_ties": lambda m, a: m.reduce_max(a(TIES), (0,)),
    "reduce_prod": lambda m, a: m.reduce_prod(a(Z), (1,)),
    "reduce_prod_all": lambda m, a: m.reduce_prod(a(PROD37), (0,)),
    "reduce_sum": lambda m, a: m.reduce_sum(a(Z), (0, 1)),
    "cumsum": lambda m, a: m.cumsum(a(Z), 1),
    "cumprod": lambda m, a: m.cumprod(a(Z), 1, reverse=True),
    "cummax": lambda m, a: m.cummax(a(TIES)),
    "cummin": lambda m, a: m.cummin(a(TIES), reverse=True),
    "sort": lambda m, a: m.sort(a(TIES)),
    "sort_kv": lambda m, a: m.sort_key_val(a(TIES), a(np.arange(8, dtype=np.int32))),
    "sort_2keys": lambda m, a: m.sort((a(TIES), a(TIES[::-1])), num_keys=2),
    "complex": lambda m, a: m.complex(a(Z.real), a(Z.imag)),
    "convert_up": lambda m, a: m.convert_element_type(a(RV), np.complex64),
    "convert_down": lambda m, a: m.convert_element_type(a(Z), np.float32),
    "convert_int": lambda m, a: m.convert_element_type(a(Z * 5), np.int32),
    "convert_bool": lambda m, a: m.convert_element_type(a(np.array([0j, 1j, 1 + 0j])), np.bool_),
    "dot_general": lambda m, a: m.dot_general(a(Z), a(W), (((1,), (1,)), ((), ()))),
    "integer_pow": lambda m, a: m.integer_pow(a(Z), -3),
    "select": lambda m, a: m.select(a(Z.real > 0), a(Z), a(W)),
    "pad": lambda m, a: m.pad(a(ZV), a(np.complex64(1j)), [(1, 2, 1)]),
    "rev_transpose": lambda m, a: m.transpose(m.rev(a(Z), (0,)), (1, 0)),
    "conv": lambda m, a: m.conv_general_dilated(
        a(Z[None, None]), a(W[None, None, :2, :2]), (1, 1), "SAME"
    ),
}
PROD37 = crand(37)


@pytest.mark.parametrize("name", sorted(LAX_NON_ELEMENTWISE))
def test_lax_non_elementwise_matches_jax(device, name):
    f = LAX_NON_ELEMENTWISE[name]
    assert_like_jax(f(lax, jnp.asarray), f(rlax, rjnp.asarray), name, rtol=1e-5, atol=1e-5)


def test_lax_rejects_what_jax_rejects():
    z = jnp.asarray(ZV)
    for fn in (
        lax.floor,
        lax.ceil,
        lax.round,
        lax.is_finite,
        lax.cbrt,
        lax.erf,
        lax.lgamma,
        lambda v: lax.rem(v, v),
        lambda v: lax.nextafter(v, v),
        lambda v: lax.lt(v, v),
        lambda v: lax.bitwise_and(v, v),
        lambda v: lax.reduce_and(v, (0,)),
        lambda v: lax.argmax(v, 0, np.int32),
    ):
        with pytest.raises(TypeError):
            fn(z)
    with pytest.raises(ValueError, match="top_k is not compatible with complex"):
        lax.top_k(z, 2)


# ---- jax.numpy -----------------------------------------------------------------------------------
def case(name: str, fn: Callable[[Any], Any], rtol: float = 2e-5, atol: float = 2e-6) -> Any:
    return pytest.param(fn, rtol, atol, id=name)


JNP_CASES = [
    case("abs", lambda m: m.abs(Z)),
    case("absolute", lambda m: m.absolute(ZV)),
    case("angle", lambda m: m.angle(Z)),
    case("angle_deg", lambda m: m.angle(Z, deg=True)),
    case("angle_real", lambda m: m.angle(RV)),
    case("angle_py", lambda m: m.angle(1j, deg=True)),
    case("sign", lambda m: m.sign(np.array([0j, 3 + 4j, -2j], np.complex64))),
    case("real_imag_conj", lambda m: (m.real(Z), m.imag(Z), m.conj(Z), m.conjugate(ZV))),
    case("real_imag_of_reals", lambda m: (m.real(RV), m.imag(RV), m.conj(RV), m.imag(3.0))),
    case(
        "iscomplex_isreal",
        lambda m: (
            m.iscomplex(np.array([1 + 0j, 1j])),
            m.isreal(np.array([1 + 0j, 1j])),
            m.iscomplex(RV),
        ),
    ),
    case(
        "isfinite_isinf_isnan", lambda m: (m.isfinite(SPECIAL), m.isinf(SPECIAL), m.isnan(SPECIAL))
    ),
    case("reciprocal_square", lambda m: (m.reciprocal(Z), m.square(Z))),
    case("exp2_log2_log10", lambda m: (m.exp2(Z), m.log2(Z), m.log10(Z))),
    case("sinc", lambda m: m.sinc(np.array([0j, 1e-20 + 0j, 0.5j, 1 + 1j], np.complex64))),
    case("true_divide", lambda m: m.true_divide(Z, W)),
    case("divide_int", lambda m: m.divide(Z, 2)),
    case("power", lambda m: (m.power(Z, W), m.power(Z, 3), m.power(Z, 0.5), m.power(2, Z))),
    case("float_power", lambda m: (m.float_power(Z, W), m.float_power(np.array([1, 2]), 1j))),
    case("logaddexp", lambda m: (m.logaddexp(Z, W), m.logaddexp2(Z, W)), rtol=1e-4, atol=1e-5),
    case("deg2rad", lambda m: (m.deg2rad(Z), m.rad2deg(Z))),
    case(
        "round",
        lambda m: (
            m.round(Z * 3.7, 1),
            m.round(np.array([1.5 + 2.5j, 0.5 - 0.5j])),
            m.rint(Z * 3.7),
            m.around(Z * 3.7),
        ),
    ),
    case("nan_to_num", lambda m: m.nan_to_num(SPECIAL)),
    case("arctan2", lambda m: m.arctan2(Z, W)),
    case(
        "trig",
        lambda m: (m.arcsin(Z), m.arccos(Z), m.arctan(Z), m.arcsinh(Z), m.arccosh(Z), m.arctanh(Z)),
    ),
    case("hyper", lambda m: (m.sinh(Z), m.cosh(Z), m.tanh(Z), m.log1p(Z), m.expm1(Z))),
    case(
        "compare",
        lambda m: (
            m.less(TIES, TIES[::-1]),
            m.greater_equal(TIES, 1 + 1j),
            m.asarray(TIES) <= 1j,
            m.asarray(TIES) > 0,
        ),
    ),
    case("equal", lambda m: (m.equal(TIES, TIES[::-1]), m.not_equal(TIES, 1 + 2j))),
    case(
        "maximum",
        lambda m: (m.maximum(Z, W), m.minimum(Z, W), m.fmax(WITH_NAN, 1j), m.fmin(WITH_NAN, 1j)),
    ),
    case(
        "logical",
        lambda m: (
            m.logical_and(TIES, np.array([0j] * 4 + [1j] * 4)),
            m.logical_not(np.array([0j, 1j, 1 + 0j])),
            m.logical_xor(TIES, 0j),
        ),
    ),
    case(
        "where_select",
        lambda m: (
            m.where(Z.real > 0, Z, W),
            m.where(Z.real > 0, Z, 1j),
            m.select([Z.real > 0], [Z], 0),
        ),
    ),
    case(
        "truthiness",
        lambda m: (
            m.count_nonzero(np.array([0j, 1j, 1 + 0j])),
            m.nonzero(np.array([0j, 1j, 1 + 0j]))[0],
            m.asarray(np.array([0j, 1j, 1 + 0j])).astype(bool),
            m.any(np.array([0j, 1j])),
            m.all(np.array([1 + 0j, 1j])),
            m.asarray(m.asarray(np.array([0j, 1j])), dtype=bool),
        ),
    ),
    case(
        "sum_mean",
        lambda m: (
            m.sum(Z, axis=0),
            m.mean(Z, axis=1),
            m.sum(Z, where=Z.real > 0),
            m.mean(np.array([1, 2]), dtype=np.complex64),
            m.sum(np.array([1, 2]), dtype=np.complex64),
        ),
    ),
    case(
        "prod",
        lambda m: (
            m.prod(Z),
            m.prod(Z, axis=1),
            m.prod(ZV, initial=2j),
            m.prod(Z, where=Z.real > 0),
        ),
    ),
    case(
        "cumulative",
        lambda m: (
            m.cumsum(Z, axis=1),
            m.cumprod(ZV),
            m.cumulative_prod(ZV),
            m.cumulative_sum(ZV, include_initial=True),
        ),
        rtol=1e-4,
    ),
    case(
        "var_std",
        lambda m: (
            m.var(Z),
            m.std(Z),
            m.var(Z, axis=0, ddof=1),
            m.std(ZV, ddof=1),
            m.var(Z, dtype=np.complex64),
            m.var(np.array([1, 2]), dtype=np.complex64),
        ),
    ),
    case(
        "nan_reductions",
        lambda m: (
            m.nansum(WITH_NAN),
            m.nanprod(WITH_NAN),
            m.nanmean(WITH_NAN),
            m.nanvar(WITH_NAN),
            m.nanstd(WITH_NAN),
            m.nancumprod(WITH_NAN),
        ),
    ),
    case(
        "max_min",
        lambda m: (
            m.max(TIES),
            m.min(TIES),
            m.max(Z, axis=1),
            m.ptp(Z, axis=0),
            m.nanmax(WITH_NAN),
            m.nanmin(WITH_NAN),
            m.amax(ZV, initial=5j),
            m.max(ZV, where=ZV.real > 0, initial=-1j),
        ),
    ),
    case(
        "average",
        lambda m: (
            m.average(Z, axis=0, weights=np.array([1.0, 2.0, 3.0], np.float32)),
            m.average(np.array([1.0, 2.0]), weights=np.array([1j, 1 + 0j])),
        ),
    ),
    case(
        "dot_family",
        lambda m: (
            m.dot(ZV, WV),
            m.vdot(ZV, WV),
            m.vdot(Z, W),
            m.inner(ZV, WV),
            m.outer(ZV, WV),
            m.vecdot(Z, W),
            m.matvec(Z, W[0]),
            m.vecmat(Z[:, 0], W),
        ),
        rtol=1e-5,
        atol=1e-5,
    ),
    case(
        "matmul_family",
        lambda m: (
            m.matmul(Z, W.T),
            m.tensordot(Z, W, 2),
            m.einsum("ij,kj->ik", Z, W),
            m.kron(Z[:2, :2], W[:2, :2]),
            m.dot(ZV, RV),
            m.matmul(RV, m.asarray(ZV)),
        ),
        rtol=1e-5,
        atol=1e-5,
    ),
    case(
        "closeness",
        lambda m: (
            m.allclose(Z, Z + 1e-7),
            m.isclose(Z, W),
            m.isclose(SPECIAL, SPECIAL, equal_nan=True),
            m.array_equal(Z, Z),
            m.isclose(np.array([1 + 1j]), 1),
        ),
    ),
    case(
        "sort",
        lambda m: (
            m.sort(TIES),
            m.argsort(TIES),
            m.sort(TIES, descending=True),
            m.argsort(TIES, descending=True),
            m.lexsort((TIES, TIES[::-1])),
            m.sort_complex(np.array([[3, 1], [2, 0]])),
            m.sort(WITH_NAN),
        ),
    ),
    case(
        "searching",
        lambda m: (
            m.searchsorted(m.sort(TIES), TIES[::-1]),
            m.searchsorted(m.sort(TIES), TIES, side="right"),
            m.digitize(ZV, m.sort(TIES)),
            m.digitize(TIES, m.sort(TIES), right=True),
        ),
    ),
    case(
        "unique_family",
        lambda m: (
            m.unique(TIES),
            *m.unique(TIES, return_index=True, return_inverse=True, return_counts=True)[1:],
            m.unique(WITH_NAN),
            m.isin(TIES, TIES[:3]),
            m.union1d(TIES[:4], TIES[3:]),
            m.intersect1d(TIES[:5], TIES[3:]),
            m.setdiff1d(TIES, TIES[:2]),
        ),
    ),
    case("histogram", lambda m: m.histogram_bin_edges(np.array([1 + 2j, -1 + 0j]), 2)),
    case(
        "statistics",
        lambda m: (m.cov(Z), m.corrcoef(Z), m.cov(Z, rowvar=False, ddof=0)),
        rtol=1e-4,
        atol=1e-5,
    ),
    case(
        "convolve",
        lambda m: (
            m.convolve(ZV, WV[:3]),
            m.correlate(ZV, WV[:3], "full"),
            m.correlate(ZV[:2], WV[:3], "same"),
            m.convolve(RV, WV[:3]),
        ),
        rtol=1e-5,
        atol=1e-5,
    ),
    case(
        "polynomial",
        lambda m: (
            m.polyval(ZV[:3], WV),
            m.polyadd(ZV, WV[:3]),
            m.polymul(ZV[:3], WV[:2]),
            m.polyder(ZV),
            m.polyint(ZV[:3]),
            m.poly(ZV[:3]),
            m.polyfit(RV, ZV, 2),
            m.polyfit(RV, ZV, 1, cov=True)[1],
        ),
        rtol=1e-3,
        atol=1e-4,
    ),
    case(
        "diff_gradient",
        lambda m: (
            m.diff(ZV),
            m.ediff1d(ZV),
            m.gradient(ZV),
            m.trapezoid(ZV),
            m.cross(ZV[:3], WV[:3]),
        ),
    ),
    case(
        "interp",
        lambda m: m.interp(
            np.float32(0.5), np.array([0.0, 1.0], np.float32), np.array([1j, 2 + 0j], np.complex64)
        ),
    ),
    case("bincount", lambda m: m.bincount(np.array([0, 1, 1, 3]), weights=ZV[:4])),
    case(
        "padding",
        lambda m: (
            m.pad(ZV, 2, mode="mean"),
            m.pad(ZV, 2, constant_values=1j),
            m.pad(ZV, 2, mode="linear_ramp", end_values=1j),
            m.pad(ZV, 2, mode="maximum"),
            m.pad(ZV, 2, mode="reflect"),
        ),
    ),
    case(
        "indexing",
        lambda m: (
            m.asarray(Z)[1],
            m.asarray(Z)[:, ::2],
            m.asarray(Z)[Z.real > 0],
            m.take(ZV, np.array([0, 5, 2])),
            m.take_along_axis(ZV, np.array([2, 0]), 0),
            m.asarray(Z)[np.array([0, 2]), np.array([1, 3])],
        ),
    ),
    case(
        "at_updates",
        lambda m: (
            m.asarray(ZV).at[np.array([1, 1, 4])].set(WV[:3]),
            m.asarray(ZV).at[np.array([1, 1, 4])].add(WV[:3]),
            m.asarray(ZV).at[np.array([1, 1, 4])].multiply(WV[:3]),
            m.asarray(ZV).at[np.array([0, 0, 5])].max(WV[:3]),
            m.asarray(ZV).at[np.array([0, 0, 5])].min(WV[:3]),
            m.asarray(ZV).at[2:4].set(1j),
            m.asarray(Z).at[np.array([0, 2]), 1:3].multiply(2j),
        ),
    ),
    case(
        "shape_ops",
        lambda m: (
            m.concatenate([ZV, RV]),
            m.stack([ZV, WV]),
            m.roll(ZV, 2),
            m.flip(Z),
            m.tril(Z),
            m.diag(ZV),
            m.trace(Z),
            m.repeat(ZV, 2),
            m.tile(ZV, 2),
            m.fill_diagonal(m.zeros((3, 3), complex), 1j, inplace=False),
            m.put(m.zeros(3, complex), m.array([1]), 1j, inplace=False),
        ),
    ),
    case(
        "creation",
        lambda m: (
            m.full((2,), 1 + 2j),
            m.full((2,), 3, dtype=m.complex64),
            m.zeros(3, m.complex64),
            m.ones(2, dtype="complex64"),
            m.empty(2, m.complex64),
            m.eye(2, dtype=m.complex64),
            m.identity(2, m.complex64),
            m.arange(3, dtype=m.complex64),
            m.full_like(Z, 2j),
            m.zeros_like(Z),
            m.ones_like(RV, dtype=m.complex64),
            m.tri(2, dtype=m.complex64),
        ),
    ),
    case(
        "ranges",
        lambda m: (
            m.linspace(0, 1 + 1j, 5),
            m.linspace(1j, 2, 4, endpoint=False),
            m.linspace(1j, 2, 4, endpoint=False, retstep=True)[1],
            m.linspace(0, 1, 3, dtype=m.complex64),
            m.logspace(0, 1j, 3),
            m.geomspace(1, 1j, 3),
            m.geomspace(-1 + 0j, -100 + 0j, 3),
        ),
        rtol=1e-5,
        atol=1e-6,
    ),
    case(
        "asarray",
        lambda m: (
            m.asarray(Z),
            m.asarray([1 + 2j, 3]),
            m.array([1, 2.5, 3j]),
            m.array([[1, 2j], [3.0, 4]]),
            m.array(1 + 2j),
            m.array(np.complex64(1 + 1j)),
            m.asarray(RV, dtype=m.complex64),
            m.asarray(Z).astype(m.float32),
            m.asarray(Z * 4).astype(m.int32),
            m.frombuffer(Z.tobytes(), dtype=m.complex64),
        ),
    ),
    case(
        "scalar_types",
        lambda m: (
            m.complex64(1 + 2j),
            m.complex64(3),
            m.complex128(1j),
            m.complex64([1, 2j]),
            m.csingle(2j),
        ),
    ),
    case(
        "array_methods",
        lambda m: (
            m.asarray(Z).real,
            m.asarray(Z).imag,
            m.asarray(Z).conj(),
            m.asarray(Z).conjugate(),
            abs(m.asarray(Z)),
            m.asarray(Z).sum(),
            m.asarray(Z).prod(),
            m.asarray(Z).cumprod(),
            m.asarray(Z).var(),
            m.asarray(Z).std(),
            m.asarray(Z).max(),
            m.asarray(Z).round(),
            m.asarray(Z).sort(),
            m.asarray(Z).view(m.float32),
            m.asarray(Z).view(m.float32).view(m.complex64),
            round(m.asarray(Z)[0, 0]),
            m.asarray(Z) @ m.asarray(W).T,
            2 ** m.asarray(ZV),
            m.asarray(ZV) ** m.asarray(WV),
        ),
    ),
    case(
        "weak_types",
        lambda m: (
            m.asarray(1j),
            m.asarray(1j) * 2,
            m.array([1, 2]) * 1j,
            m.array([1.0, 2.0], m.float16) + 1j,
            m.float16(2) * 1j,
            m.asarray(1j) * m.float32(2),
        ),
    ),
]


@pytest.mark.parametrize(("fn", "rtol", "atol"), JNP_CASES)
def test_jnp_matches_jax(device, fn, rtol, atol):
    ours, theirs = both(fn)
    assert_like_jax(ours, theirs, "", rtol=rtol, atol=atol)


JIT_CASES = {
    "elementwise": lambda m, x, y: m.exp(x) * m.arcsin(y) / (1 + m.abs(x)) + m.log1p(y) ** 2,
    "reductions": lambda m, x, y: (m.prod(x, axis=0), m.var(y), m.max(x), m.cumprod(y, axis=1)),
    "sort": lambda m, x, y: (m.sort(x.ravel()), m.argsort(y, axis=0), m.unique(x, size=12)),
    "contractions": lambda m, x, y: (x @ y.T, m.vdot(x, y), m.einsum("ij,ij->i", x, y)),
    "updates": lambda m, x, y: x.at[m.array([0, 0, 2])].multiply(y[:, :1] + 1j),
    "linalg": lambda m, x, y: (m.linalg.solve(x[:, :3], y[:, :2]), m.linalg.det(x[:, :3] + 1)),
    "ordered": lambda m, x, y: (x < y, m.maximum(x, y), m.clip(m.abs(x), 0.5, 1.0)),
}


@pytest.mark.parametrize("name", sorted(JIT_CASES))
def test_jit_matches_eager(device, name):
    f = functools.partial(JIT_CASES[name], jnp)
    x, y = jnp.asarray(Z), jnp.asarray(W)
    eager, jitted = f(x, y), webjax.jit(f)(x, y)
    for a, b in zip(_leaves(jitted), _leaves(eager)):
        assert a.shape == b.shape and a.dtype == b.dtype, name
        _same_values(np.asarray(a), np.asarray(b), 1e-5, 1e-6, name)
    assert_like_jax(
        eager, JIT_CASES[name](rjnp, rjnp.asarray(Z), rjnp.asarray(W)), name, rtol=1e-4, atol=1e-5
    )


VMAP_CASES = {
    "elementwise": lambda m, v: m.tan(v) + m.arccosh(v) * m.conj(v),
    "reductions": lambda m, v: (m.prod(v), m.max(v), m.sort(v), m.cumprod(v), m.var(v)),
    "contractions": lambda m, v: (m.vdot(v, v), m.outer(v, v).sum(0)),
    "updates": lambda m, v: v.at[m.array([1, 1])].multiply(2j),
    "linalg": lambda m, v: m.linalg.solve(m.outer(v, v) + m.eye(4), v),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_matches_loop(device, name):
    f = functools.partial(VMAP_CASES[name], jnp)
    xs = jnp.asarray(Z2)
    batched = webjax.vmap(f)(xs)
    looped = [f(xs[i]) for i in range(4)]
    for k, b in enumerate(_leaves(batched)):
        stacked = np.stack([np.asarray(_leaves(r)[k]) for r in looped])
        _same_values(np.asarray(b), stacked, 1e-5, 1e-5, name)


# ---- errors --------------------------------------------------------------------------------------
ERROR_CASES = [
    ("clip", lambda m: m.clip(Z, 0, 1)),
    ("clip_bound", lambda m: m.clip(RV, 1j)),
    ("argmax", lambda m: m.argmax(Z)),
    ("argmin", lambda m: m.argmin(Z)),
    ("nanargmax", lambda m: m.nanargmax(Z)),
    ("median", lambda m: m.median(Z)),
    ("quantile", lambda m: m.quantile(Z, 0.5)),
    ("nanquantile", lambda m: m.nanquantile(Z, 0.5)),
    ("partition", lambda m: m.partition(ZV, 2)),
    ("argpartition", lambda m: m.argpartition(ZV, 2)),
    ("floor", lambda m: m.floor(Z)),
    ("trunc", lambda m: m.trunc(Z)),
    ("floor_divide", lambda m: m.floor_divide(Z, W)),
    ("remainder", lambda m: m.remainder(Z, W)),
    ("fmod", lambda m: m.fmod(Z, W)),
    ("modf", lambda m: m.modf(Z)),
    ("signbit", lambda m: m.signbit(Z)),
    ("copysign", lambda m: m.copysign(Z, W)),
    ("frexp", lambda m: m.frexp(Z)),
    ("ldexp", lambda m: m.ldexp(Z, 2)),
    ("i0", lambda m: m.i0(Z)),
    ("fabs", lambda m: m.fabs(Z)),
    ("hypot", lambda m: m.hypot(Z, W)),
    ("heaviside", lambda m: m.heaviside(Z, W)),
    ("nextafter", lambda m: m.nextafter(Z, W)),
    ("spacing", lambda m: m.spacing(Z)),
    ("isposinf", lambda m: m.isposinf(Z)),
    ("cbrt", lambda m: m.cbrt(Z)),
    ("bitwise", lambda m: m.bitwise_and(Z, W)),
    ("invert", lambda m: ~m.asarray(Z)),
    ("float", lambda m: float(m.asarray(ZV)[0])),
    ("int", lambda m: int(m.asarray(ZV)[0])),
    ("arange", lambda m: m.arange(0, 3 + 1j)),
    ("asarray_float", lambda m: m.asarray(1j, dtype=m.float32)),
    (
        "top_k",
        lambda m: (
            m.asarray(ZV),
            __import__("jax" if m is rjnp else "webjax").lax.top_k(m.asarray(ZV), 2),
        ),
    ),
    (
        "grad_complex_output",
        lambda m: __import__("jax" if m is rjnp else "webjax").grad(lambda v: v * 2)(m.asarray(1j)),
    ),
    (
        "grad_holomorphic_real_input",
        lambda m: __import__("jax" if m is rjnp else "webjax").grad(
            lambda v: v * 2, holomorphic=True
        )(m.asarray(1.0)),
    ),
    (
        "jacfwd_complex_input",
        lambda m: __import__("jax" if m is rjnp else "webjax").jacfwd(m.abs)(m.asarray(ZV)),
    ),
    (
        "jacrev_complex_output",
        lambda m: __import__("jax" if m is rjnp else "webjax").jacrev(lambda v: v * 1j)(
            m.asarray(RV)
        ),
    ),
]


@pytest.mark.parametrize(("name", "fn"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_jax(name, fn):
    with pytest.raises(Exception) as theirs:
        fn(rjnp)
    with pytest.raises(theirs.type):
        fn(jnp)


# ---- dtypes ------------------------------------------------------------------------------------
def test_dtype_queries_match_jax():
    for m in (jnp, rjnp):
        assert m.issubdtype(m.complex64, m.complexfloating)
        assert m.issubdtype(m.complex64, m.inexact) and m.issubdtype(m.complex64, m.number)
        assert not m.issubdtype(m.complex64, m.floating)
        assert not m.issubdtype(m.float32, m.complexfloating)
        assert m.isdtype(m.complex64, "complex floating") and m.isdtype(m.complex64, "numeric")
        assert not m.isdtype(m.complex64, "real floating")
        assert m.iscomplexobj(m.asarray(Z)) and m.iscomplexobj(1j) and m.iscomplexobj([1j])
        assert not m.iscomplexobj(m.asarray(RV)) and m.isrealobj(RV)
    for t in ("complex64", "complex128"):
        ours, theirs = jnp.finfo(getattr(jnp, t)), rjnp.finfo(getattr(rjnp, t))
        assert str(ours.dtype) == str(theirs.dtype)
        for attr in ("eps", "max", "min", "tiny", "bits", "resolution", "precision", "nmant"):
            want = np.asarray(getattr(theirs, attr))
            assert np.asarray(getattr(ours, attr), want.dtype) == want, (t, attr)
    names = ["bool", "int8", "uint8", "int16", "int32", "float16", "bfloat16", "float32",
             "complex64"]  # fmt: skip
    for a in names:
        for b in names:
            assert str(jnp.promote_types(a, b)) == str(rjnp.promote_types(a, b)), (a, b)
            assert str(jnp.result_type(a, b)) == str(rjnp.result_type(a, b)), (a, b)
            for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
                if "bfloat16" in (a, b) and casting == "same_kind":
                    continue  # ml_dtypes' own rule (bfloat16 -> float16 is not same_kind)
                assert jnp.can_cast(a, b, casting) == rjnp.can_cast(a, b, casting), (a, b)
        for weak in (1j, 1.0, 1):
            assert str(jnp.result_type(a, weak)) == str(rjnp.result_type(a, weak)), (a, weak)
    assert str(jnp.result_type(1j)) == str(rjnp.result_type(1j))


# ---- linear algebra ------------------------------------------------------------------------------
def _hpd() -> np.ndarray:
    return (Z2 @ Z2.conj().T + 4 * np.eye(4)).astype(np.complex64)


LINALG_CASES = [
    case("solve", lambda m: (m.linalg.solve(Z2, W2), m.linalg.solve(Z2, W2[:, 0])), 1e-4, 1e-4),
    case(
        "solve_batch", lambda m: m.linalg.solve(np.stack([Z2, H4]), np.stack([W2, W2])), 1e-4, 1e-4
    ),
    case("inv", lambda m: m.linalg.inv(Z2), 1e-4, 1e-4),
    case(
        "cholesky",
        lambda m: (
            m.linalg.cholesky(np.stack([_hpd(), _hpd() + np.eye(4)])),
            m.linalg.cholesky(_hpd(), upper=True),
            m.linalg.cholesky(-_hpd()),
        ),
        1e-4,
        1e-4,
    ),
    case(
        "det",
        lambda m: (
            m.linalg.det(Z2),
            m.linalg.det(Z2[:2, :2]),
            m.linalg.det(Z2[:3, :3]),
            m.linalg.det(np.stack([Z2, H4])),
        ),
        1e-4,
        1e-4,
    ),
    case("slogdet", lambda m: m.linalg.slogdet(np.stack([Z2, H4])), 1e-4, 1e-4),
    case("pinv", lambda m: m.linalg.pinv(W2), 1e-4, 1e-4),
    case("lstsq", lambda m: m.linalg.lstsq(W2, Z2[:, :2]), 1e-4, 1e-4),
    case(
        "svdvals",
        lambda m: (
            m.linalg.svd(W2, compute_uv=False),
            m.linalg.svdvals(Z2),
            m.linalg.svd(H4, compute_uv=False, hermitian=True),
        ),
        1e-4,
        1e-4,
    ),
    case(
        "eigvalsh",
        lambda m: (m.linalg.eigvalsh(H4), m.linalg.eigvalsh(Z2, UPLO="U", symmetrize_input=False)),
        1e-4,
        1e-4,
    ),
    case(
        "rank_cond",
        lambda m: (
            m.linalg.matrix_rank(W2),
            m.linalg.matrix_rank(H4, hermitian=True),
            m.linalg.cond(Z2),
            m.linalg.cond(Z2, 1),
        ),
        1e-4,
        1e-4,
    ),
    case(
        "norms",
        lambda m: (
            m.linalg.norm(Z2),
            m.linalg.norm(Z2, 1),
            m.linalg.norm(Z2, 2),
            m.linalg.norm(Z2, "nuc"),
            m.linalg.norm(Z2, np.inf),
            m.linalg.norm(ZV, 3),
            m.linalg.norm(ZV, 0),
            m.linalg.norm(ZV, -np.inf),
            m.linalg.vector_norm(Z2, axis=0),
            m.linalg.matrix_norm(Z2),
        ),
        1e-4,
        1e-4,
    ),
    case(
        "products",
        lambda m: (
            m.linalg.matrix_power(Z2, -2),
            m.linalg.multi_dot([Z2, W2, W2.T]),
            m.linalg.outer(ZV, WV),
            m.linalg.vecdot(Z, W),
            m.linalg.tensorsolve(Z2, W2[:, 0]),
            m.linalg.trace(Z2),
            m.linalg.tensorinv(Z2.reshape(2, 2, 4), 2),
        ),
        1e-4,
        1e-4,
    ),
]


@pytest.mark.parametrize(("fn", "rtol", "atol"), LINALG_CASES)
def test_linalg_matches_jax(device, fn, rtol, atol):
    ours, theirs = both(fn)
    assert_like_jax(ours, theirs, "", rtol=rtol, atol=atol)


def test_linalg_unsupported_raise_clearly():
    for fn in (lambda: jnp.linalg.qr(Z2), lambda: jnp.linalg.eigh(H4), lambda: jnp.linalg.svd(Z2)):
        with pytest.raises(NotImplementedError, match="webjax"):
            fn()


def test_linalg_gradients_match_jax(device):
    a, b = jnp.asarray(Z2), jnp.asarray(W2)
    ra, rb = rjnp.asarray(Z2), rjnp.asarray(W2)
    fns = [
        lambda m, x, y: m.sum(m.abs(m.linalg.solve(x, y)) ** 2),
        lambda m, x, y: m.abs(m.linalg.det(x)) + m.real(m.linalg.det(x)),
        lambda m, x, y: m.linalg.slogdet(x)[1] + m.imag(m.linalg.slogdet(x)[0]),
        lambda m, x, y: m.sum(m.abs(m.linalg.inv(x) @ y) ** 2),
        lambda m, x, y: m.linalg.norm(x @ y),
        lambda m, x, y: m.sum(m.abs(m.linalg.cholesky(x @ m.conj(x.T) + 4 * m.eye(4))) ** 2),
    ]
    for k, f in enumerate(fns):
        ours = webjax.grad(functools.partial(f, jnp), (0, 1))(a, b)
        theirs = jax.grad(functools.partial(f, rjnp), (0, 1))(ra, rb)
        assert_like_jax(ours, theirs, f"linalg grad {k}", rtol=2e-3, atol=2e-3)


# ---- derivatives -------------------------------------------------------------------------------
AD_UNARY = ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "expm1",
            "log1p", "asin", "acos", "atan", "asinh", "acosh", "atanh", "exp2", "logistic",
            "abs", "real", "imag", "conj", "neg"]  # fmt: skip
_AD_Z = np.array([0.3 + 0.4j, -0.7 + 0.2j, 0.5 - 0.6j], np.complex64)
_AD_T = np.array([0.1 - 0.2j, 0.3 + 0.1j, -0.2 + 0.05j], np.complex64)
_AD_W = np.array([1.2 - 0.3j, 0.4 + 0.9j, -0.8 + 0.5j], np.complex64)


@pytest.mark.parametrize("name", AD_UNARY)
def test_unary_derivatives_match_jax(device, name):
    f, rf = getattr(lax, name), getattr(rlax, name)
    z, t, w = (jnp.asarray(v) for v in (_AD_Z, _AD_T, _AD_W))
    rz, rt, rw = (rjnp.asarray(v) for v in (_AD_Z, _AD_T, _AD_W))
    tol = {"rtol": 2e-4, "atol": 2e-5}
    assert_like_jax(webjax.jvp(f, (z,), (t,)), jax.jvp(rf, (rz,), (rt,)), name + " jvp", **tol)
    real_out = name in ("abs", "real", "imag")

    def loss(m: Any, g: Any, v: Any, c: Any) -> Any:
        return m.sum(g(v) * 1.5) if real_out else m.sum(m.real(g(v) * c))

    ours = webjax.grad(lambda v: loss(jnp, f, v, w))(z)
    assert_like_jax(ours, jax.grad(lambda v: loss(rjnp, rf, v, rw))(rz), name + " grad", **tol)
    ct = _AD_W.real.copy() if real_out else _AD_W
    assert_like_jax(
        webjax.vjp(f, z)[1](jnp.asarray(ct)),
        jax.vjp(rf, rz)[1](rjnp.asarray(ct)),
        name + " vjp",
        **tol,
    )
    if not real_out and name != "conj":
        assert_like_jax(
            webjax.grad(lambda v: jnp.sum(f(v)), holomorphic=True)(z),
            jax.grad(lambda v: rjnp.sum(rf(v)), holomorphic=True)(rz),
            name + " holomorphic",
            **tol,
        )
        assert_like_jax(
            webjax.jacfwd(f, holomorphic=True)(z),
            jax.jacfwd(rf, holomorphic=True)(rz),
            name + " jacfwd",
            **tol,
        )
        assert_like_jax(
            webjax.jacrev(f, holomorphic=True)(z),
            jax.jacrev(rf, holomorphic=True)(rz),
            name + " jacrev",
            **tol,
        )


AD_BINARY = {
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "pow": lambda m, a, b: a**b,
    "integer_pow": lambda m, a, b: a**3 * b + a ** (-2),
    "atan2": lambda m, a, b: m.arctan2(a, b),
    "maximum": lambda m, a, b: m.maximum(a, b),
    "dot": lambda m, a, b: m.outer(a, b) @ a,
    "prod": lambda m, a, b: m.prod(a * b) + m.cumprod(a)[-1],
    "max": lambda m, a, b: m.max(a * b),
    "cumsum": lambda m, a, b: m.cumsum(a * b),
    "complex": lambda m, a, b: __import__("jax" if m is rjnp else "webjax").lax.complex(
        m.real(a) * m.imag(b), m.imag(a)
    ),
    "convert": lambda m, a, b: m.real(a).astype(m.complex64) * b + a.astype(m.float32),
    "where": lambda m, a, b: m.where(m.real(a) > 0, a, b),
    "sort": lambda m, a, b: m.sort(a * b),
    "scatter_add": lambda m, a, b: a.at[m.array([0, 2, 0])].add(b),
    "var_abs": lambda m, a, b: m.var(a) + m.abs(b),
}


@pytest.mark.parametrize("name", sorted(AD_BINARY))
def test_binary_derivatives_match_jax(device, name):
    f = AD_BINARY[name]
    args = [jnp.asarray(v) for v in (_AD_Z, _AD_W)]
    rargs = [rjnp.asarray(v) for v in (_AD_Z, _AD_W)]
    tans = [jnp.asarray(v) for v in (_AD_T, _AD_T * 2)]
    rtans = [rjnp.asarray(v) for v in (_AD_T, _AD_T * 2)]
    tol = {"rtol": 5e-4, "atol": 5e-5}
    fw, fj = functools.partial(f, jnp), functools.partial(f, rjnp)
    assert_like_jax(webjax.jvp(fw, args, tans), jax.jvp(fj, rargs, rtans), name + " jvp", **tol)

    def loss(m: Any, g: Any) -> Any:
        return lambda a, b: m.sum(m.abs(g(a, b)) ** 2)

    assert_like_jax(
        webjax.grad(loss(jnp, fw), (0, 1))(*args),
        jax.grad(loss(rjnp, fj), (0, 1))(*rargs),
        name + " grad",
        **tol,
    )


def _fd_grad(f: Callable[[np.ndarray], float], z: np.ndarray, h: float = 1e-3) -> np.ndarray:
    """JAX's gradient of a real function of complex inputs, df/dx - i df/dy, by central
    differences in float64."""
    g = np.zeros(z.shape, np.complex128)
    for i in np.ndindex(z.shape):
        for step, weight in ((h, 1.0), (1j * h, -1j)):
            e = np.zeros(z.shape, np.complex128)
            e[i] = step
            g[i] += weight * (f(z + e) - f(z - e)) / (2 * h)
    return g


FD_FUNCS = {
    "abs2_sin": lambda m, z: m.sum(m.abs(m.sin(z) * z) ** 2),
    "real_log": lambda m, z: m.sum(m.real(m.log(z + 2) * m.conj(z))),
    "imag_atan": lambda m, z: m.sum(m.imag(m.arctan(z) * m.arcsinh(z))),
    "angle": lambda m, z: m.sum(m.angle(z) * m.abs(z)),
    "prod_abs": lambda m, z: m.abs(m.prod(z)),
    "pow_tanh": lambda m, z: m.sum(m.abs(m.tanh(z) ** (1.5 + 0.5j))),
}


@pytest.mark.parametrize("name", sorted(FD_FUNCS))
def test_gradients_against_finite_differences(device, name):
    f = FD_FUNCS[name]
    z = _AD_Z.astype(np.complex128)
    ours = np.asarray(webjax.grad(functools.partial(f, jnp))(jnp.asarray(_AD_Z)))
    want = _fd_grad(lambda v: float(f(np, v)), z)
    np.testing.assert_allclose(ours, want, rtol=2e-3, atol=2e-3, err_msg=name)


@pytest.mark.parametrize("name", ["exp_sin", "log_sqrt", "asin_tan", "pow_div"])
def test_holomorphic_derivative_against_finite_differences(device, name):
    f = {
        "exp_sin": lambda m, z: m.exp(m.sin(z)),
        "log_sqrt": lambda m, z: m.log(z + 2) * m.sqrt(z + 1),
        "asin_tan": lambda m, z: m.arcsin(z) + m.tan(z) * z,
        "pow_div": lambda m, z: (z + 2) ** (1.5 - 0.5j) / (z - 3),
    }[name]
    z = _AD_Z.astype(np.complex128)
    h = 1e-4
    want = (f(np, z + h) - f(np, z - h)) / (2 * h)
    ours = webjax.vmap(webjax.grad(functools.partial(f, jnp), holomorphic=True))(jnp.asarray(_AD_Z))
    np.testing.assert_allclose(np.asarray(ours), want, rtol=1e-3, atol=1e-4, err_msg=name)


def test_check_grads_complex(device):
    check_grads(lambda z: jnp.sin(z) * jnp.exp(jnp.conj(z)) + jnp.abs(z), (_AD_Z,), order=2)
    check_grads(lambda z, w: jnp.sum(z * w / (1 + jnp.abs(z))), (_AD_Z, _AD_W))
    check_grads(lambda z: jnp.prod(z) + jnp.cumprod(z)[1], (_AD_Z,))


def test_jacobian_rules_match_jax():
    z = np.array([0.3 + 0.4j, -0.7 + 0.2j], np.complex64)
    r = np.array([1.0, 2.0], np.float32)
    f = lambda m: lambda x: m.sin(x) * x**2 + m.exp(1j * x)
    g = lambda m: lambda x: m.sum(m.abs(f(m)(x)) ** 2)
    cases = [
        lambda j, m: j.jacrev(g(m))(m.asarray(z)),
        lambda j, m: j.hessian(lambda x: m.sum(f(m)(x)), holomorphic=True)(m.asarray(z)),
        lambda j, m: j.jacfwd(lambda x: x * (1 + 2j))(m.asarray(r)),
        lambda j, m: j.jacrev(lambda x: m.real(x) * m.imag(x))(m.asarray(z)),
        lambda j, m: j.linearize(f(m), m.asarray(z))[1](m.asarray(z)),
        lambda j, m: j.jit(j.grad(g(m)))(m.asarray(z)),
        lambda j, m: j.vmap(j.grad(lambda x: m.sin(x) * x, holomorphic=True))(m.asarray(z)),
        lambda j, m: j.grad(j.checkpoint(g(m)))(m.asarray(z)),
    ]
    for k, c in enumerate(cases):
        assert_like_jax(c(webjax, jnp), c(jax, rjnp), f"case {k}", rtol=2e-4, atol=2e-5)


# ---- complex128 ----------------------------------------------------------------------------------
def test_complex128_matches_jax(device):
    if not has_float64(device):
        pytest.skip(f"{device.platform} has no float64")
    z = (R.randn(6) + 1j * R.randn(6)) * 3
    with x64():
        for name in ("exp", "log", "sqrt", "tan", "asin", "acosh", "atanh", "log1p", "expm1"):
            ours = getattr(lax, name)(jnp.asarray(z))
            theirs = getattr(rlax, name)(rjnp.asarray(z))
            assert_like_jax(ours, theirs, name, rtol=1e-12, atol=1e-14)
        ours, theirs = both(
            lambda m: (
                m.prod(z),
                m.sort(z),
                m.linalg.solve(m.outer(z, z) + m.eye(6), z),
                m.var(z),
                m.asarray(z).astype(m.complex64),
            )
        )
        assert_like_jax(ours, theirs, "complex128 jnp", rtol=1e-10, atol=1e-12)
        assert repr(jnp.asarray(z[:2])) == repr(rjnp.asarray(z[:2]))
        g = webjax.grad(lambda v: jnp.sum(jnp.abs(jnp.sin(v)) ** 2))(jnp.asarray(z))
        rg = jax.grad(lambda v: rjnp.sum(rjnp.abs(rjnp.sin(v)) ** 2))(rjnp.asarray(z))
        assert_like_jax(g, rg, "complex128 grad", rtol=1e-10, atol=1e-12)


def test_python_complex_scalars():
    z = jnp.asarray(ZV)
    assert complex(z[1]) == complex(ZV[1]) and z[1].item() == complex(ZV[1])
    assert z.tolist() == [complex(v) for v in ZV]
    assert bool(jnp.asarray(1j)) and not bool(jnp.asarray(0j))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.asarray(z).dtype == np.complex64


def test_complex_iota_and_arange(device: Any) -> None:
    want = np.arange(3).astype(np.complex64)
    np.testing.assert_array_equal(np.asarray(jnp.arange(3, dtype=jnp.complex64)), want)
    got = webjax.lax.broadcasted_iota(jnp.complex64, (2, 3), 1)
    np.testing.assert_array_equal(np.asarray(got), np.broadcast_to(want, (2, 3)))
    assert str(got.dtype) == "complex64"
