"""More of the top-level `jax` API: config context managers, host transfers, naming no-ops,
`custom_gradient`, `closure_convert`, `ensure_compile_time_eval`, checkpoint policies."""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Callable, Iterator
from typing import Any

from . import core
from .config import config
from .tree_util import tree_flatten, tree_map, tree_unflatten


# ---- config states ------------------------------------------------------------------------------
class _State:
    """A config flag readable as `.value` and settable for a `with` block by calling it (JAX's
    `jax.enable_x64`, `jax.default_matmul_precision`, ...)."""

    def __init__(self, name: str, allowed: tuple[Any, ...] | None, default: Any) -> None:
        self._name = name
        self._allowed = allowed
        self._default = default

    @property
    def value(self) -> Any:
        return config.read(self._name)

    def _check(self, v: Any) -> Any:
        if self._allowed is not None and v not in self._allowed:
            raise ValueError(f"{v!r} is not a valid value for {self._name} "
                             f"(one of {list(self._allowed)})")  # fmt: skip
        return v

    @contextlib.contextmanager
    def __call__(self, new_val: Any = None) -> Iterator[None]:
        v = self._check(self._default if new_val is None else new_val)
        old = config.read(self._name)
        config.update(self._name, v)
        try:
            yield
        finally:
            config.update(self._name, old)

    def __repr__(self) -> str:
        return f"<webjax config state {self._name}={self.value!r}>"


enable_x64 = _State("jax_enable_x64", (True, False), True)
default_matmul_precision = _State(
    "jax_default_matmul_precision",
    (None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
     "bfloat16_3x", "fastest", "ANY_F8_ANY_F8_F32", "F32_F32_F32"),
    None,
)  # fmt: skip
numpy_dtype_promotion = _State("jax_numpy_dtype_promotion", ("standard", "strict"), "standard")
numpy_rank_promotion = _State("jax_numpy_rank_promotion", ("allow", "warn", "raise"), "allow")


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Run `jit` functions op by op (Python control flow sees concrete values) in the block."""
    old = config.read("jax_disable_jit")
    config.update("jax_disable_jit", bool(disable))
    try:
        yield
    finally:
        config.update("jax_disable_jit", old)


@contextlib.contextmanager
def experimental_enable_x64(new_val: bool = True) -> Iterator[None]:
    """`jax.experimental.enable_x64`: 64-bit types inside the block."""
    with enable_x64(bool(new_val)):
        yield


@contextlib.contextmanager
def experimental_disable_x64() -> Iterator[None]:
    """`jax.experimental.disable_x64`: 32-bit defaults inside the block."""
    with enable_x64(False):
        yield


# ---- host values --------------------------------------------------------------------------------
def device_get(x: Any) -> Any:
    """The values of every array in the pytree `x` on the host (NumPy arrays where NumPy is
    available, nested lists otherwise); other leaves pass through."""
    from .dispatch.array import Array

    try:
        import numpy as np
    except ImportError:  # pragma: no cover (Pyodide without numpy)
        np = None  # type: ignore[assignment]

    def get(leaf: Any) -> Any:
        if isinstance(leaf, core.Tracer):
            raise core.ConcretizationTypeError(
                "device_get requires concrete arrays, got a tracer (use jax.debug.callback or "
                "jax.pure_callback to see values inside transformations)"
            )
        if isinstance(leaf, Array):
            return np.asarray(leaf) if np is not None else leaf.tolist()
        return leaf

    return tree_map(get, x)


def typeof(x: Any) -> Any:
    """The abstract value (ShapedArray: shape, dtype, weak type) of `x`."""
    return core.get_aval(x)


def live_arrays(platform: str | None = None) -> list[Any]:
    """Every Array not yet deleted (optionally only those on `platform`)."""
    from .dispatch.array import Array

    out = [o for o in gc.get_objects() if isinstance(o, Array) and not o._deleted]
    if platform is not None:
        out = [a for a in out if a._device.platform == platform]
    return out


def effects_barrier() -> None:
    """Wait until every pending side effect (debug prints, callbacks) has run.

    webjax runs callbacks when the computation holding them is dispatched, so they have all
    run by the time this is called; pending lazy results are evaluated to honour that."""
    for a in live_arrays():
        a.block_until_ready()


def clear_caches() -> None:
    """Drop every jit trace cache and compiled program (they are rebuilt on the next call)."""
    from .dispatch import program
    from .jit import Jitted

    program._CACHE.clear()
    program._KEEP.clear()
    for o in gc.get_objects():
        if isinstance(o, Jitted):
            o.clear_cache()


# ---- naming (no-ops in webjax) ------------------------------------------------------------------
def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """`fun` itself (JAX adds a name to the profiler stack; webjax has none)."""
    return fun


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Context manager naming the ops inside for profilers (a no-op in webjax)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Evaluate operations eagerly, even while tracing (operations on traced values fail)."""
    with core.set_current_trace(core.eval_trace):
        yield


