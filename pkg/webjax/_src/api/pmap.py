"""`pmap` for webjax's world of one device per platform, and the process queries around it.

JAX (0.10) runs `pmap(f)` as `jit(shard_map(f))` over a mesh of the first `n` devices, `n` the
mapped size: every device squeezes its slice of the mapped axis and runs `f` with the axis name
bound. With `jax.local_device_count()` devices (one here) a mapped size beyond the device count
leaves each device a slice longer than one, and the squeeze fails: JAX's ValueError, reproduced
here. Within the device count, `pmap` is `jit` of the `xla_pmap` primitive (JAX's former pmap
primitive name), whose body is `f` traced per device with the axis name bound, so jaxprs show
the collectives as JAX's do; evaluating it maps the body with vmap over the leading axis of
every operand and result. It has jvp, partial-eval, transpose and batching rules like `jit`'s.
Results are plain Arrays; donation and static arguments are jit's.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .. import core
from ..api import local_device_count
from ..core import ClosedJaxpr, ShapedArray
from ..interpreters import ad, batching
from ..interpreters import partial_eval as pe
from ..interpreters.ad import Zero, is_undefined
from ..jit import _closed_call, jit
from ..lax import lax
from ..tree_util import tree_flatten, tree_leaves, tree_unflatten
from ..vmap import _as_mapped, _broadcast_prefix, _canonical_in_axis

_INTERNAL_NAME = "_internal_pmap_axis_name"  # JAX's name of an unnamed pmap axis (in errors)


# ---- the xla_pmap primitive ----------------------------------------------------------------------
# Operands and results are mapped along their axis 0 (size `axis_size`); `jaxpr` is the body on
# one slice, traced with `axis_name` bound.
pmap_p = core.Primitive("xla_pmap")
pmap_p.multiple_results = True


def _body_avals(avals: list[ShapedArray]) -> list[ShapedArray]:
    return [a.update(shape=a.shape[1:]) for a in avals]


def _trace_body(
    fun: Callable[..., Any], avals: list[ShapedArray], axis_name: Any, size: int
) -> ClosedJaxpr:
    with batching.extend_axis_env([(axis_name, size)]):
        return pe.trace_to_closed_jaxpr(fun, avals)


@pmap_p.def_abstract_eval
def _pmap_abstract(
    *avals: ShapedArray, jaxpr: ClosedJaxpr, axis_name: Any, axis_size: int, name: str
) -> list[ShapedArray]:
    return [a.update(shape=(axis_size, *a.shape)) for a in jaxpr.out_avals]


@pmap_p.def_impl
def _pmap_impl(
    *args: Any, jaxpr: ClosedJaxpr, axis_name: Any, axis_size: int, name: str
) -> list[Any]:
    n_out = len(jaxpr.out_avals)
    return batching.vmap_flat(
        _closed_call(jaxpr), args, [0] * len(args), [0] * n_out, axis_size, axis_name
    )


def _pmap_jvp(
    primals: list[Any],
    tangents: list[Any],
    *,
    jaxpr: ClosedJaxpr,
    axis_name: Any,
    axis_size: int,
    name: str,
) -> tuple[list[Any], list[Any]]:
    nonzero = tuple(not isinstance(t, Zero) for t in tangents)
    with batching.extend_axis_env([(axis_name, axis_size)]):
        jvp_closed, out_nonzero = ad.jvp_jaxpr(jaxpr, nonzero, None)
    outs = pmap_p.bind(
        *primals,
        *[t for t in tangents if not isinstance(t, Zero)],
        jaxpr=jvp_closed,
        axis_name=axis_name,
        axis_size=axis_size,
        name=f"jvp({name})",
    )
    n = len(jaxpr.out_avals)
    nz = iter(outs[n:])
    out_avals = _pmap_abstract(jaxpr=jaxpr, axis_name=axis_name, axis_size=axis_size, name=name)
    tangent_outs = [
        next(nz) if z else Zero(ad.tangent_aval(a))
        for z, a in zip(out_nonzero, out_avals, strict=True)
    ]
    return outs[:n], tangent_outs


def _pmap_partial_eval(
    trace: pe.JaxprTrace, *args: Any, jaxpr: ClosedJaxpr, axis_name: Any, axis_size: int, name: str
) -> list[Any]:
    unknowns = [trace.is_own(a) for a in args]
    n_out = len(jaxpr.out_avals)
    with batching.extend_axis_env([(axis_name, axis_size)]):
        known, unknown, out_unknowns, n_res = pe.partial_eval_jaxpr(
            jaxpr, unknowns, [False] * n_out
        )
    params = {"axis_name": axis_name, "axis_size": axis_size, "name": name}
    known_args = [a for a, u in zip(args, unknowns, strict=True) if not u]
    with core.set_current_trace(trace.parent):
        known_outs = pmap_p.bind(*known_args, jaxpr=known, **params)
    n_known = len(known_outs) - n_res
    known_vals, residuals = known_outs[:n_known], known_outs[n_known:]
    unknown_args = [a for a, u in zip(args, unknowns, strict=True) if u]
    staged = trace.stage(pmap_p, [*residuals, *unknown_args], {"jaxpr": unknown, **params})
    k_it, u_it = iter(known_vals), iter(staged)
    return [next(u_it) if u else next(k_it) for u in out_unknowns]


def _pmap_transpose(
    cts: list[Any], *args: Any, jaxpr: ClosedJaxpr, axis_name: Any, axis_size: int, name: str
) -> list[Any]:
    undefined = [is_undefined(a) for a in args]
    defined_args = [a for a in args if not is_undefined(a)]
    nz_cts = [not isinstance(c, Zero) for c in cts]
    ct_avals = [a for a, nz in zip(jaxpr.out_avals, nz_cts, strict=True) if nz]
    def_avals = _body_avals([core.get_aval(a) for a in defined_args])

    def transposed(*flat: Any) -> list[Any]:
        d_it, ct_in = iter(flat[: len(def_avals)]), iter(flat[len(def_avals) :])
        full = [
            ad.UndefinedPrimal(b) if u else next(d_it)
            for u, b in zip(undefined, jaxpr.in_avals, strict=True)
        ]
        cts_full = [
            next(ct_in) if nz else Zero(a) for nz, a in zip(nz_cts, jaxpr.out_avals, strict=True)
        ]
        res = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, full, cts_full)
        return [ad.instantiate(r) for r, u in zip(res, undefined, strict=True) if u]

    t_closed = _trace_body(transposed, [*def_avals, *ct_avals], axis_name, axis_size)
    outs = iter(
        pmap_p.bind(
            *defined_args,
            *[c for c in cts if not isinstance(c, Zero)],
            jaxpr=t_closed,
            axis_name=axis_name,
            axis_size=axis_size,
            name=f"transpose({name})",
        )
    )
    return [next(outs) if u else None for u in undefined]


def _pmap_batch(
    args: list[Any],
    dims: list[Any],
    *,
    jaxpr: ClosedJaxpr,
    axis_name: Any,
    axis_size: int,
    name: str,
) -> tuple[list[Any], list[Any]]:
    """vmap of pmap: the vmapped axis goes to position 1 of the operands (after the pmapped
    one) and the body is batched over it, inside the pmap."""
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    args = [batching.moveaxis(a, d, 1) if d is not None else a for a, d in zip(args, dims)]
    in_dims = [0 if d is not None else None for d in dims]
    n_out = len(jaxpr.out_avals)

    def body(*xs: Any) -> list[Any]:
        return batching.vmap_flat(_closed_call(jaxpr), xs, in_dims, [0] * n_out, size)

    avals = _body_avals([core.get_aval(a) for a in args])
    batched = _trace_body(body, avals, axis_name, axis_size)
    outs = pmap_p.bind(*args, jaxpr=batched, axis_name=axis_name, axis_size=axis_size, name=name)
    return outs, [1] * n_out


ad.primitive_jvps[pmap_p] = _pmap_jvp
pe.partial_eval_rules[pmap_p] = _pmap_partial_eval
ad.primitive_transposes[pmap_p] = _pmap_transpose
batching.primitive_batchers[pmap_p] = _pmap_batch


def _pmap_call(
    fun: Callable[..., Any],
    leaves: list[Any],
    dims: list[int | None],
    size: int,
    axis_name: Any,
    name: str,
) -> tuple[list[Any], Any]:
    """Bind `xla_pmap` on `fun` (flat leaves in, a pytree out) mapped over axis `dims[i]` of
    each leaf (None: the same for every device). Returns the flat results and their tree."""
    leaves = [_as_mapped(x) if d is not None else x for x, d in zip(leaves, dims, strict=True)]
    dims = [_canonical_in_axis(x, d) for x, d in zip(leaves, dims, strict=True)]
    ops = [batching.matchaxis(lax.to_array(x), d, 0, size) for x, d in zip(leaves, dims)]
    out_tree: list[Any] = []

    def body(*xs: Any) -> list[Any]:
        out = fun(*xs)
        flat, tree = tree_flatten(out)
        out_tree[:] = [tree]
        return [lax.to_array(x) for x in flat]

    jaxpr, consts, _ = _trace_jaxpr(
        body, _body_avals([core.get_aval(x) for x in ops]), axis_name, size
    )
    # Closure-convert: the body's constants (closed-over values and tracers) are operands too.
    closed = ClosedJaxpr(pe.convert_constvars_jaxpr(jaxpr), [])
    consts = [batching.broadcast(lax.to_array(c), size, 0) for c in consts]
    outs = pmap_p.bind(*consts, *ops, jaxpr=closed, axis_name=axis_name, axis_size=size, name=name)
    return outs, out_tree[0]


def _trace_jaxpr(
    fun: Callable[..., Any], avals: list[ShapedArray], axis_name: Any, size: int
) -> tuple[core.Jaxpr, list[Any], list[Any]]:
    with batching.extend_axis_env([(axis_name, size)]):
        return pe.trace_to_jaxpr(fun, avals)


# ---- the API -------------------------------------------------------------------------------------
def process_index(backend: str | None = None) -> int:
    """This process' index among the processes of the computation: always 0 here."""
    return 0


