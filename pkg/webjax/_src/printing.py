"""NumPy-style array text without NumPy: `repr(x)` and `str(x)` print like JAX's.

Follows NumPy's default print options (precision 8, shortest round-trip digits, common width,
scientific notation for wide ranges, line width 75, summarization past 1000 elements).
"""

from __future__ import annotations

import math
import struct
from html import escape
from typing import Any

from . import dtypes
from .dtypes import DType

THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 75
PRECISION = 8


# (largest finite value, the value halfway to the next power of two: rounding overflows past it)
_LIMITS = {"float32": ((2 - 2**-23) * 2.0**127, (2 - 2**-24) * 2.0**127),
           "float16": (65504.0, 65520.0)}  # fmt: skip


def _round_trip(x: float, dtype: DType) -> float:
    if dtype.name in _LIMITS and abs(x) >= _LIMITS[dtype.name][0]:  # struct refuses to round
        top, halfway = _LIMITS[dtype.name]
        return math.copysign(math.inf if abs(x) >= halfway else top, x)
    if dtype.name == "float32":
        return struct.unpack("<f", struct.pack("<f", x))[0]
    if dtype.name == "float16":
        return struct.unpack("<e", struct.pack("<e", x))[0]
    if dtype.name == "bfloat16":
        (b,) = struct.unpack("<I", struct.pack("<f", x))
        b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
        return struct.unpack("<f", struct.pack("<I", b))[0]
    return x


def _shortest_sci(x: float, dtype: DType) -> tuple[str, int]:
    """Shortest digits (as 'd.ddd') and exponent that read back as `x` in `dtype`."""
    for p in range(1, 18):
        s = f"{x:.{p - 1}e}"
        if _round_trip(float(s), dtype) == x:
            break
    mant, e = s.split("e")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return mant, int(e)


def _positional_parts(x: float, dtype: DType, limit: bool = True) -> tuple[str, str]:
    """The digits of |x| before and after the point: shortest round-trip digits, at most
    PRECISION after the point with `limit` (NumPy's dragon4_positional, unique, trim '.')."""
    mant, e = _shortest_sci(abs(x), dtype)
    digits = mant.replace(".", "")
    point = e + 1  # digits before the decimal point
    if point <= 0:
        s = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        s = digits + "0" * (point - len(digits)) + "."
    else:
        s = digits[:point] + "." + digits[point:]
    whole, frac = s.split(".")
    if limit and len(frac) > PRECISION:
        s = f"{abs(x):.{PRECISION}f}".rstrip("0")
        whole, frac = s.split(".")
    return whole, frac


def _scientific_parts(x: float, dtype: DType) -> tuple[str, str, int]:
    """The mantissa digits of |x| before and after the point, and the exponent (NumPy's
    dragon4_scientific: shortest round-trip digits, at most PRECISION after the point)."""
    mant, e = _shortest_sci(abs(x), dtype)
    if "." in mant and len(mant.split(".")[1]) > PRECISION:
        mant = f"{float(mant):.{PRECISION}f}".rstrip("0")
    whole, _, frac = mant.partition(".")
    return whole, frac, e


def _negative(x: float) -> bool:
    return math.copysign(1.0, x) < 0


def _positional(x: float, dtype: DType) -> str:
    whole, frac = _positional_parts(x, dtype)
    return ("-" if _negative(x) else "") + whole + "." + frac


# magnitudes from which arrays print in scientific notation: 10^min(8, decimal precision)
_SCI_CUTOFF = {"float64": 1e8, "float32": 1e6, "float16": 1e3, "bfloat16": 1e2}


