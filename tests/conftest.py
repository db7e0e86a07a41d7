"""Native test tier: every test that takes `device` runs on each backend webjax knows.

A backend this host lacks is a visible skip with the reason, never a silent pass.
"""

from __future__ import annotations

import os

# Mesa's JIT (llvmpipe for webgl, lavapipe for webgpu) without LLVM's optimization passes:
# kernels compile about 1.5x faster, and the tests compile thousands of kernels, each run on a
# few values. Read when the driver loads, so set before any backend starts. (Benchmarks and
# users keep the optimized JIT.)
os.environ.setdefault("GALLIVM_PERF", "nopt")

import pytest

import webjax
from webjax._src.runtime import backend as rt

PLATFORMS = ["cpu", "wasm", "webgpu", "webgl"]


@pytest.fixture(params=PLATFORMS)
def device(request: pytest.FixtureRequest):
    platform = request.param
    reason = rt.unavailable_reason(platform)
    if reason is not None:
        pytest.skip(f"backend {platform} unavailable on this host: {reason}")
    dev = webjax.devices(platform)[0]
    with webjax.default_device(dev):
        yield dev
