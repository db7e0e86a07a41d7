"""lax.fft: the FFT primitive (complex FFT/IFFT, real RFFT/IRFFT over 1 to 3 trailing axes).

Evaluation is O(n log n) on every backend, built from elementwise kernels on the storage
expressions of complex arrays (interleaved (real, imaginary) pairs, see `array.storage`). A
transform along one axis of length n is a sequence of Stockham autosort passes over the array
viewed as (outer, n, inner): each pass is one kernel that computes every element from r
elements of the previous pass (radix r), with no bit-reversal. Radix-4 and radix-2 passes are
written out; other prime factors use a generic radix-r pass (unrolled up to 8, a fused
reduction over the r inputs beyond), which for a short axis is the whole DFT in one kernel.
Lengths with a large prime factor go through Bluestein's chirp-z transform: a convolution by
power-of-two FFTs. Twiddle factors are read from tables computed on the host in float64 (exact
angle reduction) and rounded once, so float32 results are as accurate as pocketfft's; tables
live on the device, cached per (device, dtype, length). Between passes complex64 values travel
packed in one uint64 per element where the backend has 64-bit integers (cpu, wasm), so that a
pass computes each butterfly once per element rather than once per part; WebGPU passes write
the interleaved parts.

Real transforms of even length n run one complex transform of length n / 2 (the real samples
paired as complex ones) and one elementwise split/merge step. Multi-axis transforms run one axis
after another (RFFT: the real last axis first, then the halved array; IRFFT: the leading axes
first, then the real last one). Called eagerly the passes run as one cached jit program per
shape; while a program compiles (and under jit) the impl builds them directly, so the last step
can fuse with its consumer.
"""

from __future__ import annotations

import cmath
import collections
import enum
import functools
import math
import struct
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .. import core, dtypes
from ..config import config
from ..core import ShapedArray
from ..dispatch import array as array_mod
from ..dispatch import devices, lazy, lowering
from ..interpreters import batching
from ..interpreters.ad import Zero
from ..ir import exp as E
from ..ir import view
from ..ir.exp import Exp
from ..ir.ops import Op
from ..jit import jit
from ..runtime.backend import Device
from . import ad_rules, lax


class FftType(enum.IntEnum):
    """Which FFT to compute (the values of JAX's `jax.lax.FftType`)."""

    FFT = 0  # complex -> complex, forward
    IFFT = 1  # complex -> complex, inverse (scaled by 1 / n)
    RFFT = 2  # real -> complex half spectrum (last axis n // 2 + 1)
    IRFFT = 3  # complex half spectrum -> real (scaled by 1 / n)


_TYPE_NAMES = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT,
               "irfft": FftType.IRFFT}  # fmt: skip


def _as_fft_type(fft_type: Any) -> FftType:
    """FftType from an FftType, JAX's own enum (by name) or a name ('fft', 'IRFFT', ...)."""
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        if fft_type in _TYPE_NAMES or (fft_type.lower() in _TYPE_NAMES and fft_type.isupper()):
            return _TYPE_NAMES[fft_type.lower()]
        raise ValueError(f"Unknown FFT type '{fft_type}'")
    name = getattr(fft_type, "name", None)
    if isinstance(fft_type, enum.Enum) and isinstance(name, str) and name in FftType.__members__:
        return FftType[name]
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


fft_p = lax._prim("fft")


