"""`shard_map`, `with_sharding_constraint` and `reshard`: the SPMD API over webjax's meshes.

`shard_map(f, mesh=, in_specs=, out_specs=)` runs `f` once per device on that device's block of
each input, with the mesh axis names bound for collectives. webjax evaluates it with the named
axes of the batching interpreter: every input is split into blocks along the dimensions its spec
names (on a mesh of real devices every axis has size 1, so the block is the whole array), `f`'s
jaxpr is mapped over one named axis per mesh axis (nested vmaps), and the results are put back
together as `out_specs` say. So `lax.psum(x, 'data')`, `axis_index`, `all_gather`, `pmean` and
`ppermute` give JAX's values, and `grad`, `jit` and `vmap` of a shard_map work as for any mapped
function. With `check_vma` (the default) outputs that `out_specs` declare replicated over an axis
must be provably so (a value that varies over the axis reaches them only through a reduction
over it, `psum`/`pmax`/`pmin`), JAX's check, done here on `f`'s jaxpr.

Sharding annotations (`with_sharding_constraint`, `reshard`) are checked as JAX checks them and
then leave the values as they are: with one device per mesh axis every sharding is the same
layout.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from . import core
from . import sharding as sh
from .core import ClosedJaxpr, ShapedArray
from .dispatch import array as array_mod
from .dispatch.array import Array
from .interpreters import batching
from .interpreters import partial_eval as pe
from .lax import lax
from .sharding import AxisType, Mesh, NamedSharding, PartitionSpec
from .tree_util import tree_flatten, tree_structure, tree_unflatten
from .vmap import _broadcast_prefix


class _InferFromArgs:
    def __repr__(self) -> str:
        return "jax.sharding.Infer"


Infer = _InferFromArgs()


def _is_spec(x: Any) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _spec_tree_error(what: str, specs: Any) -> TypeError | None:
    leaves = tree_flatten(specs, is_leaf=_is_spec)[0]
    for leaf in leaves:
        if not isinstance(leaf, PartitionSpec):
            return TypeError(
                f"shard_map {what} argument must be a pytree of `jax.sharding.PartitionSpec` "
                f"instances, but:\n\n  {what} is {leaf} of type {type(leaf).__name__}, \n\n"
                f"Check the {what} values passed to shard_map."
            )
    return None


def _spec_axes(spec: PartitionSpec) -> list[Any]:
    return spec._axis_names()


def _dim_axes(spec: PartitionSpec, i: int) -> tuple[Any, ...]:
    p = spec[i] if i < len(spec) else None
    if p is None or p is PartitionSpec.UNCONSTRAINED:
        return ()
    return p if isinstance(p, tuple) else (p,)


def _context_mesh_or_error() -> Mesh | sh.AbstractMesh:
    mesh = sh.context_mesh()
    if mesh is None:
        raise ValueError(
            "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh "
            "context"
        )
    return mesh


def _array_spec(x: Any, ndim: int) -> PartitionSpec:
    """The spec of a concrete array's placement (unsharded: every dimension None)."""
    s = getattr(x, "_sharding", None)
    if isinstance(s, NamedSharding):
        return s.spec
    return PartitionSpec(*([None] * ndim))


def _padded(spec: PartitionSpec, ndim: int) -> tuple[Any, ...]:
    return tuple(spec) + (None,) * (ndim - len(spec))


def shard_map(
    f: Callable[..., Any] | None = None,
    /,
    *,
    out_specs: Any,
    in_specs: Any = Infer,
    mesh: Mesh | sh.AbstractMesh | None = None,
    axis_names: Iterable[Any] = frozenset(),
    check_vma: bool = True,
) -> Any:
    """Map `f` over the blocks of its arguments on every device of `mesh` (default: the context
    mesh), with the mesh axes named for collectives."""
    if f is None:
        return functools.partial(
            shard_map,
            out_specs=out_specs,
            in_specs=in_specs,
            mesh=mesh,
            axis_names=axis_names,
            check_vma=check_vma,
        )
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, but got {f}")
    return _shard_map(f, mesh, in_specs, out_specs, frozenset(axis_names), check_vma)


