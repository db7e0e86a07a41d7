"""A pytest plugin for `build.py array-api`: array-api-tests' own hypothesis profile without
the shrink phase. Shrinking only makes a failure's example minimal (a pass or a failure is
decided before it), and on eager webjax it takes minutes per failing test."""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings


@pytest.hookimpl(trylast=True)  # after array-api-tests' conftest has loaded its profile
def pytest_configure(config: pytest.Config) -> None:
    phases = [p for p in settings().phases if p is not Phase.shrink]
    settings.register_profile("webjax-array-api", parent=settings(), phases=phases)
    settings.load_profile("webjax-array-api")
