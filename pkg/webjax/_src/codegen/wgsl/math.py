"""WGSL helper functions for the webgpu codegen: exact bit-level ops and float32 math.

WGSL lets compilers assume no NaN/inf and gives builtins loose accuracy (sin/cos only within
2^-11 absolute on [-pi, pi], exp 3+2|x| ulp, division 2.5 ulp), so NaN-sensitive ops are bit
tests and the transcendentals are written here with explicit range reduction and polynomials,
using builtins only where their guaranteed accuracy suffices. `HELPERS[name]` is WGSL source;
`DEPS[name]` lists helpers it calls. wgsl.py emits only what a kernel uses.
"""

from __future__ import annotations

from . import libm as wgsl_libm
from . import special as wgsl_special

HELPERS: dict[str, str] = {}
DEPS: dict[str, tuple[str, ...]] = {}


def _h(name: str, src: str, *deps: str) -> None:
    # Tint rejects constant expressions that evaluate to inf/NaN: build those at run time
    # from `opq` (always 0, unknown to the compiler).
    src = src.replace("bitcast<f32>(F_NAN)", "bitcast<f32>(F_NAN | opq)")
    src = src.replace("bitcast<f32>(0x7f800000u)", "bitcast<f32>(0x7f800000u | opq)")
    if "opq" in src and name != "opq":
        deps = (*deps, "opq")
    HELPERS[name] = src.strip("\n")
    DEPS[name] = deps


# ---- optimization barrier ------------------------------------------------------------------------
# Vulkan compilers (Mesa NIR on lavapipe) apply unsafe float rewrites: x + 0.0 -> x, x * 0.0 -> 0,
# x - x -> 0, (x + 1) - 1 -> x. `opq` is zero at run time, but no compiler can prove it (main sets
# it from arrayLength, never 0), so `fb(x)` hides x's origin and value from such rewrites.
_h("opq", "var<private> opq: u32;")
_h("fb", "fn fb(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | opq); }", "opq")
_h("fb2", "fn fb2(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ opq); }", "opq")
_h(
    "fb4",
    "fn fb4(x: vec4<f32>) -> vec4<f32> { return bitcast<vec4<f32>>(bitcast<vec4<u32>>(x) | "
    "vec4<u32>(opq)); }",
    "opq",
)

