"""Print options (NumPy's API) mapped onto webjax's own array printer (`_src/printing.py`),
plus array_repr and array_str.

The printer follows NumPy's defaults; `precision`, `threshold`, `edgeitems` and `linewidth`
can be changed. The other NumPy options are accepted only at their default values.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .. import printing
from . import util

_SUPPORTED = {
    "precision": "PRECISION",
    "threshold": "THRESHOLD",
    "edgeitems": "EDGEITEMS",
    "linewidth": "LINEWIDTH",
}
# NumPy options the printer does not implement, with the only value it can honour
_FIXED = {
    "suppress": False,
    "nanstr": "nan",
    "infstr": "inf",
    "formatter": None,
    "sign": "-",
    "floatmode": "maxprec",
    "legacy": False,
    "override_repr": None,
}


def get_printoptions() -> dict[str, Any]:
    opts = {name: getattr(printing, attr) for name, attr in _SUPPORTED.items()}
    return {**opts, **_FIXED}


def set_printoptions(
    precision: int | None = None,
    threshold: int | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    suppress: bool | None = None,
    nanstr: str | None = None,
    infstr: str | None = None,
    formatter: Any = None,
    sign: str | None = None,
    floatmode: str | None = None,
    *,
    legacy: Any = None,
    override_repr: Any = None,
) -> None:
    given = {
        "suppress": suppress,
        "nanstr": nanstr,
        "infstr": infstr,
        "formatter": formatter,
        "sign": sign,
        "floatmode": floatmode,
        "legacy": legacy,
        "override_repr": override_repr,
    }
    for name, value in given.items():
        if value is not None and value != _FIXED[name]:
            raise NotImplementedError(
                f"set_printoptions({name}={value!r}) is not supported by "
                "webjax's array printer; supported options: "
                f"{', '.join(_SUPPORTED)}"
            )
    new = {
        "precision": precision,
        "threshold": threshold,
        "edgeitems": edgeitems,
        "linewidth": linewidth,
    }
    for name, value in new.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an integer, got {value!r}")
        if value < 0:
            raise ValueError(f"{name} must be non-negative, got {value}")
        setattr(printing, _SUPPORTED[name], value)


@contextlib.contextmanager
def printoptions(*args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
    saved = get_printoptions()
    set_printoptions(*args, **kwargs)
    try:
        yield get_printoptions()
    finally:
        for name, attr in _SUPPORTED.items():
            setattr(printing, attr, saved[name])


def _with_options(
    fn: Any, arr: Any, max_line_width: Any, precision: Any, suppress_small: Any
) -> str:
    arr = util.ensure_array(arr)
    with printoptions(linewidth=max_line_width, precision=precision, suppress=suppress_small):
        return fn(arr)


def array_repr(
    arr: Any,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: bool | None = None,
) -> str:
    return _with_options(repr, arr, max_line_width, precision, suppress_small)


def array_str(
    a: Any,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: bool | None = None,
) -> str:
    return _with_options(str, a, max_line_width, precision, suppress_small)
