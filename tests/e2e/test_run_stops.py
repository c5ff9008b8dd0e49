"""How runs stop and fail, seen from the editor: cancel, max turns, malformed tool calls, model errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import SECRET_KEY, command, field, model_settings, run_ended, start, tool_messages
from tests.support.model_server import FakeModelServer


async def _wait_for_requests(server: FakeModelServer, count: int) -> None:
    assert await asyncio.to_thread(server.wait_for_requests, count, 10.0)


@pytest.mark.parametrize("how", ["agent.cancel", "progress"])
async def test_cancel_while_the_model_holds_its_reply(
    how: str, client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "call_1", "name": "list_files", "arguments": {}}]},
            {"content": "never seen", "delay_s": 30},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    started = await command(client, "agent.run", {"task": "list things slowly"})
    session_id, token = field(started, "sessionId"), field(started, "progressToken")
    await _wait_for_requests(model_server, 2)
    if how == "agent.cancel":
        assert field(await command(client, "agent.cancel", {"sessionId": session_id}), "cancelled") is True
    else:
        client.window_work_done_progress_cancel(t.WorkDoneProgressCancelParams(token=token))
    ended = await run_ended(client, session_id, timeout_s=10)
    assert field(ended, "status") == "cancelled"
    assert isinstance(client.progress_reports[token][-1], t.WorkDoneProgressEnd)
    assert field(await command(client, "agent.cancel", {"sessionId": session_id}), "cancelled") is False


async def test_max_turns_stops_cleanly(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([{"tool_calls": [{"name": "list_files", "arguments": {}}]}] * 3)
    await start(client, workspace, model_settings(model_server, maxTurns=2))
    session_id = field(await command(client, "agent.run", {"task": "loop forever"}), "sessionId")
    ended = await run_ended(client, session_id)
    assert field(ended, "status") == "stopped"
    assert field(ended, "reason") == "clean stop: maximum of 2 turns exceeded"
    assert len(model_server.requests) == 2


async def test_malformed_tool_calls_are_answered_and_the_run_continues(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "bad_json", "name": "read_file", "raw_arguments": '{"path": "stats.py"'}]},
            {"tool_calls": [{"id": "unknown", "name": "search_code", "arguments": {"query": "mean"}}]},
            {"tool_calls": [{"id": "invalid", "name": "read_file", "arguments": {"file": "stats.py"}}]},
            {"content": "recovered"},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    session_id = field(await command(client, "agent.run", {"task": "read stats"}), "sessionId")
    ended = await run_ended(client, session_id)
    assert field(ended, "status") == "done" and field(ended, "answer") == "recovered"
    bad_json, unknown, invalid = tool_messages(model_server.requests[3])
    assert bad_json["tool_call_id"] == "bad_json" and "not valid JSON" in bad_json["content"]
    assert unknown["tool_call_id"] == "unknown" and "no tool named 'search_code'" in unknown["content"]
    assert "read_file" in unknown["content"] and "bash" in unknown["content"]
    assert invalid["tool_call_id"] == "invalid" and "path" in invalid["content"]


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ({"status": 401}, "HTTP 401"),
        ({"status": 404}, "HTTP 404"),
        (
            {"status": 400, "body": {"error": {"message": "tools are not supported by this model"}}},
            "tools are not supported",
        ),
    ],
)
async def test_model_server_errors_end_the_run_with_one_clear_line(
    step: dict[str, object],
    expected: str,
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
) -> None:
    model_server.steps.append(step)
    await start(client, workspace, model_settings(model_server))
    session_id = field(await command(client, "agent.run", {"task": "anything"}), "sessionId")
    ended = await run_ended(client, session_id)
    reason = field(ended, "reason")
    assert field(ended, "status") == "error"
    assert expected in reason and model_server.base_url in reason and "test-model" in reason
    assert "\n" not in reason and SECRET_KEY not in reason and "Traceback" not in reason


async def test_unreachable_model_server(client: LanguageClient, workspace: Path) -> None:
    await start(client, workspace, {"model": "openai/test-model", "baseUrl": "http://127.0.0.1:9/v1"})
    session_id = field(await command(client, "agent.run", {"task": "anything"}), "sessionId")
    ended = await run_ended(client, session_id)
    assert field(ended, "status") == "error"
    assert "http://127.0.0.1:9/v1" in field(ended, "reason") and "\n" not in field(ended, "reason")


async def test_no_model_configured_names_the_places_to_set_one(
    client: LanguageClient, workspace: Path
) -> None:
    await start(client, workspace, {})
    session_id = field(await command(client, "agent.run", {"task": "anything"}), "sessionId")
    ended = await run_ended(client, session_id)
    assert field(ended, "status") == "error"
    assert "agentLs.model" in field(ended, "reason") and "AGENT_LS_MODEL" in field(ended, "reason")


async def test_invalid_command_arguments_are_rejected_plainly(
    client: LanguageClient, workspace: Path
) -> None:
    await start(client, workspace, {})
    with pytest.raises(Exception, match="task"):
        await command(client, "agent.run", {"uri": "file:///x"})