# ---- classification and exact float ops ---------------------------------------------------------
_h(
    "f_isnan",
    "fn f_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }",
)
_h(
    "f_isinf",
    "fn f_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }",
)
_h(
    "f_isfinite",
    "fn f_isfinite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }",
)
_h("f_nan", "const F_NAN: u32 = 0x7fc00000u;")
_h(
    "f_lt",
    "fn f_lt(a: f32, b: f32) -> bool { return !(f_isnan(a) | f_isnan(b)) & (a < b); }",
    "f_isnan",
)
_h(
    "f_le",
    "fn f_le(a: f32, b: f32) -> bool { return !(f_isnan(a) | f_isnan(b)) & (a <= b); }",
    "f_isnan",
)
_h(
    "f_eq",
    "fn f_eq(a: f32, b: f32) -> bool { return !(f_isnan(a) | f_isnan(b)) & (a == b); }",
    "f_isnan",
)
_h("f_ne", "fn f_ne(a: f32, b: f32) -> bool { return !f_eq(a, b); }", "f_eq")
# MAX/MIN: NaN-propagating; of +0 and -0, max is +0 and min is -0 (AND / OR of the bits).
# Branch-free (selects, non-short-circuit `|` and `&`): one path for every invocation of a SIMD
# group, and small code when several indices are inlined per invocation (wgsl lanes).
_h(
    "f_max",
    """
fn f_max(a: f32, b: f32) -> f32 {
  let same = bitcast<f32>(bitcast<u32>(a) & bitcast<u32>(b));
  let m = select(select(same, b, b > a), a, a > b);
  return select(m, bitcast<f32>(F_NAN), f_isnan(a) | f_isnan(b));
}""",
    "f_isnan",
    "f_nan",
)
_h(
    "f_min",
    """
fn f_min(a: f32, b: f32) -> f32 {
  let same = bitcast<f32>(bitcast<u32>(a) | bitcast<u32>(b));
  let m = select(select(same, b, b < a), a, a < b);
  return select(m, bitcast<f32>(F_NAN), f_isnan(a) | f_isnan(b));
}""",
    "f_isnan",
    "f_nan",
)
# Division: GPUs may divide through a reciprocal (2.5 ulp is WGSL's bound; NVIDIA's Vulkan is
# off by 1 ulp often). On the mantissas (in [1, 2): no overflow), correct the quotient by its
# exact remainder (Dekker product), then scale by the exponent difference.
_h(
    "f_div",
    """
fn f_div(a: f32, b: f32) -> f32 {
  let ua = bitcast<u32>(a) & 0x7fffffffu;
  let ub = bitcast<u32>(b) & 0x7fffffffu;
  let sign = (bitcast<u32>(a) ^ bitcast<u32>(b)) & 0x80000000u;
  // IEEE special cases by hand: a reciprocal-based x/huge flushes 1/huge, giving inf/huge = NaN
  if (ua > 0x7f800000u || ub > 0x7f800000u || (ua == ub && (ua == 0u || ua == 0x7f800000u))) {
    return bitcast<f32>(F_NAN);
  }
  if (ua == 0x7f800000u || ub == 0u) { return bitcast<f32>(sign | 0x7f800000u); }
  if (ub == 0x7f800000u || ua == 0u) { return bitcast<f32>(sign); }
  let e = i32(ua >> 23u) - i32(ub >> 23u);
  if (ua < 0x00800000u || ub < 0x00800000u || e < -125) {
    return a / b;  // subnormal operands or result: scaling would round twice
  }
  if (e > 128) { return bitcast<f32>(sign | 0x7f800000u); }
  let ma = bitcast<f32>((ua & 0x7fffffu) | 0x3f800000u);
  let mb = bitcast<f32>((ub & 0x7fffffu) | 0x3f800000u);
  let q = fb(ma / mb);  // barriers: NVIDIA's compiler turns a/b + r/b into (a + r)/b
  let p = two_prod(q, mb);
  let qc = q + fb(fb(fb(ma - p.hi) - p.lo) / mb);
  let mag = ldexp(ldexp(qc, e / 2), e - e / 2);
  return bitcast<f32>(bitcast<u32>(mag) | sign);
}""",
    "df",
    "fb",
    "f_nan",
)
# Where the device's own division and sqrt are correctly rounded (wgsl.probe checks them at
# start-up: true of CPU implementations, which use the host's IEEE instructions), kernels use
# them directly: f_div and m_sqrt cost several times more.
_h("f_div_hw", "fn f_div_hw(a: f32, b: f32) -> f32 { return fb(a / b); }", "fb")
_h(
    "m_sqrt_hw",
    """
fn m_sqrt_hw(x: f32) -> f32 {
  return select(fb(sqrt(x)), bitcast<f32>(F_NAN), f_isnan(x) | (x < 0.0));
}""",
    "f_isnan",
    "f_nan",
    "fb",
)
_h("f_floor", "fn f_floor(x: f32) -> f32 { return floor(x); }")
_h("f_ceil", "fn f_ceil(x: f32) -> f32 { return ceil(x); }")
_h("f_round", "fn f_round(x: f32) -> f32 { return round(x); }")  # WGSL round: half to even
_h(
    "f_sign",
    """
fn f_sign(x: f32) -> f32 {
  let u = bitcast<u32>(x);
  if ((u & 0x7fffffffu) == 0u || f_isnan(x)) { return x; }
  return bitcast<f32>((u & 0x80000000u) | 0x3f800000u);
}""",
    "f_isnan",
)
# fmod, exact: |a| = ma * 2^ea, |b| = mb * 2^eb (24-bit integer mantissas); the remainder of
# ma * 2^(ea-eb) by mb is built 8 bits at a time in u32, then scaled back by 2^eb.
_h(
    "f_fmod",
    """
fn f_fmod(a: f32, b: f32) -> f32 {
  let ua = bitcast<u32>(a);
  let xa = ua & 0x7fffffffu;
  let xb = bitcast<u32>(b) & 0x7fffffffu;
  if (xa >= 0x7f800000u || xb > 0x7f800000u || xb == 0u) { return bitcast<f32>(F_NAN); }
  if (xa < xb) { return a; }
  var ea = i32(xa >> 23u);
  var ma = xa & 0x7fffffu;
  if (ea == 0) { ea = 1; } else { ma = ma | 0x800000u; }
  var eb = i32(xb >> 23u);
  var mb = xb & 0x7fffffu;
  if (eb == 0) { eb = 1; } else { mb = mb | 0x800000u; }
  var r = ma % mb;
  var d = ea - eb;
  loop {
    if (d <= 0 || r == 0u) { break; }
    let s = min(d, 8);
    r = (r << u32(s)) % mb;
    d = d - s;
  }
  let mag = ldexp(f32(r), eb - 150);
  return bitcast<f32>((ua & 0x80000000u) | bitcast<u32>(mag));
}""",
    "f_nan",
)
_h(
    "f_nextafter",
    """
fn f_nextafter(a: f32, b: f32) -> f32 {
  if (f_isnan(a) || f_isnan(b)) { return bitcast<f32>(F_NAN); }
  if (a == b) { return b; }
  let ua = bitcast<u32>(a);
  if ((ua & 0x7fffffffu) == 0u) { return bitcast<f32>((bitcast<u32>(b) & 0x80000000u) | 1u); }
  if ((a < b) == (a > 0.0)) { return bitcast<f32>(ua + 1u); }
  return bitcast<f32>(ua - 1u);
}""",
    "f_isnan",
    "f_nan",
)

