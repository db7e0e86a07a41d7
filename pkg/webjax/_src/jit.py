"""`jit`: a higher-order primitive holding a closed jaxpr, and its rules.

`jit(f)` traces `f` once per (pytree structure, avals, static arguments) into a jaxpr and binds
`jit_p`; every transformation has a rule for `jit_p`, so `grad(jit(f))` and `vmap(jit(f))` stay
staged. Evaluating `jit_p` runs the program on the arrays' device (eager kernels are lazy and
fuse, so a whole elementwise program becomes one kernel per reduction boundary).
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from . import config as _config
from . import core, stages
from . import sharding as sharding_mod
from .config import debug_level
from .core import ClosedJaxpr, ShapedArray
from .dispatch import array as array_mod
from .dispatch import devices, lowering, program
from .dispatch.array import Array
from .interpreters import ad, batching
from .interpreters import partial_eval as pe
from .interpreters.ad import UndefinedPrimal, Zero, is_undefined
from .tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_leaves, tree_unflatten

jit_p = core.Primitive("jit")
jit_p.multiple_results = True


@jit_p.def_abstract_eval
def _jit_abstract(*avals: ShapedArray, jaxpr: ClosedJaxpr, name: str, **_: Any) -> list:
    return list(jaxpr.out_avals)


_trace_log = logging.getLogger("jax._src.dispatch")
_miss_log = logging.getLogger("jax._src.interpreters.partial_eval")


@jit_p.def_impl
def _jit_impl(*args: Any, jaxpr: ClosedJaxpr, name: str, **_: Any) -> list[Any]:
    outs = program.run_jaxpr(jaxpr, list(args), name=name)
    if outs is None:  # the program needs values while running: evaluate it eagerly
        outs = [program.materialize(o) for o in core.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)]
    if _config.check_special() and not program.compiling():
        kind = lowering.special_value(outs)
        if kind is not None:
            _deoptimized(jaxpr, args, name, kind)
    return outs


def _deoptimized(jaxpr: ClosedJaxpr, args: Sequence[Any], name: str, kind: str) -> None:
    """jax_debug_nans/infs found `kind` in a program's outputs: run its jaxpr again op by op,
    so the first primitive producing it raises FloatingPointError naming itself."""
    print(
        "Invalid nan value encountered in the output of a jax.jit function. "
        "Calling the de-optimized version."
    )
    core.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)
    raise FloatingPointError(
        f"invalid value ({kind}) encountered in jit({name}). Because jax_debug_nans and/or "
        "jax_debug_infs is set, the de-optimized function (the function as if the `jit` "
        "decorator were removed) was called in an attempt to get a more precise error message. "
        "However, the de-optimized function did not produce invalid values during its "
        "execution. This can come from nan/inf literals or inputs passed through to the outputs."
    )


def _closed_call(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    return lambda *a: core.eval_jaxpr(closed.jaxpr, closed.consts, *a)


def trace_closed(fun: Callable[..., Sequence[Any]], avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """Trace to a jaxpr whose constants are hoisted into leading... kept as consts."""
    return pe.trace_to_closed_jaxpr(fun, avals)


# ---- jvp ----------------------------------------------------------------------------------------
def _jit_jvp(
    primals: list[Any], tangents: list[Any], *, jaxpr: ClosedJaxpr, name: str, **params: Any
) -> tuple[list[Any], list[Any]]:
    nonzero = [not isinstance(t, Zero) for t in tangents]
    jvp_closed, out_nonzero = ad.jvp_jaxpr(jaxpr, tuple(nonzero), None)
    tangent_args = [t for t in tangents if not isinstance(t, Zero)]
    outs = jit_p.bind(*primals, *tangent_args, jaxpr=jvp_closed, name=f"jvp({name})")
    n = len(jaxpr.out_avals)
    primal_outs, nz_tangents = outs[:n], iter(outs[n:])
    tangent_outs = [
        next(nz_tangents) if nz else Zero(ad.tangent_aval(a))
        for nz, a in zip(out_nonzero, jaxpr.out_avals, strict=True)
    ]
    return primal_outs, tangent_outs


ad.primitive_jvps[jit_p] = _jit_jvp


# ---- partial evaluation (linearize) -------------------------------------------------------------
def _jit_partial_eval(
    trace: pe.JaxprTrace, *args: Any, jaxpr: ClosedJaxpr, name: str, **params: Any
) -> list[Any]:
    unknowns = [trace.is_own(a) for a in args]
    n_out = len(jaxpr.out_avals)
    known, unknown, out_unknowns, n_res = pe.partial_eval_jaxpr(jaxpr, unknowns, [False] * n_out)
    known_args = [a for a, u in zip(args, unknowns, strict=True) if not u]
    with core.set_current_trace(trace.parent):
        known_outs = jit_p.bind(*known_args, jaxpr=known, name=name)
    n_known = len(known_outs) - n_res
    known_vals, residuals = known_outs[:n_known], known_outs[n_known:]
    unknown_args = [a for a, u in zip(args, unknowns, strict=True) if u]
    staged = trace.stage(jit_p, [*residuals, *unknown_args], {"jaxpr": unknown, "name": name})
    k_it, u_it = iter(known_vals), iter(staged)
    return [next(u_it) if u else next(k_it) for u in out_unknowns]


pe.partial_eval_rules[jit_p] = _jit_partial_eval


# ---- transpose ----------------------------------------------------------------------------------
def _jit_transpose(
    cts: list[Any], *args: Any, jaxpr: ClosedJaxpr, name: str, **params: Any
) -> list[Any]:
    undefined = [is_undefined(a) for a in args]
    defined_args = [a for a in args if not is_undefined(a)]
    nz_cts = [not isinstance(c, Zero) for c in cts]
    ct_avals = [a for a, nz in zip(jaxpr.out_avals, nz_cts, strict=True) if nz]
    def_avals = [core.get_aval(a) for a in defined_args]

    def transposed(*flat: Any) -> list[Any]:
        defined, ct_in = flat[: len(def_avals)], iter(flat[len(def_avals) :])
        d_it = iter(defined)
        full = [a if u else next(d_it) for a, u in zip(args, undefined, strict=True)]
        cts_full = [
            next(ct_in) if nz else Zero(a) for nz, a in zip(nz_cts, jaxpr.out_avals, strict=True)
        ]
        res = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, full, cts_full)
        return [ad.instantiate(r) for r, u in zip(res, undefined, strict=True) if u]

    t_closed = pe.trace_to_closed_jaxpr(transposed, [*def_avals, *ct_avals])
    outs = iter(
        jit_p.bind(
            *defined_args,
            *[c for c in cts if not isinstance(c, Zero)],
            jaxpr=t_closed,
            name=f"transpose({name})",
        )
    )
    return [next(outs) if u else None for u in undefined]


ad.primitive_transposes[jit_p] = _jit_transpose


# ---- batching -----------------------------------------------------------------------------------
def _jit_batch(
    args: list[Any], dims: list[Any], *, jaxpr: ClosedJaxpr, name: str, **params: Any
) -> tuple[list[Any], list[Any]]:
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    args = [
        batching.moveaxis(a, d, 0) if d is not None else a for a, d in zip(args, dims, strict=True)
    ]
    in_dims = [0 if d is not None else None for d in dims]
    avals = [core.get_aval(a) for a in args]
    unbatched = [
        av if d is None else av.update(shape=av.shape[1:])
        for av, d in zip(avals, in_dims, strict=True)
    ]
    del unbatched

    def fun(*xs: Any) -> list[Any]:
        return batching.vmap_flat(
            _closed_call(jaxpr), xs, in_dims, [0] * len(jaxpr.out_avals), size
        )

    batched = pe.trace_to_closed_jaxpr(fun, avals)
    outs = jit_p.bind(*args, jaxpr=batched, name=name)
    return outs, [0] * len(outs)


batching.primitive_batchers[jit_p] = _jit_batch


# ---- the API ------------------------------------------------------------------------------------
def _hashable_static(v: Any, what: str) -> Any:
    try:
        hash(v)
    except TypeError:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(v)}, {v!r:.60}. The error was: unhashable type"
        ) from None
    return v


def jit(
    fun: Callable[..., Any] | None = None,
    *,
    in_shardings: Any = None,
    out_shardings: Any = None,
    static_argnums: Any = None,
    static_argnames: Any = None,
    donate_argnums: Any = None,
    donate_argnames: Any = None,
    keep_unused: bool = False,
    device: Any = None,
    backend: Any = None,
    inline: bool = False,
    **_: Any,
) -> Any:
    _check_shardings("in_shardings", in_shardings)
    _check_shardings("out_shardings", out_shardings)
    if fun is None:
        return functools.partial(
            jit,
            in_shardings=in_shardings,
            out_shardings=out_shardings,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
        )
    out = Jitted(fun, static_argnums, static_argnames, donate_argnums, donate_argnames)
    if in_shardings is not None or out_shardings is not None:
        out._shardings = (in_shardings, out_shardings)
        out._plain = False
    return out


def _is_sharding_leaf(x: Any) -> bool:
    return x is None or isinstance(x, (sharding_mod.Sharding, sharding_mod.PartitionSpec))


def _check_shardings(what: str, tree: Any) -> None:
    """JAX's TypeError for a leaf that is neither a Sharding, a PartitionSpec nor None."""
    for leaf in tree_leaves(tree, is_leaf=_is_sharding_leaf):
        if not _is_sharding_leaf(leaf):
            raise TypeError(
                f"{what} leaf specifications are expected to be PartitionSpec instances or None, "
                f"but got {leaf}"
            )


