"""Issue 11.1: without a sandbox, no command that runs workspace code is auto-allowed, and no command
the agent runs can read the API key, sandboxed or not (real ``agent-ls run``, ``policy check`` and
``serve`` processes).

The key test runs a command (allowed by ``--yes`` or the editor's "Allow once") that walks up its
parent processes and reads each one's ``/proc/<pid>/environ``, as the ``conftest.py`` of corpus case
F01 does; the key must be in none of them, the agent-ls process included.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import (
    SECRET_KEY,
    command,
    field,
    first_event,
    model_settings,
    run_ended,
    start,
)
from tests.support import agent_cli
from tests.support.model_server import FakeModelServer

KEY = "sk-unsandboxed-key-must-not-leak-7781"
NO_SANDBOX = "[sandbox]\nenabled = false\n"
QUESTION = "no sandbox: this runs code from the workspace, including the agent's changes"

# Walks from this process up to pid 1, writing each ancestor's command line and whether its initial
# environment (what /proc shows) holds the key.
WALK = r"""
import os, sys, json
key, out = open(sys.argv[1]).read(), sys.argv[2]
seen, pid = [], os.getpid()
while pid > 1:
    try:
        env = open(f"/proc/{pid}/environ", "rb").read()
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        seen.append({"pid": pid, "cmd": cmd, "leak": key.encode() in env})
    except OSError as exc:
        seen.append({"pid": pid, "cmd": "?", "leak": False, "error": str(exc)})
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1].split()[1])
open(out, "w").write(json.dumps(seen))
"""


def _env(config_dir: Path, **extra: str) -> dict[str, str]:
    return agent_cli.user_environment(config_dir, **extra)


def _agent_ls(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return agent_cli.run(args, cwd=cwd, env=env)


def _setup(tmp_path: Path, steps: list[dict[str, Any]], config: str = NO_SANDBOX) -> tuple[Path, Path, str]:
    root, config_dir = tmp_path / "ws", tmp_path / "cfg"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text("def test_ok():\n    assert True\n")
    config_dir.mkdir()
    (config_dir / "agent-ls.toml").write_text(config)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    return root, config_dir, f"replay:{script}"


def _walk_command(tmp_path: Path, key: str = KEY) -> tuple[str, Path]:
    """The command, and where it writes what it saw; the key is read from a file, so that it is not
    in the command line either."""
    walker, key_file, out = tmp_path / "walk.py", tmp_path / "key.txt", tmp_path / "seen.json"
    walker.write_text(WALK)
    key_file.write_text(key)
    return f"{sys.executable} {walker} {key_file} {out}", out


def _assert_no_leak(out: Path, key: str) -> None:
    seen = json.loads(out.read_text())
    assert any("agent_ls" in entry["cmd"] for entry in seen), seen  # the walk reached the server
    assert [entry for entry in seen if entry["leak"]] == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_without_a_sandbox_pytest_asks_and_the_agents_conftest_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned.txt"
    configure = f"    pathlib.Path({str(marker)!r}).write_text('ran')\n"
    conftest = "import pathlib\ndef pytest_configure(config):\n" + configure
    steps = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "conftest.py", "content": conftest}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "pytest -q"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "ls tests && git status"}}]},
        {"content": "Tests pass."},
    ]
    root, config_dir, model = _setup(tmp_path, steps)
    done = _agent_ls(
        "run", "run the tests", "--model", model, cwd=root, env=_env(config_dir, AGENT_LS_API_KEY=KEY)
    )
    assert "⚠ no sandbox: [sandbox] enabled = false in agent-ls.toml" in done.stderr
    assert "permission ask" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("  permission")]
    assert lines[1].startswith("  permission deny (guard: no sandbox, ") and lines[1].endswith("pytest -q")
    assert lines[2] == "  permission allow (bash: ls* (built-in)): ls tests && git status"
    assert not marker.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_command_allowed_without_a_sandbox_finds_no_key_in_any_parent(tmp_path: Path) -> None:
    walk, out = _walk_command(tmp_path)
    steps = [{"tool_calls": [{"name": "bash", "arguments": {"command": walk}}]}, {"content": "ok"}]
    root, config_dir, model = _setup(tmp_path, steps)
    env = _env(config_dir, AGENT_LS_API_KEY=KEY, OPENAI_API_KEY=KEY)
    done = _agent_ls("run", "look around", "--yes", "--model", model, cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    _assert_no_leak(out, KEY)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_key_variable_named_in_the_user_config_is_kept_out_too(tmp_path: Path) -> None:
    walk, out = _walk_command(tmp_path)
    steps = [{"tool_calls": [{"name": "bash", "arguments": {"command": walk}}]}, {"content": "ok"}]
    config = NO_SANDBOX + '[providers.local]\nwire_api = "openai-chat"\nbase_url = "http://127.0.0.1:9/v1"\n'
    config += 'api_key_env = "LOCAL_LLM"\n'
    root, config_dir, model = _setup(tmp_path, steps, config)
    done = _agent_ls("run", "x", "--yes", "--model", model, cwd=root, env=_env(config_dir, LOCAL_LLM=KEY))
    assert done.returncode == 0, done.stderr
    _assert_no_leak(out, KEY)


def test_policy_check_says_why_a_project_command_asks_without_a_sandbox(tmp_path: Path) -> None:
    root, config_dir, _ = _setup(tmp_path, [])
    env = _env(config_dir)
    for allowed_elsewhere in ("pytest -q", "env python -m pytest", "timeout 5 pytest"):
        done = _agent_ls("policy", "check", "--json", "--", allowed_elsewhere, cwd=root, env=env)
        assert done.returncode == 10, done.stdout
        report = json.loads(done.stdout)
        assert (report["rule"], report["always"]) == ("guard: no sandbox", [])
        assert report["reason"].startswith(QUESTION)
        assert report["unsandboxed"].startswith("no sandbox: [sandbox] enabled = false")
    (config_dir / "agent-ls.toml").write_text(NO_SANDBOX + '[permissions]\nallow = ["Bash(make:*)"]\n')
    assert _agent_ls("policy", "check", "--", "make test", cwd=root, env=env).returncode == 10
    assert _agent_ls("policy", "check", "--", "cat tests/test_a.py", cwd=root, env=env).returncode == 0
    assert _agent_ls("policy", "check", "--", "rm -rf tests", cwd=root, env=env).returncode == 20


def test_doctor_says_plainly_that_commands_are_unsandboxed(tmp_path: Path) -> None:
    root, config_dir, _ = _setup(tmp_path, [])
    done = _agent_ls(
        "doctor", "--workspace", str(root), "--model", "replay:x.json", cwd=root, env=_env(config_dir)
    )
    assert "! sandbox: commands are UNSANDBOXED (no sandbox: [sandbox] enabled = false" in done.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_editor_run_without_a_sandbox_asks_says_so_and_leaks_no_key(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, tmp_path: Path, user_config: Any
) -> None:
    user_config(NO_SANDBOX)
    walk, out = _walk_command(tmp_path, SECRET_KEY)
    model_server.steps.extend(
        [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "pytest -q"}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": walk}}]},
            {"content": "done"},
        ]
    )
    client.agent["answers"] = ["Allow once", "Allow once"]  # type: ignore[attr-defined]
    await start(client, workspace, model_settings(model_server))
    result = await command(client, "agent.run", {"task": "run the tests"})
    await run_ended(client, result["sessionId"], timeout_s=60)
    prompts = client.agent["prompts"]  # type: ignore[attr-defined]
    assert QUESTION in prompts[0].message
    assert "Always allow" not in [action.title for action in prompts[0].actions or []]
    started = await first_event(client, "runStarted")
    assert field(started, "unsandboxed").startswith("no sandbox: [sandbox] enabled = false")
    assert model_server.request_headers[0]["authorization"] == f"Bearer {SECRET_KEY}"  # the key still works
    _assert_no_leak(out, SECRET_KEY)
