"""``agent-ls run`` headless and ``agent-ls demo`` as a user runs them: real processes, exit codes, output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.model_server import FakeModelServer

SECRET = "sk-cli-secret-never-shown-42"


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def _agent_ls(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_LS_", "OPENAI_"))}
    full_env["AGENT_LS_CONFIG_DIR"] = os.environ["AGENT_LS_CONFIG_DIR"]  # empty: no user config leaks in
    full_env.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "agent_ls", *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


def _script(tmp_path: Path, steps: list[dict[str, Any]]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(steps))
    return f"replay:{path}"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    return root


EDIT = {"name": "edit_file", "arguments": {"path": "a.txt", "old_string": "two", "new_string": "TWO"}}


def test_run_prints_the_diff_and_leaves_the_disk_alone(tmp_path: Path) -> None:
    root = _project(tmp_path)
    model = _script(tmp_path, [{"tool_calls": [EDIT]}, {"content": "Changed two."}])
    result = _agent_ls("run", "capitalize two", "--model", model, "--workspace", str(root), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "-two\r\n+TWO\r\n" in result.stdout
    assert "run done" in result.stderr and "Changed two." in result.stderr
    assert (root / "a.txt").read_bytes() == b"one\r\ntwo\r\nthree\r\n"


def test_run_apply_writes_the_proposal_keeping_crlf(tmp_path: Path) -> None:
    root = _project(tmp_path)
    model = _script(tmp_path, [{"tool_calls": [EDIT]}, {"content": "ok"}])
    result = _agent_ls("run", "x", "--model", model, "--workspace", str(root), "--apply", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (root / "a.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"
    assert "applied 1 file(s)" in result.stderr


def test_ask_without_a_terminal_is_denied_and_yes_allows(tmp_path: Path) -> None:
    root = _project(tmp_path)
    steps = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch made-by-agent"}}]},
        {"content": "ok"},
    ]
    denied = _agent_ls(
        "run", "x", "--model", _script(tmp_path, steps), "--workspace", str(root), cwd=tmp_path
    )
    assert denied.returncode == 0
    assert "(no terminal to ask about bash: touch made-by-agent; --yes allows it)" in denied.stderr
    assert "no one to ask: denied (headless)): touch made-by-agent" in denied.stderr  # issue 12.16
    assert "denied by user" not in denied.stderr  # nobody was asked
    allowed = _agent_ls(
        "run", "x", "--model", _script(tmp_path, steps), "--workspace", str(root), "--yes", cwd=tmp_path
    )
    assert "no one to ask: allowed (--yes)): touch made-by-agent" in allowed.stderr
    assert "exit code 0" in allowed.stderr
    assert not (root / "made-by-agent").exists()  # it ran in the shadow copy


def test_usage_and_model_errors_exit_2_and_failures_exit_1(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert _agent_ls("run", "x", "--workspace", str(tmp_path / "missing"), cwd=tmp_path).returncode == 2
    assert _agent_ls("run", "x", "--max-turns", "0", cwd=tmp_path).returncode == 2
    assert _agent_ls("run", cwd=tmp_path).returncode == 2
    assert _agent_ls("run", " ", "--workspace", str(root), cwd=tmp_path).returncode == 2
    bad_model = _agent_ls("run", "x", "--model", "nonsense", "--workspace", str(root), cwd=tmp_path)
    assert bad_model.returncode == 2 and len(bad_model.stderr.strip().splitlines()) == 1
    no_model = _agent_ls("run", "x", "--workspace", str(root), cwd=tmp_path)
    assert no_model.returncode == 2 and len(no_model.stderr.strip().splitlines()) == 1
    assert "no model configured" in no_model.stderr and "Traceback" not in no_model.stderr
    looping = _script(tmp_path, [{"tool_calls": [{"name": "list_files", "arguments": {}}]}] * 3)
    stopped = _agent_ls(
        "run", "x", "--model", looping, "--max-turns", "2", "--workspace", str(root), cwd=tmp_path
    )
    assert stopped.returncode == 1 and "maximum of 2 turns exceeded" in stopped.stderr
    exhausted = _agent_ls(
        "run", "x", "--model", _script(tmp_path, []), "--workspace", str(root), cwd=tmp_path
    )
    assert exhausted.returncode == 1 and "has no step left" in exhausted.stderr


def test_ctrl_c_cancels_with_exit_130(tmp_path: Path) -> None:
    root = _project(tmp_path)
    model = _script(tmp_path, [{"content": "slow", "delay_s": 30}])
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_LS_")}
    env["AGENT_LS_CONFIG_DIR"] = os.environ["AGENT_LS_CONFIG_DIR"]
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_ls", "run", "x", "--model", model, "--workspace", str(root)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    line = ""
    deadline = time.monotonic() + 20
    while "turn 1" not in line and time.monotonic() < deadline:
        line = process.stderr.readline()
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=10)
    assert process.returncode == 130, rest
    assert "run cancelled" in rest


def test_api_key_never_reaches_commands_or_the_model(tmp_path: Path) -> None:
    root = _project(tmp_path)
    steps = [
        {"tool_calls": [{"id": "env", "name": "bash", "arguments": {"command": "env"}}]},
        {"content": "ok"},
    ]
    with FakeModelServer(steps) as server:
        result = _agent_ls(
            "run",
            "show env",
            "--model",
            "openai/test-model",
            "--workspace",
            str(root),
            "--yes",
            cwd=tmp_path,
            env={"AGENT_LS_API_KEY": SECRET, "AGENT_LS_BASE_URL": server.base_url, "OPENAI_API_KEY": SECRET},
        )
        assert result.returncode == 0, result.stderr
        env_output = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")["content"]
        assert "PATH=" in env_output
        assert SECRET not in env_output and "AGENT_LS" not in env_output
        assert server.request_headers[0]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in result.stderr + result.stdout


def test_demo_fixes_the_sample_and_exits_0(tmp_path: Path) -> None:
    result = _agent_ls("demo", cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    for expected in (
        "permission allow (bash: pytest* (built-in))",
        "-    return sum(values) / (len(values) - 1)",
        "[apply] applied=True",
        "4 passed",
        "agent-ls demo: done",
    ):
        assert expected in result.stdout
