"""ml_dtypes' narrow types (`jnp.float8_e4m3fn`, `jnp.int4`, ...) as array dtypes, against JAX.

Arrays of them are held widened (float32 for the floats, int8/uint8 for the ints) and every
op rounds (floats) or wraps (ints) back, so results are checked bit for bit against real JAX on
every device: conversions from float32 over each format's values, midpoints and specials,
exhaustive unary and binary ops, casts, reductions, matmul, jit/vmap/grad, promotion, finfo and
iinfo, printing.
"""

from __future__ import annotations

import numpy as np
import pytest

import webjax
import webjax.numpy as jnp
from webjax import lax

jax = pytest.importorskip("jax")
rjnp = pytest.importorskip("jax.numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")
rlax = jax.lax

NARROW = sorted(
    n for n in dir(rjnp) if n.startswith(("float8_", "float4_", "int4", "uint4", "int2", "uint2"))
)
FLOATS = [n for n in NARROW if n.startswith("float")]
INTS = [n for n in NARROW if "int" in n]
STANDARD = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "float16",
            "bfloat16", "float32"]  # fmt: skip


def all_values(name: str) -> np.ndarray:
    """Every value of the type, as an ml_dtypes array (every bit pattern)."""
    t = np.dtype(getattr(ml_dtypes, name))
    if name.startswith("float"):
        n = 16 if name.startswith("float4") else 256
        return np.arange(n, dtype=np.uint8).view(t)
    info = ml_dtypes.iinfo(t)
    return np.arange(info.min, info.max + 1).astype(t)


def same(ours: object, theirs: object) -> None:
    """Same dtype, shape and values: bit for bit, any NaN matching any NaN."""
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.dtype == t.dtype and o.shape == t.shape, (o.dtype, t.dtype, o.shape, t.shape)
    if o.dtype.kind == "V" or o.dtype.name in FLOATS or o.dtype.kind == "f":
        of, tf = o.astype(np.float64), t.astype(np.float64)
        nan = np.isnan(of) & np.isnan(tf)
        eq = (of == tf) & (np.signbit(of) == np.signbit(tf))
        bad = ~(nan | eq)
        assert not bad.any(), list(zip(of[bad][:8], tf[bad][:8]))
    else:
        np.testing.assert_array_equal(o, t)


FINFO_FIELDS = ["bits", "nmant", "nexp", "maxexp", "minexp", "machep", "negep", "precision",
                "iexp", "eps", "epsneg", "max", "min", "tiny", "smallest_normal",
                "smallest_subnormal", "resolution", "dtype"]  # fmt: skip


def test_the_names_are_jaxs() -> None:
    ours = sorted(n for n in dir(jnp) if n in NARROW or n.startswith(("float8_", "float4_")))
    assert ours == NARROW and len(NARROW) >= 10


@pytest.mark.parametrize("name", NARROW)
def test_dtype_and_info(name: str) -> None:
    t, rt = getattr(jnp, name), getattr(rjnp, name)
    assert t.dtype == rt.dtype and jnp.dtype(name) == rt.dtype and np.dtype(t) == rt.dtype
    assert t == t and hash(t) == hash(t) and t in (getattr(jnp, name),)
    assert repr(jnp.dtype(name)) == repr(rjnp.dtype(name))
    assert jnp.zeros(2, t).dtype == rjnp.zeros(2, rt).dtype
    assert jnp.zeros(3, t).itemsize == 1 and jnp.zeros(3, t).nbytes == 3
    if name in FLOATS:
        ours, theirs = jnp.finfo(t), rjnp.finfo(rt)
        for f in FINFO_FIELDS:
            assert getattr(ours, f) == getattr(theirs, f), f
            assert type(getattr(ours, f)) is type(getattr(theirs, f)), f
        assert repr(ours) == repr(theirs)
    else:
        ours, theirs = jnp.iinfo(t), rjnp.iinfo(rt)
        assert (ours.min, ours.max, ours.bits, ours.dtype) == (
            theirs.min,
            theirs.max,
            theirs.bits,
            theirs.dtype,
        )
        assert repr(ours) == repr(theirs)
        with pytest.raises(ValueError):
            jnp.finfo(t)


