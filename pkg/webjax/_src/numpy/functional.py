"""Functions of functions: vectorize (NumPy's generalized-ufunc signatures, on vmap),
apply_along_axis, apply_over_axes, fromfunction, piecewise."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

from .. import core, dtypes
from ..lax import lax
from ..vmap import vmap
from . import util
from .creation import asarray

# ---- vectorize -----------------------------------------------------------------------------------
_DIM = r"\w+"
_DIMS = rf"(?:{_DIM}(?:,{_DIM})*)?"
_ARG = rf"\({_DIMS}\)"
_ARGS = rf"{_ARG}(?:,{_ARG})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """'(m,n),(n)->(m)' -> ([('m','n'), ('n',)], [('m',)])."""
    sig = re.sub(r"\s+", "", signature)
    if not _SIGNATURE.match(sig):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = sig.split("->")

    def groups(side: str) -> list[tuple[str, ...]]:
        return [tuple(d for d in g.split(",") if d) for g in re.findall(r"\(([^()]*)\)", side)]

    return groups(ins), groups(outs)


def _core_sizes(
    args: Sequence[Any], core_dims: Sequence[tuple[str, ...]], where: str
) -> tuple[tuple[int, ...], dict[str, int]]:
    """The broadcast loop shape of the arguments and the size of every named core dimension."""
    sizes: dict[str, int] = {}
    loops = []
    for arg, dims in zip(args, core_dims):
        shape = util.aval(arg).shape
        if len(shape) < len(dims):
            raise ValueError(
                f"input with shape {shape} does not have enough dimensions for all "
                f"core dimensions {dims} {where}"
            )
        core_shape = shape[len(shape) - len(dims) :]
        for name, size in zip(dims, core_shape):
            if sizes.setdefault(name, size) != size:
                raise ValueError(
                    f"inconsistent size for core dimension {name!r}: {size} vs "
                    f"{sizes[name]} {where}"
                )
        loops.append(shape[: len(shape) - len(dims)])
    return util.broadcast_shapes(*loops), sizes


def _checked(
    fn: Callable[..., Any],
    sizes: dict[str, int],
    out_dims: list[tuple[str, ...]] | None,
    where: str,
) -> Callable[..., Any]:
    if out_dims is None:
        return fn

    def check(*args: Any) -> Any:
        out = fn(*args)
        if len(out_dims) > 1 and not isinstance(out, tuple):
            raise TypeError(
                f"output must be a tuple when multiple outputs are expected, got: {out!r} {where}"
            )
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(out_dims):
            raise TypeError(
                f"wrong number of output arguments: expected {len(out_dims)}, got "
                f"{len(outs)} {where}"
            )
        seen = dict(sizes)
        for o, dims in zip(outs, out_dims):
            shape = util.aval(o).shape
            if len(shape) != len(dims):
                raise ValueError(
                    f"output shape {shape} does not match core dimensions {dims} {where}"
                )
            for name, size in zip(dims, shape):
                if seen.setdefault(name, size) != size:
                    raise ValueError(
                        f"inconsistent size for core dimension {name!r}: {size} vs "
                        f"{seen[name]} {where}"
                    )
        return out

    return check


def vectorize(
    pyfunc: Callable[..., Any],
    *,
    excluded: Collection[int | str] = frozenset(),
    signature: str | None = None,
) -> Callable[..., Any]:
    """Like numpy.vectorize, but traceable: loop dimensions become nested `vmap`s, so `pyfunc`
    sees one element (or one core-dimension block with `signature`) at a time."""
    if any(not isinstance(e, (int, str)) for e in excluded):
        raise TypeError(
            f"jax.numpy.vectorize can only exclude integer or string arguments, "
            f"but excluded={excluded!r}"
        )
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        where = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        # excluded arguments and keywords are passed through unchanged (not mapped)
        pos = [i for i in range(len(args)) if i not in excluded]
        if signature is not None:
            in_dims, out_dims = _parse_signature(signature)
        else:
            in_dims, out_dims = [()] * len(pos), None
        nones = [k for k, i in enumerate(pos) if args[i] is None]
        if any(in_dims[k] != () for k in nones if k < len(in_dims)):
            raise ValueError(
                f"Cannot pass None at locations {set(nones)} with signature={signature!r}"
            )
        in_dims = [d for k, d in enumerate(in_dims) if k not in nones]
        pos = [i for i in pos if args[i] is not None]
        if len(in_dims) != len(pos):
            raise TypeError(
                f"wrong number of positional arguments: expected {len(in_dims)}, "
                f"got {len(pos)} {where}"
            )
        dyn = [
            util.ensure_array(args[i])
            if not util.is_scalar(args[i])
            else util.convert(args[i], *util.result_type(args[i]))
            for i in pos
        ]

        def call(*vals: Any) -> Any:
            full = list(args)
            for i, v in zip(pos, vals):
                full[i] = v
            return pyfunc(*full, **kwargs)

        loop, sizes = _core_sizes(dyn, in_dims, where)
        fn = _checked(call, sizes, out_dims, where)
        # drop size-1 loop dimensions, vmap over the others from the innermost outwards
        squeezed, filled = [], []
        for arg, dims in zip(dyn, in_dims):
            shape = util.aval(arg).shape
            outer = shape[: len(shape) - len(dims)]
            ones = tuple(i for i, s in enumerate(outer) if s == 1)
            squeezed.append(lax.squeeze(arg, ones) if ones else arg)
            filled.append((1,) * (len(loop) - len(outer)) + outer)
        expand = []
        for d in reversed(range(len(loop))):
            in_axes = tuple(None if f[d] == 1 else 0 for f in filled)
            if all(a is None for a in in_axes):
                expand.append(d)
            else:
                fn = vmap(fn, in_axes=in_axes)
        out = fn(*squeezed)
        if not expand:
            return out
        axes = tuple(sorted(expand))
        if isinstance(out, tuple):
            return tuple(lax.expand_dims(o, axes) for o in out)
        return lax.expand_dims(out, axes)

    return wrapped


# ---- applying functions over axes --------------------------------------------------------------
def apply_along_axis(
    func1d: Callable[..., Any], axis: int, arr: Any, *args: Any, **kwargs: Any
) -> Any:
    util.check_arraylike("apply_along_axis", arr)
    arr = util.ensure_array(arr)
    nd = util.aval(arr).ndim
    ax = util.canonical_axis(axis, nd)

    def fn(x: Any) -> Any:
        return func1d(x, *args, **kwargs)

    # axes after `axis` map to trailing output axes, axes before it to leading ones
    for i in range(1, nd - ax):
        fn = vmap(fn, in_axes=i, out_axes=-1)
    for _ in range(ax):
        fn = vmap(fn, in_axes=0, out_axes=0)
    return fn(arr)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Any:
    util.check_arraylike("apply_over_axes", a)
    a = util.ensure_array(a)
    for axis in [axes] if isinstance(axes, int) else axes:
        b = func(a, axis)
        nb, na = util.aval(b).ndim, util.aval(a).ndim
        if nb == na:
            a = b
        elif nb == na - 1:
            a = lax.expand_dims(b, (util.canonical_axis(axis, na),))
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


def fromfunction(
    function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any
) -> Any:
    """`function` called on index grids: vmapped over each axis, so it sees scalars (JAX's
    behaviour; NumPy passes whole grids, which agrees for elementwise functions)."""
    shape = core.canonicalize_shape(shape)
    dt = dtypes.canonicalize(dtypes.dtype(dtype))
    fn = function
    nd = len(shape)
    for i in range(nd):
        in_axes = tuple(0 if j == nd - 1 - i else None for j in range(nd))
        fn = vmap(fn, in_axes=in_axes)
    return fn(*(lax.iota(dt, s) for s in shape), **kwargs)


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """funclist[i] where condlist[i] holds (the last true condition wins), else the extra
    default function (or 0). Every function is evaluated on all of `x`, then selected."""
    util.check_arraylike("piecewise", x)
    x = util.ensure_array(x) if not util.is_scalar(x) else util.convert(x, *util.result_type(x))
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        default, funcs = funclist[-1], list(funclist[:-1])
    elif nf == nc:
        default, funcs = 0, list(funclist)
    else:
        raise ValueError(
            f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}"
        )
    conds = (
        asarray(condlist, dtype=dtypes.bool_)
        if not isinstance(condlist, (list, tuple))
        else [util.convert(c, dtypes.bool_) for c in condlist]
    )
    av = util.aval(x)

    def value(f: Any) -> Any:
        v = f(x, *args, **kw) if callable(f) else asarray(f, dtype=av.dtype)
        return util.broadcast_to(util.convert(util.ensure_array(v), av.dtype), av.shape)

    out = value(default)
    for i, f in enumerate(funcs):
        c = conds[i]
        out = lax.select(util.broadcast_to(c, av.shape), value(f), out)
    return out
