"""`vmap`: JAX's vectorizing map over pytrees, on top of the flat `batching.vmap_flat`.

This module does what JAX's `api.vmap` does around the interpreter: checks `in_axes` and
`out_axes`, matches them as tree prefixes of the arguments and outputs, finds the mapped axis
size, and raises JAX's exception types with JAX's messages (as of JAX 0.10) when they disagree.
"""

from __future__ import annotations

import functools
import inspect
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from . import core
from .dispatch import array as array_mod
from .interpreters import batching
from .tree_util import (
    DictKey,
    PyTreeDef,
    SequenceKey,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_structure,
    tree_unflatten,
)

AxisSpec = int | None

_IN_AXES_MSG = (
    "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
    "arguments passed to the function, but got "
)


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Any = None,
    axis_size: int | None = None,
    spmd_axis_name: Any = None,
) -> Callable[..., Any]:
    """Vectorize `fun` over the axes `in_axes` of its arguments, like `jax.vmap`.

    `axis_name` names the mapped axis for collectives (`lax.psum(x, axis_name)`, `all_gather`,
    `axis_index`, ...: `_src/lax/parallel.py`) while `fun` runs.
    `spmd_axis_name` only affects sharding in JAX; with one device it is ignored.
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if isinstance(in_axes, list):  # JAX treats a top-level list like a tuple
        in_axes = tuple(in_axes)
    _check_specs(in_axes, out_axes)

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(_IN_AXES_MSG + f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
        leaves, in_tree = tree_flatten((args, kwargs), is_leaf=_is_container)
        dims = _broadcast_prefix("vmap in_axes", in_axes, args)
        dims += [0] * (len(leaves) - len(dims))  # keyword arguments are mapped along axis 0
        leaves, dims, rebuilds = _open_containers(leaves, dims)
        leaves = [x if d is None else _as_mapped(x) for x, d in zip(leaves, dims)]
        dims = [_canonical_in_axis(x, d) for x, d in zip(leaves, dims)]
        # containers open into as many arrays as their pytree leaves: names follow the plain tree
        size = _mapped_axis_size(fun, tree_structure((args, kwargs)), leaves, dims, axis_size)
        out_box: list[Any] = []
        flat_fun = _flat_fun(fun, in_tree, rebuilds, out_box)
        out_rebuilds: list[Any] = []

        def out_dims() -> list[AxisSpec]:
            specs = _broadcast_prefix("vmap out_axes", out_axes, out_box[0])
            return _out_container_dims(out_box[1], specs, out_rebuilds)

        outs = batching.vmap_flat(flat_fun, leaves, dims, out_dims, size, axis_name)
        out_leaves = _close_out_containers(outs, out_rebuilds, size)
        return tree_unflatten(tree_structure(out_box[0], is_leaf=_is_container), out_leaves)

    vmapped.__doc__ = _docstring(fun)
    return vmapped


def _docstring(fun: Callable[..., Any]) -> str:
    name = getattr(fun, "__name__", repr(fun))
    doc = (
        f"Vectorized version of {name}. Takes similar arguments as {name} but with additional "
        f"array axes over which {name} is mapped."
    )
    if fun.__doc__:
        doc += "\n\nOriginal documentation:\n\n" + fun.__doc__
    return doc


def _flat_fun(
    fun: Callable[..., Any], in_tree: PyTreeDef, rebuilds: list[Any], out_box: list[Any]
) -> Any:
    def flat(*leaves: Any) -> list[Any]:
        args, kwargs = tree_unflatten(in_tree, _close_containers(leaves, rebuilds))
        out = fun(*args, **kwargs)
        out_leaves = tree_leaves(out, is_leaf=_is_container)
        out_box[:] = [out, out_leaves]
        return [_check_output(x) for x in _open_out_containers(out_leaves)]

    return flat


# ---- containers: values vmap maps as one (JAX's vmappable types, e.g. sparse.BCOO) ---------------
# to_elt(value, axis) -> (arrays mapped along axis, rebuild(element arrays) -> element);
# from_elt(element, axis) -> (element arrays, rebuild(batched arrays, size) -> value). Both raise
# where `axis` cannot be mapped.
_CONTAINERS: dict[type, tuple[Callable[..., Any], Callable[..., Any]]] = {}


def register_vmap_container(
    cls: type, to_elt: Callable[..., Any], from_elt: Callable[..., Any]
) -> None:
    _CONTAINERS[cls] = (to_elt, from_elt)


def _is_container(x: Any) -> bool:
    return type(x) in _CONTAINERS


def _open_containers(
    leaves: list[Any], dims: list[AxisSpec]
) -> tuple[list[Any], list[AxisSpec], list[Any]]:
    """Containers among the leaves replaced by their arrays; rebuilds[i] is (count, rebuild) for
    leaf i that was a container, else None."""
    flat: list[Any] = []
    flat_dims: list[AxisSpec] = []
    rebuilds: list[Any] = []
    for x, d in zip(leaves, dims, strict=True):
        if not _is_container(x):
            flat.append(x)
            flat_dims.append(d)
            rebuilds.append(None)
            continue
        if d is None:
            parts, tree = tree_flatten(x)
            rebuild: Any = functools.partial(tree_unflatten, tree)
        else:
            parts, rebuild = _CONTAINERS[type(x)][0](x, d % len(x.shape) if d < 0 else d)
        flat += parts
        flat_dims += [d if d is None or d >= 0 else d % len(x.shape)] * len(parts)
        rebuilds.append((len(parts), rebuild))
    return flat, flat_dims, rebuilds


def _close_containers(flat: Sequence[Any], rebuilds: list[Any]) -> list[Any]:
    leaves, i = [], 0
    for r in rebuilds:
        if r is None:
            leaves.append(flat[i])
            i += 1
        else:
            leaves.append(r[1](list(flat[i : i + r[0]])))
            i += r[0]
    return leaves


def _open_out_containers(out_leaves: list[Any]) -> list[Any]:
    return [p for x in out_leaves for p in (tree_leaves(x) if _is_container(x) else [x])]


def _out_container_dims(
    out_leaves: list[Any], specs: list[AxisSpec], out_rebuilds: list[Any]
) -> list[AxisSpec]:
    dims: list[AxisSpec] = []
    out_rebuilds.clear()
    for x, d in zip(out_leaves, specs, strict=True):
        if not _is_container(x):
            dims.append(d)
            out_rebuilds.append(None)
            continue
        if d is None:
            parts, tree = tree_flatten(x)
            out_rebuilds.append((len(parts), lambda ps, _size, t=tree: tree_unflatten(t, ps)))
        else:
            d = d % (len(x.shape) + 1) if d < 0 else d
            parts, rebuild = _CONTAINERS[type(x)][1](x, d)
            out_rebuilds.append((len(parts), rebuild))
        dims += [d] * len(parts)
    return dims


def _close_out_containers(outs: list[Any], out_rebuilds: list[Any], size: int) -> list[Any]:
    leaves, i = [], 0
    for r in out_rebuilds:
        if r is None:
            leaves.append(outs[i])
            i += 1
        else:
            leaves.append(r[1](list(outs[i : i + r[0]]), size))
            i += r[0]
    return leaves


def _check_output(x: Any) -> Any:
    if not (isinstance(x, core.Tracer) or core.is_valid_jaxtype(x) or _is_numpy(x)):
        raise TypeError(
            f"Output from batched function {x!r} with type {type(x)} is not a valid JAX type"
        )
    return _as_mapped(x) if _is_numpy(x) else x


# ---- axis specs ----------------------------------------------------------------------------------
def _check_specs(in_axes: Any, out_axes: Any) -> None:
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError(_IN_AXES_MSG + f"{in_axes}.")
    for what, spec in (("in_axes", in_axes), ("out_axes", out_axes)):
        if not all(type(leaf) is int for leaf in tree_leaves(spec)):
            raise TypeError(
                f"vmap {what} must be an int, None, or (nested) container with those types as "
                f"leaves, but got {spec}."
            )


def _broadcast_prefix(what: str, prefix: Any, tree: Any) -> list[AxisSpec]:
    """One axis spec per leaf of `tree`, where `prefix` is a tree prefix of it (None a leaf)."""
    spec_leaves, spec_def = tree_flatten(prefix, is_leaf=lambda x: x is None)
    counts: list[int] = []
    _match_prefix(what, spec_def, tree_structure(tree, is_leaf=_is_container), what, counts)
    return [spec for spec, n in zip(spec_leaves, counts, strict=True) for _ in range(n)]


def _match_prefix(
    what: str, spec: PyTreeDef, full: PyTreeDef, path: str, counts: list[int]
) -> None:
    if spec.kind is None:
        counts.append(full.num_leaves)
        return
    detail = None
    if full.kind is None:
        detail = f"a subtree of type {_kind_name(spec)}, but the full pytree has a leaf"
    elif spec.kind is not full.kind:
        detail = (
            f"a subtree of type {_kind_name(spec)}, but the full pytree has a subtree of type "
            f"{_kind_name(full)}"
        )
    elif len(spec.children) != len(full.children) or spec.aux != full.aux:
        detail = (
            f"a {_kind_name(spec)} {_size(spec)}, but the full pytree has a {_kind_name(full)} "
            f"{_size(full)}"
        )
    if detail is not None:
        raise ValueError(
            f"{what} specification must be a tree prefix of the corresponding value; at key "
            f"path {path}, the prefix pytree {what} has {detail}."
        )
    for key, s, f in zip(_child_keys(spec), spec.children, full.children, strict=True):
        _match_prefix(what, s, f, path + key, counts)


def _kind_name(t: PyTreeDef) -> str:
    return "None" if t.kind is type(None) else getattr(t.kind, "__name__", str(t.kind))


def _size(t: PyTreeDef) -> str:
    return f"with keys {list(t.aux)}" if t.kind is dict else f"of length {len(t.children)}"


def _child_keys(t: PyTreeDef) -> list[str]:
    if t.kind is dict:
        return [str(DictKey(k)) for k in t.aux]
    fields = getattr(t.kind, "_fields", None)  # namedtuples
    if fields is not None:
        return [f".{f}" for f in fields]
    return [str(SequenceKey(i)) for i in range(len(t.children))]


# ---- mapped arguments ----------------------------------------------------------------------------
def _is_numpy(x: Any) -> bool:
    return hasattr(x, "__array__") and hasattr(x, "dtype") and not hasattr(x, "aval")


def _as_mapped(x: Any) -> Any:
    """A mapped argument as an array (unmapped ones reach `fun` untouched, as in JAX)."""
    if isinstance(x, core.Tracer) or hasattr(x, "_exp"):
        return x
    if not (core.is_valid_jaxtype(x) or _is_numpy(x)):
        raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type")
    return array_mod.asarray(x)


def _canonical_in_axis(x: Any, d: AxisSpec) -> AxisSpec:
    if d is None:
        return None
    shape = core.get_aval(x).shape
    if not -len(shape) <= d < len(shape):
        raise ValueError(
            f"vmap was requested to map its argument along axis {d}, which implies that its "
            f"rank should be at least {d + 1 if d >= 0 else -d}, but is only {len(shape)} "
            f"(its shape is {shape})"
        )
    return d % len(shape)


def _mapped_axis_size(
    fun: Callable[..., Any],
    in_tree: PyTreeDef,
    leaves: list[Any],
    dims: list[AxisSpec],
    axis_size: int | None,
) -> int:
    sizes = [None if d is None else core.get_aval(x).shape[d] for x, d in zip(leaves, dims)]
    found = {s for s in sizes if s is not None}
    if axis_size is not None:
        if found and found != {axis_size}:
            raise _inconsistent_sizes(fun, in_tree, leaves, dims, sizes, axis_size)
        return axis_size
    if not leaves:
        args, kwargs = tree_unflatten(in_tree, leaves)
        raise ValueError(
            "vmap wrapped function must be passed at least one argument containing an array or "
            f"axis_size must be specified, got empty *args={args} and **kwargs={kwargs}"
        )
    if not found:
        raise ValueError(
            "vmap must have at least one non-None value in in_axes or axis_size must be specified"
        )
    if len(found) > 1:
        raise _inconsistent_sizes(fun, in_tree, leaves, dims, sizes, None)
    return found.pop()


def _inconsistent_sizes(
    fun: Callable[..., Any],
    in_tree: PyTreeDef,
    leaves: list[Any],
    dims: list[AxisSpec],
    sizes: list[int | None],
    axis_size: int | None,
) -> ValueError:
    names = _leaf_names(fun, in_tree, leaves)
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size};")
    counts = Counter(s for s in sizes if s is not None).most_common()
    for rank, (size, n) in enumerate(counts):
        i = sizes.index(size)
        what = f"axis {dims[i]} of {names[i]} of type {_type_str(leaves[i])}"
        if n == 1:
            lines.append(f"  * one axis had size {size}: {what};")
        else:
            many = "most" if rank == 0 else "some"
            lines.append(f"  * {many} axes ({n} of them) had size {size}, e.g. {what};")
    return ValueError("\n".join(lines)[:-1])


def _type_str(x: Any) -> str:
    return core.get_aval(x).str_short(short_dtypes=False)


def _leaf_names(fun: Callable[..., Any], in_tree: PyTreeDef, leaves: list[Any]) -> list[str]:
    """'argument x[0]' for each flat argument (or 'args[0][0]' without a usable signature)."""
    args, kwargs = tree_unflatten(in_tree, leaves)
    positional: list[str] = []
    keywords: set[str] = set()
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        params = None  # type: ignore[assignment]
    for p in params or ():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional.append(p.name)
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            keywords.add(p.name)
    names = []
    for path, _ in tree_flatten_with_path((args, kwargs))[0]:
        (_, top), rest = path[:2], keystr(path[2:])
        if path[0].idx == 0 and top.idx < len(positional):
            names.append(f"argument {positional[top.idx]}{rest}")
        elif path[0].idx == 1 and top.key in keywords:
            names.append(f"argument {top.key}{rest}")
        else:
            names.append(f"{('args', 'kwargs')[path[0].idx]}{top}{rest}")
    return names
