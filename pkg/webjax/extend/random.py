"""webjax.extend.random: the threefry hash as a primitive and a function
(`jax.extend.random`)."""

from webjax._src.random.keys import random_seed, seed_with_impl, threefry_prng_impl
from webjax._src.random.threefry import threefry2x32_p, threefry_2x32

__all__ = [
    "random_seed", "seed_with_impl", "threefry2x32_p", "threefry_2x32", "threefry_prng_impl",
]  # fmt: skip
