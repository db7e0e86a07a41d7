"""Lowering registrations (`jax.interpreters.mlir`). webjax has no MLIR: every primitive runs by
its evaluation rule (`impl`), eagerly and inside jit programs alike. `register_lowering` accepts
a rule made by `lower_fun(fun)` as that primitive's evaluation rule where it has none; a
hand-written MLIR rule is recorded, and evaluating a primitive that has only such a rule raises
an error naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import Primitive


class NoXlaError(NotImplementedError, AttributeError):
    """A name of XLA or MLIR that webjax cannot have, read from a module that stands for one
    (`jax.interpreters.mlir`, `jax._src.compiler`, `jax._src.xla_bridge`). It is an
    AttributeError too, so `hasattr` answers False instead of raising."""


# primitive -> {platform or None: rule}, as registered.
lowerings: dict[Primitive, dict[str | None, Any]] = {}


class LoweredFun:
    """A lowering rule that means "evaluate `fun`": the primitive's impl when it has none."""

    def __init__(self, fun: Callable[..., Any], multiple_results: bool) -> None:
        self.fun = fun
        self.multiple_results = multiple_results

    def __call__(self, ctx: Any, *args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            "webjax has no MLIR lowering contexts: a lower_fun rule runs as the primitive's "
            "evaluation rule"
        )


def lower_fun(fun: Callable[..., Any], multiple_results: bool = True) -> LoweredFun:
    """The lowering rule that evaluates `fun` (the primitive's operands and params)."""
    return LoweredFun(fun, multiple_results)


def register_lowering(prim: Primitive, rule: Any, platform: str | None = None, **_: Any) -> Any:
    """Record `rule` as `prim`'s lowering (for `platform`); a `lower_fun` rule becomes its
    evaluation rule where it has none."""
    lowerings.setdefault(prim, {})[platform] = rule
    if isinstance(rule, LoweredFun) and prim.impl is None:
        fun, multiple = rule.fun, rule.multiple_results
        if multiple == prim.multiple_results:
            prim.def_impl(fun)
        elif prim.multiple_results:
            prim.def_impl(lambda *a, **p: [fun(*a, **p)])
        else:
            prim.def_impl(lambda *a, **p: fun(*a, **p)[0])
    elif prim.impl is None:
        name = prim.name

        def impl(*args: Any, **params: Any) -> Any:
            raise NotImplementedError(
                f"primitive '{name}' has only an MLIR lowering rule, which webjax cannot run: "
                "give it an evaluation rule (def_impl, or register_lowering with lower_fun)"
            )

        prim.def_impl(impl)
    return rule
