"""The primitive x rule coverage table (FEATURES.md embeds it; tests fail on a gap).

Run `python -m webjax._src.api.coverage` to print the Markdown table.
"""

from __future__ import annotations

from .. import (
    api,  # noqa: F401  (registers every rule)
    callback,
    checkpoint,
    custom_derivatives,
    debugging,
    jit,
)
from ..core import Primitive
from ..dispatch import lowering
from ..interpreters import ad, batching
from ..interpreters import partial_eval as pe
from ..lax import ad_rules, control_flow, linear_solve
from ..lax import lax as lax_mod
from ..lax import linalg as _linalg  # noqa: F401  (registers the linear algebra primitives)
from ..random import bit_generator

# Primitives linear in (some of) their operands: reverse mode needs their transpose.
LINEAR = frozenset({
    "add", "sub", "neg", "add_any", "mul", "div", "convert_element_type", "reduce_sum",
    "broadcast_in_dim", "reshape", "squeeze", "transpose", "concatenate", "slice", "pad", "rev",
    "dynamic_slice", "dynamic_update_slice", "select_n", "gather", "scatter", "scatter-add",
    "dot_general", "cond", "scan", "jit", "checkpoint", "custom_lin", "cumsum",
    "reduce_window_sum", "conv_general_dilated", "triangular_solve", "custom_linear_solve",
})  # fmt: skip


# Primitives JAX itself has no derivative for (LAPACK-only decompositions, nextafter's bit
# steps): differentiating them raises, as in JAX, and the table says so.
UNDIFFERENTIATED_IN_JAX = frozenset({"schur", "hessenberg", "nextafter"})


def all_primitives() -> list[Primitive]:
    prims: dict[str, Primitive] = dict(lax_mod.prims)
    prims["add_any"] = ad_rules.add_any_p
    higher_order = [
        checkpoint.checkpoint_p,
        control_flow.cond_p,
        control_flow.while_p,
        control_flow.scan_p,
        jit.jit_p,
        custom_derivatives.custom_jvp_call_p,
        custom_derivatives.custom_vjp_call_p,
        custom_derivatives.custom_lin_p,
        debugging.debug_callback_p,
        callback.pure_callback_p,
        linear_solve.linear_solve_p,
        bit_generator.rng_bit_generator_p,
    ]
    for p in higher_order:
        prims[p.name] = p
    return [prims[k] for k in sorted(prims)]


def row(p: Primitive) -> dict[str, str]:
    def mark(ok: bool) -> str:
        return "yes" if ok else "-"

    jvp = "zero" if p in ad.nondifferentiable else mark(p in ad.primitive_jvps)
    if jvp == "-" and p.name in UNDIFFERENTIATED_IN_JAX:
        jvp = "raises (as JAX)"
    return {
        "primitive": p.name,
        "eval": "kernel"
        if p in lowering.LOWERINGS or p in lowering.COMPLEX_LOWERINGS
        else ("interpreted" if p.impl else "-"),
        "jvp": jvp,
        "transpose": mark(p in ad.primitive_transposes),
        "vmap": mark(p in batching.primitive_batchers),
        "partial eval": "rule" if p in pe.partial_eval_rules else "generic",
    }


def gaps() -> list[str]:
    """Rules every primitive must have: shape rule, evaluation, jvp (or declared zero), vmap."""
    out = []
    for p in all_primitives():
        r = row(p)
        if p.abstract_eval is None:
            out.append(f"{p.name}: no shape rule")
        if r["eval"] == "-":
            out.append(f"{p.name}: no evaluation rule")
        if r["jvp"] == "-" and p.name != "custom_lin":
            out.append(f"{p.name}: no jvp rule")
        if p.name in LINEAR and r["transpose"] == "-":
            out.append(f"{p.name}: linear but no transpose rule")
        if r["vmap"] == "-" and p.name != "custom_lin":
            out.append(f"{p.name}: no batching rule")
    return out


def markdown() -> str:
    rows = [row(p) for p in all_primitives()]
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(r[c] for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
