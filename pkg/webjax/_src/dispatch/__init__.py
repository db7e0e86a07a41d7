"""Eager evaluation, where the two stacks meet: the concrete `Array` (array), lazy buffers and
the eager scheduler (lazy), device selection (devices), primitive application and the lowering
rule table (lowering), and compiled jit programs (program)."""
