"""Every primitive has its rules, and FEATURES.md shows the current table."""

from __future__ import annotations

from pathlib import Path

from webjax._src.api import coverage


def test_no_rule_gaps():
    assert coverage.gaps() == []


def test_features_table_is_current():
    text = (Path(__file__).parent.parent / "FEATURES.md").read_text()
    start = text.index("<!-- coverage:start -->\n") + len("<!-- coverage:start -->\n")
    end = text.index("<!-- coverage:end -->")
    assert text[start:end] == coverage.markdown(), (
        "FEATURES.md is stale: regenerate with `python -m webjax._src.api.coverage`"
    )