# ---- closure conversion and custom_gradient -----------------------------------------------------
def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable, list[Any]]:
    """(converted, consts): `converted(*args, *consts)` computes `fun(*args)`, with the traced
    values `fun` closes over hoisted out as `consts` (so they can be passed explicitly)."""
    from .interpreters import partial_eval as pe
    from .transformations import _to_array

    flat, in_tree = tree_flatten(example_args)
    avals = [core.get_aval(_to_array(x)) for x in flat]
    out_tree_box: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        out, tree = tree_flatten(fun(*tree_unflatten(in_tree, list(xs))))
        out_tree_box.append(tree)
        return [_to_array(o) for o in out]

    jaxpr, consts, _ = pe.trace_to_jaxpr(flat_fun, avals)
    hoist = [isinstance(c, core.Tracer) for c in consts]
    closed = [c for c, h in zip(consts, hoist) if not h]
    hoisted = [c for c, h in zip(consts, hoist) if h]
    out_tree = out_tree_box[0]

    def converted(*args_and_consts: Any) -> Any:
        n = len(args_and_consts) - len(hoisted)
        args, hc = args_and_consts[:n], list(args_and_consts[n:])
        it_c, it_h = iter(closed), iter(hc)
        all_consts = [next(it_h) if h else next(it_c) for h in hoist]
        flat_args, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(
                f"closure_convert: the converted function was called with argument structure "
                f"{tree}, expected {in_tree}"
            )
        return tree_unflatten(out_tree, core.eval_jaxpr(jaxpr, all_consts, *flat_args))

    return converted, hoisted


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """`fun` returns (value, vjp) with vjp(g) a tuple of cotangents, one per positional
    argument; differentiating the result uses that vjp."""
    from .custom_derivatives import custom_vjp

    @functools.wraps(fun)
    def wrapper(*args: Any) -> Any:
        box: list[Any] = []

        def primal(*a: Any) -> Any:
            return fun(*a)[0]

        def fwd(*a: Any) -> Any:
            ans, rule = fun(*a)
            converted, consts = closure_convert(rule, ans)
            box[:] = [converted]
            return ans, consts

        def bwd(consts: Any, g: Any) -> Any:
            cts = box[0](g, *consts)
            if not isinstance(cts, (tuple, list)):
                raise TypeError(
                    "custom_gradient: the vjp function must return a tuple with one cotangent "
                    f"per positional argument, got {type(cts).__name__}"
                )
            return tuple(cts)

        f = custom_vjp(primal)
        f.defvjp(fwd, bwd)
        return f(*args)

    return wrapper


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
    def save_from_both_policies(policy_1: Callable[..., Any],
                                policy_2: Callable[..., Any]) -> Callable[..., bool]:  # fmt: skip
        def policy(*args: Any, **params: Any) -> bool:
            return bool(policy_1(*args, **params)) or bool(policy_2(*args, **params))

        return policy


checkpoint_policies = _CheckpointPolicies()

__all__ = [
    "checkpoint_policies", "clear_caches", "closure_convert", "custom_gradient",
    "default_matmul_precision", "device_get", "disable_jit", "effects_barrier", "enable_x64",
    "ensure_compile_time_eval", "live_arrays", "named_call", "named_scope",
    "numpy_dtype_promotion", "numpy_rank_promotion", "typeof",
]  # fmt: skip