class _FloatFormat:
    """NumPy's FloatingFormat (floatmode 'maxprec'): one notation for all values, the point
    aligned (pad_left characters before it, pad_right after), non-finite values right-aligned
    in the same width. `plus` prints '+' on non-negative values (the imaginary parts of
    complex numbers)."""

    def __init__(self, values: list[float], dtype: DType, plus: bool = False) -> None:
        self.dtype, self.plus = dtype, plus
        finite = [v for v in values if math.isfinite(v)]
        nonzero = [abs(v) for v in finite if v != 0]
        # NumPy compares in the array's type (float32 0.0001 is not below 1e-4 there)
        top, low = (max(nonzero), min(nonzero)) if nonzero else (0.0, 0.0)
        self.sci = bool(nonzero) and (
            top >= _round_trip(_SCI_CUTOFF.get(dtype.name, 1e8), dtype)
            or low < _round_trip(1e-4, dtype)
            or _round_trip(top / low, dtype) > 1e3
        )
        self.pad_left = self.pad_right = self.frac = self.exp_digits = 0
        if finite and self.sci:
            parts = [_scientific_parts(v, dtype) for v in finite]
            self.exp_digits = max(max(len(str(abs(e))), 2) for _, _, e in parts)
            self.frac = max(len(f) for _, f, _ in parts)
            self.pad_left = max(len(self._sign(v) + w) for v, (w, _, _) in zip(finite, parts))
            self.pad_right = self.exp_digits + 2 + self.frac
        elif finite:
            pos = [_positional_parts(v, dtype) for v in finite]
            self.pad_left = max(len(self._sign(v) + w) for v, (w, _) in zip(finite, pos))
            self.pad_right = max(len(f) for _, f in pos)
        if len(finite) != len(values):  # room for nan/inf
            neg_inf = plus or any(v == -math.inf for v in values)
            offset = self.pad_right + 1
            self.pad_left = max(self.pad_left, 3 - offset, 3 + neg_inf - offset)

    def _sign(self, v: float) -> str:
        return "-" if _negative(v) else ("+" if self.plus else "")

    def __call__(self, v: float) -> str:
        if not math.isfinite(v):
            if v != v:
                text = ("+" if self.plus else "") + "nan"
            else:
                text = ("-" if v < 0 else "+" if self.plus else "") + "inf"
            return text.rjust(self.pad_left + self.pad_right + 1)
        if self.sci:
            whole, frac, e = _scientific_parts(v, self.dtype)
            exp = f"e{'+' if e >= 0 else '-'}{str(abs(e)).rjust(self.exp_digits, '0')}"
            return (
                (self._sign(v) + whole).rjust(self.pad_left)
                + "."
                + frac.ljust(self.frac, "0")
                + exp
            )
        whole, frac = _positional_parts(v, self.dtype)
        return (self._sign(v) + whole).rjust(self.pad_left) + "." + frac.ljust(self.pad_right)


def _complex_formatter(values: list[complex], dtype: DType) -> Any:
    """NumPy's ComplexFloatingFormat: the real parts and the imaginary parts (signed) each
    formatted as one float column, 'j' placed before the imaginary part's padding."""
    part = dtypes.component(dtype)
    real = _FloatFormat([complex(v).real for v in values], part)
    imag = _FloatFormat([complex(v).imag for v in values], part, plus=True)

    def fmt(v: Any) -> str:
        z = complex(v)
        i = imag(z.imag)
        n = len(i.rstrip())
        return real(z.real) + i[:n] + "j" + i[n:]

    return fmt


def _nonfinite(v: float) -> str:
    if v != v:
        return "nan"
    return "inf" if v > 0 else "-inf"


def _bfloat16_text(v: float) -> str:
    """ml_dtypes' bfloat16 (and narrow float) scalar text (C's %g: six significant digits,
    unpadded), which NumPy uses for each element of such an array: '-8', '0.100098',
    '9.99922e+09'."""
    return format(float(v), "g")


def _formatter(values: list[Any], dtype: DType) -> Any:
    if dtype.name == "bfloat16" or (dtype.kind == "f" and dtype in dtypes.NARROW):
        return _bfloat16_text
    if dtype.kind == "f":
        return _FloatFormat(values, dtype)
    if dtype.kind == "c":
        return _complex_formatter(values, dtype)
    if dtype.kind == "b":
        return lambda v: str(bool(v)).rjust(5)
    if dtype in dtypes.NARROW:  # ml_dtypes' ints print as their str, unpadded
        return str
    width = max((len(str(v)) for v in values), default=0)
    return lambda v: str(v).rjust(width)


def _nested(flat: list[Any], shape: tuple[int, ...], summarize: bool) -> Any:
    """Nested lists of the values to show (with None as the '...' marker when summarizing)."""

    def build(offset: int, dims: tuple[int, ...]) -> Any:
        if not dims:
            return flat[offset]
        n, rest = dims[0], dims[1:]
        stride = math.prod(rest)
        if summarize and n > 2 * EDGEITEMS:
            idx: list[int | None] = [*range(EDGEITEMS), None, *range(n - EDGEITEMS, n)]
        else:
            idx = list(range(n))
        return [None if i is None else build(offset + i * stride, rest) for i in idx]

    return build(0, shape)


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, list):
        return [v for t in tree for v in _leaves(t)]
    return [] if tree is None else [tree]


def array_to_string(
    flat: list[Any], shape: tuple[int, ...], dtype: DType, sep: str, prefix: str, suffix: str = ""
) -> str:
    """NumPy's array2string: nested brackets, hanging indents and line wrapping."""
    summarize = len(flat) > THRESHOLD
    nested = _nested(flat, shape, summarize)
    fmt = _formatter(_leaves(nested), dtype)
    if not shape:
        return fmt(flat[0]).strip()
    line_width = LINEWIDTH - len(suffix)

    def extend(s: str, line: str, word: str, width: int, hanging: str) -> tuple[str, str]:
        if len(line) + len(word) > width and len(line) > len(hanging):
            s += line.rstrip() + "\n"
            line = hanging
        return s, line + word

    def rec(node: Any, depth: int, hanging: str, width: int) -> str:
        axes_left = len(shape) - depth
        next_hanging, next_width = hanging + " ", width - 1
        if axes_left == 1:
            elem_width = width - max(len(sep.rstrip()), 1)
            s, line = "", hanging
            for i, v in enumerate(node):
                word = "..." if v is None else fmt(v)
                last = i == len(node) - 1
                s, line = extend(s, line, word, elem_width, hanging)
                if not last:
                    line += sep
            s += line
        else:
            line_sep = sep.rstrip() + "\n" * (axes_left - 1)
            s = ""
            for i, child in enumerate(node):
                inner = "..." if child is None else rec(child, depth + 1, next_hanging, next_width)
                s += hanging + inner + (line_sep if i < len(node) - 1 else "")
        return "[" + s[len(hanging) :] + "]"

    return rec(nested, 0, " " * len(prefix) + " ", line_width)


