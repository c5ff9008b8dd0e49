"""OpenAIChatClient: the outgoing request body, whole responses (over httpx.MockTransport) and streamed
responses (over real HTTP against the fake model server): deltas, reasoning, usage, repair and failures."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from agent_ls.core.errors import (
    ModelConnectionError,
    ModelError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelResponseError,
    ModelServerError,
    ModelStreamError,
    ModelTimeoutError,
)
from agent_ls.core.events import Event, MessageDelta
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    OpaqueItem,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from agent_ls.models.base import WireConfig
from agent_ls.models.openai_chat import OpenAIChatClient, ThinkSplitter, chat_request_body
from agent_ls.models.repair import synthetic_call_id
from tests.support.model_server import FakeModelServer
from tests.support.wire_formats import sse

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


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None, **extra: Any) -> str:
    """One ``chat.completion.chunk`` event; without ``delta`` and ``finish_reason``, no choices (usage)."""
    choices = (
        []
        if delta is None and finish_reason is None
        else [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}]
    )
    return sse({"id": "chatcmpl-s", "object": "chat.completion.chunk", "choices": choices, **extra})


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
    """Non-streaming clients over httpx.MockTransport, closed after the test."""
    clients: list[OpenAIChatClient] = []

    def make(handler: Callable[[httpx.Request], httpx.Response], **kwargs: Any) -> OpenAIChatClient:
        options: dict[str, Any] = {
            "model": "qwen2.5-coder:7b",
            "base_url": BASE_URL,
            "model_name": "ollama/qwen2.5-coder:7b",
            "stream": False,
        }
        options.update(kwargs)
        client = OpenAIChatClient(WireConfig(transport=httpx.MockTransport(handler), **options))
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


async def served(
    steps: list[dict[str, Any]],
    history: list[Message] | None = None,
    tools: tuple[ToolSpec, ...] = (),
    **config: Any,
) -> tuple[ModelResponse | ModelError, list[Event], FakeModelServer]:
    """One call to a streaming client (unless ``config`` says otherwise) against the fake server: the
    response or the ModelError raised, the events emitted, and the server (for its recorded requests)."""
    events: list[Event] = []
    with FakeModelServer(steps) as server:
        options: dict[str, Any] = {"model": "m", "base_url": server.base_url, "model_name": "local/m"}
        client = OpenAIChatClient(WireConfig(**{**options, **config}))
        try:
            result: ModelResponse | ModelError = await client.complete(
                history or [UserMessage("hi")], tools, events.append
            )
        except ModelError as exc:
            result = exc
        finally:
            await client.aclose()
    return result, events, server


# The request.


async def test_request_maps_the_history_tools_and_key(make_client: Callable[..., OpenAIChatClient]) -> None:
    recorder = Recorder(completion({"content": "ok"}, usage=USAGE))
    client = make_client(recorder, api_key="sk-test-123")
    history: list[Message] = [
        SystemMessage("You are a coding agent."),
        UserMessage("Fix the bug."),
        AssistantMessage(
            "Let me look.",
            (ToolCall("call_a", "read_file", '{"path": "a.py"}'),),
            reasoning="The bug is probably in a.py.",
            opaque=(OpaqueItem("anthropic", '{"type": "thinking", "thinking": "x", "signature": "s"}'),),
        ),
        ToolResultMessage("call_a", "read_file", "1: print('hi')"),
        AssistantMessage(
            "",
            (ToolCall("call_b", "read_file", '{"path": "b.py"}'), ToolCall("call_c", "bash", "{not json")),
        ),
        ToolResultMessage("call_b", "read_file", "error: no such file", is_error=True),
        ToolResultMessage("call_c", "bash", "error: arguments are not valid JSON", is_error=True),
        AssistantMessage("Done.", reasoning="All fixed."),
        UserMessage("Thanks."),
    ]

    await client.complete(history, [READ_FILE], lambda event: None)

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
    assert recorder.requests[0].content == chat_request_body("qwen2.5-coder:7b", history, [READ_FILE])


async def test_no_tools_and_no_key_leave_out_tools_and_authorization(
    make_client: Callable[..., OpenAIChatClient],
) -> None:
    recorder = Recorder(completion({"content": "hello"}, usage=USAGE))
    client = make_client(recorder, base_url="http://llm.test/v1/")

    await client.complete([UserMessage("hi")], [], lambda event: None)

    assert str(recorder.requests[0].url) == "http://llm.test/v1/chat/completions"
    assert "authorization" not in recorder.requests[0].headers
    assert recorder.sent() == {"model": "qwen2.5-coder:7b", "messages": [{"role": "user", "content": "hi"}]}


async def test_a_streaming_request_asks_for_usage_and_sends_the_output_cap() -> None:
    _, _, server = await served([{"content": "hi"}], max_output_tokens=512)

    assert server.requests == [
        {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": 512,
        }
    ]


# Whole (non-streamed) responses.


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
    events: list[Event] = []

    response = await client.complete([UserMessage("go")], [READ_FILE], events.append)

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
    assert events == [MessageDelta("Reading it.")]


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

    response = await client.complete(history, [READ_FILE], lambda event: None)
    history += [response.message, ToolResultMessage("call_x", "read_file", "1: x = 1")]
    await client.complete(history, [READ_FILE], lambda event: None)

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

    first = await client.complete([UserMessage("go")], [], lambda event: None)
    second = await client.complete([UserMessage("go")], [], lambda event: None)

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

    response = await client.complete([UserMessage("go")], [], lambda event: None)

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

    response = await client.complete([UserMessage("weather?")], [], lambda event: None)

    assert response == ModelResponse(
        message=AssistantMessage("", (ToolCall("call_w", "get_weather", '{"location": "Lima"}'),)),
        usage=Usage(input_tokens=120, output_tokens=8),
        finish_reason="stop",
    )


async def test_reasoning_fields_and_a_leading_think_block_are_kept_apart_from_the_text(
    make_client: Callable[..., OpenAIChatClient],
) -> None:
    client = make_client(
        Recorder(
            completion({"content": "Answer one.", "reasoning_content": "Thinking one."}, usage=USAGE),
            completion({"content": "Answer two.", "reasoning": "Thinking two."}, usage=USAGE),
            completion({"content": "\n<think>\nThinking three.</think>\n\nAnswer three."}, usage=USAGE),
            completion({"content": "Answer <think>four</think>."}, usage=USAGE),
        )
    )
    events: list[Event] = []

    messages = [(await client.complete([UserMessage("q")], [], events.append)).message for _ in range(4)]

    assert messages == [
        AssistantMessage("Answer one.", reasoning="Thinking one."),
        AssistantMessage("Answer two.", reasoning="Thinking two."),
        AssistantMessage("Answer three.", reasoning="\nThinking three."),
        # Only a block at the start is reasoning.
        AssistantMessage("Answer <think>four</think>."),
    ]
    assert events[:2] == [MessageDelta("Thinking one.", "reasoning"), MessageDelta("Answer one.")]


async def test_usage_maps_cached_tokens(make_client: Callable[..., OpenAIChatClient]) -> None:
    usage = {
        "prompt_tokens": 2006,
        "completion_tokens": 300,
        "total_tokens": 2306,
        "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    client = make_client(Recorder(completion({"content": "hi"}, usage=usage)))

    response = await client.complete([UserMessage("hi")], [], lambda event: None)

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

    response = await client.complete([UserMessage("hello")], [READ_FILE], lambda event: None)

    reply_bytes = len("abcdefgh") + len("bash") + len('{"a": 1}')
    assert response.usage == Usage(
        input_tokens=len(recorder.requests[0].content) // 4, output_tokens=reply_bytes // 4, estimated=True
    )


async def test_content_null_and_content_parts(make_client: Callable[..., OpenAIChatClient]) -> None:
    parts = [{"type": "text", "text": "Hello, "}, {"type": "text", "text": "world."}]
    client = make_client(Recorder(completion({"content": None}, usage=USAGE), completion({"content": parts})))

    empty = await client.complete([UserMessage("hi")], [], lambda event: None)
    joined = await client.complete([UserMessage("hi")], [], lambda event: None)

    assert (empty.message, joined.message.text) == (AssistantMessage(""), "Hello, world.")


async def test_a_call_in_the_text_is_recovered_only_for_a_declared_tool(
    make_client: Callable[..., OpenAIChatClient],
) -> None:
    text = 'Reading.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'
    body = completion({"content": text, "tool_calls": []}, usage=USAGE)
    client = make_client(Recorder(body, body))
    events: list[Event] = []

    offered = await client.complete([UserMessage("go")], [READ_FILE], events.append)
    not_offered = await client.complete([UserMessage("go")], [], lambda event: None)

    call_id = synthetic_call_id(1, "read_file", '{"path": "a.py"}')
    recovered = ToolCall(call_id, "read_file", '{"path": "a.py"}')
    assert offered.message == AssistantMessage("Reading.", (recovered,))
    assert events == [MessageDelta("Reading.")]
    assert not_offered.message == AssistantMessage(text)


@pytest.mark.parametrize(
    ("body", "error_class", "message"),
    [
        (
            {"error": {"message": "Overloaded", "type": "overloaded_error"}},
            ModelOverloadedError,
            "the model server at http://llm.test/v1/chat/completions sent an error after HTTP 200 "
            "for model ollama/qwen2.5-coder:7b: Overloaded (overloaded_error)",
        ),
        (
            {"error": "upstream went away"},
            ModelServerError,
            "the model server at http://llm.test/v1/chat/completions sent an error after HTTP 200 "
            "for model ollama/qwen2.5-coder:7b: upstream went away",
        ),
        (
            {"choices": []},
            ModelResponseError,
            "the model server at http://llm.test/v1/chat/completions sent an unreadable response for model "
            "ollama/qwen2.5-coder:7b: unexpected body: choices: List should have at least 1 item after "
            "validation, not 0",
        ),
    ],
    ids=["overloaded", "error-text", "no-choices"],
)
async def test_a_200_body_that_is_an_error_or_not_a_completion_fails(
    make_client: Callable[..., OpenAIChatClient],
    body: dict[str, Any],
    error_class: type[ModelError],
    message: str,
) -> None:
    client = make_client(Recorder(body))

    with pytest.raises(ModelError) as caught:
        await client.complete([UserMessage("hi")], [], lambda event: None)

    assert (type(caught.value), str(caught.value)) == (error_class, message)


# Streamed responses, over real HTTP.


async def test_stream_deltas_arrive_in_order_with_reasoning_apart() -> None:
    result, events, _ = await served([{"reasoning": "Think first.", "content": "Hello, world!"}])

    # The fake server streams 8 characters per chunk.
    assert events == [
        MessageDelta("Think fi", "reasoning"),
        MessageDelta("rst.", "reasoning"),
        MessageDelta("Hello, w"),
        MessageDelta("orld!"),
    ]
    assert isinstance(result, ModelResponse)
    assert result.message == AssistantMessage("Hello, world!", reasoning="Think first.")
    assert result.finish_reason == "stop"
    assert not result.usage.estimated and result.usage.input_tokens > 0


async def test_a_streamed_tool_round_trip() -> None:
    steps: list[dict[str, Any]] = [
        {"content": "Let me read it.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
        {"content": "It prints hi."},
    ]
    with FakeModelServer(steps) as server:
        config = WireConfig(model="gpt-4.1", base_url=server.base_url, api_key="sk-live-1")
        client = OpenAIChatClient(config)
        try:
            first = await client.complete([UserMessage("What does a.py do?")], [READ_FILE], lambda e: None)
            history: list[Message] = [
                UserMessage("What does a.py do?"),
                first.message,
                ToolResultMessage("call_1_1", "read_file", "1: print('hi')"),
            ]
            second = await client.complete(history, [READ_FILE], lambda e: None)
        finally:
            await client.aclose()

    assert first.message == AssistantMessage(
        "Let me read it.", (ToolCall("call_1_1", "read_file", '{"path": "a.py"}'),)
    )
    assert first.finish_reason == "tool_calls"
    assert second.message == AssistantMessage("It prints hi.")
    assert server.request_headers[0]["authorization"] == "Bearer sk-live-1"
    assert server.requests[1]["messages"][1:] == [
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


async def test_usage_comes_from_the_final_usage_chunk() -> None:
    usage = {
        "prompt_tokens": 900,
        "completion_tokens": 12,
        "total_tokens": 912,
        "prompt_tokens_details": {"cached_tokens": 640},
    }
    chunks = [
        chunk({"role": "assistant", "content": "Hi."}, usage=None),
        chunk({}, "stop", usage=None),
        chunk(usage=usage),
        sse("[DONE]"),
    ]

    result, _, _ = await served([{"chunks": chunks}])

    assert isinstance(result, ModelResponse)
    assert result.usage == Usage(input_tokens=900, output_tokens=12, cached_input_tokens=640)


async def test_a_stream_without_usage_is_estimated() -> None:
    chunks = [chunk({"content": "abcdefgh"}), chunk({}, "stop"), sse("[DONE]")]

    result, _, server = await served([{"chunks": chunks}])

    request_bytes = len(json.dumps(server.requests[0], ensure_ascii=False).encode())
    assert isinstance(result, ModelResponse)
    assert result.usage == Usage(input_tokens=request_bytes // 4, output_tokens=2, estimated=True)


async def test_done_without_a_finish_reason_completes_the_response() -> None:
    chunks = [chunk({"content": "All done."}), sse("[DONE]")]

    result, _, _ = await served([{"chunks": chunks}])

    assert isinstance(result, ModelResponse)
    assert (result.message, result.finish_reason) == (AssistantMessage("All done."), None)


@pytest.mark.parametrize("end", ["close", "reset"])
async def test_a_truncated_stream_is_a_stream_error_never_a_response(end: str) -> None:
    started = {"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": "{"}}
    chunks = [chunk({"content": "I will edit "}), chunk({"tool_calls": [started]})]

    result, events, server = await served([{"chunks": chunks, "end": end}], tools=(READ_FILE,))

    # A reset surfaces from httpx as a broken read (ModelConnectionError, the parent of ModelStreamError).
    assert isinstance(result, ModelConnectionError) and result.retryable
    if end == "close":
        assert isinstance(result, ModelStreamError)
        assert str(result) == (
            f"the stream from {server.base_url}/chat/completions for model local/m broke: "
            "ended before the response was complete (no finish_reason, no [DONE])"
        )
    assert events == [MessageDelta("I will edit ")]


@pytest.mark.parametrize(
    ("error_chunk", "error_class", "said"),
    [
        (
            sse({"error": {"message": "Overloaded", "type": "overloaded_error"}}),
            ModelOverloadedError,
            "sent an error after HTTP 200 for model local/m: Overloaded (overloaded_error)",
        ),
        # OpenRouter: an error member next to choices that end with finish_reason "error".
        (
            sse(
                {
                    "id": "gen-1",
                    "error": {"code": 502, "message": "Provider disconnected sk-live-9 unexpectedly"},
                    "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
                }
            ),
            ModelServerError,
            "sent an error after HTTP 200 for model local/m: Provider disconnected *** unexpectedly (502)",
        ),
        (
            chunk({}, "error"),
            ModelServerError,
            "sent an error after HTTP 200 for model local/m: "
            "the server ended the response with finish_reason error",
        ),
        (
            'event: error\ndata: {"message": "model overloaded, try later"}\n\n',
            ModelOverloadedError,
            "sent an error after HTTP 200 for model local/m: model overloaded, try later",
        ),
    ],
    ids=["overloaded", "openrouter", "finish-error", "error-event"],
)
async def test_an_in_band_error_fails_the_call_as_retryable(
    error_chunk: str, error_class: type[ModelError], said: str
) -> None:
    chunks = [chunk({"content": "Partial "}), error_chunk, chunk({}, "stop"), sse("[DONE]")]

    result, events, server = await served([{"chunks": chunks}], api_key="sk-live-9")

    assert type(result) is error_class and result.retryable
    assert str(result) == f"the model server at {server.base_url}/chat/completions {said}"
    assert events == [MessageDelta("Partial ")]


async def test_invalid_json_in_a_data_line_is_a_stream_error() -> None:
    chunks = [chunk({"content": "ok"}), 'data: {"choices": [\n\n', chunk({}, "stop")]

    result, _, server = await served([{"chunks": chunks}])

    assert isinstance(result, ModelStreamError)
    assert str(result) == (
        f"the stream from {server.base_url}/chat/completions for model local/m broke: "
        "an event is not JSON: '{\"choices\": ['"
    )


async def test_a_json_reply_to_a_streaming_request_is_read_whole() -> None:
    body = completion({"content": "Plain JSON.", "reasoning_content": "Hm."}, usage=USAGE)

    result, events, server = await served([{"body": body}])

    assert server.requests[0]["stream"] is True
    assert isinstance(result, ModelResponse)
    assert result.message == AssistantMessage("Plain JSON.", reasoning="Hm.")
    assert events == [MessageDelta("Hm.", "reasoning"), MessageDelta("Plain JSON.")]


async def test_a_streamed_think_block_split_across_chunks_is_reasoning() -> None:
    pieces = ["<thi", "nk>Look at", " a.py.</th", "ink>\n", "\nIt ", "prints hi."]
    chunks = [chunk({"content": piece}) for piece in pieces] + [chunk({}, "stop"), sse("[DONE]")]

    result, events, _ = await served([{"chunks": chunks}])

    assert events == [
        MessageDelta("Look at", "reasoning"),
        MessageDelta(" a.py.", "reasoning"),
        MessageDelta("It "),
        MessageDelta("prints hi."),
    ]
    assert isinstance(result, ModelResponse)
    assert result.message == AssistantMessage("It prints hi.", reasoning="Look at a.py.")


async def test_text_held_as_a_possible_think_tag_is_emitted_at_the_end() -> None:
    chunks = [chunk({"content": "<th"}), chunk({}, "stop"), sse("[DONE]")]

    result, events, _ = await served([{"chunks": chunks}])

    assert events == [MessageDelta("<th")]
    assert isinstance(result, ModelResponse) and result.message == AssistantMessage("<th")


async def test_streamed_calls_without_index_or_with_new_ids_are_kept_apart() -> None:
    def call(call_id: str | None, name: str | None, arguments: str, index: int | None) -> str:
        entry: dict[str, Any] = {"function": {"name": name, "arguments": arguments}}
        if call_id is not None:
            entry["id"] = call_id
        if index is not None:
            entry["index"] = index
        return chunk({"tool_calls": [entry]})

    chunks = [
        call("c1", "read_file", '{"path":', 3),
        call(None, "", ' "a.py"}', 3),
        call("c2", "read_file", '{"path": "b.py"}', 3),
        call("c3", "read_file", "", None),
        call("", None, '{"path": "c.py"}', None),
        chunk({}, "tool_calls"),
    ]

    result, _, _ = await served([{"chunks": chunks}], tools=(READ_FILE,))

    assert isinstance(result, ModelResponse)
    assert result.message.tool_calls == (
        ToolCall("c1", "read_file", '{"path": "a.py"}'),
        ToolCall("c2", "read_file", '{"path": "b.py"}'),
        ToolCall("c3", "read_file", '{"path": "c.py"}'),
    )


async def test_a_call_streamed_as_text_is_recovered_at_the_end() -> None:
    text = '[TOOL_CALLS]read_file[ARGS]{"path": "a.py"}'
    chunks = [chunk({"content": text[:12]}), chunk({"content": text[12:]}), chunk({}, "stop")]

    result, _, _ = await served([{"chunks": chunks}], tools=(READ_FILE,))

    assert isinstance(result, ModelResponse)
    call_id = synthetic_call_id(1, "read_file", '{"path": "a.py"}')
    assert result.message == AssistantMessage("", (ToolCall(call_id, "read_file", '{"path": "a.py"}'),))


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["Hello"], [("text", "Hello")]),
        (["  <think>a</think>b"], [("reasoning", "a"), ("text", "b")]),
        (["<", "think", ">", "a<", "/think>", "  ", "b"], [("reasoning", "a"), ("text", "b")]),
        (["<thinking>x"], [("text", "<thinking>x")]),
        (["<think>unclosed </thi"], [("reasoning", "unclosed "), ("reasoning", "</thi")]),
        (["  "], [("text", "  ")]),
        (["<think>a</think>  "], [("reasoning", "a")]),
    ],
)
def test_think_splitter(pieces: list[str], expected: list[tuple[str, str]]) -> None:
    splitter = ThinkSplitter()

    out = [pair for piece in pieces for pair in splitter.feed(piece)] + splitter.flush()

    assert out == expected


# Plumbing over real HTTP.


async def test_an_exhausted_server_script_is_a_server_error() -> None:
    result, _, server = await served([])

    assert isinstance(result, ModelServerError)
    assert str(result) == (
        f"the model server at {server.base_url}/chat/completions failed (HTTP 500) for model local/m: "
        "fake model server: no step left for request 1 (script has 0 steps)"
    )


async def test_raw_arguments_reach_the_caller_unparsed_over_http() -> None:
    steps = [{"tool_calls": [{"name": "bash", "id": "call_bad", "raw_arguments": '{"command": "ls'}]}]

    result, _, _ = await served(steps, stream=False)

    assert isinstance(result, ModelResponse)
    assert result.message.tool_calls == (ToolCall("call_bad", "bash", '{"command": "ls'),)


async def test_cancelling_a_held_reply_cancels_the_call_and_the_server_still_stops() -> None:
    with FakeModelServer([{"content": "late", "delay_s": 60}]) as server:
        client = OpenAIChatClient(WireConfig(model="m", base_url=server.base_url, stream=False))
        try:
            call = asyncio.create_task(client.complete([UserMessage("hi")], [], lambda event: None))
            assert await asyncio.to_thread(server.wait_for_requests, 1)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
        finally:
            await client.aclose()
    assert server.requests == [{"model": "m", "messages": [{"role": "user", "content": "hi"}]}]


async def test_a_stream_with_no_event_is_a_plain_error_that_names_the_fix() -> None:
    """llama-cpp-python answers HTTP 200 and an empty stream when it cannot stream tool calls."""
    with FakeModelServer([{"chunks": [": ping\n\n"]}]) as server:
        client = OpenAIChatClient(WireConfig(model="m", base_url=server.base_url, model_name="llamacpp/m"))
        try:
            with pytest.raises(ModelResponseError) as caught:
                await client.complete([UserMessage("hi")], [], lambda _event: None)
        finally:
            await client.aclose()
    message = str(caught.value)
    assert not caught.value.retryable
    assert f"{server.base_url}/chat/completions" in message and "llamacpp/m" in message
    assert "set stream = false for this provider" in message


async def test_a_stream_kept_alive_by_comments_only_times_out() -> None:
    """Comments (": keep-alive") are not progress: the idle timeout counts from the last event."""
    first = 'data: {"choices": [{"index": 0, "delta": {"content": "Thinking..."}}]}\n\n'
    with FakeModelServer([{"chunks": [first], "end": "hang"}]) as server:
        client = OpenAIChatClient(WireConfig(model="m", base_url=server.base_url, timeout_s=0.3))
        try:
            with pytest.raises(ModelTimeoutError) as caught:
                await asyncio.wait_for(client.complete([UserMessage("hi")], [], lambda _event: None), 10)
        finally:
            await client.aclose()
    assert str(caught.value) == (
        f"the stream from {server.base_url}/chat/completions for model m sent no event for 0.3 s"
    )
    assert not caught.value.retryable


@pytest.mark.parametrize("stream", [True, False])
async def test_a_redirect_is_reported_as_such_streamed_or_not(stream: bool) -> None:
    step = {"status": 307, "headers": {"Location": "http://127.0.0.1:1/steal"}, "body": ""}
    with FakeModelServer([step]) as server:
        client = OpenAIChatClient(
            WireConfig(model="m", base_url=server.base_url, stream=stream, api_key="sk-0123456789")
        )
        try:
            with pytest.raises(ModelNotFoundError) as caught:
                await client.complete([UserMessage("hi")], [], lambda _event: None)
        finally:
            await client.aclose()
    assert "redirected (HTTP 307) to http://127.0.0.1:1/steal" in str(caught.value)
    assert len(server.requests) == 1  # never followed: the key does not go to the new place
