"""``agent.context`` and the ``/context`` task through ``agent-ls serve`` and a recording model server."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from agent_ls.sessions.store import SessionStore
from tests.e2e.conftest import command, field, model_settings, run_ended, start
from tests.support.model_server import FakeModelServer

AGENTS_MD = "# Rules\n\n- Use 4 spaces.\n- Run pytest before you answer.\n- Keep functions short.\n"


def _sent_bytes(request: dict[str, Any]) -> int:
    """The size of a recorded body as the client serialized it (json.dumps defaults, UTF-8)."""
    return len(json.dumps(request, ensure_ascii=False).encode())


async def test_context_totals_match_the_request_sent(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    (workspace / "AGENTS.md").write_text(AGENTS_MD)
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "stats.py"}}]},
            {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "test_stats.py"}}]},
            {"content": "Read."},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    started = await command(client, "agent.run", {"task": "Read the code"})
    session_id = field(started, "sessionId")
    ended = await run_ended(client, session_id)
    assert field(ended, "status") == "done", field(ended, "reason")

    answer = await command(client, "agent.context", {"sessionId": session_id})
    last = model_server.requests[-1]
    # The next request is the last one sent plus the answer "Read." (a few bytes).
    expected = _sent_bytes(last) / 4
    assert abs(field(answer, "used") - expected) <= 0.02 * expected, (field(answer, "used"), expected)
    parts = {field(part, "name"): field(part, "tokens") for part in field(answer, "parts")}
    assert abs(sum(parts.values()) - field(answer, "used")) <= 0.02 * field(answer, "used")
    assert {
        "system prompt",
        "tool definitions",
        "instructions: AGENTS.md",
        "skills catalog",
        "history messages",
        "tool results",
    } <= set(parts)
    tools_bytes = _sent_bytes(last) - _sent_bytes(
        {k: v for k, v in last.items() if k not in ("tools", "tool_choice")}
    )
    assert abs(parts["tool definitions"] - tools_bytes / 4) <= 2
    results = [m for m in last["messages"] if m["role"] == "tool"]
    results_bytes = sum(len(json.dumps(m["content"], ensure_ascii=False).encode()) - 2 for m in results)
    assert abs(parts["tool results"] - results_bytes / 4) <= 2
    agents_block = last["messages"][0]["content"]
    assert "Use 4 spaces." in agents_block
    assert 20 <= parts["instructions: AGENTS.md"] <= 60
    assert field(answer, "contextWindow") == 128_000
    assert field(answer, "free") == 128_000 - field(answer, "used")


async def test_slash_context_answers_without_a_model_request(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    await start(client, workspace, model_settings(model_server))
    started = await command(client, "agent.run", {"task": "/context"})
    ended = await run_ended(client, field(started, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")
    text = field(ended, "answer")
    assert text.startswith("Context: ~")
    for name in ("system prompt", "tool definitions", "skills catalog", "request options"):
        assert name in text
    assert model_server.requests == []


async def test_context_of_an_unknown_session_is_refused(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    await start(client, workspace, model_settings(model_server))
    try:
        await command(client, "agent.context", {"sessionId": "nope"})
    except Exception as exc:
        assert "no session 'nope'" in str(exc)
    else:
        raise AssertionError("agent.context answered for an unknown session")


async def test_context_with_no_session_and_no_model_measures_a_new_one(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    """ "Show Context" before any run, with no model set: the report of a new session's first request,
    saying how it was measured; neither ``agent.context`` nor the ``/context`` task stores a session."""
    (workspace / "AGENTS.md").write_text(AGENTS_MD)
    root = await asyncio.to_thread(workspace.resolve)  # the store names the resolved root
    await start(client, workspace)
    answer = await command(client, "agent.context", {})
    assert "no model configured" in field(answer, "noModel")
    names = [field(part, "name") for part in field(answer, "parts")]
    for name in ("system prompt", "tool definitions", "instructions: AGENTS.md"):
        assert name in names
    assert field(answer, "used") > 0 and field(answer, "contextWindow") == 128_000
    started = await command(client, "agent.run", {"task": "/context"})
    ended = await run_ended(client, field(started, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")
    assert "No model to measure with (no model configured" in field(ended, "answer")
    assert SessionStore.from_environ(os.environ).session_ids(root) == []
    assert model_server.requests == []
