"""ml_dtypes' narrow types (`jnp.float8_e4m3fn`, `jnp.int4`, ...): the names JAX has exist and
give NumPy's dtypes; webjax has no arrays of them, and making one raises NotImplementedError
naming the type (never a silent cast)."""

from __future__ import annotations

import pytest

import webjax.numpy as jnp

rjnp = pytest.importorskip("jax.numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")

NARROW = sorted(
    n for n in dir(rjnp) if n.startswith(("float8_", "float4_", "int4", "uint4", "int2", "uint2"))
)


def test_the_names_are_jaxs() -> None:
    ours = sorted(n for n in dir(jnp) if n in NARROW or n.startswith(("float8_", "float4_")))
    assert ours == NARROW and len(NARROW) >= 10


@pytest.mark.parametrize("name", NARROW)
def test_narrow_type(name: str) -> None:
    t = getattr(jnp, name)
    assert t.dtype == getattr(rjnp, name).dtype
    assert t == t and hash(t) == hash(t) and t in (getattr(jnp, name),)
    for make in (lambda: jnp.zeros(2, t), lambda: jnp.ones(2).astype(name), lambda: t(1)):
        with pytest.raises(NotImplementedError, match=name):
            make()
