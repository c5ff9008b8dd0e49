"""Sessions that last (issue 15): a follow-up run continues a session and extends its proposal; a session
survives a server restart and a SIGKILL mid-run (docs/sessions.md). Real ``agent-ls serve`` processes,
driven by pytest-lsp, against the scripted model server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import (
    BUGGY,
    FIXED,
    SECRET_KEY,
    SERVER_ENV,
    command,
    field,
    fix_step,
    model_settings,
    prepare_client,
    start,
)
from tests.support.agent_cli import run, user_environment
from tests.support.model_server import FakeModelServer

NOTES = "# Notes\n\nmean() divides by len(values).\n"


def _notes_step(path: str = "NOTES.md", content: str = NOTES) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


@asynccontextmanager
async def _server(state: Path, root: Path, model: FakeModelServer) -> AsyncIterator[LanguageClient]:
    """A real ``agent-ls serve`` with its session store in ``state``, initialized on ``root``."""
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "agent_ls", "serve"],
        server_env=SERVER_ENV | {"AGENT_LS_STATE_DIR": str(state)},
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    prepare_client(client)
    try:
        await start(client, root, model_settings(model))
        yield client
    finally:
        if client._server is not None and client._server.returncode is None:
            await client.shutdown_session()
        await client.stop()


async def _ended(client: LanguageClient, session_id: str, count: int, timeout_s: float = 30.0) -> Any:
    """The ``count``-th ``agent/runEnded`` of ``session_id``."""
    async with asyncio.timeout(timeout_s):
        while True:
            ended = [e for e in client.agent["ended"] if field(e, "sessionId") == session_id]  # type: ignore[attr-defined]
            if len(ended) >= count:
                return ended[count - 1]
            await asyncio.sleep(0.02)


def _texts(request: dict[str, Any]) -> list[str]:
    """Every message of a Chat Completions request as one string (role, content, tool calls)."""
    return [json.dumps(m, ensure_ascii=False) for m in request["messages"]]


async def _run(client: LanguageClient, task: str, session_id: str | None = None) -> str:
    argument: dict[str, Any] = {"task": task}
    if session_id is not None:
        argument["sessionId"] = session_id
    return str(field(await command(client, "agent.run", argument), "sessionId"))


async def test_a_follow_up_sees_the_history_and_extends_the_proposal(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            fix_step("call_fix"),
            {"content": "Fixed mean()."},
            {**_notes_step(), "delay_s": 1.0},
            {"content": "Added notes."},
        ]
    )
    async with _server(tmp_path / "state", workspace, model_server) as client:
        session_id = await _run(client, "Fix mean in stats.py")
        assert field(await _ended(client, session_id, 1), "status") == "done"

        assert await _run(client, "Now also write NOTES.md", session_id) == session_id
        with pytest.raises(JsonRpcException, match="is running a task"):  # one run of a session at a time
            await _run(client, "a third task meanwhile", session_id)
        assert field(await _ended(client, session_id, 2), "status") == "done"

        follow_up = model_server.requests[2]  # the first request of the second run
        texts = _texts(follow_up)
        assert "Fix mean in stats.py" in texts[1]  # the first task, then its turns, then the new one
        assert any("call_fix" in m for m in texts) and any("Fixed mean()." in m for m in texts)
        assert any("Now also write NOTES.md" in m for m in texts[-2:])  # last, before a status reminder
        assert len(model_server.requests) == 4

        files = field(await command(client, "agent.proposal", {"sessionId": session_id}), "files")
        assert sorted(field(f, "path") for f in files) == ["NOTES.md", "stats.py"]
        applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
        assert field(applied, "applied") is True
    assert FIXED in (workspace / "stats.py").read_text() and BUGGY not in (workspace / "stats.py").read_text()
    assert (workspace / "NOTES.md").read_text() == NOTES
    stored = next((tmp_path / "state" / "sessions").glob(f"*/{session_id}.jsonl")).read_text()
    assert SECRET_KEY not in stored
    kinds = [json.loads(line)["kind"] for line in stored.splitlines()]
    assert kinds[0] == "session" and kinds.count("run_start") == 2 and kinds.count("run_end") == 2
    assert kinds[-2:] == ["proposal_cleared", "apply"]


async def test_a_session_survives_a_server_restart(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    check = {"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]}
    model_server.steps.extend(
        [check, fix_step(), {"content": "Fixed mean()."}, check, _notes_step(), {"content": "Done."}]
    )
    state = tmp_path / "state"
    async with _server(state, workspace, model_server) as first:
        first.agent["answers"].append("Allow for this session")  # type: ignore[attr-defined]
        session_id = await _run(first, "Fix mean in stats.py")
        await _ended(first, session_id, 1)
        assert len(first.agent["prompts"]) == 1  # type: ignore[attr-defined]
    stats = workspace / "stats.py"  # the user edits the proposed file between the two servers
    stats.write_text(stats.read_text().replace("for the agent-ls demo", "for the demo"))

    async with _server(state, workspace, model_server) as second:
        with pytest.raises(JsonRpcException, match="no session 0123456789ab is stored"):
            await _run(second, "go on", "0123456789ab")
        with pytest.raises(JsonRpcException, match="an id is letters, digits"):
            await _run(second, "go on", "../../etc")
        (listed,) = field(await command(second, "agent.listSessions", {}), "sessions")
        assert listed["sessionId"] == session_id and listed["title"] == "Fix mean in stats.py"
        assert listed["pendingFiles"] == ["stats.py"] and listed["runs"] == 1
        assert listed["status"] == "done" and listed["workspace"] == str(workspace)
        files = field(await command(second, "agent.proposal", {"sessionId": session_id}), "files")
        assert [field(f, "path") for f in files] == ["stats.py"]

        assert any("stats.py" in m.message and "changed since" in m.message for m in second.log_messages)

        await _run(second, "Now also write NOTES.md", session_id)
        assert field(await _ended(second, session_id, 1), "status") == "done"
        assert any("Fixed mean()." in m for m in _texts(model_server.requests[3]))
        assert second.agent["prompts"] == []  # type: ignore[attr-defined]  # "true" allowed for the session
        rebased = await command(second, "agent.applyProposal", {"sessionId": session_id})
        assert not field(rebased, "applied") and "re-based" in field(rebased, "failureReason")
        assert field(await command(second, "agent.applyProposal", {"sessionId": session_id}), "applied")
        (listed,) = field(await command(second, "agent.listSessions", {}), "sessions")
        assert listed["runs"] == 2 and listed["pendingFiles"] == []
    assert FIXED in stats.read_text() and "for the demo" in stats.read_text()  # re-based: both changes
    assert (workspace / "NOTES.md").read_text() == NOTES


async def test_a_session_killed_mid_run_is_repaired_and_continues(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    sleeper = {"id": "call_sleep", "name": "bash", "arguments": {"command": "sleep 29.25"}}
    notes = {"id": "call_notes", "name": "write_file", "arguments": {"path": "NOTES.md", "content": NOTES}}
    model_server.steps.extend(
        [
            {"tool_calls": [notes, sleeper]},
            fix_step(),
            {"content": "Fixed after the interruption."},
        ]
    )
    state = tmp_path / "state"
    async with _server(state, workspace, model_server) as first:
        first.agent["answers"].append("Allow for this session")  # type: ignore[attr-defined]
        session_id = await _run(first, "Write notes, then sleep")
        async with asyncio.timeout(30):
            while True:  # the approval was asked: the command runs next
                if first.agent["prompts"]:  # type: ignore[attr-defined]
                    break
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)  # the command is running
        assert first._server is not None
        first._server.kill()  # SIGKILL mid-tool
        await first._server.wait()

    async with _server(state, workspace, model_server) as second:
        (listed,) = field(await command(second, "agent.listSessions", {}), "sessions")
        assert listed["status"] == "interrupted" and listed["pendingFiles"] == ["NOTES.md"]
        await _run(second, "Go on: fix mean", session_id)
        assert field(await _ended(second, session_id, 1), "status") == "done"
        resumed = model_server.requests[1]["messages"]
        results = {m["tool_call_id"]: m["content"] for m in resumed if m["role"] == "tool"}
        assert "interrupted" in results["call_sleep"]  # the orphaned call got its result
        assert "call_notes" in results and "interrupted" not in results["call_notes"]
        tasks = [m["content"] for m in resumed if m["role"] == "user" and "<reminder>" not in m["content"]]
        assert "Go on: fix mean" in tasks[-1] and "Write notes, then sleep" in tasks[0]
        assert field(await command(second, "agent.applyProposal", {"sessionId": session_id}), "applied")
    assert (workspace / "NOTES.md").read_text() == NOTES
    assert FIXED in (workspace / "stats.py").read_text()


async def test_a_nested_agents_md_is_not_attached_again_after_a_resume(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "AGENTS.md").write_text("Nested rule: pkg code uses tabs (marker 7f3c).\n")
    (workspace / "pkg" / "a.py").write_text("A = 1\n")
    (workspace / "pkg" / "b.py").write_text("B = 2\n")

    def read(path: str) -> dict[str, Any]:
        return {"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]}

    model_server.steps.extend([read("pkg/a.py"), {"content": "A is 1."}, read("pkg/b.py"), {"content": "B."}])
    state = tmp_path / "state"
    async with _server(state, workspace, model_server) as first:
        session_id = await _run(first, "What is A?")
        await _ended(first, session_id, 1)
    assert "marker 7f3c" in json.dumps(model_server.requests[1])
    async with _server(state, workspace, model_server) as second:
        await _run(second, "And B?", session_id)
        await _ended(second, session_id, 1)
    last = json.dumps(model_server.requests[3])
    assert last.count("marker 7f3c") == 1  # attached in the first run, not again after the resume


async def test_run_skill_continues_a_session(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([{"content": "mean() is off by one."}, {"content": "Explained."}])
    async with _server(tmp_path / "state", workspace, model_server) as client:
        session_id = await _run(client, "What is wrong in stats.py?")
        await _ended(client, session_id, 1)
        started = await command(
            client, "agent.runSkill", {"skill": "explain", "args": "stats.py", "sessionId": session_id}
        )
        assert field(started, "sessionId") == session_id
        await _ended(client, session_id, 2)
    texts = _texts(model_server.requests[1])
    assert any("mean() is off by one." in m for m in texts)  # the first run's answer
    assert any("skill:explain" in m for m in texts)  # then the skill, explicitly


async def test_a_session_running_in_the_editor_is_refused_to_the_command_line(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    """The editor's server holds the session's run lock while it runs: ``agent-ls run --session`` in a
    terminal is refused with the server's pid, and may go on once the editor's run has ended."""
    sleeper = {"id": "call_sleep", "name": "bash", "arguments": {"command": "sleep 29.5"}}
    model_server.steps.extend([{"tool_calls": [sleeper]}, {"content": "Stopped."}, {"content": "Went on."}])
    state = tmp_path / "state"
    env = user_environment(
        AGENT_LS_STATE_DIR=str(state),
        AGENT_LS_API_KEY=SECRET_KEY,
        AGENT_LS_BASE_URL=model_server.base_url,
        AGENT_LS_MODEL="openai/test-model",
    )
    cli = ["run", "go on", "--yes", "--workspace", str(workspace)]
    async with _server(state, workspace, model_server) as client:
        client.agent["answers"].append("Allow for this session")  # type: ignore[attr-defined]
        session_id = await _run(client, "Sleep a while")
        async with asyncio.timeout(30):
            while True:  # the approval was asked: the command runs next
                if client.agent["prompts"]:  # type: ignore[attr-defined]
                    break
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)  # the command is running
        refused = await asyncio.to_thread(run, [*cli, "--session", session_id], cwd=tmp_path, env=env)
        assert refused.returncode == 2, refused.stderr
        assert client._server is not None
        assert f"session {session_id} is running a task in agent-ls process {client._server.pid}" in (
            refused.stderr
        )
        assert len(model_server.requests) == 1
        await command(client, "agent.cancel", {"sessionId": session_id})
        assert field(await _ended(client, session_id, 1), "status") == "cancelled"
        went_on = await asyncio.to_thread(run, [*cli, "--session", session_id], cwd=tmp_path, env=env)
        assert went_on.returncode == 0, went_on.stderr
        assert "Went on." in went_on.stderr or "Stopped." in went_on.stderr