@fft_p.def_abstract_eval
def _fft_abstract(
    x: ShapedArray, *, fft_type: FftType, fft_lengths: tuple[int, ...]
) -> ShapedArray:
    lengths = tuple(fft_lengths)
    k = len(lengths)
    if k > x.ndim:
        raise ValueError(
            f"FFT input shape {x.shape} must have at least as many input "
            f"dimensions as fft_lengths {lengths}."
        )
    if not 1 <= k <= 3:
        raise ValueError(f"FFT rank must be between 1 and 3, but got {k}.")
    lead, minor = x.shape[: x.ndim - k], x.shape[x.ndim - k :]
    if fft_type == FftType.RFFT:
        if x.dtype not in (dtypes.float32, dtypes.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if minor != lengths:
            raise ValueError(
                f"RFFT input shape {x.shape} minor dimensions must be equal to "
                f"fft_lengths {lengths}"
            )
        return ShapedArray((*lead, *lengths[:-1], lengths[-1] // 2 + 1), dtypes.to_complex(x.dtype))
    if fft_type == FftType.IRFFT:
        if x.dtype.kind != "c":
            raise ValueError(f"IRFFT input must be complex64 or complex128, got {x.dtype}")
        if minor[:-1] != lengths[:-1]:
            raise ValueError(
                f"IRFFT input shape {x.shape} minor dimensions must be equal to all "
                f"except the last fft_length, got fft_lengths={lengths}"
            )
        if minor[-1] != lengths[-1] // 2 + 1:
            raise ValueError(
                f"IRFFT requires innermost dimension to be compatible with "
                f"fft_length[-1]/2+1. Got: {minor[-1]} but fft_length is "
                f"{lengths[-1]}."
            )
        return ShapedArray((*lead, *lengths), dtypes.component(x.dtype))
    if x.dtype.kind != "c":
        raise ValueError(f"FFT input must be complex64 or complex128, got {x.dtype}")
    if minor != lengths:
        raise ValueError(
            f"FFT input shape {x.shape} minor dimensions must be equal to fft_lengths {lengths}"
        )
    return ShapedArray(x.shape, x.dtype)


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """`jax.lax.fft`: the FFT of the trailing len(fft_lengths) axes of `x` (1 to 3)."""
    typ = _as_fft_type(fft_type)
    x = lax.to_array(x)
    dt = core.get_aval(x).dtype
    if typ == FftType.RFFT:
        if dt.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        if dt.kind != "f":
            x = lax.convert_element_type(x, dtypes.default_float())
    elif dt.kind != "c":
        real = dt if dt.kind == "f" else dtypes.default_float()
        x = lax.convert_element_type(x, dtypes.to_complex(real))
    lengths = tuple(int(n) for n in fft_lengths)
    if not lengths:
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=lengths)


# ---- host tables ---------------------------------------------------------------------------------
_TABLES: collections.OrderedDict[tuple[Any, ...], lazy.LazyBuffer] = collections.OrderedDict()
_TABLES_KEPT = 24  # least recently used tables beyond this many are dropped


def _cached(key: tuple[Any, ...], make: Callable[[], lazy.LazyBuffer]) -> lazy.LazyBuffer:
    lb = _TABLES.get(key)
    if lb is None:
        lb = _TABLES[key] = make()
        while len(_TABLES) > _TABLES_KEPT:
            _TABLES.popitem(last=False)
    _TABLES.move_to_end(key)
    return lb


def _upload(values: list[float], dt: dtypes.DType, device: Device) -> lazy.LazyBuffer:
    code = "d" if dt is dtypes.float64 else "f"
    return lazy.from_bytes(device, dt, len(values), struct.pack(f"<{len(values)}{code}", *values))


def _root_values(n: int) -> list[float]:
    """exp(-2 pi i j / n) for j < n as interleaved (cos, -sin) pairs, in float64. Angles are
    reduced exactly: one quadrant is computed and the others follow by symmetry."""
    if n % 4:
        out: list[float] = []
        for j in range(n):
            z = cmath.exp(-2j * math.pi * j / n)
            out += (z.real, z.imag)
        return out
    q = n // 4
    c = [math.cos(2 * math.pi * j / n) for j in range(q)] + [0.0]
    s = c[::-1]  # sin(2 pi j / n) = cos(2 pi (q - j) / n) for j <= q
    re = c[:q] + [-v for v in s[:q]] + [-v for v in c[:q]] + s[:q]
    im = [-v for v in s[:q]] + [-v for v in c[:q]] + s[:q] + c[:q]
    out = [0.0] * (2 * n)
    out[0::2] = re
    out[1::2] = im
    return out


def _roots(n: int, dt: dtypes.DType, device: Device) -> Exp:
    """The table exp(-2 pi i j / n), j < n, as a storage expression of n complex elements."""
    lb = _cached(("roots", device, dt.name, n), lambda: _upload(_root_values(n), dt, device))
    return lazy.load_all(lb)


def _chirp_values(n: int, inverse: bool) -> list[complex]:
    """exp(-+ pi i j^2 / n) for j < n (j^2 reduced modulo 2n exactly)."""
    sign = 1.0 if inverse else -1.0
    return [cmath.exp(sign * 1j * math.pi * ((j * j) % (2 * n)) / n) for j in range(n)]


def _interleaved(zs: list[complex]) -> list[float]:
    out = [0.0] * (2 * len(zs))
    out[0::2] = [z.real for z in zs]
    out[1::2] = [z.imag for z in zs]
    return out


# ---- complex arithmetic on (real, imaginary) expression pairs ------------------------------------
C = tuple[Exp, Exp]
Src = Callable[[Exp], C]  # element index -> the element's parts


def _add(a: C, b: C) -> C:
    return E.binary(Op.ADD, a[0], b[0]), E.binary(Op.ADD, a[1], b[1])


def _sub(a: C, b: C) -> C:
    return E.binary(Op.SUB, a[0], b[0]), E.binary(Op.SUB, a[1], b[1])


def _mul(a: C, b: C) -> C:
    re = E.binary(Op.SUB, E.binary(Op.MUL, a[0], b[0]), E.binary(Op.MUL, a[1], b[1]))
    im = E.binary(Op.ADD, E.binary(Op.MUL, a[0], b[1]), E.binary(Op.MUL, a[1], b[0]))
    return re, im


def _select(c: Exp, a: C, b: C) -> C:
    return E.where(c, a[0], b[0]), E.where(c, a[1], b[1])


def _scaled(a: C, scale: float) -> C:
    if scale == 1.0:
        return a
    k = E.const(scale, a[0].dtype)
    return E.binary(Op.MUL, a[0], k), E.binary(Op.MUL, a[1], k)


def _storage_src(e: Exp, n: int) -> Src:
    """Read n complex elements from their storage expression."""
    return lambda i: (
        view.reindex(e, 2 * n, E.mul(i, 2)),
        view.reindex(e, 2 * n, E.add(E.mul(i, 2), 1)),
    )


def _real_src(e: Exp, n: int) -> Src:
    zero = E.const(0.0, e.dtype)
    return lambda i: (view.reindex(e, n, i), zero)


def _emit(value: Callable[[Exp], C], size: int) -> Exp:
    """The storage expression of `size` complex elements with the given parts."""
    f = E.idx(2 * size)
    re, im = value(E.idiv(f, 2))
    return E.where(E.binary(Op.CMPEQ, E.mod(f, 2), E.i32(0)), re, im)


def _schedule(e: Exp, size: int, device: Device) -> Src:
    return _storage_src(lazy.load_all(lazy.schedule(e, 2 * size, device)), size)


def _cheap(e: Exp) -> bool:
    """Whether reading `e` several times per element costs about as much as reading a buffer."""
    return not e.info[2] and e.info[0] <= 24


def _as_src(e: Exp, size: int, device: Device) -> Src:
    """Read the storage expression of `size` elements, computed once into a buffer unless
    that is already cheap to read (a buffer, or the unpacking view of one)."""
    return _storage_src(e, size) if _cheap(e) else _schedule(e, size, device)


# Between passes, complex64 values travel as one uint64 per element (the bits of the real part
# low, the imaginary part high) where the backend has 64-bit integers: a pass kernel then
# computes each butterfly once per element instead of once per part (2.8x faster on wasm).
_U64, _U32 = dtypes.uint64, dtypes.uint32


def _packs(cdt: dtypes.DType, device: Device) -> bool:
    return cdt is dtypes.complex64 and device.backend.supports_dtype(_U64)


def _pack(z: C) -> Exp:
    lo = E.cast(E.bitcast(z[0], _U32), _U64)
    hi = E.cast(E.bitcast(z[1], _U32), _U64)
    return E.binary(Op.OR, lo, E.binary(Op.SHL, hi, E.const(32, _U64)))


def _unpack(x: Exp, shift: Exp) -> Exp:
    word = E.cast(E.binary(Op.SHRL, x, shift), _U32)
    return E.bitcast(word, dtypes.float32)


def _packed_src(buf: Exp, n: int) -> Src:
    def read(i: Exp) -> C:
        x = view.reindex(buf, n, i)
        return _unpack(x, E.const(0, _U64)), _unpack(x, E.const(32, _U64))

    return read


def _unpacked_storage(buf: Exp, n: int) -> Exp:
    """The storage expression (float32 pairs) of n packed elements."""
    f = E.idx(2 * n)
    shift = E.binary(Op.MUL, E.cast(E.mod(f, 2), _U64), E.const(32, _U64))
    return _unpack(view.reindex(buf, n, E.idiv(f, 2)), shift)


# ---- passes --------------------------------------------------------------------------------------
class Geom(NamedTuple):
    """An array viewed as (outer, n, inner), transformed along the middle axis."""

    outer: int
    n: int
    inner: int

    @property
    def size(self) -> int:
        return self.outer * self.n * self.inner

    def split(self, e: Exp) -> tuple[Exp, Exp]:
        """(position along the axis, element index of position 0 of the same line)."""
        if self.outer == 1 and self.inner == 1:
            return e, E.i32(0)
        if self.inner == 1:
            o = E.mod(e, self.n)
        else:
            o = E.mod(E.idiv(e, self.inner), self.n) if self.outer > 1 else E.idiv(e, self.inner)
        return o, E.binary(Op.SUB, e, E.mul(o, self.inner))

    def at(self, base: Exp, j: Exp) -> Exp:
        return E.add(base, E.mul(j, self.inner))


def _twiddle(table: Exp, n: int, j: Exp, inverse: bool) -> C:
    re, im = _storage_src(table, n)(j)
    return (re, E.unary(Op.NEG, im)) if inverse else (re, im)


def _digits(o: Exp, s: int, r: int) -> tuple[Exp, Exp, Exp]:
    """o = q + s (t + r p): (q, t, p)."""
    d = E.idiv(o, s)
    return E.mod(o, s), E.mod(d, r), E.idiv(d, r)


# A pass maps the previous values (src) to the element values of its output: a function of the
# element index (elementwise passes), or a storage expression (passes that reduce).
Value = Callable[[Exp], C]


def _radix2(src: Src, g: Geom, s: int, table: Exp, inverse: bool, scale: float) -> Value:
    m = g.n // (2 * s)

    def value(e: Exp) -> C:
        o, base = g.split(e)
        q, t, p = _digits(o, s, 2)
        j0 = E.add(q, E.mul(p, s))
        a0, a1 = src(g.at(base, j0)), src(g.at(base, E.add(j0, m * s)))
        z = _select(E.binary(Op.CMPEQ, t, E.i32(0)), _add(a0, a1), _sub(a0, a1))
        w = _twiddle(table, g.n, E.mul(E.mul(t, p), s), inverse)
        return _scaled(_mul(z, w), scale)

    return value


def _radix4(src: Src, g: Geom, s: int, table: Exp, inverse: bool, scale: float) -> Value:
    m = g.n // (4 * s)

    def value(e: Exp) -> C:
        o, base = g.split(e)
        q, t, p = _digits(o, s, 4)
        j0 = E.add(q, E.mul(p, s))
        a = [src(g.at(base, E.add(j0, k * m * s))) for k in range(4)]
        u0, u1 = _add(a[0], a[2]), _sub(a[0], a[2])
        v0, v1 = _add(a[1], a[3]), _sub(a[1], a[3])
        # -i v1 forward, +i v1 inverse: the quarter turn of the length-4 DFT
        rot = (E.unary(Op.NEG, v1[1]), v1[0]) if inverse else (v1[1], E.unary(Op.NEG, v1[0]))
        odd = E.binary(Op.CMPEQ, E.binary(Op.AND, t, E.i32(1)), E.i32(1))
        low = E.binary(Op.CMPLT, t, E.i32(2))
        first, second = _select(odd, u1, u0), _select(odd, rot, v0)
        z = _select(low, _add(first, second), _sub(first, second))
        w = _twiddle(table, g.n, E.mul(E.mul(t, p), s), inverse)
        return _scaled(_mul(z, w), scale)

    return value


def _twiddle_index(n: int, r: int, s: int, t: Exp, p: Exp, k: Exp) -> Exp:
    """(s t p + (t k mod r) n / r) mod n: w_n^(s t p) w_r^(t k) as one table entry (both terms
    are below n, so the sum never wraps)."""
    j = E.add(E.mul(E.mul(t, p), s), E.mul(E.mod(E.mul(t, k), r), n // r))
    return E.where(E.binary(Op.CMPLT, j, E.i32(n)), j, E.add(j, -n))


def _radix_small(
    src: Src, g: Geom, s: int, r: int, table: Exp, inverse: bool, scale: float
) -> Value:
    """A generic radix-r pass, unrolled: out[q + s (t + r p)] = sum_k x[q + s (p + m k)]
    w_n^(s t p) w_r^(t k)."""
    n = g.n
    m = n // (r * s)

    def value(e: Exp) -> C:
        o, base = g.split(e)
        q, t, p = _digits(o, s, r)
        j0 = E.add(q, E.mul(p, s))
        acc: C | None = None
        for k in range(r):
            a = src(g.at(base, E.add(j0, k * m * s)))
            term = _mul(a, _twiddle(table, n, _twiddle_index(n, r, s, t, p, E.i32(k)), inverse))
            acc = term if acc is None else _add(acc, term)
        assert acc is not None
        return _scaled(acc, scale)

    return value


def _radix_reduce(
    src: Src, g: Geom, s: int, r: int, table: Exp, inverse: bool, scale: float
) -> Exp:
    """A generic radix-r pass as a fused reduction over the r inputs of each output (the
    storage expression: a reduction sums one real part per output)."""
    n = g.n
    m = n // (r * s)
    f = E.idx(2 * g.size)
    o, base = g.split(E.idiv(f, 2))
    q, t, p = _digits(o, s, r)
    k = E.ridx(r)
    a = src(g.at(base, E.add(E.add(q, E.mul(p, s)), E.mul(k, m * s))))
    term = _mul(a, _twiddle(table, n, _twiddle_index(n, r, s, t, p, k), inverse))
    body = E.where(E.binary(Op.CMPEQ, E.mod(f, 2), E.i32(0)), term[0], term[1])
    out = E.reduce(Op.ADD, body, r)
    if scale != 1.0:
        out = E.binary(Op.MUL, out, E.const(scale, out.dtype))
    return out


# ---- plans ---------------------------------------------------------------------------------------
DIRECT_MAX = 8  # lengths up to this that are not powers of two: one direct DFT pass
UNROLL_MAX = 8  # generic radices up to this are unrolled; larger ones reduce
GENERIC_RADIX_MAX = 64  # larger prime factors: Bluestein unless a direct pass is cheaper


def _factors(n: int) -> list[int]:
    """Pass radices for n: 4s and at most one 2 first, then odd primes ascending (the generic
    passes come last, where their sub-length is small)."""
    out = []
    while n % 4 == 0:
        out.append(4)
        n //= 4
    if n % 2 == 0:
        out.append(2)
        n //= 2
    p = 3
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 2
    if n > 1:
        out.append(n)
    return out


def _pass_cost(radices: list[int]) -> int:
    return sum(3 if r in (2, 4) else r for r in radices)


def _use_bluestein(n: int) -> bool:
    radices = _factors(n)
    if max(radices, default=1) <= GENERIC_RADIX_MAX:
        return False
    big = 1 << (2 * n - 2).bit_length()
    return 3 * big * _pass_cost(_factors(big)) + 4 * n < n * _pass_cost(radices)


def _axis_transform(
    src: Src, g: Geom, inverse: bool, scale: float, cdt: dtypes.DType, device: Device
) -> Exp:
    """The transform of `src` along the middle axis of `g`, as a storage expression (of the
    last pass, or reading its buffer): a consumer may re-index or fuse it."""
    n, size = g.n, g.size
    if n == 1:
        return _emit(lambda e: _scaled(src(e), scale), size)
    if _use_bluestein(n):
        return _bluestein(src, g, inverse, scale, cdt, device)
    table = _roots(n, dtypes.component(cdt), device)
    packed = _packs(cdt, device)
    radices = [n] if n <= DIRECT_MAX and n & (n - 1) else _factors(n)
    s = 1
    for i, r in enumerate(radices):
        last = i == len(radices) - 1
        sc = scale if last else 1.0
        step: Value | Exp
        if r == 4:
            step = _radix4(src, g, s, table, inverse, sc)
        elif r == 2:
            step = _radix2(src, g, s, table, inverse, sc)
        elif r <= UNROLL_MAX:
            step = _radix_small(src, g, s, r, table, inverse, sc)
        else:
            step = _radix_reduce(src, g, s, r, table, inverse, sc)
        s *= r
        if isinstance(step, Exp) or not packed:
            out = step if isinstance(step, Exp) else _emit(step, size)
            if last:
                return out
            src = _schedule(out, size, device)
            continue
        buf = lazy.load_all(lazy.schedule(_pack(step(E.idx(size))), size, device))
        if last:
            return _unpacked_storage(buf, size)
        src = _packed_src(buf, size)
    raise AssertionError("unreachable")


def _rebase(base: Exp, n: int, to_n: int, inner: int) -> Exp:
    """The start of the same line in the (outer, to_n, inner) view as `base` in (outer, n,
    inner)."""
    a = E.idiv(base, n * inner)
    b = E.mod(base, inner) if inner > 1 else E.i32(0)
    return E.add(E.mul(a, to_n * inner), b)


def _bluestein(
    src: Src, g: Geom, inverse: bool, scale: float, cdt: dtypes.DType, device: Device
) -> Exp:
    """X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]), c[j] = exp(-+ pi i j^2 / n): the
    convolution as IFFT(FFT(x c) FFT(conj c)) at a power-of-two length >= 2n - 1."""
    n = g.n
    big = 1 << (2 * n - 2).bit_length()
    real = dtypes.component(cdt)
    chirp = lazy.load_all(
        _cached(
            ("chirp", device, real.name, n, inverse),
            lambda: _upload(_interleaved(_chirp_values(n, inverse)), real, device),
        )
    )
    kernel = _bluestein_kernel(n, big, inverse, real, device)
    c = _storage_src(chirp, n)
    gb = Geom(g.outer, big, g.inner)

    def padded(e: Exp) -> C:
        j, base = gb.split(e)
        inside = E.binary(Op.CMPLT, j, E.i32(n))
        jc = E.binary(Op.MIN, j, E.i32(n - 1))
        x = _mul(src(g.at(_rebase(base, big, n, g.inner), jc)), c(jc))
        zero = E.const(0.0, real)
        return E.where(inside, x[0], zero), E.where(inside, x[1], zero)

    spec = _axis_transform(padded, gb, False, 1.0, cdt, device)
    spec_src = _as_src(spec, gb.size, device)
    ker = _storage_src(kernel, big)

    def product(e: Exp) -> C:
        j, _ = gb.split(e)
        return _mul(spec_src(e), ker(j))

    conv = _axis_transform(product, gb, True, 1.0, cdt, device)
    conv_src = _storage_src(conv, gb.size)

    def value(e: Exp) -> C:
        k, base = g.split(e)
        return _scaled(_mul(conv_src(gb.at(_rebase(base, n, big, g.inner), k)), c(k)), scale)

    return _emit(value, g.size)


def _bluestein_kernel(n: int, big: int, inverse: bool, real: dtypes.DType, device: Device) -> Exp:
    """FFT(b) / big, b[m] = conj(c[|m|]) on the circle of length big (computed on the device
    once and kept: the 1 / big of the inverse transform is folded in, exactly)."""

    def make() -> lazy.LazyBuffer:
        cz = _chirp_values(n, inverse)
        b = [0j] * big
        for m in range(n):
            b[m] = b[(big - m) % big] = cz[m].conjugate() / big
        lb = _upload(_interleaved(b), real, device)
        gb = Geom(1, big, 1)
        cdt = dtypes.to_complex(real)
        out = _axis_transform(_storage_src(lazy.load_all(lb), big), gb, False, 1.0, cdt, device)
        res = lazy.as_buffer(out, 2 * big, device)
        lazy.execute(res)
        return res

    return lazy.load_all(_cached(("bluestein", device, real.name, n, inverse), make))


# ---- the primitive's evaluation ------------------------------------------------------------------
def _shape_geom(shape: tuple[int, ...], axis: int) -> Geom:
    return Geom(math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :]))


def _half_src(src: Src, shape: tuple[int, ...], n: int) -> Src:
    """The full spectrum of length n along the last axis from its first n // 2 + 1 elements
    (`src`, over `shape`), by Hermitian symmetry: X[k] = conj(X[n - k])."""
    h = shape[-1]

    def read(e: Exp) -> C:
        k = E.mod(e, n)
        row = E.idiv(e, n)
        upper = E.binary(Op.CMPLT, E.i32(n // 2), k)
        kk = E.where(upper, E.binary(Op.SUB, E.i32(n), k), k)
        re, im = src(E.add(E.mul(row, h), kk))
        return re, E.where(upper, E.unary(Op.NEG, im), im)

    return read


def _real_forward(x: Exp, rows: int, n: int, cdt: dtypes.DType, device: Device) -> Exp:
    """The half spectrum (rows, n // 2 + 1) of real rows of even length n, by one complex FFT
    of length m = n / 2: z[j] = x[2j] + i x[2j+1] (x's storage is z's), Z = FFT(z), and
    X[k] = (Z[k] + conj Z[m-k]) / 2 - i w_n^k (Z[k] - conj Z[m-k]) / 2."""
    m = n // 2
    z = _axis_transform(_storage_src(x, rows * m), Geom(rows, m, 1), False, 1.0, cdt, device)
    zs = _as_src(z, rows * m, device)
    table = _storage_src(_roots(n, dtypes.component(cdt), device), n)
    g = Geom(rows, m + 1, 1)

    def value(e: Exp) -> C:
        k, base = g.split(e)
        at = E.mul(E.idiv(base, m + 1), m) if rows > 1 else E.i32(0)
        zk = zs(E.add(at, E.mod(k, m)))
        zc = zs(E.add(at, E.mod(E.binary(Op.SUB, E.i32(m), k), m)))
        zc = (zc[0], E.unary(Op.NEG, zc[1]))
        even = _scaled(_add(zk, zc), 0.5)
        odd = _scaled(_sub(zk, zc), 0.5)
        turned = (odd[1], E.unary(Op.NEG, odd[0]))  # -i odd
        return _add(even, _mul(turned, table(k)))

    return _emit(value, g.size)


def _real_inverse_src(src: Src, rows: int, n: int, cdt: dtypes.DType, device: Device) -> Src:
    """Z[k] = E[k] + i O[k] (rows, m = n / 2) from the half spectrum H (rows, m + 1) of real rows
    of even length n: E = (H[k] + conj H[m-k]) / 2, O = (H[k] - conj H[m-k]) conj(w_n^k) / 2;
    IFFT(Z) then holds x[2j] + i x[2j+1]. The imaginary parts of H[0] and H[m] are ignored,
    as by every c2r transform."""
    m = n // 2
    table = _roots(n, dtypes.component(cdt), device)
    g = Geom(rows, m, 1)
    zero = E.const(0.0, dtypes.component(cdt))

    def read(e: Exp) -> C:
        k, base = g.split(e)
        first = E.binary(Op.CMPEQ, k, E.i32(0))
        at = E.mul(E.idiv(base, m), m + 1) if rows > 1 else E.i32(0)
        hk = src(E.add(at, k))
        hc = src(E.add(at, E.binary(Op.SUB, E.i32(m), k)))
        hk = (hk[0], E.where(first, zero, hk[1]))
        hc = (hc[0], E.where(first, zero, E.unary(Op.NEG, hc[1])))  # conjugated
        even = _scaled(_add(hk, hc), 0.5)
        odd = _mul(_scaled(_sub(hk, hc), 0.5), _twiddle(table, n, k, True))
        return E.binary(Op.SUB, even[0], odd[1]), E.binary(Op.ADD, even[1], odd[0])

    return read


def lower_fft(
    x: Exp, aval: ShapedArray, device: Device, fft_type: FftType, fft_lengths: tuple[int, ...]
) -> Exp:
    """The storage expression of fft(x): passes scheduled on `device`, the last one not."""
    shape = aval.shape
    nd = len(shape)
    k = len(fft_lengths)
    axes = list(range(nd - k, nd))
    cdt = aval.dtype if aval.dtype.kind == "c" else dtypes.to_complex(aval.dtype)
    size = aval.size
    out: Exp | None = None

    def step(src: Src, shp: tuple[int, ...], axis: int, inverse: bool) -> Exp:
        g = _shape_geom(shp, axis)
        return _axis_transform(src, g, inverse, 1.0 / g.n if inverse else 1.0, cdt, device)

    if fft_type in (FftType.FFT, FftType.IFFT):
        src = _storage_src(x, size)
        for axis in reversed(axes):
            if out is not None:
                src = _as_src(out, size, device)
            out = step(src, shape, axis, fft_type == FftType.IFFT)
        assert out is not None
        return out
    n = fft_lengths[-1]
    rows = size // n if fft_type == FftType.RFFT else math.prod(shape[:-1])
    if fft_type == FftType.RFFT:
        h = n // 2 + 1
        half = (*shape[:-1], h)
        hsize = math.prod(half)
        if n % 2 == 0:
            out = _real_forward(x, rows, n, cdt, device)
        else:  # the complex FFT of the real rows, cut to the first half
            full = step(_real_src(x, size), shape, nd - 1, False)
            f = E.idx(2 * hsize)
            e = E.idiv(f, 2)
            at = E.add(E.mul(E.idiv(e, h), n), E.mod(e, h))
            out = view.reindex(full, 2 * size, E.add(E.mul(at, 2), E.mod(f, 2)))
        for axis in reversed(axes[:-1]):
            out = step(_as_src(out, hsize, device), half, axis, False)
        return out
    # IRFFT: the leading axes on the half spectrum, then the last axis
    src = _storage_src(x, size)
    for axis in reversed(axes[:-1]):
        src = _as_src(step(src, shape, axis, True), size, device)
    if n % 2 == 0:  # the storage of the half-length complex result is the real output
        m = n // 2
        z_src = _real_inverse_src(src, rows, n, cdt, device)
        return _axis_transform(z_src, Geom(rows, m, 1), True, 1.0 / m, cdt, device)
    full_shape = (*shape[:-1], n)
    full = step(_half_src(src, shape, n), full_shape, nd - 1, True)
    return view.reindex(full, 2 * math.prod(full_shape), E.mul(E.idx(math.prod(full_shape)), 2))


@functools.partial(jit, static_argnames=("fft_type", "fft_lengths"))
def _fft_program(x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> Any:
    """The passes of one transform, compiled once per shape (eager calls run this)."""
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths)


def _fft_impl(x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> Any:
    aval = core.get_aval(x)
    out_aval = _fft_abstract(aval, fft_type=fft_type, fft_lengths=fft_lengths)
    device = devices.pick_device([x])
    if out_aval.size == 0:
        return array_mod.Array(out_aval, device, None)
    cdt = out_aval.dtype if out_aval.dtype.kind == "c" else aval.dtype
    if not device.backend.supports_dtype(dtypes.component(cdt)):
        raise TypeError(
            f"The {device.platform} backend does not support dtype {cdt.name} (needed by 'fft')."
        )
    if aval.size == 0:  # IRFFT of an empty half spectrum can't happen; a zero-length axis
        return lax.full(out_aval.shape, 0, out_aval.dtype)
    if not lazy.fuse_epilogues and not config.jax_disable_jit:
        # eager: run the passes as one cached program
        return _fft_program(x, fft_type=fft_type, fft_lengths=fft_lengths)
    store = lowering._storage_aval(aval)
    e = lowering._input_exp(x, aval, device)
    e = lowering._materialized(e, store, device)
    if e.info[2]:  # a reduction fused into the input: it would be recomputed per read
        e = lazy.load_all(lazy.schedule(e, store.size, device))
    out = lower_fft(e, aval, device, fft_type, fft_lengths)
    if out.info[2]:
        # A generic pass ends in a reduction. Complex consumers read the real and imaginary
        # parts of their operands separately, which would put two copies of it in one kernel.
        out = lazy.load_all(lazy.schedule(out, array_mod.storage(out_aval)[1], device))
    return array_mod.from_exp(out, out_aval, device)


fft_p.def_impl(_fft_impl)


# ---- derivatives ---------------------------------------------------------------------------------
def _fft_transpose(
    ct: Any, x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]
) -> list[Any]:
    """FFT and IFFT matrices are symmetric: each is its own transpose. RFFT = slice . FFT .
    (real -> complex), so its transpose is real . FFT . zero-padding; IRFFT's is the RFFT
    of the cotangent weighted by the Hermitian multiplicities, conjugated (JAX's convention for
    complex cotangents)."""
    if isinstance(ct, Zero):
        return [Zero(x.aval)]
    if fft_type in (FftType.FFT, FftType.IFFT):
        return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]
    ct_aval = core.get_aval(ct)
    nd = ct_aval.ndim
    n = fft_lengths[-1]
    if fft_type == FftType.RFFT:
        h = ct_aval.shape[-1]
        zero = lax.full((), 0, ct_aval.dtype)
        config = [(0, 0, 0)] * (nd - 1) + [(0, n - h, 0)]
        full = fft_p.bind(lax.pad(ct, zero, config), fft_type=FftType.FFT, fft_lengths=fft_lengths)
        return [lax.real(full)]
    spec = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    sa = core.get_aval(spec)
    k = lax.broadcasted_iota(dtypes.int32, sa.shape, nd - 1)
    nyquist = n // 2 if n % 2 == 0 else 0
    once = lax.bitwise_or(
        lax.eq(k, lax.full((), 0, dtypes.int32)), lax.eq(k, lax.full((), nyquist, dtypes.int32))
    )
    real = dtypes.component(sa.dtype)
    total = math.prod(fft_lengths)
    weight = lax.select(
        once, lax.full(sa.shape, 1.0 / total, real), lax.full(sa.shape, 2.0 / total, real)
    )
    weighted = lax.mul(spec, lax.convert_element_type(weight, sa.dtype))
    return [lax.conj(weighted)]


ad_rules.deflinear(fft_p, _fft_transpose)


def _fft_batch(
    vals: list[Any], dims: list[Any], *, fft_type: FftType, fft_lengths: tuple[int, ...]
) -> tuple[Any, int]:
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


batching.primitive_batchers[fft_p] = _fft_batch