def process_count(backend: str | None = None) -> int:
    """The number of processes of the computation: one here."""
    return 1


def _index_tuple(x: int | Iterable[int]) -> tuple[int, ...]:
    if isinstance(x, Iterable):
        return tuple(operator.index(i) for i in x)
    return (operator.index(x),)


def pmap(
    fun: Callable[..., Any],
    axis_name: Any = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices: Sequence[Any] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
) -> Callable[..., Any]:
    """Map `fun` over the leading axis (`in_axes`) of its arguments with `axis_name` bound for
    collectives, like `jax.pmap` on a machine with `jax.local_device_count()` devices."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if devices is not None:
        if not devices:
            raise ValueError("'devices' argument to pmap must be non-empty, or None.")
        devices = tuple(devices)
    static = _index_tuple(static_broadcasted_argnums)
    donate = _index_tuple(donate_argnums)
    for what, spec in (("in_axes", in_axes), ("out_axes", out_axes)):
        if not all(type(leaf) is int for leaf in tree_leaves(spec)):
            raise TypeError(
                f"pmap {what} must be an int, None, or (nested) container with those types as "
                f"leaves, but got {spec}."
            )

    def split(args: tuple[Any, ...]) -> tuple[list[int], tuple[Any, ...], Any]:
        """Positions and values of the dynamic arguments, and their in_axes."""
        n = len(args)
        if static and max(static) >= n:
            plural = "s" if n > 1 else ""
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={static} but was called with "
                f"only {n} positional argument{plural}. All static broadcasted arguments must be "
                "passed positionally."
            )
        static_pos = {i % n for i in static}
        dyn = [i for i in range(n) if i not in static_pos]
        dyn_in = in_axes
        if static_pos and isinstance(in_axes, tuple):
            dyn_in = tuple(in_axes[i] for i in dyn)
        return dyn, tuple(args[i] for i in dyn), dyn_in

    def mapped(*args: Any, **kwargs: Any) -> Any:
        dyn, dyn_args, dyn_in = split(args)
        leaves, in_tree = tree_flatten((dyn_args, kwargs))
        dims = _broadcast_prefix("pmap in_axes", (dyn_in, 0), (dyn_args, kwargs))
        size = _mapped_size(leaves, dims)

        def per_device(*xs: Any) -> Any:
            d_args, kw = tree_unflatten(in_tree, xs)
            full = list(args)
            for i, x in zip(dyn, d_args, strict=True):
                full[i] = x
            return fun(*full, **kw)

        outs, out_tree = _pmap_call(per_device, leaves, dims, size, axis_name, mapped.__name__)
        # Every result is mapped at axis 0: place it as out_axes says (None keeps the first
        # device's value, as JAX's pmap does).
        specs = _broadcast_prefix("pmap out_axes", out_axes, tree_unflatten(out_tree, outs))
        return tree_unflatten(out_tree, [_place(x, ax) for x, ax in zip(outs, specs, strict=True)])

    mapped.__name__ = getattr(fun, "__name__", "pmapped")
    jitted = jit(mapped, static_argnums=static, donate_argnums=donate)

    def check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        _, dyn_args, dyn_in = split(args)
        leaves = tree_leaves((dyn_args, kwargs))
        try:
            dims = _broadcast_prefix("pmap in_axes", (dyn_in, 0), (dyn_args, kwargs))
        except ValueError as e:
            raise ValueError(_prefix_message(str(e), bool(kwargs))) from None
        _check_size(leaves, dims, axis_size, devices, backend, axis_name)

    @functools.wraps(fun)
    def pmapped(*args: Any, **kwargs: Any) -> Any:
        check(args, kwargs)
        return jitted(*args, **kwargs)

    def lower(*args: Any, **kwargs: Any) -> Any:
        check(args, kwargs)
        return jitted.lower(*args, **kwargs)

    pmapped.lower = lower  # type: ignore[attr-defined]
    return pmapped


def _mapped_size(leaves: list[Any], dims: list[int | None]) -> int:
    sizes = [x.shape[d] for x, d in zip(leaves, dims) if d is not None and hasattr(x, "shape")]
    if not sizes:
        raise ValueError("pmap requires at least one argument with a mapped axis.")
    return int(sizes[0])  # JAX takes the first mapped argument's


def _place(x: Any, ax: int | None) -> Any:
    """An output mapped at axis 0, moved to `ax` (None: the first device's value)."""
    if ax is None:
        return lax.index_in_dim(x, 0, 0, keepdims=False)
    nd = core.get_aval(x).ndim
    if not -nd <= ax < nd:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {nd}")
    return batching.moveaxis(x, 0, ax % nd)


def _check_size(
    leaves: list[Any],
    dims: list[int | None],
    axis_size: int | None,
    devices: tuple[Any, ...] | None,
    backend: str | None,
    axis_name: Any,
) -> None:
    """JAX's errors where the mapped axis does not fit the devices."""
    mapped = [(x, d) for x, d in zip(leaves, dims, strict=True) if d is not None]
    size = _mapped_size(leaves, dims)
    if axis_size is not None and axis_size != size:
        raise ValueError(
            f"Specified axis_size {axis_size} doesn't match received axis_size {size}."
        )
    n_devices = min(size, len(devices) if devices is not None else local_device_count(backend))
    name = _INTERNAL_NAME if axis_name is None else axis_name
    if n_devices == 0:
        d = dims[0]
        spec = "P()" if d is None else _pspec(d, name)
        raise ValueError(
            "One of in_shardings leaf specifications got an empty NamedSharding: "
            f"NamedSharding(mesh=Mesh(), spec={spec}) which is not allowed."
        )
    for x, d in mapped:
        shape = tuple(getattr(x, "shape", ()))
        if not -len(shape) <= d < len(shape):
            continue  # vmap names the rank error
        d %= len(shape)
        if shape[d] != n_devices:  # each device's slice would not squeeze
            local = shape[:d] + (shape[d] // n_devices,) + shape[d + 1 :]
            raise ValueError(
                "cannot select an axis to squeeze out which has size not equal to one, got "
                f"shape={local} and dimensions=({d},)"
            )


def _pspec(d: int, name: Any) -> str:
    entries = ["None"] * d + [repr(name)]
    return f"P({', '.join(entries)}{',' if len(entries) == 1 else ''})"


def _prefix_message(msg: str, has_kwargs: bool) -> str:
    msg += (
        "\n\nThe 'full pytree' here is the tuple of arguments passed positionally to the pmapped "
        "function, and the value of `in_axes` must be a tree prefix of that tuple. But it was "
        "not a prefix."
    )
    if has_kwargs:
        msg += (
            "\n\nWhen some arguments are passed by keyword to the pmapped function, they are not "
            "included in the comparison to `in_axes`. Instead, each argument passed by keyword "
            "is mapped over its leading axis. See the description of `in_axes` in the `pmap` "
            "docstring: https://docs.jax.dev/en/latest/_autosummary/jax.pmap.html#jax.pmap"
        )
    return msg + (
        "\n\nCheck that the value of the `in_axes` argument to `pmap` is a tree prefix of the "
        "tuple of arguments passed positionally to the pmapped function."
    )


__all__ = ["pmap", "pmap_p", "process_count", "process_index"]
