"""checkpoint / remat: trade memory for recomputation under reverse mode.

`checkpoint(f)` binds `checkpoint`, a higher-order primitive holding f's jaxpr. Its partial
evaluation rule computes the known (primal) outputs without saving any residuals and stages
the whole jvp'd body into the linear jaxpr; transposing that equation re-runs the primal part
of the body (the rematerialization) before pulling the cotangents back through it.
`checkpoint_policies` are accepted for JAX programs; none changes what is recomputed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import core
from .core import ClosedJaxpr, ShapedArray
from .dispatch.array import to_array as _to_array
from .interpreters import ad, batching
from .interpreters import partial_eval as pe
from .interpreters.ad import Zero, is_undefined
from .tree_util import tree_flatten, tree_map, tree_unflatten

checkpoint_p = core.Primitive("checkpoint")
checkpoint_p.multiple_results = True


@checkpoint_p.def_abstract_eval
def _abstract(*avals: ShapedArray, jaxpr: ClosedJaxpr, **_: Any) -> list[ShapedArray]:
    return list(jaxpr.out_avals)


def _call(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return core.eval_jaxpr(closed.jaxpr, closed.consts, *args)


@checkpoint_p.def_impl
def _impl(*args: Any, jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return _call(jaxpr, *args)


def _jvp(
    primals: list[Any], tangents: list[Any], *, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list[Any], list[Any]]:

    nonzero = tuple(not isinstance(t, Zero) for t in tangents)
    jvp_closed, out_nz = ad.jvp_jaxpr(jaxpr, nonzero, None)
    outs = checkpoint_p.bind(
        *primals, *[t for t in tangents if not isinstance(t, Zero)], jaxpr=jvp_closed, **params
    )
    n = len(jaxpr.out_avals)
    t_it = iter(outs[n:])
    t_out = [
        next(t_it) if nz else Zero(ad.tangent_aval(a))
        for nz, a in zip(out_nz, jaxpr.out_avals, strict=True)
    ]
    return outs[:n], t_out


ad.primitive_jvps[checkpoint_p] = _jvp


def _partial_eval(trace: pe.JaxprTrace, *args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    unknowns = [trace.is_own(a) for a in args]
    n_out = len(jaxpr.out_avals)
    known, _, out_uk, n_res = pe.partial_eval_jaxpr(jaxpr, unknowns, [False] * n_out)
    staged = trace.stage(checkpoint_p, list(args), {"jaxpr": jaxpr, **params})
    n_known = len(known.out_avals) - n_res
    known_args = [a for a, u in zip(args, unknowns, strict=True) if not u]
    k_only = pe.trace_to_closed_jaxpr(
        lambda *xs: _call(known, *xs)[:n_known], [core.get_aval(a) for a in known_args]
    )
    with core.set_current_trace(trace.parent):  # primal outputs: no residuals kept
        k_vals = checkpoint_p.bind(*known_args, jaxpr=k_only, **params)
    k_it = iter(k_vals)
    return [s if u else next(k_it) for s, u in zip(staged, out_uk, strict=True)]


pe.partial_eval_rules[checkpoint_p] = _partial_eval


def _transpose(cts: list[Any], *args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    res = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, list(args), cts)
    return [r if is_undefined(a) else None for r, a in zip(res, args, strict=True)]


ad.primitive_transposes[checkpoint_p] = _transpose


def _batch(
    vals: list[Any], dims: list[Any], *, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list[Any], list[Any]]:
    size = next(core.get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)
    n_out = len(jaxpr.out_avals)
    batched = pe.trace_to_closed_jaxpr(
        lambda *xs: batching.vmap_flat(lambda *ys: _call(jaxpr, *ys), xs, dims, [0] * n_out, size),
        [core.get_aval(v) for v in vals],
    )
    return checkpoint_p.bind(*vals, jaxpr=batched, **params), [0] * n_out


batching.primitive_batchers[checkpoint_p] = _batch


def checkpoint(
    fun: Callable[..., Any] | None = None,
    *,
    prevent_cse: bool = True,
    policy: Any = None,
    static_argnums: Any = (),
) -> Any:
    """Recompute `fun`'s intermediates in the backward pass instead of storing them."""
    if fun is None:
        return functools.partial(
            checkpoint, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums
        )
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        dyn = [a for i, a in enumerate(args) if i not in static]
        flat, in_tree = tree_flatten((dyn, kwargs))
        flat = [_to_array(x) for x in flat]
        out_tree: list[Any] = []

        def flat_fun(*xs: Any) -> list[Any]:
            d, kw = tree_unflatten(in_tree, xs)
            it = iter(d)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            leaves, tree = tree_flatten(fun(*full, **kw))
            out_tree[:] = [tree]
            return [_to_array(v) for v in leaves]

        jaxpr, consts, _ = pe.trace_to_jaxpr(flat_fun, [core.get_aval(x) for x in flat])
        closed = ClosedJaxpr(pe.convert_constvars_jaxpr(jaxpr), [])
        outs = checkpoint_p.bind(
            *consts,
            *flat,
            jaxpr=closed,
            prevent_cse=bool(prevent_cse),
            differentiated=False,
            policy=policy,
        )
        return tree_unflatten(out_tree[0], outs)

    return wrapped


