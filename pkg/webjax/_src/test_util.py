"""Gradient checks against finite differences (`jax.test_util`), in pure webjax.

`check_jvp` compares `f_jvp(args, v)` with the central difference `(f(x + eps v) -
f(x - eps v)) / 2 eps` in one random direction `v`; `check_vjp` compares `<vjp(u), v>` with `<u,
fd(v)>`; `check_grads` does both (modes "fwd", "rev", "lin") up to `order`, recursing on
`partial(jvp, f)` and on `x -> vjp(f, x)[1](f(x))`, as JAX does. Directions come from a fixed
`webjax.random` key. The default tolerances and step follow the arguments' precision: float64
as JAX's (step 1e-4, tolerance 1e-5); float32 and narrower use a larger step (1e-2) so that
rounding does not swamp the difference, with tolerance 2e-2.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from . import core, transformations
from .numpy import creation, reductions, ufuncs
from .random import keys, samplers
from .tree_util import tree_leaves, tree_map, tree_structure, tree_unflatten

_TOL = {"float64": 1e-5, "complex128": 1e-5}
_EPS = {"float64": 1e-4, "complex128": 1e-4}
_LOW_TOL, _LOW_EPS = 2e-2, 1e-2


def _dtypes(tree: Any) -> list[str]:
    return [core.get_aval(creation.asarray(x)).dtype.name for x in tree_leaves(tree)]


def _default(table: dict[str, float], low: float, tree: Any) -> float:
    names = _dtypes(tree)
    return min((table.get(n, low) for n in names), default=low) if names else low


def _random_like(tree: Any, seed: int) -> Any:
    leaves = tree_leaves(tree)
    ks = keys.split(keys.key(seed), max(len(leaves), 1))
    out = []
    for i, x in enumerate(leaves):
        x = creation.asarray(x)
        aval = core.get_aval(x)
        if aval.dtype.kind == "c":
            re_k, im_k = keys.split(ks[i])
            part = "float64" if aval.dtype.name == "complex128" else "float32"
            v = samplers.normal(re_k, aval.shape, part) + 1j * samplers.normal(
                im_k, aval.shape, part
            )
            out.append(v.astype(aval.dtype))
        else:
            out.append(samplers.normal(ks[i], aval.shape, aval.dtype))
    return tree_unflatten(tree_structure(tree), out)


def _axpy(a: float, x: Any, y: Any) -> Any:
    return tree_map(lambda u, v: creation.asarray(v) + a * creation.asarray(u), x, y)


def _scale(a: float, x: Any) -> Any:
    return tree_map(lambda u: creation.asarray(u) * a, x)


def _sub(x: Any, y: Any) -> Any:
    return tree_map(lambda u, v: creation.asarray(u) - creation.asarray(v), x, y)


def _inner(x: Any, y: Any) -> Any:
    terms = [
        reductions.sum(creation.asarray(a) * creation.asarray(b))
        for a, b in zip(tree_leaves(x), tree_leaves(y), strict=True)
    ]
    return functools.reduce(lambda a, b: a + b, terms, creation.asarray(0.0))


def _conj(x: Any) -> Any:
    return tree_map(lambda u: creation.asarray(u).conj(), x)


def numerical_jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Any, eps: float) -> Any:
    up = f(*_axpy(eps, tangents, tuple(primals)))
    down = f(*_axpy(-eps, tangents, tuple(primals)))
    return _scale(0.5 / eps, _sub(up, down))


def _assert_close(x: Any, y: Any, atol: float, rtol: float, err_msg: str) -> None:
    if tree_structure(x) != tree_structure(y):
        raise AssertionError(
            f"{err_msg}: tree structures differ: {tree_structure(x)} vs {tree_structure(y)}"
        )
    for a, b in zip(tree_leaves(x), tree_leaves(y), strict=True):
        a, b = creation.asarray(a), creation.asarray(b)
        if a.shape != b.shape:
            raise AssertionError(f"{err_msg}: shapes differ: {a.shape} vs {b.shape}")
        err = ufuncs.absolute(a - b)
        bound = atol + rtol * ufuncs.absolute(b)
        bad = reductions.any(err > bound)
        if bool(bad):
            worst = float(reductions.max(err)) if a.size else 0.0
            raise AssertionError(
                f"{err_msg}: not close (atol={atol}, rtol={rtol}); max abs difference "
                f"{worst}\n actual: {a}\n desired: {b}"
            )


def check_jvp(
    f: Callable[..., Any],
    f_jvp: Callable[..., Any],
    args: Sequence[Any],
    atol: float | None = None,
    rtol: float | None = None,
    eps: float = 1e-4,
    err_msg: str = "",
) -> None:
    """`f_jvp(args, v)` against `f` and the central difference of `f` along a random `v`."""
    args = tuple(args)
    atol = _default(_TOL, _LOW_TOL, args) if atol is None else atol
    rtol = _default(_TOL, _LOW_TOL, args) if rtol is None else rtol
    tangent = _random_like(args, 0)
    v_out, t_out = f_jvp(args, tangent)
    _assert_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    t_fd = numerical_jvp(f, args, tangent, eps)
    _assert_close(t_out, t_fd, atol, rtol, f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(
    f: Callable[..., Any],
    f_vjp: Callable[..., Any],
    args: Sequence[Any],
    atol: float | None = None,
    rtol: float | None = None,
    eps: float = 1e-4,
    err_msg: str = "",
) -> None:
    """`<vjp(u), v>` against `<u, fd(v)>` for random `u`, `v`."""
    args = tuple(args)
    atol = _default(_TOL, _LOW_TOL, args) if atol is None else atol
    rtol = _default(_TOL, _LOW_TOL, args) if rtol is None else rtol
    v_out, vjpfun = f_vjp(*args)
    _assert_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    tangent = _random_like(args, 1)
    cotangent = _random_like(v_out, 2)
    ct_in = _conj(vjpfun(_conj(cotangent)))
    ip = _inner(tangent, ct_in)
    ip_fd = _inner(numerical_jvp(f, args, tangent, eps), cotangent)
    msg = f"{err_msg} cotangent projection" if err_msg else "cotangent projection"
    _assert_close(ip, ip_fd, atol, rtol, msg)


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
) -> None:
    """Check the derivatives of `f` at `args` up to `order` against finite differences."""
    args = tuple(args)
    eps = eps or _default(_EPS, _LOW_EPS, args)
    jvp_check = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    vjp_check = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def jvp_of(fun: Callable[..., Any]) -> Callable[..., Any]:
        return functools.partial(transformations.jvp, fun)

    def lin_of(fun: Callable[..., Any]) -> Callable[..., Any]:
        def jvp(primals: Any, tangents: Any) -> Any:
            out, lin = transformations.linearize(fun, *primals)
            return out, lin(*tangents)

        return jvp

    def run(fun: Callable[..., Any], xs: tuple, k: int, msg: str) -> None:
        if "fwd" in modes:
            m = f"JVP of {msg}" if msg else "JVP"
            jvp_check(fun, jvp_of(fun), xs, err_msg=m)
            if k > 1:
                run(jvp_of(fun), (xs, xs), k - 1, m)
        if "rev" in modes:
            m = f"VJP of {msg}" if msg else "VJP"
            vjp_check(fun, functools.partial(transformations.vjp, fun), xs, err_msg=m)
            if k > 1:

                def f_vjp(*a: Any) -> Any:
                    out, pullback = transformations.vjp(fun, *a)
                    return pullback(out)

                run(f_vjp, xs, k - 1, m)
        if "lin" in modes:
            m = f"LIN of {msg}" if msg else "LIN"
            jvp_check(fun, lin_of(fun), xs, err_msg=m)
            if k > 1:
                run(lin_of(fun), (xs, xs), k - 1, m)

    run(f, args, order, "")
