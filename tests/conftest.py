"""Shared test helpers.

``require_tool``: a test whose external tool is missing is skipped on a developer machine but FAILS
under ``CI=true``, so CI can never pass by skipping.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest


def require_tool(name: str) -> str:
    """The path of ``name`` (searched next to the interpreter first, then on PATH)."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found:
        return found
    message = f"required tool {name!r} is not installed"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)