def test_promotion_is_jaxs() -> None:
    names = NARROW + STANDARD
    for a in NARROW:
        for b in names:
            try:
                want = rjnp.promote_types(a, b)
            except jax.dtypes.TypePromotionError:
                with pytest.raises(webjax.dtypes.TypePromotionError, match="promotion path"):
                    jnp.promote_types(a, b)
                with pytest.raises(ValueError, match="promotion path"):
                    jnp.promote_types(b, a)
                continue
            assert jnp.promote_types(a, b) == want and jnp.promote_types(b, a) == want, (a, b)
        for scalar in (True, 1, 1.5, 1j):
            try:
                want = rjnp.result_type(rjnp.zeros(1, a), scalar)
            except jax.dtypes.TypePromotionError:
                with pytest.raises(ValueError, match="promotion path"):
                    jnp.result_type(jnp.zeros(1, a), scalar)
                continue
            assert jnp.result_type(jnp.zeros(1, a), scalar) == want, (a, scalar)


def test_binary_ops_refuse_other_types() -> None:
    x = jnp.ones(2, jnp.float8_e4m3fn)
    for other in (jnp.ones(2), jnp.ones(2, jnp.bfloat16), jnp.ones(2, jnp.float8_e5m2)):
        with pytest.raises(webjax.dtypes.TypePromotionError, match="8-bit floats"):
            x + other
    with pytest.raises(webjax.dtypes.TypePromotionError, match="4-bit integers"):
        jnp.ones(2, jnp.int4) * jnp.ones(2, jnp.int8)
    with pytest.raises(webjax.dtypes.TypePromotionError, match="4-bit integers"):
        jnp.ones(2, jnp.int4) + 1.5


def _probe_inputs(name: str) -> np.ndarray:
    """float32 inputs for a float format: its values, the midpoints between them and values just
    off them, specials, values past the range, random ones."""
    v = all_values(name).astype(np.float64)
    v = np.unique(v[np.isfinite(v)])
    mids = (v[1:] + v[:-1]) / 2
    f = ml_dtypes.finfo(getattr(ml_dtypes, name))
    big = float(f.max)
    rng = np.random.default_rng(0)
    xs = np.concatenate(
        [
            v,
            -v,
            mids,
            -mids,
            mids * (1 + 2**-20),
            mids * (1 - 2**-20),
            [np.inf, -np.inf, np.nan, 0.0, -0.0, big * 1.03, big * 1.07, big * 4, -big * 4, 3e38],
            rng.standard_normal(300) * big / 8,
            rng.standard_normal(300),
        ]
    )
    with np.errstate(over="ignore"):
        return xs.astype(np.float32)


@pytest.mark.parametrize("name", FLOATS)
def test_rounding_from_float32(device, name: str) -> None:
    xs = _probe_inputs(name)
    if name == "float8_e8m0fnu":  # float32 subnormals: XLA's CPU conversion rounds them as
        # if normal (0x5ffffa to 2**-126); webjax rounds them as ml_dtypes does
        sub = (np.abs(xs) < 2.0**-126) & (xs != 0)
        sub_xs = np.concatenate(
            [xs[sub], np.array([0x5FFFFA, 0x400000, 0x600000, 1], np.uint32).view(np.float32)]
        )
        same(jnp.asarray(sub_xs).astype(name), sub_xs.astype(getattr(ml_dtypes, name)))
        xs = xs[~sub]
    same(jnp.asarray(xs).astype(name), rjnp.asarray(xs).astype(name))
    same(jnp.asarray(xs, dtype=name), rjnp.asarray(xs, dtype=name))  # rounded on the host
    same(
        lax.convert_element_type(jnp.asarray(xs), getattr(jnp, name)),
        rlax.convert_element_type(rjnp.asarray(xs), getattr(rjnp, name)),
    )


