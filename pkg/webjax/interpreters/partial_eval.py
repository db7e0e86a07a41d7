"""webjax.interpreters.partial_eval: staging and partial evaluation
(`jax.interpreters.partial_eval`)."""

from webjax._src.interpreters.partial_eval import (
    JaxprTrace,
    JaxprTracer,
    PartialVal,
    convert_constvars_jaxpr,
    dce_jaxpr,
    partial_eval_rules,
    trace_to_jaxpr_dynamic,
    trace_to_jaxpr_nounits,
)

DynamicJaxprTracer = JaxprTracer
custom_partial_eval_rules = partial_eval_rules

__all__ = [
    "DynamicJaxprTracer", "JaxprTrace", "JaxprTracer", "PartialVal", "convert_constvars_jaxpr",
    "custom_partial_eval_rules", "dce_jaxpr", "trace_to_jaxpr_dynamic",
    "trace_to_jaxpr_nounits",
]  # fmt: skip