def array_repr(flat: list[Any], shape: tuple[int, ...], dtype: DType, weak_type: bool) -> str:
    suffix = f"dtype={dtype.name}" + (", weak_type=True" if weak_type else "")
    prefix = "Array("
    if 0 in shape:
        return f"{prefix}[], shape={shape}, {suffix})"
    body = array_to_string(flat, shape, dtype, ", ", prefix, ",")
    suffix += ")"
    last_line_len = len(body) - body.rfind("\n") + 1
    gap = " " * len(prefix) if last_line_len + len(suffix) + 1 > LINEWIDTH else " "
    return f"{prefix}{body},{gap}{suffix}"


# Scalars print positionally for magnitudes in [1e-4, cutoff), else in scientific notation
# (NumPy's scalar str; the cutoff depends on the type).
_SCALAR_CUTOFF = {"float64": 1e16, "float32": 1e6, "float16": 1e3}


def _scalar_parts(value: float, dtype: DType, trim_point: bool) -> str:
    """NumPy's float scalar text (shortest round-trip digits): '1.0' ('1' with trim_point,
    as inside complex scalars), '1.5', '1e+20'."""
    cutoff = _SCALAR_CUTOFF.get(dtype.name, 1e6)
    sign = "-" if _negative(value) else ""
    if value == 0 or 1e-4 <= abs(value) < cutoff:
        whole, frac = _positional_parts(value, dtype, limit=False)
        if not frac:
            return sign + whole + ("" if trim_point else ".0")
        return sign + whole + "." + frac
    mant, e = _shortest_sci(abs(value), dtype)
    return f"{sign}{mant}e{'+' if e >= 0 else '-'}{abs(e):02d}"


def scalar_str(value: Any, dtype: DType) -> str:
    """str() of a 0-d array: NumPy's scalar str (shortest digits, Python-style exponent;
    complex numbers as '(1+2j)', '2j')."""
    if dtype.kind == "c":
        z = complex(value)
        part = dtypes.component(dtype)

        def text(v: float, plus: bool) -> str:
            if math.isfinite(v):
                t = _scalar_parts(v, part, True)
            else:
                t = _nonfinite(v)
            return ("+" + t) if plus and not t.startswith("-") else t

        if z.real == 0 and not _negative(z.real):
            return text(z.imag, False) + "j"
        return f"({text(z.real, False)}{text(z.imag, True)}j)"
    if dtype.kind != "f":
        return str(value)
    if dtype.name == "bfloat16" or dtype in dtypes.NARROW:
        return _bfloat16_text(value)
    if not math.isfinite(value):
        return _nonfinite(value)
    return _scalar_parts(value, dtype, False)


def array_str(flat: list[Any], shape: tuple[int, ...], dtype: DType) -> str:
    if 0 in shape:
        return "[]"
    return array_to_string(flat, shape, dtype, " ", "")


HTML_TABLE_LIMIT = 24  # rows and columns shown as an HTML table; larger arrays show as text


def array_html(
    flat: list[Any], shape: tuple[int, ...], dtype: DType, weak_type: bool, device: str
) -> str:
    """An array as HTML (Jupyter's and the REPL's `_repr_html_`): a line naming its type and
    device, then a table of its values for 1-D and 2-D arrays of at most HTML_TABLE_LIMIT rows
    and columns (formatted as `str` formats them), else the text `str` prints."""
    dims = ",".join(str(d) for d in shape)
    weak = " weak_type" if weak_type else ""
    meta = f"Array {dtype.name}[{dims}]{weak} on {device}"
    head = f'<div class="webjax-array"><div class="webjax-array-meta">{escape(meta)}</div>'
    if 1 <= len(shape) <= 2 and 0 not in shape and max(shape) <= HTML_TABLE_LIMIT:
        fmt = _formatter(flat, dtype)
        cols = shape[-1]
        rows = [flat[i : i + cols] for i in range(0, len(flat), cols)]
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(fmt(v).strip())}</td>" for v in row) + "</tr>"
            for row in rows
        )
        return f'{head}<table class="webjax-array-values"><tbody>{body}</tbody></table></div>'
    text = scalar_str(flat[0], dtype) if not shape else array_str(flat, shape, dtype)
    return f"{head}<pre>{escape(text)}</pre></div>"