@pytest.mark.parametrize("name", NARROW)
def test_values_round_trip_and_print(device, name: str) -> None:
    v = all_values(name)
    x = jnp.asarray(v)
    assert x.dtype == v.dtype and np.asarray(x).dtype == v.dtype
    same(x, v)
    if name in INTS:  # every bit pattern exactly
        assert np.asarray(x).tobytes() == v.tobytes()
    r = rjnp.asarray(v)
    assert repr(x[:20]) == repr(r[:20]) and str(x[3:9]) == str(r[3:9])
    assert repr(x[1]) == repr(r[1]) and str(x[-1]) == str(r[-1])
    t, rt = getattr(jnp, name), getattr(rjnp, name)
    assert repr(jnp.zeros((2, 2), t)) == repr(rjnp.zeros((2, 2), rt))
    assert repr(t(1)) == repr(rt(1)) and repr(t(np.float32(1))) == repr(rt(np.float32(1)))
    if name in FLOATS:
        assert repr(t(1.5)) == repr(rt(1.5)) and float(t(0.3)) == float(rt(0.3))
    assert x.tolist() == r.tolist() or name in FLOATS  # NaNs differ as Python floats


UNARY_F = ["neg", "abs", "sign", "floor", "ceil", "round", "sqrt", "exp", "log", "tanh", "sin",
           "logistic"]  # fmt: skip
BINARY_F = ["add", "sub", "mul", "div", "max", "min", "pow", "rem"]


@pytest.mark.parametrize("name", FLOATS)
def test_float_ops(device, name: str) -> None:
    v = all_values(name)
    if name == "float8_e8m0fnu":  # 2**-127 and below, float32 subnormals, are 0 to XLA's CPU
        v = v[87:168]  # (flushed): 2**-40 to 2**40, whose products stay normal
    x, r = jnp.asarray(v), rjnp.asarray(v)
    for op in UNARY_F:
        same(getattr(lax, op)(x), getattr(rlax, op)(r))
    same(x == x, r == r)
    same(jnp.isnan(x), rjnp.isnan(r))
    same(jnp.isinf(x), rjnp.isinf(r))
    a = v[np.isfinite(v.astype(np.float32))][::7]  # pairs of a spread of the values
    a, b = (g.ravel() for g in np.meshgrid(a, np.concatenate([a, v[v != v][:1]])))
    xa, xb, ra, rb = jnp.asarray(a), jnp.asarray(b), rjnp.asarray(a), rjnp.asarray(b)
    for op in BINARY_F:
        if (op, name) != ("pow", "float8_e8m0fnu"):  # (XLA flushes subnormal powers to 0)
            same(getattr(lax, op)(xa, xb), getattr(rlax, op)(ra, rb))
    same(xa < xb, ra < rb)
    same(xa * 3, ra * 3)  # weak scalars take the narrow type
    same(xa + 0.7, ra + 0.7)
    same(jnp.where(xa > 1, xa, 0.25), rjnp.where(ra > 1, ra, 0.25))


BINARY_I = ["add", "sub", "mul", "div", "rem", "max", "min", "bitwise_and", "bitwise_or",
            "bitwise_xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "lt",
            "eq"]  # fmt: skip


@pytest.mark.parametrize("name", INTS)
def test_int_ops(device, name: str) -> None:
    v = all_values(name)
    x, r = jnp.asarray(v), rjnp.asarray(v)
    for op in ["neg", "sign", "bitwise_not", "population_count", "clz"]:
        same(getattr(lax, op)(x), getattr(rlax, op)(r))
    with pytest.raises(TypeError, match=f"abs does not accept dtype {name}"):
        lax.abs(x)
    a, b = (g.ravel() for g in np.meshgrid(v, v))
    xa, xb, ra, rb = jnp.asarray(a), jnp.asarray(b), rjnp.asarray(a), rjnp.asarray(b)
    for op in BINARY_I:
        same(getattr(lax, op)(xa, xb), getattr(rlax, op)(ra, rb))
    same(xa // 2 + 1, ra // 2 + 1)
    same(x * 3 - 1, r * 3 - 1)
    same(jnp.arange(4, dtype=name), rjnp.arange(4, dtype=name))


CAST_TO = ["bool", "int8", "uint8", "int32", "float16", "bfloat16", "float32"]
CAST_FROM = [-300, -9, -8, -2.5, -1, -0.0, 0, 0.6, 1.5, 2, 3, 7, 8, 15, 16, 100, 1e9, np.inf,
             np.nan]  # fmt: skip


@pytest.mark.parametrize("name", NARROW)
def test_casts(device, name: str) -> None:
    v = all_values(name)
    x, r = jnp.asarray(v), rjnp.asarray(v)
    for to in CAST_TO + ["float8_e4m3fn", "float8_e5m2", "int4", "uint4"]:
        same(x.astype(to), r.astype(to))
    src = np.array(CAST_FROM, np.float32)
    for frm in CAST_TO:
        s = src if frm.startswith(("float", "bfloat")) else np.nan_to_num(src).clip(-128, 127)
        same(jnp.asarray(s).astype(frm).astype(name), rjnp.asarray(s).astype(frm).astype(name))


REDUCED = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e8m0fnu", "float4_e2m1fn",
           "int4", "uint4"]  # fmt: skip