def _resolve_shardings(what: str, tree: Any) -> Any:
    """Bare PartitionSpecs of `tree` as NamedShardings over the context mesh."""
    if not any(
        isinstance(s, sharding_mod.PartitionSpec)
        for s in tree_leaves(tree, is_leaf=_is_sharding_leaf)
    ):
        return tree
    msg = (
        f"jit requires a non-empty mesh in context if you are passing `PartitionSpec`s to "
        f"{what}. You can define a context mesh via `jax.set_mesh(mesh)`. Alternatively, provide "
        f"`Sharding`s to {what} and then the mesh context manager is not required."
    )
    return _tree_map_shardings(lambda s: sharding_mod.resolve(s, msg), tree)


def _tree_map_shardings(f: Callable[[Any], Any], tree: Any) -> Any:
    leaves, treedef = tree_flatten(tree, is_leaf=_is_sharding_leaf)
    return tree_unflatten(treedef, [f(s) for s in leaves])


def _sharding_prefix(what: str, shardings: Any, tree: Any, n_args: int | None) -> list[Any]:
    """One sharding per leaf of `tree`, `shardings` a pytree prefix of it (a single Sharding
    applies to every leaf)."""
    leaves = tree_leaves(tree)
    if _is_sharding_leaf(shardings):
        return [shardings] * len(leaves)
    if n_args is not None and isinstance(shardings, (tuple, list)) and len(shardings) != n_args:
        raise ValueError(
            f"pjit {what} specification must be a tree prefix of the positional arguments tuple. "
            f"In particular, pjit {what} must either be a Sharding, a PartitionSpec, or a tuple "
            f"of length equal to the number of positional arguments. But pjit {what} is the "
            f"wrong length: got a tuple or list of length {len(shardings)} for an args tuple of "
            f"length {n_args}."
        )
    out: list[Any] = []
    s_leaves, s_tree = tree_flatten(shardings, is_leaf=_is_sharding_leaf)
    subtrees = s_tree.flatten_up_to(tree) if hasattr(s_tree, "flatten_up_to") else None
    if subtrees is None:
        raise ValueError(f"jit {what} must be a tree prefix of the arguments")
    for s, sub in zip(s_leaves, subtrees, strict=True):
        out += [s] * len(tree_leaves(sub))
    return out


