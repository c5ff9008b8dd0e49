"""Shared test helpers.

``require_tool``: a test whose external tool is missing is skipped on a developer machine but FAILS
under ``CI=true``, so CI can never pass by skipping.

``pytest_sessionstart``: under ``CI=true`` the run fails at once when ``../shared/corpus`` is missing;
elsewhere the tests that need it skip, naming it (``tests/support/corpus.py``).

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


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under ``CI=true`` a missing ``../shared/corpus`` fails the run: elsewhere its tests skip."""
    from tests.support.corpus import AVAILABLE, MISSING

    if os.environ.get("CI") == "true" and not AVAILABLE:
        pytest.exit(f"CI=true: {MISSING}", returncode=1)


@pytest.fixture(autouse=True, scope="session")
def _no_user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGENT_LS_CONFIG_DIR", str(tmp_path_factory.mktemp("user-config")))
        yield