def experimental_shard_map(
    f: Callable[..., Any],
    mesh: Mesh | sh.AbstractMesh,
    in_specs: Any,
    out_specs: Any,
    check_rep: bool = True,
    auto: Iterable[Any] = frozenset(),
) -> Callable[..., Any]:
    """The older spelling (`jax.experimental.shard_map.shard_map`): `auto` names the axes
    left to the compiler, `check_rep` is `check_vma`."""
    warnings.warn(
        "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    names = frozenset(n for n in mesh.axis_names if n not in frozenset(auto))
    return _shard_map(f, mesh, in_specs, out_specs, names, check_rep)


def _shard_map(
    f: Callable[..., Any],
    mesh: Any,
    in_specs: Any,
    out_specs: Any,
    axis_names: frozenset[Any],
    check_vma: bool,
) -> Callable[..., Any]:
    err = _spec_tree_error("out_specs", out_specs)
    if err is not None:
        raise err
    if in_specs is not Infer and in_specs is not None:
        err = _spec_tree_error("in_specs", in_specs)
        if err is not None:
            raise err
    name = getattr(f, "__name__", "fun")

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        m = mesh if mesh is not None else _context_mesh_or_error()
        if not isinstance(m, (Mesh, sh.AbstractMesh)):
            raise TypeError(
                f"shard_map requires a `jax.sharding.Mesh` or `jax.sharding.AbstractMesh` "
                f"instance for its second argument, but got {m} of type {type(m)}."
            )
        names = axis_names or frozenset(m.axis_names)
        leaves, in_tree = tree_flatten(args)
        leaves = [lax.to_array(x) for x in leaves]
        specs = _in_specs(m, names, in_specs, args, leaves)
        for i, (x, spec) in enumerate(zip(leaves, specs, strict=True)):
            _check_in_spec(m, names, name, f, i, x, spec)
        return _run(f, m, names, leaves, in_tree, specs, out_specs, check_vma, name)

    return mapped


def _in_specs(m: Any, names: frozenset[Any], in_specs: Any, args: Any, leaves: list) -> list:
    if in_specs is Infer or in_specs is None:
        types = m._name_to_type()
        auto = frozenset(n for n in names if types[n] is not AxisType.Explicit)
        if auto:
            raise TypeError(
                "shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` "
                f"instances, but it was `None` when axis_names={auto} are of type AxisType.Auto"
            )
        return [_array_spec(x, core.get_aval(x).ndim) for x in leaves]
    try:
        return _broadcast_prefix("shard_map in_specs", in_specs, args)
    except ValueError as e:
        raise ValueError(str(e)) from None


def _check_in_spec(
    m: Any, names: frozenset[Any], name: str, f: Any, i: int, x: Any, spec: Any
) -> None:
    if spec is None:
        spec = PartitionSpec()
    if not isinstance(spec, PartitionSpec):
        raise TypeError(
            "shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` "
            f"instances, but:\n\n  in_specs is {spec} of type {type(spec).__name__}, \n\n"
            "Check the in_specs values passed to shard_map."
        )
    for a in _spec_axes(spec):
        if a not in names:
            raise ValueError(
                "shard_map in_specs argument must refer to an axis marked as manual "
                f"({names}), but:\n\n  in_specs refers to {a!r}\n\nCheck the in_specs values "
                "passed to shard_map."
            )
    aval = core.get_aval(x)
    if len(spec) > aval.ndim:
        raise ValueError(
            f"shard_map applied to the function {name!r} was given an in_specs entry which is "
            "too long to be compatible with the corresponding input value from the function:\n\n"
            f"in_specs is {spec} which has length {len(spec)}, but the passed args[{i}] has "
            f"shape {aval.str_short()}, which has rank {aval.ndim} (and {aval.ndim} < "
            f"{len(spec)})\n\nEntries in in_specs must be of length no greater than the number "
            "of axes in the corresponding array argument."
        )
    sizes = m.shape
    for d in range(aval.ndim):
        n = math.prod(sizes[a] for a in _dim_axes(spec, d))
        if aval.shape[d] % n:
            raise ValueError(
                f"shard_map applied to the function {name!r} was given argument arrays with axis "
                f"sizes that are not evenly divisible by the corresponding mesh axis sizes: "
                f"args[{i}] of shape {aval.str_short()} along dimension {d}, split {n} ways by "
                f"{spec}."
            )
    # On Explicit axes the input's placement is part of its type: it must match the spec.
    explicit = set(m.explicit_axes) & names
    if explicit and isinstance(x, Array):
        have = _array_spec(x, aval.ndim)

        def only(s: PartitionSpec) -> tuple[Any, ...]:
            return tuple(
                tuple(a for a in _dim_axes(s, d) if a in explicit) or None for d in range(aval.ndim)
            )

        if only(have) != only(spec):
            want = PartitionSpec(*_padded(spec, aval.ndim))
            got = PartitionSpec(*_padded(have, aval.ndim))
            raise ValueError(
                f"in_specs passed to shard_map: {want} does not match the specs of the input: "
                f"{got} for arg: {aval.str_short()}. `in_specs` is an optional argument so you "
                "can omit specifying it and shard_map will infer the in_specs from the "
                "arguments. If you want to reshard your inputs, you can use `jax.reshard` on the "
                "arguments and then pass those args to shard_map."
            )


def _mesh_axes(m: Any, names: frozenset[Any]) -> list[tuple[Any, int]]:
    return [(n, s) for n, s in m.shape_tuple if n in names]


def _split(x: Any, spec: PartitionSpec, axes: list[tuple[Any, int]]) -> tuple[Any, list[bool]]:
    """`x` with the block index of every mesh axis its spec uses moved to the front (in mesh
    order), and which mesh axes those are."""
    aval = core.get_aval(x)
    sizes = dict(axes)
    shape: list[int] = []
    labels: list[Any] = []  # a mesh axis name for a block dim, None for a data dim
    for d, n in enumerate(aval.shape):
        used = [a for a in _dim_axes(spec, d) if a in sizes]
        for a in used:
            shape.append(sizes[a])
            labels.append(a)
        shape.append(n // math.prod(sizes[a] for a in used))
        labels.append(None)
    x = lax.reshape(x, tuple(shape))
    order = [labels.index(a) for a, _ in axes if a in labels]
    rest = [i for i, lab in enumerate(labels) if lab is None]
    x = lax.transpose(x, tuple(order + rest))
    return x, [a in labels for a, _ in axes]


def _merge(y: Any, spec: PartitionSpec, axes: list[tuple[Any, int]], block: ShapedArray) -> Any:
    """The inverse of `_split` for an output mapped over every mesh axis at the front: the
    blocks of the axes `spec` names are put back into their dimensions; the other axes are
    replicated, and device 0's block stands for them."""
    for k in reversed(range(len(axes))):
        if axes[k][0] not in _spec_axes(spec):
            y = lax.index_in_dim(y, 0, k, keepdims=False)
    kept = [a for a, _ in axes if a in _spec_axes(spec)]
    sizes = dict(axes)
    # front dims: kept axes (mesh order); then the block's dims.
    perm: list[int] = []
    out_shape: list[int] = []
    for d, n in enumerate(block.shape):
        used = [a for a in _dim_axes(spec, d) if a in sizes]
        perm.extend(kept.index(a) for a in used)
        perm.append(len(kept) + d)
        out_shape.append(n * math.prod(sizes[a] for a in used))
    y = lax.transpose(y, tuple(perm))
    return lax.reshape(y, tuple(out_shape))


def _run(
    f: Callable[..., Any],
    m: Any,
    names: frozenset[Any],
    leaves: list[Any],
    in_tree: Any,
    specs: list[Any],
    out_specs: Any,
    check_vma: bool,
    name: str,
) -> Any:
    specs = [PartitionSpec() if s is None else s for s in specs]
    axes = _mesh_axes(m, names)
    split = [_split(x, s, axes) for x, s in zip(leaves, specs, strict=True)]
    block_avals = []
    for (x, used), _ in zip(split, specs, strict=True):
        a = core.get_aval(x)
        block_avals.append(a.update(shape=a.shape[sum(used) :]))
    out_tree_box: list[Any] = []

    def body(*xs: Any) -> list[Any]:
        out = f(*tree_unflatten(in_tree, xs))
        flat, tree = tree_flatten(out)
        out_tree_box[:] = [tree]
        return [lax.to_array(o) for o in flat]

    with batching.extend_axis_env(axes):
        closed = pe.trace_to_closed_jaxpr(body, block_avals)
    out_tree = out_tree_box[0]
    try:
        o_specs: list[Any] = _broadcast_prefix(
            "shard_map out_specs", out_specs, tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        )
    except ValueError as e:
        raise ValueError(str(e)) from None
    o_specs = [PartitionSpec() if s is None else s for s in o_specs]
    for s, a in zip(o_specs, closed.out_avals, strict=True):
        for ax in _spec_axes(s):
            if ax not in names:
                raise ValueError(
                    "shard_map out_specs argument must refer to an axis marked as manual "
                    f"({names}), but:\n\n  out_specs refers to {ax!r}\n\nCheck the out_specs "
                    "values passed to shard_map."
                )
        if len(s) > a.ndim:
            raise ValueError(
                f"shard_map applied to the function {name!r} was given an out_specs entry which "
                f"is too long to be compatible with the corresponding output value: out_specs is "
                f"{s} which has length {len(s)}, but the output has shape {a.str_short()}, which "
                f"has rank {a.ndim}."
            )
    if check_vma:
        in_vma = [frozenset(_spec_axes(s)) & names for s in specs]
        out_vma = _vma(closed, in_vma)
        for k, (s, v) in enumerate(zip(o_specs, out_vma, strict=True)):
            missing = [a for a, _ in axes if a in v and a not in _spec_axes(s)]
            if missing:
                raise ValueError(_replication_error(m, name, s, k, missing, v, names))

    ops = [x for x, _ in split]
    mapped = [list(u) for _, u in split]
    outs = _nested_vmap(closed, ops, mapped, axes)
    results = [
        _merge(y, s, axes, a) for y, s, a in zip(outs, o_specs, closed.out_avals, strict=True)
    ]
    if isinstance(m, Mesh):
        results = [placed(r, NamedSharding(m, s)) for r, s in zip(results, o_specs, strict=True)]
    return tree_unflatten(out_tree, results)


def _nested_vmap(
    closed: ClosedJaxpr, ops: list[Any], mapped: list[list[bool]], axes: list[tuple[Any, int]]
) -> list[Any]:
    """Evaluate `closed` on every block: one named vmap per mesh axis, outermost first; every
    output comes back mapped over all of them, at the front."""
    n_out = len(closed.out_avals)

    def level(k: int, xs: list[Any], flags: list[list[bool]]) -> list[Any]:
        if k == len(axes):
            return core.eval_jaxpr(closed.jaxpr, closed.consts, *xs)
        name, size = axes[k]
        dims = [0 if fl[k] else None for fl in flags]
        return batching.vmap_flat(
            lambda *ys: level(k + 1, list(ys), flags), xs, dims, [0] * n_out, size, name
        )

    return level(0, ops, mapped)


def _replication_error(
    m: Any, name: str, spec: PartitionSpec, k: int, missing: list[Any], vma: Any, names: Any
) -> str:
    unmentioned = [a for a in m.axis_names if a in names and a not in _spec_axes(spec)]
    inferred = [a for a in unmentioned if a not in vma]
    axes_s = ", ".join(repr(a) for a in unmentioned)
    plural = "es" if len(unmentioned) > 1 else ""
    got = (
        "could not infer replication over any axes"
        if not inferred
        else "could only infer replication over " + ", ".join(repr(a) for a in inferred)
    )
    return (
        f"shard_map applied to the function {name!r} was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {m.axis_sizes} with corresponding axis names "
        f"{m.axis_names}.\n\nout_specs is {spec} which implies that the corresponding output "
        f"value is replicated across mesh axis{plural} {axes_s}, but {got}\n\nCheck if these "
        "output values are meant to be replicated over those mesh axes. If not, consider "
        "revising the corresponding out_specs entries. If so, consider disabling the check "
        "by passing the check_vma=False argument to `jax.shard_map`."
    )


# ---- the varying-manual-axes check --------------------------------------------------------------
_REDUCTIONS = frozenset({"psum", "pmax", "pmin"})


def _vma(closed: ClosedJaxpr, in_vma: list[frozenset[Any]]) -> list[frozenset[Any]]:
    """The mesh axes each output of `closed` varies over, given those of its inputs: a value
    varies over the axes any of its operands vary over; `psum`/`pmax`/`pmin` over an axis make
    it invariant there, `axis_index` and the other collectives make it vary."""
    return _jaxpr_vma(closed.jaxpr, [frozenset()] * len(closed.jaxpr.constvars), in_vma)


def _jaxpr_vma(
    jaxpr: core.Jaxpr, const_vma: list[frozenset[Any]], in_vma: list[frozenset[Any]]
) -> list[frozenset[Any]]:
    env: dict[Any, frozenset[Any]] = {}
    for v, s in zip(jaxpr.constvars, const_vma, strict=True):
        env[v] = s
    for v, s in zip(jaxpr.invars, in_vma, strict=True):
        env[v] = s

    def read(a: Any) -> frozenset[Any]:
        return env.get(a, frozenset()) if isinstance(a, core.Var) else frozenset()

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        outs = _eqn_vma(eqn, ins)
        for v, s in zip(eqn.outvars, outs, strict=True):
            env[v] = s
    return [read(a) for a in jaxpr.outvars]


def _sub(c: Any) -> tuple[core.Jaxpr, list[frozenset[Any]]]:
    if isinstance(c, ClosedJaxpr):
        return c.jaxpr, [frozenset()] * len(c.jaxpr.constvars)
    return c, [frozenset()] * len(c.constvars)


def _eqn_vma(eqn: Any, ins: list[frozenset[Any]]) -> list[frozenset[Any]]:
    union = frozenset().union(*ins)
    n_out = len(eqn.outvars)
    prim, params = eqn.primitive, eqn.params
    axes_of = batching.collective_axes.get(prim)
    if axes_of is not None:
        axes = frozenset(axes_of(params))
        if prim.name in _REDUCTIONS:
            return [s - axes for s in ins][:n_out] if len(ins) == n_out else [union - axes] * n_out
        if prim.name == "axis_index":
            return [axes] * n_out
        return [union | axes] * n_out
    if prim.name == "cond":
        idx, ops = ins[0], ins[1:]
        outs = [idx] * n_out
        for br in params["branches"]:
            j, cv = _sub(br)
            outs = [o | s for o, s in zip(outs, _jaxpr_vma(j, cv, ops), strict=True)]
        return outs
    if prim.name == "scan":
        j, cv = _sub(params["jaxpr"])
        nc, nk = params["num_consts"], params["num_carry"]
        consts, carry, xs = ins[:nc], ins[nc : nc + nk], ins[nc + nk :]
        while True:
            outs = _jaxpr_vma(j, cv, [*consts, *carry, *xs])
            new = [c | o for c, o in zip(carry, outs[:nk], strict=True)]
            if new == carry:
                return [*new, *outs[nk:]]
            carry = new
    if prim.name == "while":
        bj, bcv = _sub(params["body_jaxpr"])
        cj, ccv = _sub(params["cond_jaxpr"])
        cn, bn = params["cond_nconsts"], params["body_nconsts"]
        cconsts, bconsts, carry = ins[:cn], ins[cn : cn + bn], ins[cn + bn :]
        while True:
            pred = frozenset().union(*_jaxpr_vma(cj, ccv, [*cconsts, *carry]))
            outs = _jaxpr_vma(bj, bcv, [*bconsts, *carry])
            new = [c | o | pred for c, o in zip(carry, outs, strict=True)]
            if new == carry:
                return new
            carry = new
    sub = params.get("jaxpr") or params.get("call_jaxpr") or params.get("fun_jaxpr")
    if sub is not None:
        j, cv = _sub(sub)
        if len(j.invars) == len(ins) and len(j.outvars) == n_out:
            return _jaxpr_vma(j, cv, ins)
    return [union] * n_out


# ---- sharding annotations -----------------------------------------------------------------------
def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """Ask for `x` (a pytree) to be laid out as `shardings` say (Shardings or, with a context
    mesh, PartitionSpecs). Checked as JAX checks it; the values are unchanged."""
    leaves, tree = tree_flatten(x)
    targets = _sharding_leaves(shardings, x, leaves)
    out = []
    for leaf, target in zip(leaves, targets, strict=True):
        leaf = lax.to_array(leaf)
        if target is None:
            if not isinstance(getattr(leaf, "_sharding", None), NamedSharding):
                raise TypeError(
                    "The sharding on the input must be a `NamedSharding` since the target "
                    "sharding has an `AbstractMesh` in it. Got sharding type "
                    f"{type(_leaf_sharding(leaf))} for shape {core.get_aval(leaf).str_short()}"
                )
            out.append(leaf)
            continue
        spec_given = isinstance(target, PartitionSpec)
        target = sh.resolve(
            target,
            "with_sharding_constraint requires a non-empty mesh in context if you are passing "
            "`PartitionSpec`s to shardings. You can define a context mesh via "
            "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to shardings and then the "
            "mesh context manager is not required.",
        )
        aval = core.get_aval(leaf)
        sh.check_rank(target, aval.ndim, "with_sharding_constraint arguments")
        if isinstance(target, NamedSharding):
            _check_auto(target, spec_given, leaf, aval)
        out.append(placed(leaf, target))
    return tree_unflatten(tree, out)


def placed(x: Any, target: sh.Sharding) -> Any:
    """A concrete array `x` labelled with the sharding it was laid out with (a new Array on
    the same value; the caller's is unchanged); tracers pass through."""
    if not isinstance(x, Array):
        return x
    out = Array(x.aval, x._device, array_mod.exp_of(x))
    out._committed = True
    out._sharding = target
    return out


def _leaf_sharding(x: Any) -> Any:
    return x.sharding if isinstance(x, Array) else None


def _sharding_leaves(shardings: Any, x: Any, leaves: list[Any]) -> list[Any]:
    specs = tree_flatten(shardings, is_leaf=_is_sharding_leaf)[0]
    if len(specs) == 1 and tree_structure(shardings, is_leaf=_is_sharding_leaf).num_leaves == 1:
        return [specs[0]] * len(leaves)
    return _broadcast_prefix("with_sharding_constraint shardings", shardings, x)


def _is_sharding_leaf(s: Any) -> bool:
    return s is None or isinstance(s, (PartitionSpec, sh.Sharding))


def _check_auto(target: NamedSharding, spec_given: bool, leaf: Any, aval: ShapedArray) -> None:
    """JAX's rules for Explicit mesh axes: a NamedSharding may name only Auto axes; a bare
    spec over Explicit axes asserts the input already has that layout."""
    types = target.mesh._name_to_type()
    explicit = [a for a in _spec_axes(target.spec) if types[a] is AxisType.Explicit]
    if not explicit and not (spec_given and target.mesh.explicit_axes):
        return
    if not spec_given:
        raise ValueError(
            "The spec of NamedSharding passed to with_sharding_constraint can only refer to "
            f"Auto axes of the mesh. Got spec={target.spec} and mesh="
            f"{target.mesh.abstract_mesh}. You probably meant to use `reshard` API?"
        )
    if not target.mesh.auto_axes and isinstance(leaf, Array):
        have = PartitionSpec(*_padded(_array_spec(leaf, aval.ndim), aval.ndim))
        want = PartitionSpec(*_padded(target.spec, aval.ndim))
        if have != want:
            raise AssertionError(
                "`with_sharding_constraint` acts as an assert when all axes of mesh are of "
                f"type `Explicit`. The array sharding: {have} did not match the sharding "
                f"provided: {want}. Please use `jax.sharding.reshard` to shard your input to the "
                "sharding you want."
            )


def reshard(xs: Any, out_shardings: Any) -> Any:
    """`xs` laid out as `out_shardings` say (over Explicit mesh axes); values unchanged."""
    leaves, tree = tree_flatten(xs)
    targets = _sharding_leaves(out_shardings, xs, leaves)
    out = []
    for leaf, target in zip(leaves, targets, strict=True):
        leaf = lax.to_array(leaf)
        if isinstance(target, PartitionSpec):
            mesh = sh.context_mesh()
            types = mesh._name_to_type() if mesh is not None else {}
            for a in _spec_axes(target):
                t = types.get(a)
                if t is not None and t is not AxisType.Explicit:
                    raise ValueError(
                        "PartitionSpec passed to reshard cannot contain axis names that are of "
                        f"type Auto or Manual. Got PartitionSpec: {target} with axis name: {a} "
                        f"of type: {t}."
                    )
            target = sh.resolve(
                target,
                "reshard requires a non-empty mesh in context if you are passing "
                "`PartitionSpec`s. You can define a context mesh via `jax.set_mesh(mesh)`.",
            )
        if target is not None:
            sh.check_rank(target, core.get_aval(leaf).ndim, "reshard arguments")
        out.append(placed(leaf, target) if target is not None else leaf)
    return tree_unflatten(tree, out)


def auto_axes(fun: Any = None, *, axes: Any = None, out_sharding: Any = None) -> Any:
    """`fun` run with the mesh axes `axes` (default all) as Auto; its results are resharded
    to `out_sharding`. One device per axis: the values are `fun`'s."""
    if fun is None:
        return functools.partial(auto_axes, axes=axes, out_sharding=out_sharding)

    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        out = fun(*args, **kwargs)
        return out if out_sharding is None else _place_as(out, out_sharding)

    return call


def explicit_axes(fun: Any = None, *, axes: Any = None, in_sharding: Any = None) -> Any:
    """`fun` run with the mesh axes `axes` as Explicit, its inputs resharded to `in_sharding`."""
    if fun is None:
        return functools.partial(explicit_axes, axes=axes, in_sharding=in_sharding)

    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        if in_sharding is not None:
            args = _place_as(args, in_sharding)
        return fun(*args, **kwargs)

    return call


def _place_as(xs: Any, shardings: Any) -> Any:
    leaves, tree = tree_flatten(xs)
    targets = _sharding_leaves(shardings, xs, leaves)
    out = []
    for leaf, target in zip(leaves, targets, strict=True):
        target = sh.resolve(target, "a PartitionSpec needs a context mesh (`jax.set_mesh`)")
        out.append(placed(leaf, target) if target is not None else leaf)
    return tree_unflatten(tree, out)


__all__ = [
    "Infer",
    "auto_axes",
    "experimental_shard_map",
    "explicit_axes",
    "reshard",
    "shard_map",
    "with_sharding_constraint",
]


def with_out_sharding(
    fun: Callable[..., Any], keyword: str = "out_sharding", label: str | None = None
) -> Callable[..., Any]:
    """`fun` taking JAX's `out_sharding=` keyword (a NamedSharding, or a PartitionSpec of the
    context mesh): the result is laid out so, checked as JAX checks it, the values unchanged.
    With keyword="sharding" (lax.full's), any Sharding is taken."""
    name = label or fun.__name__

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        target = kwargs.pop(keyword, None)
        out = fun(*args, **kwargs)
        if target is None:
            return out
        if keyword == "out_sharding" and not isinstance(target, (NamedSharding, PartitionSpec)):
            raise TypeError(
                f"`out_sharding` argument of {name} only supports instances of `NamedSharding` "
                f"or `PartitionSpec`. Got {target} of type: {type(target)}"
            )
        target = sh.resolve(
            target,
            "Using PartitionSpec when you are not under a mesh context is not allowed. Please "
            "pass a NamedSharding instance or enter into a mesh context via `jax.set_mesh`. "
            f"Got {target}",
            ValueError,
        )
        leaves, tree = tree_flatten(out)
        for leaf in leaves:
            sh.check_rank(target, core.get_aval(leaf).ndim, f"the outputs of {name}")
        return tree_unflatten(tree, [placed(leaf, target) for leaf in leaves])

    params = list(inspect.signature(fun).parameters.values())
    if keyword not in (p.name for p in params):
        extra = inspect.Parameter(keyword, inspect.Parameter.KEYWORD_ONLY, default=None)
        tail = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
        head = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
        wrapped.__signature__ = inspect.signature(fun).replace(  # type: ignore[attr-defined]
            parameters=[*head, extra, *tail]
        )
    return wrapped