remat = checkpoint


# ---- checkpoint policies ------------------------------------------------------------------------
class _CheckpointPolicies:
    """`jax.checkpoint_policies`: each is a policy `jax.checkpoint(policy=...)` accepts. webjax's
    checkpoint saves no residuals and recomputes everything, whichever policy is given."""

    @staticmethod
    def everything_saveable(*_: Any, **__: Any) -> bool:
        return True

    @staticmethod
    def nothing_saveable(*_: Any, **__: Any) -> bool:
        return False

    @staticmethod
    def dots_saveable(prim: Any, *_: Any, **__: Any) -> bool:
        return getattr(prim, "name", "") in ("dot_general", "conv_general_dilated")

    checkpoint_dots = dots_saveable

    @staticmethod
    def dots_with_no_batch_dims_saveable(prim: Any, *_: Any, **params: Any) -> bool:
        if getattr(prim, "name", "") != "dot_general":
            return False
        (_, _), (lb, rb) = params["dimension_numbers"]
        return not lb and not rb

    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable

    @staticmethod
    def offload_dot_with_no_batch_dims(src: Any, dst: Any) -> Callable[..., bool]:
        return _CheckpointPolicies.dots_with_no_batch_dims_saveable

    @staticmethod
    def save_anything_except_these_names(*names: str) -> Callable[..., bool]:
        return _CheckpointPolicies.everything_saveable

    @staticmethod
    def save_any_names_but_these(*names: str) -> Callable[..., bool]:
        return _CheckpointPolicies.nothing_saveable

    @staticmethod
    def save_only_these_names(*names: str) -> Callable[..., bool]:
        return _CheckpointPolicies.nothing_saveable

    @staticmethod
    def save_and_offload_only_these_names(**_: Any) -> Callable[..., bool]:
        return _CheckpointPolicies.nothing_saveable

    @staticmethod
    def save_from_both_policies(
        policy_1: Callable[..., Any], policy_2: Callable[..., Any]
    ) -> Callable[..., bool]:
        def policy(*args: Any, **params: Any) -> bool:
            return bool(policy_1(*args, **params)) or bool(policy_2(*args, **params))

        return policy


checkpoint_policies = _CheckpointPolicies()


def checkpoint_name(x: Any, name: str) -> Any:
    """Tag the values of `x` with `name` for name-based checkpoint policies.

    webjax's checkpoint recomputes every residual whatever the policy says, so a tag changes
    nothing about the values: each leaf is returned as it is."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name expects a string name, got {name!r}")
    return tree_map(lambda v: v, x)
