"""Real-world tool-call payloads (../shared/corpus/tool-calls) served as HTTP bodies to OpenAIChatClient.

Only the non-streaming JSON payloads that are valid Chat Completions are here: tc01 (arguments as an
object) and tc06 (an entry with an empty id and no function). The SSE payloads (tc04, tc05, tc07-tc10)
belong to the streaming client; tc02/tc03 (tool calls leaked into content) to tool-call repair;
tc11/tc12 to the Anthropic client. Expected outcomes come from EXPECTED.json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from agent_ls.core.messages import Message, ToolResultMessage, UserMessage
from agent_ls.models.openai_chat import OpenAIChatClient
from tests.support.corpus import CORPUS as SHARED_CORPUS

CORPUS = SHARED_CORPUS
TOOL_CALLS = CORPUS / "tool-calls"
EXPECTED: dict[str, Any] = json.loads((TOOL_CALLS / "EXPECTED.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Case:
    file: str
    # Where the Chat Completions body sits in the corpus file (tc06 wraps it with notes).
    body_key: str | None


CASES = [
    Case("tc01_llamacpp_arguments_as_object.json", None),
    Case("tc06_lmstudio_empty_id_tool_call_roundtrip.json", "response"),
]


def served_body(case: Case) -> bytes:
    payload = json.loads((TOOL_CALLS / case.file).read_text(encoding="utf-8"))
    return json.dumps(payload[case.body_key] if case.body_key else payload).encode()


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.file.split("_")[0])
async def test_tool_call_payloads(case: Case) -> None:
    expected = EXPECTED[case.file]
    requests: list[Any] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(json.loads(request.content))
        if len(requests) == 1:
            return httpx.Response(
                200, content=served_body(case), headers={"Content-Type": "application/json"}
            )
        return httpx.Response(
            200, json={"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}
        )

    client = OpenAIChatClient(
        model="local", base_url="http://llm.test/v1", transport=httpx.MockTransport(handler)
    )
    try:
        response = await client.complete([UserMessage("task")], [])
        calls = response.message.tool_calls
        history: list[Message] = [UserMessage("task"), response.message]
        history += [ToolResultMessage(call.call_id, call.name, "result") for call in calls]
        await client.complete(history, [])
    finally:
        await client.aclose()

    assert [
        {
            "id": call.call_id if expected_call["id"] else None,
            "name": call.name,
            "arguments": json.loads(call.arguments),
        }
        for call, expected_call in zip(calls, expected["calls"], strict=True)
    ] == expected["calls"]
    assert all(call.call_id for call in calls)
    if "content_shown_to_user" in expected:
        assert response.message.text == expected["content_shown_to_user"]

    # Replayed history: arguments always a JSON string; dropped entries leave no trace (no tool_call_id "").
    replayed = requests[1]["messages"][1:]
    wire_calls = replayed[0].get("tool_calls", [])
    assert [c["function"]["arguments"] for c in wire_calls] == [call.arguments for call in calls]
    assert all(isinstance(c["function"]["arguments"], str) and c["id"] for c in wire_calls)
    assert [m["tool_call_id"] for m in replayed[1:]] == [call.call_id for call in calls]
