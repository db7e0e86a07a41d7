"""NumPy-style array text without NumPy: `repr(x)` and `str(x)` print like JAX's.

Follows NumPy's default print options (precision 8, shortest round-trip digits, common width,
scientific notation for wide ranges, line width 75, summarization past 1000 elements).
"""

from __future__ import annotations

import math
import struct
from typing import Any

from .dtypes import DType

THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 75
PRECISION = 8


def _round_trip(x: float, dtype: DType) -> float:
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


def _positional(x: float, dtype: DType) -> str:
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
    if len(frac) > PRECISION:
        s = f"{abs(x):.{PRECISION}f}".rstrip("0")
        whole, frac = s.split(".")
    return ("-" if math.copysign(1.0, x) < 0 else "") + whole + "." + frac


def _scientific(x: float, dtype: DType) -> tuple[str, str]:
    mant, e = _shortest_sci(abs(x), dtype)
    if "." in mant and len(mant.split(".")[1]) > PRECISION:
        mant = f"{float(mant):.{PRECISION}f}".rstrip("0")
    if "." not in mant:
        mant += "."
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    return sign + mant, f"e{'+' if e >= 0 else '-'}{abs(e):02d}"


def _k(v: float) -> tuple[float, bool]:
    """A dict key that tells -0.0 from 0.0."""
    return (v, math.copysign(1.0, v) < 0)


def _float_formatter(values: list[float], dtype: DType) -> Any:
    finite = [abs(v) for v in values if math.isfinite(v)]
    nonzero = [v for v in finite if v != 0]
    sci = bool(nonzero) and (
        max(nonzero) >= 1e8 or min(nonzero) < 1e-4 or max(nonzero) / min(nonzero) > 1e3
    )
    if sci:
        parts = {_k(v): _scientific(v, dtype) for v in values if math.isfinite(v)}
        left = max((len(m.split(".")[0]) for m, _ in parts.values()), default=0)
        right = max((len(m.split(".")[1]) for m, _ in parts.values()), default=0)
        exp_w = max((len(e) for _, e in parts.values()), default=0)

        def fmt(v: float) -> str:
            if not math.isfinite(v):
                return _nonfinite(v)
            m, e = parts[_k(v)]
            w, f = m.split(".")
            return w.rjust(left) + "." + f.ljust(right, "0") + e.ljust(exp_w)

    else:
        strs = {_k(v): _positional(v, dtype) for v in values if math.isfinite(v)}
        left = max((len(s.split(".")[0]) for s in strs.values()), default=0)
        right = max((len(s.split(".")[1]) for s in strs.values()), default=0)

        def fmt(v: float) -> str:
            if not math.isfinite(v):
                return _nonfinite(v)
            w, f = strs[_k(v)].split(".")
            return w.rjust(left) + "." + f.ljust(right)

    sample = [fmt(v) for v in values if math.isfinite(v)]
    width = max(
        [len(s) for s in sample] + [len(_nonfinite(v)) for v in values if not math.isfinite(v)]
    )
    return lambda v: fmt(v).rjust(width)


def _nonfinite(v: float) -> str:
    if v != v:
        return "nan"
    return "inf" if v > 0 else "-inf"


def _formatter(values: list[Any], dtype: DType) -> Any:
    if dtype.kind == "f":
        return _float_formatter(values, dtype)
    if dtype.kind == "b":
        return lambda v: str(bool(v)).rjust(5)
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


def scalar_str(value: Any, dtype: DType) -> str:
    """str() of a 0-d array: NumPy's scalar str (shortest digits, Python-style exponent)."""
    if dtype.kind != "f":
        return str(value)
    if not math.isfinite(value):
        return _nonfinite(value)
    cutoff = {"float64": 1e16, "float16": 1e4}.get(dtype.name, 1e8)
    if value == 0 or 1e-4 <= abs(value) < cutoff:
        return _positional(value, dtype) + ("0" if _positional(value, dtype).endswith(".") else "")
    mant, e = _shortest_sci(abs(value), dtype)
    sign = "-" if value < 0 else ""
    return f"{sign}{mant}e{'+' if e >= 0 else '-'}{abs(e):02d}"


def array_str(flat: list[Any], shape: tuple[int, ...], dtype: DType) -> str:
    if 0 in shape:
        return "[]"
    return array_to_string(flat, shape, dtype, " ", "")
