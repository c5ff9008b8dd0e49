"""Shared test helpers.

``require_tool``: a test whose external tool is missing is skipped on a developer machine but FAILS
under ``CI=true``, so CI can never pass by skipping.

``AGENT_LS_CONFIG_DIR`` points at an empty directory for the whole run, so a developer's own
``agent-ls.toml`` never reaches a test (servers that tests start inherit it).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
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


@pytest.fixture(autouse=True, scope="session")
def _no_user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGENT_LS_CONFIG_DIR", str(tmp_path_factory.mktemp("user-config")))
        yield
