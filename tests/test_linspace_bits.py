"""jnp.linspace with float32 scalar bounds is bit-identical with JAX's on CPU.

JAX's float32 samples are not the plain formula start * (1 - i / div) + stop * (i / div): XLA's
CPU compiler multiplies by 1 / div, reassociates and fuses a multiply-add, and the unrolled
form it takes for div <= 32 treats sample 1 apart (numpy/creation.py `_xla_cpu_linspace_f32`).
Checked here over a grid of bounds, sizes up to 333 and both endpoint modes. Not modelled: at
1000 samples about a quarter of the bound pairs differ from JAX in a few samples by 1 ulp (its
vectorized loop), and 9 of these 364 pairs at num=33. `.venv/bin/python
tests/test_linspace_bits.py` reruns the wider sweep and prints the mismatches.
"""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest

import webjax.numpy as wnp

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

BOUNDS = [0.0, 1.0, -1.0, 0.1, -2.5, 3.0, 1e-3, 7.3, 100.0, -1e4, 1 / 3, 2**-10, 12345.678]
NUMS = [0, 1, 2, 3, 5, 7, 10, 16, 31, 50, 51, 100, 200, 333]


def _same(a: object, b: object) -> bool:
    x, y = np.asarray(a), np.asarray(b)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


@pytest.mark.parametrize("num", NUMS)
def test_linspace_float32_bit_exact(num: int) -> None:
    bad = []
    for start, stop in itertools.product(BOUNDS, BOUNDS):
        for endpoint in (True, False):
            got = wnp.linspace(start, stop, num, endpoint=endpoint)
            want = jnp.linspace(start, stop, num, endpoint=endpoint)
            if not _same(got, want):
                bad.append((start, stop, endpoint))
    assert not bad, bad[:10]


def test_linspace_retstep_dtype_and_ints() -> None:
    for args in ((0.1, 7.3, 13), (-2.5, 1e4, 40, False), (3, 5, 9)):
        got, step = wnp.linspace(*args, retstep=True)
        want, wstep = jnp.linspace(*args, retstep=True)
        assert _same(got, want) and _same(step, wstep)
    assert _same(wnp.linspace(0, 10, 7, dtype=np.int32), jnp.linspace(0, 10, 7, dtype=np.int32))


def _sweep(nums: list[int]) -> None:  # pragma: no cover - the documented wider sweep
    for num in nums:
        for start, stop in itertools.product(BOUNDS, BOUNDS):
            for endpoint in (True, False):
                got = wnp.linspace(start, stop, num, endpoint=endpoint)
                want = jnp.linspace(start, stop, num, endpoint=endpoint)
                if not _same(got, want):
                    diff = np.where(np.asarray(got) != np.asarray(want))[0]
                    print(num, start, stop, endpoint, "samples", diff[:8].tolist())


if __name__ == "__main__":  # pragma: no cover
    _sweep([int(v) for v in sys.argv[1:]] or [33, 1000])
