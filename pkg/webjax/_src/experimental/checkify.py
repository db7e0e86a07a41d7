"""Functionalised runtime checks (`jax.experimental.checkify`).

`check(pred, msg, *args)` binds the primitive `check`. Under `checkify(f, errors)` a
`CheckifyTrace` receives it: the trace records "this check failed" as a boolean value of the
enclosing computation (concrete eagerly, traced under an outer jit or vmap) together with the
message's format arguments, and `checkify` returns them as an `Error`, a pytree, beside `f`'s
output. The same trace adds the automatic checks: NaNs produced by a floating-point primitive,
integer division by zero, out-of-bounds `dynamic_slice`/`gather` starts. It lets every other
primitive run in the enclosing trace, and inlines calls (`jit`, `checkpoint`, custom
derivatives) so the checks inside them are seen. Under `vmap` (the check inside the mapped
function, checkify outside) the check's batching rule reduces the batch to one check: failed if
any example failed, with the format arguments of the last failing one, as JAX reports.

Outside `checkify`, a check on concrete values raises `JaxRuntimeError` when it fails; staged
under `jit` it raises JAX's "not functionalized" error. Checks inside `cond`, `while_loop` and
`scan` bodies are not functionalised (an error names this).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from .. import core
from ..core import Primitive, ShapedArray
from ..dispatch.array import to_array
from ..interpreters import ad, batching
from ..interpreters import partial_eval as pe
from ..lax import lax, reductions, slicing
from ..lax import primitive_names as prims
from ..tree_util import register_pytree_node, tree_flatten, tree_unflatten


# ---- error kinds --------------------------------------------------------------------------------
class JaxRuntimeError(RuntimeError):
    """A failed check, raised by `Error.throw()` or by a check outside checkify."""


class JaxException:
    """The base of the error kinds checkify can look for."""


class FailedCheckError(JaxException):
    pass


class NaNError(JaxException):
    pass


class DivisionByZeroError(JaxException):
    pass


class OOBError(JaxException):
    pass


ErrorCategory = type[JaxException]
user_checks: frozenset[ErrorCategory] = frozenset({FailedCheckError})
nan_checks: frozenset[ErrorCategory] = frozenset({NaNError})
index_checks: frozenset[ErrorCategory] = frozenset({OOBError})
div_checks: frozenset[ErrorCategory] = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


# ---- the error value ----------------------------------------------------------------------------
class Error:
    """The checks a checkified function ran: for each, whether it failed (a boolean array:
    one value, or one per example under vmap) and the arguments of its message. The first
    failing check, in program order, is the error."""

    def __init__(self, failed: Sequence[Any], fmt: Sequence[Any], meta: Sequence[Any]) -> None:
        self._failed = tuple(failed)
        self._fmt = tuple(fmt)  # per check: a flat list of format arguments
        self._meta = tuple(meta)  # per check: (kind, message template, format pytree)

    def _message(self, i: int, index: tuple[int, ...]) -> str:
        kind, template, fmt_tree = self._meta[i]
        leaves = [to_array(a)[index] if index else to_array(a) for a in self._fmt[i]]
        args, kwargs = tree_unflatten(fmt_tree, leaves)
        text = template.format(*args, **kwargs)
        return f"{text} (`check` failed)" if kind is FailedCheckError else text

    def _first(self, index: tuple[int, ...]) -> int | None:
        for i, f in enumerate(self._failed):
            value = to_array(f)[index] if index else to_array(f)
            if bool(value):
                return i
        return None

    def _batch_shape(self) -> tuple[int, ...]:
        return tuple(to_array(self._failed[0]).shape) if self._failed else ()

    def get(self) -> str | None:
        """The message of the first failed check (one line per failing example under vmap),
        or None when every check passed."""
        shape = self._batch_shape()
        if not shape:
            i = self._first(())
            return None if i is None else self._message(i, ())
        lines = []
        for flat in range(int(functools.reduce(lambda a, b: a * b, shape, 1))):
            index, rest = [], flat
            for d in reversed(shape):
                index.append(rest % d)
                rest //= d
            idx = tuple(reversed(index))
            i = self._first(idx)
            if i is not None:
                where = ", ".join(map(str, idx))
                lines.append(f"at mapped index {where}: {self._message(i, idx)}")
        return "\n".join(lines) if lines else None

    def get_exception(self) -> JaxRuntimeError | None:
        msg = self.get()
        return None if msg is None else JaxRuntimeError(msg)

    def throw(self) -> None:
        """Raise the error as a JaxRuntimeError, if a check failed."""
        exc = self.get_exception()
        if exc is not None:
            raise exc

    def __repr__(self) -> str:
        return f"Error({self.get()!r})"

    __str__ = __repr__


def _error_flatten(e: Error) -> Any:
    leaves = [*e._failed, *(a for fmt in e._fmt for a in fmt)]
    return leaves, (e._meta, tuple(len(f) for f in e._fmt))


def _error_unflatten(aux: Any, leaves: Any) -> Error:
    meta, sizes = aux
    leaves = list(leaves)
    failed, rest = leaves[: len(meta)], leaves[len(meta) :]
    fmt, pos = [], 0
    for n in sizes:
        fmt.append(rest[pos : pos + n])
        pos += n
    return Error(failed, fmt, meta)


register_pytree_node(Error, _error_flatten, _error_unflatten)
init_error = Error((), (), ())


# ---- the check primitive ------------------------------------------------------------------------
check_p = Primitive("check")
check_p.multiple_results = True
pe._EFFECTFUL.add("check")  # never dropped from a jaxpr: it has no outputs


def _under_checkify() -> bool:
    return any(isinstance(t, CheckifyTrace) for t in core._current_trace)


@check_p.def_abstract_eval
def _check_abstract(*avals: ShapedArray, **params: Any) -> list[Any]:
    if not _under_checkify():
        raise ValueError(
            "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
            "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
            "functionalizing it through `checkify.checkify`."
        )
    return []


@check_p.def_impl
def _check_impl(pred: Any, *fmt: Any, kind: Any, msg: str, fmt_tree: Any, debug: bool) -> list:
    if debug:  # debug_check outside checkify does nothing
        return []
    if not bool(lax.reduce_and(to_array(pred), tuple(range(core.get_aval(pred).ndim)))):
        Error([True], [list(fmt)], [(kind, msg, fmt_tree)]).throw()
    return []


def _check_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> Any:
    return check_p.bind(*primals, **params), []


def _check_batch(vals: list[Any], dims: list[Any], **params: Any) -> Any:
    """Reduce a batch of checks to one: failed if any example failed, reporting the format
    arguments of the last failing example."""
    size = next(core.get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)
    pred, *fmt = (batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims, strict=True))
    pred_aval = core.get_aval(pred)
    ok = lax.reduce_and(pred, tuple(range(1, pred_aval.ndim))) if pred_aval.ndim > 1 else pred
    positions = lax.iota("int32", size)
    last = lax.reduce_max(lax.select(ok, lax.full((size,), -1, "int32"), positions), (0,))
    last = lax.max(last, lax.full((), 0, "int32"))
    picked = [lax.dynamic_index_in_dim(a, last, 0, keepdims=False) for a in fmt]
    all_ok = lax.reduce_and(ok, (0,))
    return check_p.bind(all_ok, *picked, **params), []


ad.primitive_jvps[check_p] = _check_jvp
batching.primitive_batchers[check_p] = _check_batch


def _bind_check(pred: Any, kind: Any, msg: str, args: Any, kwargs: Any, debug: bool) -> None:
    fmt, fmt_tree = tree_flatten((args, kwargs))
    for a in fmt:
        if not (hasattr(a, "shape") and hasattr(a, "dtype")):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, but got "
                f"{a!r} of type {type(a)}."
            )
    pred = to_array(pred)
    if core.get_aval(pred).dtype.name != "bool":
        raise TypeError(f"check takes a scalar pred as argument, got {core.get_aval(pred)}")
    check_p.bind(pred, *map(to_array, fmt), kind=kind, msg=msg, fmt_tree=fmt_tree, debug=debug)


def check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Check that `pred` holds; otherwise the error `msg.format(*fmt_args, **fmt_kwargs)`
    (raised at once outside checkify, returned by a checkified function)."""
    _bind_check(pred, FailedCheckError, msg, fmt_args, fmt_kwargs, debug=False)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """As `check` under checkify; does nothing outside it."""
    _bind_check(pred, FailedCheckError, msg, fmt_args, fmt_kwargs, debug=True)


