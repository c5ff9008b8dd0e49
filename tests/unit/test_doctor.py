"""``agent-ls doctor`` as a user runs it: a real subprocess, a real model server on 127.0.0.1, real files.

The subprocess is ``python -m agent_ls doctor``, with an environment stripped of the developer's model
settings and keys.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_tool
from tests.support.model_server import FakeModelServer
from tests.support.processes import require_sandbox

SECRET = "sk-doctor-secret-never-printed-7"


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str

    def line(self, name: str) -> str:
        """The first output line of check ``name`` (``✓ model: ...``)."""
        found = [line for line in self.stdout.splitlines() if line[2:].startswith(f"{name}: ")]
        assert found, self.stdout
        return found[0]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "user config"
    directory.mkdir()
    return directory


def doctor(*args: str, workspace: Path, config_dir: Path, env: dict[str, str] | None = None) -> Ran:
    require_tool("rg")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_", "ANTHROPIC_"))}
    full_env = {**base, "AGENT_LS_CONFIG_DIR": str(config_dir), "PYTHONIOENCODING": "utf-8", **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "agent_ls", "doctor", "--workspace", str(workspace), *args],
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


def model_env(server: FakeModelServer, *, key: str | None = SECRET) -> dict[str, str]:
    env = {"AGENT_LS_MODEL": "openai/test-model", "AGENT_LS_BASE_URL": server.base_url}
    return {**env, "AGENT_LS_API_KEY": key} if key else env


def test_a_reachable_model_is_ok_and_the_key_is_sent_but_never_printed(
    workspace: Path, config_dir: Path
) -> None:
    with FakeModelServer([]) as server:
        server.models_reply = (200, {"object": "list", "data": [{"id": "test-model"}]})
        ran = doctor(workspace=workspace, config_dir=config_dir, env=model_env(server))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (
        ran.line("model") == f"✓ model: openai/test-model: {server.base_url}/models is reachable (HTTP 200)"
    )
    assert server.models_request_headers[0]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in ran.stdout + ran.stderr
    assert server.requests == []  # no chat request: the check costs no tokens
    assert ran.stdout.splitlines()[0] == f"agent-ls doctor: workspace {workspace.resolve()}"
    assert [line[2:].split(":")[0] for line in ran.stdout.splitlines()[1:] if not line.startswith(" ")] == [
        "sandbox",
        "ripgrep",
        "model",
        "config",
    ]


def test_json_output(workspace: Path, config_dir: Path) -> None:
    with FakeModelServer([]) as server:
        ran = doctor("--json", workspace=workspace, config_dir=config_dir, env=model_env(server))
    report: dict[str, Any] = json.loads(ran.stdout)
    assert ran.returncode == 0 and report["ok"] is True
    assert report["workspace"] == str(workspace.resolve())
    checks = {check["name"]: check for check in report["checks"]}
    assert list(checks) == ["sandbox", "ripgrep", "model", "config"]
    assert checks["model"] == {
        "name": "model",
        "status": "ok",
        "summary": f"openai/test-model: {server.base_url}/models is reachable (HTTP 200)",
        "details": [],
    }
    assert checks["ripgrep"]["status"] == "ok" and checks["ripgrep"]["summary"].startswith("ripgrep ")


def test_an_unreachable_model_is_an_error(workspace: Path, config_dir: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed when the block ends: nothing listens there
    env = {
        "AGENT_LS_MODEL": "openai/test-model",
        "AGENT_LS_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "AGENT_LS_API_KEY": SECRET,
    }
    ran = doctor(workspace=workspace, config_dir=config_dir, env=env)
    assert ran.returncode == 1
    assert ran.line("model").startswith(
        f"✗ model: openai/test-model: http://127.0.0.1:{port}/v1/models is unreachable (ConnectError: "
    )
    assert SECRET not in ran.stdout + ran.stderr


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (SECRET, "refused the key from AGENT_LS_API_KEY (HTTP 401)"),
        (None, "needs a key (HTTP 401); set OPENAI_API_KEY"),
    ],
)
def test_a_model_server_refusing_the_key_is_an_error(
    workspace: Path, config_dir: Path, key: str | None, expected: str
) -> None:
    with FakeModelServer([]) as server:
        server.models_reply = (401, {"error": {"message": "invalid api key"}})
        ran = doctor(workspace=workspace, config_dir=config_dir, env=model_env(server, key=key))
    assert ran.returncode == 1
    assert ran.line("model") == f"✗ model: openai/test-model: {server.base_url}/models {expected}"
    assert SECRET not in ran.stdout + ran.stderr


def test_a_model_the_server_does_not_list_is_a_warning(workspace: Path, config_dir: Path) -> None:
    with FakeModelServer([]) as server:
        server.models_reply = (200, {"data": [{"id": "other-model"}]})
        ran = doctor(workspace=workspace, config_dir=config_dir, env=model_env(server))
    assert ran.returncode == 0
    assert ran.line("model") == (
        f"! model: openai/test-model: {server.base_url}/models is reachable, but does not list model "
        "'test-model'"
    )


def test_no_model_is_a_warning_and_the_config_files_are_listed(workspace: Path, config_dir: Path) -> None:
    ran = doctor(workspace=workspace, config_dir=config_dir)
    assert ran.returncode == 0, ran.stdout
    assert ran.line("model") == "! model: no model configured; reachability not checked"
    config = ran.stdout[ran.stdout.index("✓ config: ") :].splitlines()
    assert config == [
        "✓ config: no problems",
        f"    user config: {config_dir / 'agent-ls.toml'} (not found)",
        f"    workspace config: {workspace.resolve() / 'agent-ls.toml'} (not found)",
        f"    workspace not trusted: {workspace.resolve()}",
    ]


def test_config_diagnostics_and_trust_are_reported(workspace: Path, config_dir: Path) -> None:
    root = workspace.resolve()
    (config_dir / "agent-ls.toml").write_text(f'trusted_workspaces = ["{root}"]\n', encoding="utf-8")
    (workspace / "agent-ls.toml").write_text("model = 3\n", encoding="utf-8")
    ran = doctor(workspace=workspace, config_dir=config_dir)
    assert ran.returncode == 1
    config = ran.stdout[ran.stdout.index("✗ config: ") :].splitlines()
    assert config[:4] == [
        "✗ config: 1 problem",
        f"    user config: {config_dir / 'agent-ls.toml'} (read)",
        f"    workspace config: {root / 'agent-ls.toml'} (read)",
        f"    workspace trusted: {root}",
    ]
    assert config[4].startswith(f"    {root / 'agent-ls.toml'}:1:") and ": error: " in config[4]


def test_a_working_sandbox_is_reported(workspace: Path, config_dir: Path) -> None:
    sandbox = require_sandbox()
    ran = doctor(workspace=workspace, config_dir=config_dir)
    assert ran.line("sandbox").startswith("✓ sandbox: bubblewrap ")
    assert f" at {sandbox.bwrap}: no network, only the shadow copy writable; commands run in " in ran.line(
        "sandbox"
    )
    assert ran.line("sandbox").endswith(("an overlay view of the workspace (nothing copied)", ")"))


def test_without_bwrap_commands_run_unisolated_and_it_is_only_a_warning(
    workspace: Path, config_dir: Path, tmp_path: Path
) -> None:
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    ran = doctor(workspace=workspace, config_dir=config_dir, env={"PATH": str(empty_path)})
    assert ran.returncode == 0, ran.stdout
    assert ran.line("sandbox") == (
        "! sandbox: commands are UNSANDBOXED (no sandbox: bubblewrap (bwrap) is not installed: shell "
        "commands run unisolated (in the shadow copy, with a scrubbed environment); commands that run "
        "workspace code ask first)"
    )


def test_a_workspace_that_does_not_exist_is_a_usage_error(tmp_path: Path, config_dir: Path) -> None:
    """Issue 12.16: doctor said everything was fine about a workspace that does not exist."""
    ran = doctor(workspace=tmp_path / "no-such-dir", config_dir=config_dir)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == f"agent-ls doctor: workspace {tmp_path / 'no-such-dir'} is not a directory\n"


def test_a_missing_key_is_named_without_asking_the_server(workspace: Path, config_dir: Path) -> None:
    ran = doctor(workspace=workspace, config_dir=config_dir, env={"AGENT_LS_MODEL": "anthropic/claude-x"})
    assert ran.returncode == 1
    assert ran.line("model") == (
        "✗ model: anthropic/claude-x: no API key; set ANTHROPIC_API_KEY (or AGENT_LS_API_KEY); "
        "reachability not checked"
    )
