"""Every real-world tool-call payload in ../shared/corpus/tool-calls, served as recorded by the fake model
server on 127.0.0.1 to a real OpenAIChatClient, checked against EXPECTED.json.

A ``.json`` payload is the body of a plain JSON reply (client with ``stream=False``); an ``.sse`` payload
is written event by event as ``text/event-stream`` (client with ``stream=True``). Each case offers the
tools its payload uses, with the arguments it sends. After the first answer, the history (with a result
for each call) goes back in a second request, whose replay is checked too. The Anthropic payloads
(tc11, tc12) are tested in ``test_tool_calls_anthropic.py``; a test checks that the two tables together
cover every payload.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from agent_ls.core.events import Event, MessageDelta
from agent_ls.core.messages import Message, ModelResponse, ToolResultMessage, ToolSpec, UserMessage
from agent_ls.models.base import WireConfig
from agent_ls.models.openai_chat import OpenAIChatClient
from tests.support.corpus import CORPUS, require_corpus
from tests.support.model_server import FakeModelServer

require_corpus()

TOOL_CALLS = CORPUS / "tool-calls"
EXPECTED: dict[str, Any] = json.loads((TOOL_CALLS / "EXPECTED.json").read_text(encoding="utf-8"))
PAYLOADS = set(EXPECTED) - {"_about"}


def tool(name: str, **properties: str) -> ToolSpec:
    """A tool whose arguments are ``properties`` (name -> JSON Schema type), all required."""
    return ToolSpec(
        name=name,
        description=f"The {name} tool.",
        parameters={
            "type": "object",
            "properties": {key: {"type": kind} for key, kind in properties.items()},
            "required": list(properties),
        },
    )


READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "start_line": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
    },
)


@dataclass(frozen=True)
class Case:
    file: str
    tools: tuple[ToolSpec, ...]
    # Where the Chat Completions body sits in a JSON payload (tc06 wraps it with notes).
    body_key: str | None = None


CASES = [
    Case("tc01_llamacpp_arguments_as_object.json", (READ_FILE,)),
    # The schema says string: "1024" stays a string (EXPECTED.json).
    Case(
        "tc02_vllm_qwen3coder_xml_toolcall_in_content.json",
        (tool("square_the_number", input_num="string"),),
    ),
    Case("tc03a_mistral_devstral_toolcalls_marker_in_content.json", (tool("web_search", query="string"),)),
    Case("tc03b_mistral_classic_json_list_in_content.json", (READ_FILE,)),
    Case("tc04_glm_via_mistral_stream_empty_name_continuation.sse", (tool("read", path="string"),)),
    Case("tc05_dashscope_empty_string_id_on_continuation.sse", (tool("bash", command="string"),)),
    Case(
        "tc06_lmstudio_empty_id_tool_call_roundtrip.json",
        (tool("bash", command="string"),),
        body_key="response",
    ),
    Case(
        "tc07_gemini_compat_stream_missing_index.sse",
        (tool("get_weather", city="string"), tool("get_time", tz="string")),
    ),
    Case(
        "tc08_gateway_two_calls_share_one_index.sse",
        (tool("get_time", city="string"), tool("get_weather", city="string")),
    ),
    Case(
        "tc09_litellm_bedrock_index_starts_at_1_id_only_first.sse",
        (tool("jira_get_worklog", issue_key="string"),),
    ),
    Case("tc10_finish_reason_stop_with_tool_calls.sse", (tool("get_weather", location="string"),)),
]

HANDLED_ELSEWHERE = {
    "tc11_anthropic_input_json_delta_fragments.sse": "tests/corpus/test_tool_calls_anthropic.py",
    "tc12_anthropic_midstream_overloaded_error.sse": "tests/corpus/test_tool_calls_anthropic.py",
}


def test_the_tables_cover_every_payload_once() -> None:
    here = [case.file for case in CASES]
    assert len(here) == len(set(here))
    assert set(here).isdisjoint(HANDLED_ELSEWHERE)
    assert set(here) | set(HANDLED_ELSEWHERE) == PAYLOADS
    on_disk = {path.name for path in TOOL_CALLS.iterdir()} - {"EXPECTED.json"}
    assert on_disk == PAYLOADS


def recorded_step(case: Case) -> dict[str, Any]:
    """The payload as a fake-server step: a JSON body, or the SSE events one chunk each."""
    text = (TOOL_CALLS / case.file).read_text(encoding="utf-8")
    if case.file.endswith(".sse"):
        events = [event.strip("\n") + "\n\n" for event in text.split("\n\n") if event.strip()]
        return {"chunks": events, "content_type": "text/event-stream"}
    payload = json.loads(text)
    return {"body": payload[case.body_key] if case.body_key else payload, "content_type": "application/json"}


async def run_two_turns(
    steps: list[dict[str, Any]], tools: tuple[ToolSpec, ...], *, stream: bool
) -> tuple[ModelResponse, list[Any], list[Event]]:
    """The first answer, the requests the server received (the second replays the history) and the events
    emitted during the first call."""
    events: list[Event] = []
    with FakeModelServer(steps) as server:
        client = OpenAIChatClient(WireConfig(model="local", base_url=server.base_url, stream=stream))
        try:
            first = await client.complete([UserMessage("task")], tools, events.append)
            history: list[Message] = [UserMessage("task"), first.message]
            history += [ToolResultMessage(c.call_id, c.name, "result") for c in first.message.tool_calls]
            await client.complete(history, tools, lambda event: None)
        finally:
            await client.aclose()
    return first, server.requests, events


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.file.split("_")[0])
async def test_tool_call_payloads(case: Case) -> None:
    expected = EXPECTED[case.file]
    stream = case.file.endswith(".sse")

    first, requests, events = await run_two_turns(
        [recorded_step(case), {"content": "ok"}], case.tools, stream=stream
    )

    calls = first.message.tool_calls
    assert [
        {
            "id": call.call_id if wanted["id"] is not None else None,
            "name": call.name,
            "arguments": json.loads(call.arguments),
        }
        for call, wanted in zip(calls, expected["calls"], strict=True)
    ] == expected["calls"]
    assert all(call.call_id for call in calls)
    assert len({call.call_id for call in calls}) == len(calls)
    assert first.message.text == expected.get("content_shown_to_user", expected.get("text", ""))
    assert "".join(e.text for e in events if isinstance(e, MessageDelta)) == first.message.text

    # The replay: arguments always a JSON string, one tool message per call and nothing for dropped entries.
    assert [request.get("stream", False) for request in requests] == [stream, stream]
    replayed = requests[1]["messages"][1:]
    assert replayed[0]["role"] == "assistant"
    wire_calls = replayed[0].get("tool_calls", [])
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in wire_calls] == [
        (call.call_id, call.name, call.arguments) for call in calls
    ]
    assert [m["tool_call_id"] for m in replayed[1:]] == [call.call_id for call in calls]


async def test_tc01_object_arguments_are_replayed_as_a_json_string() -> None:
    case = CASES[0]
    _, requests, _ = await run_two_turns([recorded_step(case), {"content": "ok"}], case.tools, stream=False)

    (wire_call,) = requests[1]["messages"][1]["tool_calls"]
    assert isinstance(wire_call["function"]["arguments"], str)
    assert json.loads(wire_call["function"]["arguments"]) == EXPECTED[case.file]["calls"][0]["arguments"]


async def test_tc06_the_empty_entry_leaves_no_tool_message_and_no_empty_id() -> None:
    case = next(case for case in CASES if case.file.startswith("tc06"))
    _, requests, _ = await run_two_turns([recorded_step(case), {"content": "ok"}], case.tools, stream=False)

    assert requests[1]["messages"] == [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": EXPECTED[case.file]["content_shown_to_user"]},
    ]


@pytest.mark.parametrize(
    "tools",
    [
        (),
        (tool("square", input_num="string"),),
        # The declared schema does not accept the recovered arguments.
        (tool("square_the_number", number="string"),),
    ],
    ids=["no-tools", "other-name", "schema-mismatch"],
)
async def test_tc02_without_a_matching_declared_tool_nothing_runs_and_the_text_is_shown(
    tools: tuple[ToolSpec, ...],
) -> None:
    case = next(case for case in CASES if case.file.startswith("tc02"))
    recorded = json.loads((TOOL_CALLS / case.file).read_text(encoding="utf-8"))

    first, _, _ = await run_two_turns([recorded_step(case), {"content": "ok"}], tools, stream=False)

    assert first.message.tool_calls == ()
    assert first.message.text == recorded["choices"][0]["message"]["content"]
