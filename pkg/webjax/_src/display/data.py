"""Inputs of the display functions as plain Python numbers: shapes checked, dtypes checked.

Anything with `tolist()` (webjax arrays, NumPy arrays), nested lists and tuples, and scalars
are accepted; NumPy is never needed. Errors are JAX's and NumPy's kinds: TypeError for a value
that is not real numbers, ValueError for a wrong or ragged shape.
"""

from __future__ import annotations

import math
from typing import Any


def nested(value: Any, what: str) -> Any:
    """`value` as nested lists of Python scalars (a scalar stays a scalar)."""
    if hasattr(value, "tolist") and not isinstance(value, (list, tuple)):
        value = value.tolist()
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, list):
        return [nested(v, what) for v in value]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, complex):
        raise TypeError(f"{what}: complex values cannot be drawn (take .real, .imag or abs)")
    raise TypeError(f"{what}: expected real numbers, got {type(value).__name__} {value!r:.60}")


def shape_of(value: Any, what: str) -> tuple[int, ...]:
    """The shape of a nested list; ValueError if it is ragged."""
    if not isinstance(value, list):
        return ()
    if not value:
        return (0,)
    inner = [shape_of(v, what) for v in value]
    if any(s != inner[0] for s in inner):
        raise ValueError(f"{what}: ragged nested sequence (rows of different shapes)")
    return (len(value), *inner[0])


def real_array(value: Any, what: str, ndims: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
    """(nested lists, shape) of a real array whose rank is one of `ndims`."""
    data = nested(value, what)
    shape = shape_of(data, what)
    declared = getattr(value, "shape", None)  # an empty array's lists lose its inner dims
    if isinstance(declared, tuple) and 0 in declared:
        shape = tuple(int(d) for d in declared)
    if len(shape) not in ndims:
        want = " or ".join(f"{n}-D" for n in ndims)
        raise ValueError(f"{what}: expected a {want} array, got shape {shape}")
    return data, shape


def flatten(data: Any) -> list[float]:
    if not isinstance(data, list):
        return [float(data)]
    out: list[float] = []
    for v in data:
        out.extend(flatten(v))
    return out


def finite_range(values: list[float]) -> tuple[float, float] | None:
    """(min, max) of the finite values; None when there are none."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return None
    return min(finite), max(finite)
