"""webjax.extend.core.primitives: webjax's primitives by name (`add_p`, `jit_p`, ...), as
`jax.extend.core.primitives`."""

from typing import Any

from webjax._src.core_compat import primitives_by_name
from webjax._src.random.threefry import threefry2x32_p

_names: dict[str, Any] = {**primitives_by_name(), "threefry2x32_p": threefry2x32_p}
globals().update(_names)
__all__ = sorted(_names)


def __getattr__(name: str) -> Any:
    raise AttributeError(f"webjax has no primitive {name!r} (jax.extend.core.primitives.{name})")