@pytest.mark.parametrize("name", REDUCED)
def test_reductions_and_matmul(device, name: str) -> None:
    rng = np.random.default_rng(1)
    lo, hi = (1, 5) if name in INTS else (0.25, 3)
    a = rng.uniform(lo, hi, (6, 8)).astype(np.float32)
    if name in INTS:
        a = np.floor(a) - (2 if name == "int4" else 0)
    x, r = jnp.asarray(a).astype(name), rjnp.asarray(a).astype(name)
    for red in ("max", "min") if name in INTS else ("max", "min", "argmax"):
        if (red, name) != ("argmax", "float8_e8m0fnu"):  # (XLA's: 0, from a NaN start)
            same(getattr(jnp, red)(x, axis=1), getattr(rjnp, red)(r, axis=1))
    same(jnp.sort(x, axis=0), rjnp.sort(r, axis=0))
    same(x.T.reshape(4, 12)[1:3], r.T.reshape(4, 12)[1:3])
    same(jnp.concatenate([x, x[:2]]), rjnp.concatenate([r, r[:2]]))
    if name in FLOATS:
        same(jnp.sum(x, axis=1), rjnp.sum(r, axis=1))
        same(jnp.mean(x, axis=0), rjnp.mean(r, axis=0))
        same(jnp.sum(x[:4]), rjnp.sum(r[:4]))  # 32 elements, one at a time as XLA's CPU
        with pytest.raises(NotImplementedError, match=f"more than 32 {name}"):
            jnp.sum(x)  # (past 32, XLA's CPU rounds in an order of its own)
        same(jnp.prod(x[:2, :5], axis=0), rjnp.prod(r[:2, :5], axis=0))
        same(x.sum(dtype=jnp.float32), r.sum(dtype=rjnp.float32))
        with pytest.raises(NotImplementedError, match=f"cumsum for {name}"):
            jnp.cumsum(x[0])  # XLA rounds every partial sum: not built
    else:
        same(
            jnp.sum(x.astype("int8"), axis=1).astype(name),
            rjnp.sum(r.astype("int8"), axis=1).astype(name),
        )
    same(x[:3] @ x[:4].T, r[:3] @ r[:4].T)


def test_transformations(device) -> None:
    for name in ("float8_e4m3fn", "float8_e5m2"):
        v = np.array([0.5, 1.5, 2, 3], np.float32)
        x, r = jnp.asarray(v).astype(name), rjnp.asarray(v).astype(name)

        def f(z):
            return (z * z + z / 3).sum()

        same(webjax.jit(f)(x), jax.jit(f)(r))
        same(webjax.vmap(lambda z: z * z - 1)(x), jax.vmap(lambda z: z * z - 1)(r))
        same(webjax.grad(f)(x), jax.grad(f)(r))
        g = webjax.grad(lambda z: (z * z).sum().astype(jnp.float32))
        same(g(x), jax.grad(lambda z: (z * z).sum().astype(rjnp.float32))(r))
    i = jnp.asarray(np.array([1, -2, 7], np.int8)).astype("int4")
    ri = rjnp.asarray(np.array([1, -2, 7], np.int8)).astype("int4")
    same(webjax.jit(lambda z: z * 3 + 1)(i), jax.jit(lambda z: z * 3 + 1)(ri))


def test_unsupported_primitives_name_the_type() -> None:
    x = jnp.ones(3, jnp.float8_e4m3fn)
    with pytest.raises(NotImplementedError, match="float8_e4m3fn"):
        lax.nextafter(x, x)
    with pytest.raises(NotImplementedError, match="int4"):
        lax.bitcast_convert_type(jnp.ones(2, jnp.int4), jnp.uint4)
