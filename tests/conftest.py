"""Shared test helpers.

``require_tool``: a test whose external tool is missing is skipped on a developer machine but FAILS
under ``CI=true``, so CI can never pass by skipping.

``pytest_sessionstart``: under ``CI=true`` the run fails at once when ``../shared/corpus`` is missing;
elsewhere the tests that need it skip, naming it (``tests/support/corpus.py``). The secrets sweep plants
fake credentials in the environment there and ``pytest_sessionfinish`` fails the run if any of them
leaked into a model request or a captured output (``tests/support/sweep.py``).

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
    """Under ``CI=true`` a missing ``../shared/corpus`` fails the run: elsewhere its tests skip. Then
    the secrets sweep plants its fake credentials in the environment (``tests/support/sweep.py``)."""
    from tests.support.corpus import AVAILABLE, MISSING
    from tests.support.sweep import PLANTED

    if os.environ.get("CI") == "true" and not AVAILABLE:
        pytest.exit(f"CI=true: {MISSING}", returncode=1)
    os.environ.update(PLANTED)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The secrets sweep: a planted credential found anywhere the suite looked fails the run."""
    from tests.support import sweep

    found = sweep.finish()
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [f"secrets sweep: {len(found)} planted credential(s) leaked:", *sorted(set(found))]
        if reporter is not None:
            reporter.write_line("\n".join(lines), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True, scope="session")
def _no_user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGENT_LS_CONFIG_DIR", str(tmp_path_factory.mktemp("user-config")))
        # Sessions are stored (docs/sessions.md): never in the developer's own state dir.
        patch.setenv("AGENT_LS_STATE_DIR", str(tmp_path_factory.mktemp("state")))
        # Tests that drop AGENT_LS_* from a child's environment still keep it out of the user's: platformdirs
        # puts the user state dir under XDG_STATE_HOME.
        patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
        yield
    from tests.support import sweep

    sweep.scan_trajectories(tmp_path_factory.getbasetemp())  # every test's sessions (issue 19)
