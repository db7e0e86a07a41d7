"""The public surface never loses a name: every public module (webjax and its non-underscore
submodules) keeps every name recorded in tests/public_names.json. Names may be added; to drop
one on purpose, delete it from the file in the same commit."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

RECORDED = json.loads((Path(__file__).parent / "public_names.json").read_text())


@pytest.mark.parametrize("module", sorted(RECORDED))
def test_public_module_keeps_its_names(module):
    mod = importlib.import_module(module)
    missing = sorted(set(RECORDED[module]) - set(dir(mod)))
    assert not missing, f"{module} lost public names: {missing}"
