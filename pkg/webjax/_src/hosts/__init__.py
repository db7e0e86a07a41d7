"""Hosts: the only modules that touch a JS engine (browser.py) or native engines (native.py)."""

from __future__ import annotations

import sys


def in_browser() -> bool:
    return sys.platform == "emscripten"
