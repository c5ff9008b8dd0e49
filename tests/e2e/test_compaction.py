"""Compaction end to end (issue 15): a real ``agent-ls serve`` with a 4,000-token window configured, a
40-turn scripted session with large tool results, the scripted model server recording every request."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start
from tests.support.long_session import (
    AGENTS_MD,
    NESTED_RULE,
    TASK,
    TODO,
    LongSession,
    body_tokens,
    is_summary_request,
    write_files,
)
from tests.support.model_server import FakeModelServer

WINDOW = 4_000
SMALL_WINDOW = f"[providers.openai]\ncontext_window = {WINDOW}\nmax_output_tokens = 200\n"
SKILL_HEADING = "# Explain code"


def _texts(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in body["messages"])


async def _run(client: LanguageClient, workspace: Path, server: FakeModelServer, task: str) -> Any:
    await start(client, workspace, model_settings(server, maxTurns=60))
    started = await command(client, "agent.run", {"task": task})
    return await run_ended(client, field(started, "sessionId"), timeout_s=120)


async def _next_run(client: LanguageClient, params: dict[str, Any]) -> Any:
    """Start a run of an existing session and wait for its own agent/runEnded."""
    ended: list[Any] = client.agent["ended"]  # type: ignore[attr-defined]
    before = len(ended)
    await command(client, "agent.run", params)
    async with asyncio.timeout(30):
        while True:
            if len(ended) > before:
                return ended[-1]
            await asyncio.sleep(0.02)


def _after_compactions(requests: list[Any]) -> list[dict[str, Any]]:
    """The agent's requests that directly follow a summary request."""
    return [b for a, b in itertools.pairwise(requests) if is_summary_request(a) and not is_summary_request(b)]


async def test_long_session_runs_through_compactions(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    user_config: Callable[[str], None],
) -> None:
    write_files(workspace)
    user_config(SMALL_WINDOW)
    script = LongSession(turns=40)
    model_server.responder = script
    ended = await _run(client, workspace, model_server, TASK)

    assert field(ended, "status") == "done", field(ended, "reason")
    requests = model_server.requests
    agent_requests = [r for r in requests if not is_summary_request(r)]
    assert len(agent_requests) == 40
    assert script.summaries >= 3  # several compactions by summary (and pruning in between)
    assert max(body_tokens(r) for r in requests) <= WINDOW
    first = agent_requests[0]
    system = first["messages"][0]["content"]
    assert AGENTS_MD.strip() in system
    followers = _after_compactions(requests)
    assert len(followers) == script.summaries
    for body in followers:
        assert body["messages"][0]["content"] == system  # the stable prefix, byte-identical
        text = _texts(body)
        assert TASK in text  # the user's first message, verbatim
        assert SKILL_HEADING in text  # the activated skill's body
        assert NESTED_RULE in text  # the nested AGENTS.md attached before the compaction
        assert TODO["content"] in text  # the todo list (in the reminder that ends each request)
        assert "SUMMARY" in text
    # The editor is told of each compaction (agent/event kind "compacted").
    events = client.agent["events"]  # type: ignore[attr-defined]
    compacted = [str(field(e, "text")) for e in events if field(e, "kind") == "compacted"]
    assert sum("summarized" in line for line in compacted) == script.summaries
    assert any("(auto, pruned" in line for line in compacted)
    # Pruned results say how to get them back.
    assert any("pruned to save context; read_output {" in _texts(r) for r in agent_requests)


async def test_constraint_survives_three_compactions(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    user_config: Callable[[str], None],
) -> None:
    write_files(workspace)
    user_config(SMALL_WINDOW)
    script = LongSession(turns=30)
    model_server.responder = script
    ended = await _run(client, workspace, model_server, TASK)

    assert field(ended, "status") == "done", field(ended, "reason")
    assert script.summaries >= 3
    requests = model_server.requests
    third = [i for i, r in enumerate(requests) if is_summary_request(r)][2]
    after = [r for r in requests[third:] if not is_summary_request(r)]
    assert after
    for body in after:
        assert "the free-shipping threshold is computed after the discount" in _texts(body)


async def test_overflow_error_compacts_and_retries_once(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
) -> None:
    write_files(workspace)
    script = LongSession(turns=7, overflow_at=(6,))
    model_server.responder = script
    ended = await _run(client, workspace, model_server, TASK)

    assert field(ended, "status") == "done", field(ended, "reason")
    requests = model_server.requests
    kinds = ["summary" if is_summary_request(r) else "agent" for r in requests]
    # turn 6 is refused, the history is summarized, and turn 6 is sent again (no window configured).
    assert kinds == ["agent"] * 6 + ["summary"] + ["agent"] * 2
    refused, summary, retried = requests[5], requests[6], requests[7]
    assert body_tokens(summary) < body_tokens(refused) * 3 // 4 + 1  # the summary request fits too
    assert TASK in _texts(retried) and "SUMMARY 1" in _texts(retried)
    assert body_tokens(retried) < body_tokens(refused)


async def test_manual_compaction_command_and_task(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
) -> None:
    write_files(workspace)
    script = LongSession(turns=6)
    model_server.responder = script
    ended = await _run(client, workspace, model_server, TASK)
    session_id = field(ended, "sessionId")
    assert field(ended, "status") == "done" and script.summaries == 0  # no window configured: no auto

    result = await command(client, "agent.compact", {"sessionId": session_id, "focus": "the cents rule"})
    assert field(result, "how") == "summarized"
    assert field(result, "tokensAfter") < field(result, "tokensBefore")
    summary_request = model_server.requests[-1]
    assert is_summary_request(summary_request)
    assert "Keep in particular: the cents rule" in _texts(summary_request)
    assert '<conversation trust="data">' in _texts(summary_request)

    script.turn, script.turns = 0, 1  # the follow-up answers at once
    await _next_run(client, {"task": "Now the discount codes.", "sessionId": session_id})
    follow_up = model_server.requests[-1]
    assert follow_up["messages"][0] == model_server.requests[0]["messages"][0]
    text = _texts(follow_up)
    assert TASK in text and "SUMMARY 1" in text and "Now the discount codes." in text
    assert "data_1.txt" not in text  # the old tool results are gone

    done = await _next_run(client, {"task": "/compact", "sessionId": session_id})
    assert field(done, "status") == "done"
    assert "compacted" in field(done, "reason")
    assert is_summary_request(model_server.requests[-1])


async def test_summarizer_model_and_threshold_from_config(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    user_config: Callable[[str], None],
) -> None:
    write_files(workspace)
    user_config(SMALL_WINDOW + '[compaction]\nmodel = "openai/cheap-model"\nthreshold = 0.5\n')
    script = LongSession(turns=6)
    model_server.responder = script
    ended = await _run(client, workspace, model_server, TASK)

    assert field(ended, "status") == "done", field(ended, "reason")
    requests = model_server.requests
    # Half of the usable window (3,800 tokens) is crossed by the skill's body already: the second
    # request is a summary, written by the configured cheaper model.
    assert is_summary_request(requests[1])
    assert {r["model"] for r in requests if is_summary_request(r)} == {"cheap-model"}
    assert {r["model"] for r in requests if not is_summary_request(r)} == {"test-model"}
