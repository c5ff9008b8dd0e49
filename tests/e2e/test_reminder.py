"""The reminder at the end of each request stays out of the cached prefix: through ``agent-ls serve`` and a
recording model server, consecutive requests share a byte-identical prefix and only the last message moves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, fix_step, model_settings, run_ended, start
from tests.support.model_server import FakeModelServer


def _dumped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


async def test_the_reminder_ends_each_request_and_the_prefix_stays_byte_identical(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            fix_step("c1"),
            {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "stats.py"}}]},
            {"content": "Fixed."},
        ]
    )
    await start(client, workspace, model_settings(model_server, maxTokens=100_000))
    started = await command(client, "agent.run", {"task": "Fix the mean"})
    session_id = field(started, "sessionId")
    ended = await run_ended(client, session_id)
    assert field(ended, "status") == "done", field(ended, "reason")

    first, second, third = model_server.requests
    # Turn 1 with nothing pending: no reminder, the first request stays light.
    assert first["messages"][-1]["role"] == "user" and "<reminder>" not in _dumped(first)
    for turn, request in ((2, second), (3, third)):
        last = request["messages"][-1]
        assert last["role"] == "user"
        assert last["content"].startswith(
            f"<reminder>\nagent-ls status (not from the user): turn {turn} of 15; "
        )
        assert "token budget: " in last["content"] and "of 100,000 left" in last["content"]
        assert "Pending proposal (not applied yet): stats.py" in last["content"]
        assert last["content"].endswith("</reminder>")
        assert _dumped(request).count("<reminder>") == 1  # an earlier reminder is never kept
    # Everything before the reminder is a byte-identical prefix of the next request.
    prefix = second["messages"][:-1]
    assert _dumped(third["messages"][: len(prefix)]) == _dumped(prefix)
    assert _dumped(second["messages"][: len(first["messages"])]) == _dumped(first["messages"])
    assert _dumped(third["tools"]) == _dumped(second["tools"]) == _dumped(first["tools"])

    # agent.context counts the reminder a follow-up's first request would end with.
    answer = await command(client, "agent.context", {"sessionId": session_id})
    parts = {field(part, "name"): field(part, "tokens") for part in field(answer, "parts")}
    assert 10 <= parts["reminder"] <= 60
