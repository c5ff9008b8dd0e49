"""OpenAIChatClient: the outgoing request body and the parsing of responses, over httpx.MockTransport and
over real HTTP against the fake model server."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from agent_ls.core.errors import ModelServerError
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from agent_ls.models.openai_chat import OpenAIChatClient, synthetic_call_id
from tests.support.model_server import FakeModelServer

BASE_URL = "http://llm.test/v1"
READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
USAGE = {"prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128}


def completion(message: dict[str, Any], finish_reason: str | None = "stop", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "qwen2.5-coder:7b",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish_reason}
        ],
    }
    body.update(extra)
    return body


class Recorder:
    """A MockTransport handler: answers with ``bodies`` in order and records each request."""

    def __init__(self, *bodies: dict[str, Any]) -> None:
        self.bodies = list(bodies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json=self.bodies[len(self.requests) - 1])

    def sent(self, index: int = 0) -> Any:
        return json.loads(self.requests[index].content)


@pytest.fixture
async def make_client() -> AsyncIterator[Callable[..., OpenAIChatClient]]:
    clients: list[OpenAIChatClient] = []

    def make(handler: Callable[[httpx.Request], httpx.Response], **kwargs: Any) -> OpenAIChatClient:
        options: dict[str, Any] = {
            "model": "qwen2.5-coder:7b",
            "base_url": BASE_URL,
            "model_name": "ollama/qwen2.5-coder:7b",
        }
        options.update(kwargs)
        client = OpenAIChatClient(transport=httpx.MockTransport(handler), **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


async def test_request_maps_the_history_tools_and_key(make_client: Callable[..., OpenAIChatClient]) -> None:
    recorder = Recorder(completion({"content": "ok"}, usage=USAGE))
    client = make_client(recorder, api_key="sk-test-123")
    history: list[Message] = [
        SystemMessage("You are a coding agent."),
        UserMessage("Fix the bug."),
        AssistantMessage("Let me look.", (ToolCall("call_a", "read_file", '{"path": "a.py"}'),)),
        ToolResultMessage("call_a", "read_file", "1: print('hi')"),
        AssistantMessage(
            "",
            (ToolCall("call_b", "read_file", '{"path": "b.py"}'), ToolCall("call_c", "bash", "{not json")),
        ),
        ToolResultMessage("call_b", "read_file", "error: no such file", is_error=True),
        ToolResultMessage("call_c", "bash", "error: arguments are not valid JSON", is_error=True),
        AssistantMessage("Done."),
        UserMessage("Thanks."),
    ]

    await client.complete(history, [READ_FILE])

    request = recorder.requests[0]
    assert (request.method, str(request.url)) == ("POST", "http://llm.test/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test-123"
    assert request.headers["content-type"] == "application/json"
    assert recorder.sent() == {
        "model": "qwen2.5-coder:7b",
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "Fix the bug."},
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "1: print('hi')"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "b.py"}'},
                    },
                    {
                        "id": "call_c",
                        "type": "function",
                        "function": {"name": "bash", "arguments": "{not json"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_b", "content": "error: no such file"},
            {"role": "tool", "tool_call_id": "call_c", "content": "error: arguments are not valid JSON"},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "Thanks."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a file.",
                    "parameters": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}},
                        "required": ["path"],
                    },
                },
            }
        ],
        "tool_choice": "auto",
    }


async def test_no_tools_and_no_key_leave_out_tools_and_authorization(
    make_client: Callable[..., OpenAIChatClient],
) -> None:
    recorder = Recorder(completion({"content": "hello"}, usage=USAGE))
    client = make_client(recorder, base_url="http://llm.test/v1/")

    await client.complete([UserMessage("hi")], [])

    assert str(recorder.requests[0].url) == "http://llm.test/v1/chat/completions"
    assert "authorization" not in recorder.requests[0].headers
    assert recorder.sent() == {"model": "qwen2.5-coder:7b", "messages": [{"role": "user", "content": "hi"}]}


async def test_text_and_tool_calls_are_parsed(make_client: Callable[..., OpenAIChatClient]) -> None:
    body = completion(
        {
            "content": "Reading it.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": '},
                },
            ],
        },
        finish_reason="tool_calls",
        usage=USAGE,
    )
    client = make_client(Recorder(body))

    response = await client.complete([UserMessage("go")], [READ_FILE])

    assert client.model_name == "ollama/qwen2.5-coder:7b"
    assert response == ModelResponse(
        message=AssistantMessage(
            "Reading it.",
            (
                ToolCall("call_1", "read_file", '{"path": "a.py"}'),
                # Malformed JSON is passed through raw: the dispatcher reports it to the model.
                ToolCall("call_2", "bash", '{"command": '),
            ),
        ),
        usage=Usage(input_tokens=120, output_tokens=8),
        finish_reason="tool_calls",
    )


async def test_object_arguments_become_a_json_string_and_are_replayed_as_one(
    make_client: Callable[..., OpenAIChatClient],
) -> None:
    first = completion(
        {
            "content": None,
            "tool_calls": [
                {
                    "id": "call_x",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": {"path": "é.py"}},
                }
            ],
        },
        finish_reason="tool_calls",
        usage=USAGE,
    )
    recorder = Recorder(first, completion({"content": "done"}, usage=USAGE))
    client = make_client(recorder)
    history: list[Message] = [UserMessage("read it")]

    response = await client.complete(history, [READ_FILE])
    history += [response.message, ToolResultMessage("call_x", "read_file", "1: x = 1")]
    await client.complete(history, [READ_FILE])

    assert response.message == AssistantMessage("", (ToolCall("call_x", "read_file", '{"path": "é.py"}'),))
    assert recorder.sent(1)["messages"][1:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_x",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "é.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_x", "content": "1: x = 1"},
    ]


async def test_missing_or_empty_ids_are_synthesized_stably(
    make_client: Callable[..., OpenAIChatClient],
) -> None:
    body = completion(
        {
            "content": "",
            "tool_calls": [
                {
                    "id": "",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                },
                {"type": "function", "function": {"name": "list_files"}},
            ],
        },
        usage=USAGE,
    )
    client = make_client(Recorder(body, body))

    first = await client.complete([UserMessage("go")], [])
    second = await client.complete([UserMessage("go")], [])

    assert first.message.tool_calls == (
        ToolCall(synthetic_call_id(1, "read_file", '{"path": "a.py"}'), "read_file", '{"path": "a.py"}'),
        ToolCall(synthetic_call_id(2, "list_files", "{}"), "list_files", "{}"),
    )
    assert second.message.tool_calls == first.message.tool_calls
    ids = [call.call_id for call in first.message.tool_calls]
    assert all(re.fullmatch(r"call_[12]_[0-9a-f]{12}", call_id) for call_id in ids)
    assert len(set(ids)) == 2


async def test_calls_without_a_function_name_are_dropped(
    make_client: Callable[..., OpenAIChatClient],
) -> None:
    body = completion(
        {
            "content": "Here you go.",
            "tool_calls": [
                {"id": "", "type": "function"},
                {"id": "call_empty", "type": "function", "function": {"name": "", "arguments": "{}"}},
                {"id": "call_none", "type": "function", "function": {"arguments": "{}"}},
                {
                    "id": "call_ok",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                },
            ],
        },
        usage=USAGE,
    )
    client = make_client(Recorder(body))

    response = await client.complete([UserMessage("go")], [])

    assert response.message == AssistantMessage(
        "Here you go.", (ToolCall("call_ok", "bash", '{"command": "ls"}'),)
    )


async def test_finish_reason_stop_does_not_hide_tool_calls(
    make_client: Callable[..., OpenAIChatClient],
) -> None:
    body = completion(
        {
            "content": None,
            "tool_calls": [
                {
                    "id": "call_w",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location": "Lima"}'},
                }
            ],
        },
        finish_reason="stop",
        usage=USAGE,
    )
    client = make_client(Recorder(body))

    response = await client.complete([UserMessage("weather?")], [])

    assert response == ModelResponse(
        message=AssistantMessage("", (ToolCall("call_w", "get_weather", '{"location": "Lima"}'),)),
        usage=Usage(input_tokens=120, output_tokens=8),
        finish_reason="stop",
    )


async def test_usage_maps_cached_tokens(make_client: Callable[..., OpenAIChatClient]) -> None:
    usage = {
        "prompt_tokens": 2006,
        "completion_tokens": 300,
        "total_tokens": 2306,
        "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    client = make_client(Recorder(completion({"content": "hi"}, usage=usage)))

    response = await client.complete([UserMessage("hi")], [])

    assert response.usage == Usage(input_tokens=2006, output_tokens=300, cached_input_tokens=1920)


async def test_missing_usage_is_estimated_from_bytes(make_client: Callable[..., OpenAIChatClient]) -> None:
    body = completion(
        {
            "content": "abcdefgh",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "bash", "arguments": '{"a": 1}'}}
            ],
        }
    )
    recorder = Recorder(body)
    client = make_client(recorder)

    response = await client.complete([UserMessage("hello")], [READ_FILE])

    reply_bytes = len("abcdefgh") + len("bash") + len('{"a": 1}')
    assert response.usage == Usage(
        input_tokens=len(recorder.requests[0].content) // 4, output_tokens=reply_bytes // 4, estimated=True
    )


async def test_content_null_and_content_parts(make_client: Callable[..., OpenAIChatClient]) -> None:
    parts = [{"type": "text", "text": "Hello, "}, {"type": "text", "text": "world."}]
    client = make_client(Recorder(completion({"content": None}, usage=USAGE), completion({"content": parts})))

    empty = await client.complete([UserMessage("hi")], [])
    joined = await client.complete([UserMessage("hi")], [])

    assert (empty.message, joined.message.text) == (AssistantMessage(""), "Hello, world.")


# Over real HTTP, against the fake model server.


async def test_a_tool_round_trip_over_http() -> None:
    steps: list[dict[str, Any]] = [
        {"content": "Let me read it.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
        {"content": "It prints hi."},
    ]
    with FakeModelServer(steps) as server:
        client = OpenAIChatClient(
            model="gpt-4.1", base_url=server.base_url, api_key="sk-live-1", model_name="openai/gpt-4.1"
        )
        try:
            first = await client.complete([UserMessage("What does a.py do?")], [READ_FILE])
            history: list[Message] = [
                UserMessage("What does a.py do?"),
                first.message,
                ToolResultMessage("call_1_1", "read_file", "1: print('hi')"),
            ]
            second = await client.complete(history, [READ_FILE])
        finally:
            await client.aclose()

    assert first.message == AssistantMessage(
        "Let me read it.", (ToolCall("call_1_1", "read_file", '{"path": "a.py"}'),)
    )
    assert first.finish_reason == "tool_calls"
    assert not first.usage.estimated and first.usage.input_tokens > 0
    assert second.message == AssistantMessage("It prints hi.")
    assert server.request_headers[0]["authorization"] == "Bearer sk-live-1"
    assert server.requests[1]["messages"] == [
        {"role": "user", "content": "What does a.py do?"},
        {
            "role": "assistant",
            "content": "Let me read it.",
            "tool_calls": [
                {
                    "id": "call_1_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1_1", "content": "1: print('hi')"},
    ]


async def test_raw_arguments_reach_the_caller_unparsed_over_http() -> None:
    steps = [{"tool_calls": [{"name": "bash", "id": "call_bad", "raw_arguments": '{"command": "ls'}]}]
    with FakeModelServer(steps) as server:
        client = OpenAIChatClient(model="m", base_url=server.base_url)
        try:
            response = await client.complete([UserMessage("list")], [])
        finally:
            await client.aclose()

    assert response.message.tool_calls == (ToolCall("call_bad", "bash", '{"command": "ls'),)


async def test_an_exhausted_server_script_is_a_server_error() -> None:
    with FakeModelServer([]) as server:
        client = OpenAIChatClient(model="m", base_url=server.base_url, model_name="ollama/m")
        try:
            with pytest.raises(ModelServerError) as caught:
                await client.complete([UserMessage("hi")], [])
        finally:
            await client.aclose()

    assert str(caught.value) == (
        f"the model server at {server.base_url}/chat/completions failed (HTTP 500) for model ollama/m: "
        "fake model server: no step left for request 1 (script has 0 steps)"
    )


async def test_cancelling_a_held_reply_cancels_the_call_and_the_server_still_stops() -> None:
    with FakeModelServer([{"content": "late", "delay_s": 60}]) as server:
        client = OpenAIChatClient(model="m", base_url=server.base_url)
        try:
            call = asyncio.create_task(client.complete([UserMessage("hi")], []))
            assert await asyncio.to_thread(server.wait_for_requests, 1)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
        finally:
            await client.aclose()
    assert server.requests == [{"model": "m", "messages": [{"role": "user", "content": "hi"}]}]


async def test_steps_added_after_start_and_verbatim_bodies_over_http() -> None:
    corpus_like = completion({"content": "from a body"}, usage=USAGE)
    with FakeModelServer([]) as server:
        server.steps.extend(
            [{"body": corpus_like}, {"body": json.dumps(corpus_like)}, {"tool_calls": "nope"}]
        )
        client = OpenAIChatClient(model="m", base_url=server.base_url, model_name="ollama/m")
        try:
            as_json = await client.complete([UserMessage("hi")], [])
            as_text = await client.complete([UserMessage("hi")], [])
            with pytest.raises(ModelServerError) as caught:
                await client.complete([UserMessage("hi")], [])
        finally:
            await client.aclose()

    assert as_json.message == as_text.message == AssistantMessage("from a body")
    assert "fake model server: step 3 is invalid: 1 validation error for ServerStep tool_calls" in str(
        caught.value
    )
