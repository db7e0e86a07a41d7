"""lax: the primitives (lax.py) and their user functions, and their rules: derivatives
(ad_rules.py), batching (batching_rules.py), kernel lowering (lowering.py; complex operands in
complex_lowering.py). Importing the package registers the lowerings with eager dispatch."""

from . import (
    complex_lowering,
    lowering,
)
