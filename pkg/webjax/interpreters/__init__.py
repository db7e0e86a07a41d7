"""webjax.interpreters: the rule tables of the transformations (`jax.interpreters`): a
primitive defined outside webjax registers its jvp, transpose and batching rules here."""

from webjax.interpreters import ad, batching, mlir, partial_eval

__all__ = ["ad", "batching", "mlir", "partial_eval"]
