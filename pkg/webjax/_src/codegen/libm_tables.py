"""The numbers behind the float32 math libraries of the shader codegens (codegen/wgsl and
codegen/glsl render the same algorithms, each in its own language, from these tables).

- `ERFC_FITS`: erfc(x) e^(x^2) per interval (lo, hi, coefficients) as a polynomial in
  t = (x - (lo + hi) / 2) / ((hi - lo) / 2), lowest degree first: Chebyshev least squares on
  mpmath values at 40 digits, converted to float32 monomials (relative error about 1e-7 in
  float32 Horner). The last interval ends at 10.1, past which erfc underflows to 0 in float32.
- `LGAMMA_ONE_MINUS_EULER`, `LGAMMA_C`: lnGamma(2 + t) = (1 - gamma) t + sum over k >= 2 of
  c_k t^k, with c_k = (-1)^k (zeta(k) - 1) / k.
- `ERF_TAYLOR`: erf(x) sqrt(pi) / 2 = x (1 - x^2/3 + x^4/10 - ...), coefficients in z = x^2.
- `two_over_pi_words(n)`: the bits of 2/pi for Payne-Hanek reduction, as 32-bit words.

Data only: no codegen imports this module's neighbours, and it imports none of them.
"""

from __future__ import annotations

ERFC_FITS: list[tuple[float, float, list[float]]] = [
    (0.5, 1.0, [0.5069376230239868, -0.09199317544698715, 0.014434883370995522,
                -0.002028688555583358, 0.000260900822468102, -3.114970604656264e-05,
                3.4878382848546607e-06, -3.6927397673025553e-07, 3.803262771384652e-08,
                -3.6620368959461302e-09]),
    (1.0, 2.0, [0.32158541679382324, -0.08181145787239075, 0.01903776079416275,
                -0.004116363357752562, 0.0008360836072824895, -0.0001608111197128892,
                2.9471793823176995e-05, -5.171516477275873e-06, 8.705112577445107e-07,
                -1.416006227827893e-07, 2.3902170909195775e-08, -3.6516663026731067e-09]),
    (2.0, 4.0, [0.17900115251541138, -0.054372258484363556, 0.01588437147438526,
                -0.004479431547224522, 0.001223031897097826, -0.0003241228114347905,
                8.35842511150986e-05, -2.0998777472414076e-05, 5.089237674837932e-06,
                -1.218085344589781e-06, 3.385938498468022e-07, -7.831825854509589e-08]),
    (4.0, 10.1, [0.07924498617649078, -0.033625852316617966, 0.01413659192621708,
                 -0.005889656022191048, 0.0024311826564371586, -0.0009951272513717413,
                 0.000408492109272629, -0.0001651057245908305, 5.734656224376522e-05,
                 -2.2144802642287686e-05, 1.6373365724575706e-05, -6.597947958653094e-06]),
]  # fmt: skip

LGAMMA_ONE_MINUS_EULER = 0.42278432846069336
LGAMMA_C = [0.32246702909469604, -0.0673523023724556, 0.020580807700753212,
            -0.007385550998151302, 0.0028905102517455816, -0.0011927539017051458,
            0.0005096695385873318, -0.00022315475507639349, 9.945750935003161e-05,
            -4.4926237023901194e-05, 2.050721195701044e-05, -9.439488167117815e-06,
            4.3748668758780695e-06, -2.039215814875206e-06]  # fmt: skip

ERF_TAYLOR = (1.0, -1 / 3, 1 / 10, -1 / 42, 1 / 216, -1 / 1320, 1 / 9360, -1 / 75600)
TWO_OVER_SQRT_PI = 1.1283791670955126


def two_over_pi_words(nwords: int) -> list[int]:
    """Bits of 2/pi after the binary point, preceded by 64 zero bits, as 32-bit words (table
    bit q, counting from 0, is bit q - 63 after the binary point)."""
    bits = 32 * nwords + 64

    def atan_inv(n: int) -> int:  # atan(1/n) * 2^bits by its Taylor series, in integers
        x = (1 << bits) // n
        total, k, sign = x, 1, -1
        while x:
            x //= n * n
            total += sign * (x // (2 * k + 1))
            sign, k = -sign, k + 1
        return total

    pi = 16 * atan_inv(5) - 4 * atan_inv(239)  # Machin's formula: pi * 2^bits
    frac = (2 << (2 * bits)) // pi  # 2/pi * 2^bits
    padded = frac >> 64
    total = 32 * nwords
    padded >>= bits - total
    return [(padded >> (total - 32 * (i + 1))) & 0xFFFFFFFF for i in range(nwords)]
