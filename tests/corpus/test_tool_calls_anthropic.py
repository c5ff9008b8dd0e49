"""Recorded Anthropic Messages streams (../shared/corpus/tool-calls, tc11 and tc12) served event by event
through the fake model server at /v1/messages to a real AnthropicClient over 127.0.0.1.

Each recorded ``.sse`` file is cut into its events and written one by one, as recorded. The outcome each
must give comes from EXPECTED.json: the executable calls (then replayed in a second turn, where the
history must hold ``tool_use`` blocks with parsed input and the results in one user message), or a
failed, retryable call (an in-band ``error`` event after HTTP 200 is never a completed answer).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_ls.core.errors import ModelError, ModelOverloadedError
from agent_ls.core.events import Event, MessageDelta
from agent_ls.core.messages import Message, ToolResultMessage, ToolSpec, UserMessage
from agent_ls.models.anthropic import AnthropicClient
from agent_ls.models.base import WireConfig
from tests.support.corpus import CORPUS, require_corpus
from tests.support.model_server import FakeModelServer

require_corpus()

TOOL_CALLS = CORPUS / "tool-calls"
EXPECTED: dict[str, Any] = json.loads((TOOL_CALLS / "EXPECTED.json").read_text(encoding="utf-8"))
CASES = sorted(name for name in EXPECTED if "_anthropic_" in name)
ERROR_CLASSES: dict[str, type[ModelError]] = {"overloaded_error": ModelOverloadedError}
TOOLS = [
    ToolSpec("get_current_weather", "Weather at a place.", {"type": "object"}),
    ToolSpec("list_open_files", "The files open in the editor.", {"type": "object"}),
]


def test_the_anthropic_cases_are_all_here() -> None:
    assert [name.split("_")[0] for name in CASES] == ["tc11", "tc12"]


def recorded_events(name: str) -> list[str]:
    """The recorded stream cut into server-sent events, each with its closing blank line."""
    text = (TOOL_CALLS / name).read_text(encoding="utf-8")
    return [event.strip("\n") + "\n\n" for event in text.split("\n\n") if event.strip()]


@pytest.mark.parametrize("name", CASES, ids=lambda name: name.split("_")[0])
async def test_recorded_stream(name: str) -> None:
    expected = EXPECTED[name]
    events: list[Event] = []
    steps: list[dict[str, Any]] = [{"chunks": recorded_events(name)}, {"content": "Done."}]
    with FakeModelServer(steps) as server:
        client = AnthropicClient(WireConfig(model="claude-sonnet-4-5", base_url=server.base_url, api_key="k"))
        try:
            history: list[Message] = [UserMessage("task")]
            if expected.get("outcome") == "error":
                with pytest.raises(ModelError) as caught:
                    await client.complete(history, TOOLS, events.append)
                assert type(caught.value) is ERROR_CLASSES[expected["error_type"]]
                assert caught.value.retryable is expected["retryable"]
                assert f"{server.base_url}/messages" in str(caught.value)
                # The partial text reached the user as deltas; the retry layer marks it void.
                assert (
                    "".join(e.text for e in events if isinstance(e, MessageDelta)) == expected["partial_text"]
                )
                assert expected["calls"] == []
                return
            response = await client.complete(history, TOOLS, events.append)
            calls = response.message.tool_calls
            history += [response.message, *(ToolResultMessage(c.call_id, c.name, "result") for c in calls)]
            await client.complete(history, TOOLS, events.append)
        finally:
            await client.aclose()

    assert [
        {"id": call.call_id, "name": call.name, "arguments": json.loads(call.arguments)} for call in calls
    ] == expected["calls"]
    assert response.finish_reason == expected["stop_reason"]
    # Replayed: tool_use blocks with the parsed input (never the delta fragments), results in one message.
    results = [
        {"type": "tool_result", "tool_use_id": call["id"], "content": "result", "is_error": False}
        for call in expected["calls"]
    ]
    results[-1]["cache_control"] = {"type": "ephemeral"}
    tool_uses = [
        {"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["arguments"]}
        for call in expected["calls"]
    ]
    assert server.requests[1]["messages"][1:] == [
        {"role": "assistant", "content": tool_uses},
        {"role": "user", "content": results},
    ]