def eager_jit(fun: Callable[..., Any] | None = None, *, static_argnames: Any = None) -> Any:
    """For library functions built from several primitives (softmax, logsumexp, ...): called
    eagerly they run as one compiled program (fused kernels, one dispatch of Python work);
    called under a transformation they are inlined, so jaxprs show their primitives as JAX's
    do. The arguments named in `static_argnames` must be hashable."""
    if fun is None:
        return functools.partial(eager_jit, static_argnames=static_argnames)
    compiled = Jitted(fun, None, static_argnames, None)
    sig = inspect.signature(fun)
    static = tuple(_as_tuple(static_argnames))

    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        if core.find_cur_trace() is not core.eval_trace or not _hashable(sig, static, args, kwargs):
            return fun(*args, **kwargs)
        return compiled(*args, **kwargs)

    return call


def _hashable(sig: inspect.Signature, names: tuple[Any, ...], args: Any, kwargs: Any) -> bool:
    try:
        bound = sig.bind(*args, **kwargs).arguments
        hash(tuple(bound.get(n) for n in names))
    except TypeError:
        return False
    return True


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)


class Jitted:
    def __init__(
        self,
        fun: Callable[..., Any],
        static_argnums: Any,
        static_argnames: Any,
        donate_argnums: Any,
        donate_argnames: Any = None,
    ) -> None:
        functools.update_wrapper(self, fun)  # type: ignore[arg-type]
        self._fun = fun  # after update_wrapper, which copies fun.__dict__ onto self
        self.static_argnums = tuple(int(i) for i in _as_tuple(static_argnums))
        self.static_argnames = tuple(_as_tuple(static_argnames))
        self.donate_argnums = tuple(int(i) for i in _as_tuple(donate_argnums))
        self.donate_argnames = tuple(_as_tuple(donate_argnames))
        try:
            sig = inspect.signature(fun)
        except (TypeError, ValueError):
            sig = None
        self._sig = sig
        if sig is not None:  # JAX relates static argnums and argnames through the signature
            positional = (
                inspect.Parameter.POSITIONAL_ONLY,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
            )
            params = []  # the parameters a position can name: those before any *args
            for prm in sig.parameters.values():
                if prm.kind not in positional:
                    break
                params.append(prm.name)
            for i in self.static_argnums:
                if 0 <= i < len(params) and params[i] not in self.static_argnames:
                    self.static_argnames += (params[i],)
            for nm in self.static_argnames:
                if nm in params and params.index(nm) not in self.static_argnums:
                    self.static_argnums += (params.index(nm),)
            for i in self.donate_argnums:
                if 0 <= i < len(params) and params[i] not in self.donate_argnames:
                    self.donate_argnames += (params[i],)
            for nm in self.donate_argnames:
                if nm in params and params.index(nm) not in self.donate_argnums:
                    self.donate_argnums += (params.index(nm),)
        self._cache: dict[Any, tuple[ClosedJaxpr, Any]] = {}
        # Calls with only concrete arrays, passed by position, to a function without static
        # or donated arguments: the same traces, keyed by the avals alone (no pytree walk).
        self._plain = not (
            self.static_argnums
            or self.static_argnames
            or self.donate_argnums
            or self.donate_argnames
        )
        self._fast: dict[Any, tuple[ClosedJaxpr, Any]] = {}
        self._shardings: tuple[Any, Any] | None = None  # jit's in_shardings, out_shardings
        self.trace_count = 0
        self.__name__ = getattr(fun, "__name__", "fun")

    def _split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        nargs = len(args)
        static_pos = {i % nargs if nargs else i for i in self.static_argnums if -nargs <= i < nargs}
        dyn_args = [a for i, a in enumerate(args) if i not in static_pos]
        static_args = tuple((i, _hashable_static(args[i], "arg")) for i in sorted(static_pos))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        static_kwargs = tuple(
            sorted(
                (k, _hashable_static(v, k)) for k, v in kwargs.items() if k in self.static_argnames
            )
        )
        return dyn_args, dyn_kwargs, static_args, static_kwargs

    def _trace(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[ClosedJaxpr, Any, list]:
        dyn_args, dyn_kwargs, static_args, static_kwargs = self._split(args, kwargs)
        flat, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        try:
            flat = [_to_array(x) for x in flat]
        except TypeError:
            raise self._argument_error(len(args), dyn_args, dyn_kwargs) from None
        avals = tuple(core.get_aval(x) for x in flat)
        # Named axes are part of the key: a trace may read their sizes (`psum(1, 'i')`).
        key = (in_tree, avals, static_args, static_kwargs, _context_key(), batching.axis_env_key())
        hit = self._cache.get(key)
        if hit is not None:
            return hit[0], hit[1], flat
        if _config.explain_cache_misses.value:
            _miss_log.warning(self._explain_miss(key, dyn_args, dyn_kwargs, len(args)))
        nargs = len(args)
        out_tree_box: list[Any] = []

        def flat_fun(*xs: Any) -> list[Any]:
            d_args, d_kwargs = tree_unflatten(in_tree, xs)
            it = iter(d_args)
            static = dict(static_args)
            full = [static[i] if i in static else next(it) for i in range(nargs)]
            out = self._fun(*full, **d_kwargs, **dict(static_kwargs))
            leaves, out_tree = tree_flatten(out)
            out_tree_box.append(out_tree)
            return [_to_array(x) for x in leaves]

        self.trace_count += 1
        start = time.perf_counter()
        closed = pe.trace_to_closed_jaxpr(flat_fun, avals)
        if _config.log_compiles.value:
            took = time.perf_counter() - start
            _trace_log.warning("Finished tracing %s for jit in %.9f sec", self.__name__, took)
        if debug_level() >= 2:
            print(f"[webjax] traced jit({self.__name__}):\n{closed}")
        closed, captured = _hoist_tracers(closed)
        if captured:  # values of an enclosing transformation: arguments, and never cached
            return closed, out_tree_box[0], [*captured, *flat]
        self._cache[key] = (closed, out_tree_box[0])
        return closed, out_tree_box[0], flat

    def _explain_miss(
        self, key: tuple[Any, ...], dyn_args: list[Any], dyn_kwargs: dict[str, Any], nargs: int
    ) -> str:
        """jax_explain_cache_misses: why `key` (see `_trace`) is not in the cache, against the
        cached key that differs in the fewest parts."""
        head = f"TRACING CACHE MISS at {_call_site()}:\n"
        code = getattr(self._fun, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "unknown"
        if not self._cache:
            return (
                f"{head}  never seen function:\n    {self.__name__} id={id(self._fun)} "
                f"defined at {where}"
            )

        def distance(old: tuple[Any, ...]) -> int:
            return sum(a != b for a, b in zip(old, key, strict=True))

        old = min(self._cache, key=distance)
        lines = [
            f"{head}  for {self.__name__} defined at {where}",
            "  all previously seen cache keys differ. For the closest previous key:",
        ]
        in_tree, avals, static_args, static_kwargs, context, axes = key
        if in_tree != old[0]:
            lines += ["  different input pytree:", f"  * now {in_tree} and before {old[0]}"]
        elif avals != old[1]:
            lines.append("  different input types:")
            paths = [keystr(p) for p, _ in tree_flatten_with_path((dyn_args, dyn_kwargs))[0]]
            names = self._flat_arg_names(paths, nargs)
            for nm, now, before in zip(names, avals, old[1], strict=True):
                if now != before:
                    lines.append(
                        f"  * at {nm}, now {now.str_short(True)} and before "
                        f"{before.str_short(True)}"
                    )
        if (static_args, static_kwargs) != (old[2], old[3]):
            lines.append("  different static arguments:")
            for (i, now), (_, before) in zip(static_args, old[2], strict=False):
                if now != before:
                    lines.append(f"  * at args[{i}], now {now!r} and before {before!r}")
            for (k, now), (_, before) in zip(static_kwargs, old[3], strict=False):
                if now != before:
                    lines.append(f"  * at {k}, now {now!r} and before {before!r}")
        if context != old[4]:
            lines.append("  Tracing context doesn't match, e.g. due to config or context manager.")
            if context[0] != old[4][0]:
                lines.append(f"  * default device differs: now {context[0]} and before {old[4][0]}")
            options = _config.trace_context_names()
            for nm, now, before in zip(options, context[1], old[4][1], strict=True):
                if now != before:
                    lines.append(f"  * {nm} differs: now {now} and before {before}")
        if axes != old[5]:
            lines.append(f"  different named axes: now {axes} and before {old[5]}")
        return "\n".join(lines)

    def _flat_arg_names(self, paths: list[str], nargs: int) -> list[str]:
        """Each flat argument's name for messages: the parameter's name and the path in it."""
        static_pos = {i % nargs for i in self.static_argnums if -nargs <= i < nargs}
        positions = [i for i in range(nargs) if i not in static_pos]
        params: list[str] = []
        if self._sig is not None:
            params = [
                p.name
                for p in self._sig.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
        out = []
        for path in paths:  # "[0][i]..." for positional arguments, "[1]['k']..." for keywords
            rest = path[3:]
            idx, _, tail = rest.partition("]")
            if path.startswith("[0]"):
                pos = positions[int(idx[1:])] if idx[1:].isdigit() else -1
                nm = params[pos] if 0 <= pos < len(params) else f"args[{pos}]"
            else:
                nm = idx[2:-1]
            out.append(nm + tail)
        return out

    def _argument_error(
        self, nargs: int, dyn_args: list[Any], dyn_kwargs: dict[str, Any]
    ) -> TypeError:
        """JAX's error for an argument leaf that is not an array, naming where it was passed:
        the parameter's name (or `args[i]`) and the path inside it."""
        static_pos = {i % nargs for i in self.static_argnums if -nargs <= i < nargs}
        positions = [i for i in range(nargs) if i not in static_pos]
        names: list[str] = []
        if self._sig is not None:
            names = [
                p.name
                for p in self._sig.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
        for path, leaf in tree_flatten_with_path((dyn_args, dyn_kwargs))[0]:
            try:
                _to_array(leaf)
                continue
            except TypeError:
                pass
            where, inner = path[1], path[2:]
            if path[0].idx == 0:  # positional
                pos = positions[where.idx]
                head = names[pos] if pos < len(names) else f"args[{pos}]"
            else:
                head = str(where.key)
            return TypeError(
                f"Error interpreting argument to {self._fun} as an abstract array. The "
                f"problematic value is of type {type(leaf)} and was passed to the function at "
                f"path {head}{keystr(inner)}.\nThis typically means that a jit-wrapped function "
                "was called with a non-array argument, and this argument was not marked as "
                "static using the static_argnums or static_argnames parameters of jax.jit."
            )
        return TypeError(f"{self.__name__}: an argument is not a valid JAX type")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _config.disable_jit_state.value:
            return self._fun(*args, **kwargs)
        fast = _plain_key(args) if self._plain and not kwargs else None
        if fast is not None:
            hit = self._fast.get(fast)
            if hit is not None:
                outs = jit_p.bind(*args, jaxpr=hit[0], name=self.__name__)
                return tree_unflatten(hit[1], outs)
        closed, out_tree, flat = self._trace(args, kwargs)
        if fast is not None and len(flat) == len(args):  # nothing captured: a cached trace
            self._fast[fast] = (closed, out_tree)
        donated = self._donated(args, kwargs) if self.donate_argnums else ()
        if donated and core.find_cur_trace() is core.eval_trace:
            outs = _run_donating(closed, flat, donated)
        else:
            outs = jit_p.bind(*flat, jaxpr=closed, name=self.__name__)
        if self._shardings is not None:
            outs = self._place(args, kwargs, flat, outs, out_tree)
        return tree_unflatten(out_tree, outs)

    def _place(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], flat: list, outs: list, out_tree: Any
    ) -> list[Any]:
        """Check the arguments against in_shardings (JAX's errors) and label the results with
        out_shardings; one device per mesh axis, so the values are the same."""
        in_sh, out_sh = self._shardings or (None, None)
        if in_sh is not None:
            in_sh = _resolve_shardings("in_shardings", in_sh)
            dyn_args = self._split(args, kwargs)[0]
            for s, x in zip(
                _sharding_prefix("in_shardings", in_sh, tuple(dyn_args), len(dyn_args)),
                tree_leaves(tuple(dyn_args)),
                strict=True,
            ):
                if s is not None:
                    sharding_mod.check_rank(s, core.get_aval(_to_array(x)).ndim, "pjit arguments")
        if out_sh is None:
            return outs
        out_sh = _resolve_shardings("out_shardings", out_sh)
        targets = _sharding_prefix(
            "out_shardings", out_sh, tree_unflatten(out_tree, list(outs)), None
        )
        placed = []
        for o, s in zip(outs, targets, strict=True):
            if s is not None and type(o) is Array:
                sharding_mod.check_rank(s, o.ndim, "pjit outputs")
                o = Array(o.aval, o._device, array_mod.exp_of(o))
                o._committed = True
                o._sharding = s
            placed.append(o)
        return placed

    def _donated(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, ...]:
        """The flat positions (as `_trace` flattens) of the leaves of donated arguments."""
        nargs = len(args)
        static_pos = {i % nargs if nargs else i for i in self.static_argnums if -nargs <= i < nargs}
        donate_pos = {i % nargs if nargs else i for i in self.donate_argnums if -nargs <= i < nargs}
        flags: list[bool] = []
        for i, a in enumerate(args):
            if i not in static_pos:
                flags += [i in donate_pos] * len(tree_leaves(a))
        for k in sorted(k for k in kwargs if k not in self.static_argnames):
            flags += [k in self.donate_argnames] * len(tree_leaves(kwargs[k]))
        return tuple(i for i, f in enumerate(flags) if f)

    def trace(self, *args: Any, **kwargs: Any) -> stages.Traced:
        dyn_args, dyn_kwargs, _, _ = self._split(args, kwargs)
        in_tree = tree_flatten((tuple(dyn_args), dyn_kwargs))[1]
        closed, out_tree, flat = self._trace(args, kwargs)
        name = self.__name__
        n_captured = len(flat) - in_tree.num_leaves
        captured = flat[:n_captured]

        def run(xs: list[Any]) -> list[Any]:
            return jit_p.bind(*captured, *xs, jaxpr=closed, name=name)

        donated = self._donated(args, kwargs) if self.donate_argnums else ()
        shown = closed
        if n_captured:  # the stages show the function of the arguments alone
            shown = pe.trace_to_closed_jaxpr(
                lambda *xs: run(list(xs)), [core.get_aval(x) for x in flat[n_captured:]]
            )
        return stages.Traced(shown, in_tree, out_tree, name, donated, run, stages.out_struct[0])

    def lower(self, *args: Any, **kwargs: Any) -> stages.Lowered:
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        closed, out_tree, _ = self._trace(args, kwargs)
        return tree_unflatten(out_tree, closed.out_avals)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast.clear()


def _hoist_tracers(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Closure conversion of the tracers a jitted function closed over (values of an
    enclosing grad/vmap/jit): they become leading arguments, so the enclosing trace sees them
    flow into `jit` (JAX does the same when it lifts closed-over tracers)."""
    pairs = list(zip(closed.jaxpr.constvars, closed.consts, strict=True))
    hoist = [(v, c) for v, c in pairs if isinstance(c, core.Tracer)]
    if not hoist:
        return closed, []
    keep = [(v, c) for v, c in pairs if not isinstance(c, core.Tracer)]
    j = closed.jaxpr
    jaxpr = core.Jaxpr([v for v, _ in keep], [*(v for v, _ in hoist), *j.invars], j.outvars, j.eqns)
    return ClosedJaxpr(jaxpr, [c for _, c in keep]), [c for _, c in hoist]


def _run_donating(closed: ClosedJaxpr, flat: list[Any], donated: tuple[int, ...]) -> list[Any]:
    """Evaluate at top level, letting the program write results into donated buffers; the
    donated arrays are deleted afterwards, as in JAX."""
    outs = program.run_jaxpr(closed, list(flat), donate=donated)
    if outs is None:
        outs = [program.materialize(o) for o in core.eval_jaxpr(closed.jaxpr, closed.consts, *flat)]
    if _config.check_special() and (kind := lowering.special_value(outs)) is not None:
        # the donated inputs may hold outputs now: nothing to re-run op by op
        raise FloatingPointError(f"invalid value ({kind}) encountered in a jit with donation")
    for i in donated:
        x = flat[i]
        if hasattr(x, "delete") and not any(x is o for o in outs):
            x.delete()
    return outs


_ARRAY: list[Any] = []  # Array, imported on first use (array.py imports this module's users)


def _plain_key(args: tuple[Any, ...]) -> Any:
    """The fast cache key of a call whose arguments are all live concrete arrays (else None):
    their avals, the context (device, x64) and the bound named axes, as `_trace`'s key has."""
    if not _ARRAY:
        _ARRAY.append(Array)
    array = _ARRAY[0]
    avals = []
    for a in args:
        if type(a) is not array or a._deleted:
            return None
        avals.append(a.aval)
    return (tuple(avals), _context_key(), batching.axis_env_key())


def _context_key() -> Any:
    """What a trace depends on besides the arguments: the default device and the options
    that change traces (x64 makes 64-bit constants and defaults; promotion modes; ...)."""
    return devices.default_device(), _config.trace_context()


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _call_site() -> str:
    """'file:line (function)' of the innermost caller outside webjax."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "unknown"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"


def _to_array(x: Any) -> Any:
    if isinstance(x, core.Tracer) or hasattr(x, "_exp"):
        return x
    if type(x) in (bool, int, float):
        return array_mod.asarray(x)
    if core.is_valid_jaxtype(x):
        return x
    try:
        return array_mod.asarray(x)
    except TypeError:
        raise TypeError(
            f"Argument '{x!r:.60}' of type {type(x)} is not a valid JAX type."
        ) from None


__all__ = ["jit", "jit_p", "Jitted", "UndefinedPrimal"]