# nextafter in the 16-bit formats: step the format's bit pattern (values are exact there)
_TINY = "((bitcast<u32>(b) >> 16u) & 0x8000u) | 1u"  # the smallest subnormal with b's sign
for _fmt, _to, _from in (
    ("f16", "f32_to_f16(a)", "f16_to_f32({})"),
    ("bf16", "(bitcast<u32>(a) >> 16u)", "bitcast<f32>(({}) << 16u)"),
):
    _h(
        f"f_nextafter_{_fmt}",
        f"""
fn f_nextafter_{_fmt}(a: f32, b: f32) -> f32 {{
  if (f_isnan(a) || f_isnan(b)) {{ return bitcast<f32>(F_NAN); }}
  if (a == b) {{ return b; }}
  let ua = {_to};
  if ((ua & 0x7fffu) == 0u) {{ return {_from.format(_TINY)}; }}
  if ((a < b) == (a > 0.0)) {{ return {_from.format("ua + 1u")}; }}
  return {_from.format("ua - 1u")};
}}""",
        "f_isnan",
        "f_nan",
        *(("f32_to_f16", "f16_to_f32") if _fmt == "f16" else ()),
    )

# ---- float16 / bfloat16 as f32 values ------------------------------------------------------------
# f32 -> binary16 bits, round half to even; NaN stays NaN (quiet), overflow -> inf.
_h(
    "f32_to_f16",
    """
fn f32_to_f16(x: f32) -> u32 {
  let u = bitcast<u32>(x);
  let s = (u >> 16u) & 0x8000u;
  let a = u & 0x7fffffffu;
  if (a > 0x7f800000u) { return s | 0x7e00u | ((a >> 13u) & 0x3ffu); }
  if (a >= 0x477ff000u) { return s | 0x7c00u; }
  if (a >= 0x38800000u) {
    let r = a - 0x38000000u;
    return s | ((r + 0xfffu + ((r >> 13u) & 1u)) >> 13u);
  }
  return s | u32(round(bitcast<f32>(a) * 16777216.0));
}""",
)
_h(
    "f16_to_f32",
    """
fn f16_to_f32(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) { return bitcast<f32>(s | bitcast<u32>(f32(m) * 5.9604644775390625e-8)); }
  if (e == 31u) { return bitcast<f32>(s | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u));
}""",
)
_h(
    "round_f16",
    "fn round_f16(x: f32) -> f32 { return f16_to_f32(f32_to_f16(x)); }",
    "f32_to_f16",
    "f16_to_f32",
)
_h(
    "round_bf16",
    """
fn round_bf16(x: f32) -> f32 {
  let u = bitcast<u32>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) { return bitcast<f32>(u | 0x400000u); }
  return bitcast<f32>((u + 0x7fffu + ((u >> 16u) & 1u)) & 0xffff0000u);
}""",
)

# ---- integer division with the IR's rules (x/0 = -1, x%0 = x, INT_MIN/-1 wraps) --------------
# Signed division runs on magnitudes in u32: drivers disagree on i32 `/` and `%` at INT_MIN
# (NVIDIA's Vulkan gave INT_MIN % b = INT_MIN), unsigned division is well defined everywhere.
_h(
    "idiv_i32",
    """
fn idiv_i32(a: i32, b: i32) -> i32 {
  if (b == 0) { return -1; }
  let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0);
  let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0);
  let q = ua / ub;
  return bitcast<i32>(select(q, 0u - q, (a < 0) != (b < 0)));
}""",
)
_h(
    "idiv_u32",
    "fn idiv_u32(a: u32, b: u32) -> u32 { if (b == 0u) { return 0xffffffffu; } return a / b; }",
)
_h(
    "imod_i32",
    """
fn imod_i32(a: i32, b: i32) -> i32 {
  if (b == 0) { return a; }
  let ua = select(bitcast<u32>(a), 0u - bitcast<u32>(a), a < 0);
  let ub = select(bitcast<u32>(b), 0u - bitcast<u32>(b), b < 0);
  let r = ua % ub;
  return bitcast<i32>(select(r, 0u - r, a < 0));
}""",
)
_h("imod_u32", "fn imod_u32(a: u32, b: u32) -> u32 { if (b == 0u) { return a; } return a % b; }")

# ---- transcendentals (wgsl_libm.py) -------------------------------------------------------------
wgsl_libm.register(_h)
wgsl_special.register(_h)


def straight(name: str) -> bool:
    """Whether helper `name` and what it calls run without branches or loops (cheap to inline
    several times: wgsl's lanes do, per index)."""
    src = HELPERS[name]
    if any(k in src for k in ("if (", "loop", "for (", "while", "||", "&&")):
        return False
    return all(straight(d) for d in DEPS.get(name, ()))
