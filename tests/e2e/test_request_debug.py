"""What the model is sent, shown to the user: ``agent-ls run --debug``, ``agentLs.trace`` and ``/context`` on
the command line, through real processes and a recording model server."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from pytest_lsp import LanguageClient

from tests.e2e.conftest import SECRET_KEY, command, field, model_settings, run_ended, start
from tests.support.agent_cli import run, user_environment
from tests.support.model_server import FakeModelServer

SECRET = "sk-debug-secret-never-shown-77"


def _run(*args: str, cwd: Path, base_url: str) -> subprocess.CompletedProcess[str]:
    env = user_environment(AGENT_LS_API_KEY=SECRET, AGENT_LS_BASE_URL=base_url)
    return run(["run", *args, "--model", "openai/test-model"], cwd=cwd, env=env, timeout=60)


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "notes.txt").write_text("one\ntwo\n")
    return root


def test_debug_prints_each_request_as_sent_and_never_the_key(tmp_path: Path) -> None:
    root = _project(tmp_path)
    steps = [
        {"tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"content": "Two lines."},
    ]
    with FakeModelServer(steps) as server:
        task = f"Count the lines; the key {SECRET} must not show"
        result = _run(task, "--debug", "--workspace", str(root), cwd=tmp_path, base_url=server.base_url)
        requests = server.requests
    assert result.returncode == 0, result.stderr
    shown = [chunk for chunk in result.stderr.split("agent-ls: --debug: ")[1:]]
    assert len(shown) == len(requests) == 2
    for text, request in zip(shown, requests, strict=True):
        body = json.dumps(request, ensure_ascii=False).encode()
        assert text.startswith(f"request: {len(body):,} bytes (~{len(body) // 4:,} tokens)\n")
        names = [tool["function"]["name"] for tool in request["tools"]]
        assert f"tools ({len(names)}): {', '.join(names)}\n" in text
        assert '"model": "test-model"' in text and '"stream": true' in text
        for number, message in enumerate(request["messages"], start=1):
            size = len(json.dumps(message, ensure_ascii=False).encode())
            assert f"message {number} {message['role']} ({size:,} bytes):\n" in text
    # The system prompt as sent, the tool result as sent, the task with the key redacted.
    assert requests[1]["messages"][0]["content"] in shown[1]
    assert requests[1]["messages"][-1]["content"] in shown[1]
    assert "the key [redacted] must not show" in shown[0]
    assert SECRET in requests[0]["messages"][1]["content"]  # the model did get what the user typed
    assert all(SECRET not in text for text in shown)


def test_without_debug_no_request_is_printed(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with FakeModelServer([{"content": "Hi."}]) as server:
        result = _run("Say hi", "--workspace", str(root), cwd=tmp_path, base_url=server.base_url)
    assert result.returncode == 0, result.stderr
    assert "--debug" not in result.stderr and "request:" not in result.stderr


def test_slash_context_on_the_command_line_makes_no_model_request(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with FakeModelServer([{"content": "never sent"}]) as server:
        result = _run("/context", "--workspace", str(root), cwd=tmp_path, base_url=server.base_url)
        assert server.requests == []
    assert result.returncode == 0, result.stderr
    assert "Context: ~" in result.stderr
    for name in ("system prompt", "tool definitions", "skills catalog"):
        assert name in result.stderr


async def test_trace_setting_logs_each_request_without_the_key(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([{"content": "Done."}])
    await start(client, workspace, model_settings(model_server, trace="messages"))
    started = await command(client, "agent.run", {"task": f"Look; {SECRET_KEY} is the key"})
    ended = await run_ended(client, field(started, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")
    await asyncio.sleep(0.2)  # the log message was sent before the request; let the client read it
    logged = [m.message for m in client.log_messages if m.message.startswith("agent-ls request: ")]
    assert len(logged) == 1 == len(model_server.requests)
    body = json.dumps(model_server.requests[0], ensure_ascii=False).encode()
    assert logged[0].startswith(f"agent-ls request: request: {len(body):,} bytes")
    assert "Look; [redacted] is the key" in logged[0]
    assert SECRET_KEY not in logged[0]  # (the run's own first line echoes the task as the user typed it)


async def test_trace_off_logs_no_request(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([{"content": "Done."}])
    await start(client, workspace, model_settings(model_server))
    started = await command(client, "agent.run", {"task": "Look"})
    await run_ended(client, field(started, "sessionId"))
    assert not [m for m in client.log_messages if m.message.startswith("agent-ls request: ")]


def test_slash_context_needs_no_model_and_stores_no_session(tmp_path: Path) -> None:
    """With no model configured, ``/context`` still answers (measured as a Chat Completions request), and
    a question about a session is not a session: nothing is stored, ``--continue`` has nothing to take."""
    root = _project(tmp_path)
    env = user_environment()
    result = run(["run", "/context", "--workspace", str(root)], cwd=tmp_path, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Context: ~" in result.stderr
    assert "No model to measure with (no model configured" in result.stderr
    assert "go on with --continue" not in result.stderr
    listed = run(["sessions", "--workspace", str(root)], cwd=tmp_path, env=env, timeout=60)
    assert listed.stdout.strip() == "no sessions stored for this workspace", listed.stdout + listed.stderr
