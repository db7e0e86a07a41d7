"""A pytest plugin that installs webjax as `jax` before any test module is imported, so a
library's own test files (Optax's, shipped in its wheel) run against webjax unmodified.

    python -m pytest -p webjax_as_jax <files>     (with this folder and pkg/ on sys.path)
"""

from __future__ import annotations

import webjax

webjax.install_as_jax()
