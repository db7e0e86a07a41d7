"""Differential checks against real JAX shared by the user-program tests: run one case under
webjax and under JAX (exceptions and warnings captured), then compare the outputs' structure,
values, dtypes and weak types, or the exception types."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest


def is_array(x: Any) -> bool:
    return hasattr(x, "aval") or type(x).__name__ in ("ArrayImpl", "Array")


def flatten(out: Any, path: str = "out") -> list[tuple[str, Any]]:
    if isinstance(out, (tuple, list)):
        items: list[tuple[str, Any]] = [(f"{path}:{type(out).__name__}", len(out))]
        for i, o in enumerate(out):
            items += flatten(o, f"{path}[{i}]")
        return items
    return [(path, out)]


def assert_same(got: Any, want: Any, rtol: float, atol: float) -> None:
    g, w = flatten(got), flatten(want)
    assert [p for p, _ in g] == [p for p, _ in w], (g, w)
    for (path, a), (_, b) in zip(g, w, strict=True):
        if is_array(b):
            assert is_array(a), (path, type(a))
            a_np, b_np = np.asarray(a), np.asarray(b)
            assert a_np.shape == b_np.shape, (path, a_np.shape, b_np.shape)
            assert str(a.dtype) == str(b.dtype), (path, a.dtype, b.dtype)
            assert a.weak_type == b.weak_type, (path, "weak_type", a.weak_type, b.weak_type)
            if b_np.dtype.kind in "fc" or str(b.dtype) == "bfloat16":
                np.testing.assert_allclose(
                    a_np.astype(b_np.dtype),
                    b_np,
                    rtol=rtol,
                    atol=atol,
                    equal_nan=True,
                    err_msg=path,
                )
            else:
                np.testing.assert_array_equal(a_np, b_np, err_msg=path)
        elif isinstance(b, float):
            assert isinstance(a, float) and np.isclose(a, b, rtol=rtol, equal_nan=True), (
                path,
                a,
                b,
            )
        else:
            assert type(a) is type(b) and a == b, (path, a, b)


def run(fn: Callable[..., Any], mods: tuple[Any, ...]) -> tuple[Any, list[str]]:
    """(the output or the exception raised, the kinds of warnings given)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*mods)
        except Exception as e:  # the exception type is what is compared
            out = e
    kinds = sorted({w.category.__name__ for w in caught if w.category is not DeprecationWarning})
    return out, kinds


def check(
    name: str,
    got: tuple[Any, list[str]],
    want: tuple[Any, list[str]],
    *,
    rtol: float,
    atol: float,
    warnings_too: bool,
) -> None:
    (g, g_warn), (w, w_warn) = got, want
    if isinstance(w, Exception):
        assert isinstance(g, Exception), (name, "expected", type(w).__name__, g)
        assert type(g).__name__ == type(w).__name__, (name, g, w)
        return
    if isinstance(g, Exception):
        raise g
    assert_same(g, w, rtol, atol)
    if warnings_too:
        assert g_warn == w_warn, (name, g_warn, w_warn)


class Cases:
    """A table of cases `fn(jnp, lax, jax)`, each run under webjax and JAX (`mods` tuples);
    JAX's results are computed once per case."""

    def __init__(
        self,
        webjax_mods: tuple[Any, ...],
        jax_mods: tuple[Any, ...],
        *,
        rtol: float,
        atol: float,
        warnings_too: bool,
    ) -> None:
        self.fns: dict[str, Callable[..., Any]] = {}
        self._mods = (webjax_mods, jax_mods)
        self._tols = (rtol, atol, warnings_too)
        self._want: dict[str, tuple[Any, list[str]]] = {}

    def case(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.fns[fn.__name__] = fn
        return fn

    def check(self, name: str) -> None:
        webjax_mods, jax_mods = self._mods
        if name not in self._want:
            self._want[name] = run(self.fns[name], jax_mods)
        rtol, atol, warnings_too = self._tols
        got = run(self.fns[name], webjax_mods)
        check(name, got, self._want[name], rtol=rtol, atol=atol, warnings_too=warnings_too)


# ---- for the jax.scipy submodule tests -------------------------------------------------------
def close(got: Any, want: Any, rtol: float = 2e-6, atol: float = 1e-6) -> None:
    """Same shape and dtype, values within tolerance (compared in float64 / complex128)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if g.dtype.kind == "c":
        g, w = g.astype(np.complex128), w.astype(np.complex128)
    else:
        g, w = g.astype(np.float64), w.astype(np.float64)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def raises_like(wfun: Any, jfun: Any) -> None:
    """Both raise the same exception type with the same message."""
    with pytest.raises(Exception) as je:
        jfun()
    with pytest.raises(type(je.value)) as we:
        wfun()
    assert str(we.value) == str(je.value)
