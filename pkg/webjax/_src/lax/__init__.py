"""lax: the primitives (lax.py) and their user functions, and their rules: derivatives
(ad_rules.py), batching (batching_rules.py), kernel lowering (lowering.py; complex operands in
complex_lowering.py). Importing the package registers every rule in its interpreter's table."""

from . import (
    ad_rules,  # (jvp and transpose rules)
    batching_rules,  # (vmap rules)
    complex_lowering,  # (lowering rules for complex operands)
    lowering,  # (lowering rules of lax.py's primitives)
)