def check_error(error: Error) -> None:
    """Raise `error` (outside checkify) or carry it into the enclosing checkified function."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} instead.")
    for failed, fmt, (kind, msg, fmt_tree) in zip(
        error._failed, error._fmt, error._meta, strict=True
    ):
        args, kwargs = tree_unflatten(fmt_tree, list(fmt))
        template = msg if kind is FailedCheckError else msg.replace("{", "{{").replace("}", "}}")
        _bind_check(lax.bitwise_not(to_array(failed)), kind, template, args, kwargs, debug=False)


# ---- the trace ----------------------------------------------------------------------------------
_CALL_JAXPRS = {"jit": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr",
                "custom_vjp_call": "call_jaxpr"}  # fmt: skip
_FLOAT_KINDS = "fc"


def _contains_check(jaxpr: Any) -> bool:
    for eqn in jaxpr.eqns:
        if eqn.primitive is check_p:
            return True
        for v in eqn.params.values():
            for sub in v if isinstance(v, tuple) else (v,):
                inner = getattr(sub, "jaxpr", sub)
                if isinstance(inner, core.Jaxpr) and _contains_check(inner):
                    return True
    return False


class CheckifyTrace(core.Trace):
    """Records checks (explicit and automatic) as values of the parent trace."""

    def __init__(self, parent: core.Trace, errors: frozenset) -> None:
        self.parent = parent
        self.errors = errors
        self.failed: list[Any] = []
        self.fmt: list[list[Any]] = []
        self.meta: list[Any] = []

    def record(self, failed: Any, kind: Any, msg: str, fmt: Sequence[Any], fmt_tree: Any) -> None:
        self.failed.append(failed)
        self.fmt.append(list(fmt))
        self.meta.append((kind, msg, fmt_tree))

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        if primitive is check_p:
            if params["kind"] in self.errors:
                pred, *fmt = args
                with core.set_current_trace(self.parent):
                    nd = core.get_aval(pred).ndim
                    failed = lax.bitwise_not(lax.reduce_and(to_array(pred), tuple(range(nd))))
                self.record(failed, params["kind"], params["msg"], fmt, params["fmt_tree"])
            return []
        sub = _CALL_JAXPRS.get(primitive.name)
        if sub is not None and sub in params:
            closed = params[sub]
            jaxpr = getattr(closed, "jaxpr", closed)
            consts = getattr(closed, "consts", [])
            n = params.get("num_consts", 0)
            outs = core.eval_jaxpr(jaxpr, [*consts, *args[:n]] if n else consts, *args[n:])
            return outs if primitive.multiple_results else outs[0]
        for v in params.values():
            for s in v if isinstance(v, tuple) else (v,):
                inner = getattr(s, "jaxpr", s)
                if isinstance(inner, core.Jaxpr) and _contains_check(inner):
                    raise NotImplementedError(
                        f"checkify of a check inside '{primitive.name}': webjax functionalises "
                        "checks in straight-line code, jit and custom derivatives only"
                    )
        with core.set_current_trace(self.parent):
            if OOBError in self.errors:
                self._index_check(primitive, args, params)
            if DivisionByZeroError in self.errors and primitive in (prims.div_p, prims.rem_p):
                y = to_array(args[1])
                if core.get_aval(y).dtype.kind in "iu":
                    zero = lax.eq(y, lax.full((), 0, core.get_aval(y).dtype))
                    hit = lax.reduce_or(zero, tuple(range(core.get_aval(y).ndim)))
                    self.record(hit, DivisionByZeroError, "division by zero", [], _NO_FMT)
            out = primitive.bind(*args, **params)
            if NaNError in self.errors and primitive is not check_p:
                for o in out if primitive.multiple_results else [out]:
                    aval = core.get_aval(o)
                    if aval.dtype.kind in _FLOAT_KINDS and not _is_nan_source(primitive):
                        nan = lax.ne(o, o)
                        hit = lax.reduce_or(nan, tuple(range(aval.ndim)))
                        self.record(
                            hit,
                            NaNError,
                            f"nan generated by primitive: {primitive.name}.",
                            [],
                            _NO_FMT,
                        )
                        break
        return out

    def _index_check(self, primitive: Primitive, args: Sequence[Any], params: dict) -> None:
        if primitive is prims.dynamic_slice_p:
            operand, *starts = args
            shape = core.get_aval(operand).shape
            sizes = params["slice_sizes"]
            axes = [(i, s) for i, s in enumerate(starts)]
        elif primitive is slicing.gather_p:
            operand, indices = args
            shape = core.get_aval(operand).shape
            sizes = params["slice_sizes"]
            idx = to_array(indices)
            nd = core.get_aval(idx).ndim
            axes = [
                (axis, lax.index_in_dim(idx, k, nd - 1, keepdims=False))
                for k, axis in enumerate(params["dimension_numbers"].start_index_map)
            ]
        else:
            return
        for axis, start in axes:
            start = to_array(start)
            aval = core.get_aval(start)
            lo = lax.full((), 0, aval.dtype)
            hi = lax.full((), shape[axis] - sizes[axis], aval.dtype)
            bad = lax.bitwise_or(lax.lt(start, lo), lax.gt(start, hi))
            axes_all = tuple(range(aval.ndim))
            hit = lax.reduce_or(bad, axes_all)
            value = start
            if aval.ndim:  # the first offending index
                flat = lax.reshape(start, (aval.size,))
                flat_bad = lax.reshape(bad, (aval.size,))
                first = reductions.argmax(lax.convert_element_type(flat_bad, "int32"), 0, "int32")
                value = lax.dynamic_index_in_dim(flat, first, 0, keepdims=False)
            msg = (
                f"out-of-bounds indexing for array of shape {shape}: index {{}} is out of bounds "
                f"for axis {axis} with size {shape[axis]}. "
            )
            _, tree = tree_flatten(((value,), {}))
            self.record(hit, OOBError, msg, [value], tree)


_NO_FMT = tree_flatten(((), {}))[1]


def _is_nan_source(primitive: Primitive) -> bool:
    """Primitives that pass NaNs on without making them (moves, selections, comparisons)."""
    return primitive.name in _PASSTHROUGH


_PASSTHROUGH = frozenset({
    "broadcast_in_dim", "reshape", "squeeze", "transpose", "slice", "dynamic_slice", "gather",
    "concatenate", "pad", "rev", "select_n", "convert_element_type", "copy", "expand_dims",
    "dynamic_update_slice", "scatter", "sort", "reduce_max", "reduce_min", "stop_gradient",
})  # fmt: skip


def checkify(
    f: Callable[..., Any], errors: frozenset = user_checks
) -> Callable[..., tuple[Error, Any]]:
    """`f` made to return `(error, out)`: the checks it ran (`errors` chooses which kinds, of
    `user_checks`, `nan_checks`, `div_checks`, `index_checks`, ... combined with `|`) as an
    `Error` value instead of raising."""
    errors = frozenset(errors)

    @functools.wraps(f)
    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        # Staged first, as JAX does: values inside are abstract (an index is a traced value,
        # Python control flow on values fails), then the jaxpr runs in the caller's trace.
        flat, in_tree = tree_flatten((args, kwargs))
        flat = [to_array(x) for x in flat]
        out_trees: list[Any] = []

        def flat_fun(*xs: Any) -> list[Any]:
            a, kw = tree_unflatten(in_tree, list(xs))
            trace = CheckifyTrace(core.find_cur_trace(), errors)
            with core.set_current_trace(trace):
                out = f(*a, **kw)
            leaves, tree = tree_flatten((Error(trace.failed, trace.fmt, trace.meta), out))
            out_trees.append(tree)
            return leaves

        jaxpr, consts, _ = pe.trace_to_jaxpr(flat_fun, [core.get_aval(x) for x in flat])
        outs = core.eval_jaxpr(jaxpr, consts, *flat)
        return tree_unflatten(out_trees[0], outs)

    return checked


__all__ = [
    "DivisionByZeroError", "Error", "ErrorCategory", "FailedCheckError", "JaxException",
    "JaxRuntimeError", "NaNError", "OOBError", "all_checks", "automatic_checks", "check",
    "check_error", "checkify", "debug_check", "div_checks", "float_checks", "index_checks",
    "init_error", "nan_checks", "user_checks",
]  # fmt: skip
