"""AnthropicClient: the outgoing Messages request (system, alternation, tool results, thinking echo, cache
breakpoints), whole and streamed responses through the fake model server, usage, and failures (in-band
errors, truncated streams, HTTP 529)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from agent_ls.core.errors import (
    ModelAuthError,
    ModelConnectionError,
    ModelContextOverflowError,
    ModelError,
    ModelOverloadedError,
    ModelRateLimitError,
    ModelRequestError,
    ModelResponseError,
    ModelServerError,
    ModelStreamError,
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
from agent_ls.models.anthropic import ANTHROPIC_VERSION, DEFAULT_ANTHROPIC_MAX_TOKENS, AnthropicClient
from agent_ls.models.base import INTERRUPTED, Prices, WireConfig
from tests.support.model_server import FakeModelServer, ServerStep
from tests.support.wire_formats import _token_counts, sse

KEY = "sk-ant-test-0123456789abcdef"
MODEL = "claude-sonnet-4-5"
SHOWN = "anthropic/claude-sonnet-4-5"
BASE_URL = "http://llm.test/v1"
EPHEMERAL = {"type": "ephemeral"}
READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
BASH = ToolSpec(name="bash", description="Run a command.", parameters={"type": "object"})
THINKING = {"type": "thinking", "thinking": "The bug is in a.py.", "signature": "EqQBCkYIARgCKkDsig=="}


class Recorder:
    """A MockTransport handler: answers with ``bodies`` in order (JSON) and records each request."""

    def __init__(self, *bodies: Any) -> None:
        self.bodies = list(bodies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json=self.bodies[len(self.requests) - 1])

    def sent(self, index: int = 0) -> Any:
        return json.loads(self.requests[index].content)


def message_body(content: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }
    body.update(extra)
    return body


@pytest.fixture
async def make_client() -> AsyncIterator[Callable[..., AnthropicClient]]:
    clients: list[AnthropicClient] = []

    def make(
        handler: Callable[[httpx.Request], httpx.Response] | None = None, **kwargs: Any
    ) -> AnthropicClient:
        options: dict[str, Any] = {"model": MODEL, "base_url": BASE_URL, "model_name": SHOWN, "api_key": KEY}
        if handler is not None:
            options["transport"] = httpx.MockTransport(handler)
        options.update(kwargs)
        client = AnthropicClient(WireConfig(**options))
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


def collect() -> tuple[list[Event], Callable[[Event], None]]:
    events: list[Event] = []
    return events, events.append


def count_breakpoints(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(count_breakpoints(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_breakpoints(v) for v in value)
    return 0


# --- the request -------------------------------------------------------------------------------------


async def test_request_maps_system_alternation_parallel_results_thinking_and_breakpoints(
    make_client: Callable[..., AnthropicClient],
) -> None:
    recorder = Recorder(message_body([{"type": "text", "text": "ok"}]))
    client = make_client(recorder)
    history: list[Message] = [
        SystemMessage("You are agent-ls."),
        SystemMessage("# Instructions\nUse pytest."),
        UserMessage("Fix the bug."),
        UserMessage("It is in a.py or b.py."),
        AssistantMessage(
            "Reading both.",
            (
                ToolCall("toolu_1", "read_file", '{"path": "a.py"}'),
                ToolCall("toolu_2", "read_file", '{"path": "b.py"'),
            ),
            reasoning="The bug is in a.py.",
            opaque=(
                OpaqueItem("anthropic", json.dumps(THINKING)),
                OpaqueItem("openai-responses", '{"type": "reasoning", "id": "rs_1"}'),
            ),
        ),
        ToolResultMessage("toolu_1", "read_file", "x = 1"),
        ToolResultMessage("toolu_2", "read_file", "error: arguments are not valid JSON", is_error=True),
        UserMessage("Also check c.py."),
        AssistantMessage(""),
        UserMessage("Please."),
    ]

    await client.complete(history, [READ_FILE, BASH], collect()[1])

    assert str(recorder.requests[0].url) == "http://llm.test/v1/messages"
    assert recorder.sent() == {
        "model": MODEL,
        "max_tokens": DEFAULT_ANTHROPIC_MAX_TOKENS,
        "system": [
            {"type": "text", "text": "You are agent-ls."},
            {"type": "text", "text": "# Instructions\nUse pytest.", "cache_control": EPHEMERAL},
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Fix the bug."},
                    {"type": "text", "text": "It is in a.py or b.py.", "cache_control": EPHEMERAL},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    THINKING,
                    {"type": "text", "text": "Reading both."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
                    # Malformed arguments: an empty object keeps the history valid.
                    {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x = 1", "is_error": False},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": "error: arguments are not valid JSON",
                        "is_error": True,
                    },
                    {"type": "text", "text": "Also check c.py."},
                    # The empty assistant message is left out, so the two user messages merge.
                    {"type": "text", "text": "Please.", "cache_control": EPHEMERAL},
                ],
            },
        ],
        "tools": [
            {"name": "read_file", "description": "Read a file.", "input_schema": READ_FILE.parameters},
            {
                "name": "bash",
                "description": "Run a command.",
                "input_schema": {"type": "object"},
                "cache_control": EPHEMERAL,
            },
        ],
        "stream": True,
    }


async def test_breakpoints_close_the_prefix_and_never_exceed_four(
    make_client: Callable[..., AnthropicClient],
) -> None:
    recorder = Recorder(*[message_body([{"type": "text", "text": "ok"}])] * 3)
    client = make_client(recorder, stream=False, max_output_tokens=1024)
    emit = collect()[1]
    history: list[Message] = [SystemMessage("sys"), UserMessage("task")]
    for turn in range(1, 6):
        calls = tuple(ToolCall(f"toolu_{turn}_{i}", "bash", '{"command": "ls"}') for i in range(3))
        history.append(AssistantMessage("", calls))
        history += [ToolResultMessage(call.call_id, "bash", "out") for call in calls]

    await client.complete([UserMessage("hi")], [], emit)
    await client.complete([SystemMessage("sys"), UserMessage("hi")], [], emit)
    await client.complete(history, [BASH], emit)

    assert [count_breakpoints(recorder.sent(i)) for i in range(3)] == [1, 2, 4]
    assert recorder.sent(0)["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": EPHEMERAL}]}
    ]
    long = recorder.sent(2)
    assert long["max_tokens"] == 1024
    assert long["stream"] is False
    assert long["tools"][-1]["cache_control"] == EPHEMERAL
    assert long["system"][-1]["cache_control"] == EPHEMERAL
    # The newest user message (the last results) and the one before it: the previous turn's cache entry.
    marked = [
        (index, block["tool_use_id"])
        for index, message in enumerate(long["messages"])
        for block in message["content"]
        if "cache_control" in block
    ]
    assert marked == [(8, "toolu_4_2"), (10, "toolu_5_2")]
    assert [m["role"] for m in long["messages"]] == ["user", "assistant"] * 5 + ["user"]


async def test_an_unanswered_call_gets_an_interrupted_result(
    make_client: Callable[..., AnthropicClient],
) -> None:
    recorder = Recorder(message_body([{"type": "text", "text": "ok"}]))
    client = make_client(recorder)

    await client.complete(
        [UserMessage("go"), AssistantMessage("", (ToolCall("toolu_9", "bash", "{}"),)), UserMessage("stop")],
        [BASH],
        collect()[1],
    )

    assert recorder.sent()["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_9", "content": INTERRUPTED, "is_error": True},
            {"type": "text", "text": "stop", "cache_control": EPHEMERAL},
        ],
    }


async def test_key_goes_in_x_api_key_with_the_version(make_client: Callable[..., AnthropicClient]) -> None:
    with FakeModelServer([{"content": "hi"}, {"content": "hi"}]) as server:
        keyed = make_client(base_url=server.base_url)
        keyless = make_client(base_url=server.base_url, api_key=None)
        await keyed.complete([UserMessage("hi")], [], collect()[1])
        await keyless.complete([UserMessage("hi")], [], collect()[1])

    with_key, without_key = server.request_headers
    assert (with_key["x-api-key"], with_key["anthropic-version"]) == (KEY, ANTHROPIC_VERSION)
    assert "authorization" not in with_key
    assert without_key["anthropic-version"] == ANTHROPIC_VERSION
    assert "x-api-key" not in without_key


# --- whole and streamed exchanges --------------------------------------------------------------------

FIRST_STEP = {
    "reasoning": "Look at a.py first.",
    "content": "Reading a.py.",
    "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}],
}
SECOND_STEP = {"content": "a.py holds x = 1."}


def served_usage(server: FakeModelServer, number: int, step: dict[str, Any]) -> Usage:
    """The usage the fake server reported for request ``number`` (1-based)."""
    request_bytes = int(server.request_headers[number - 1]["content-length"])
    input_tokens, output_tokens = _token_counts(ServerStep.model_validate(step), request_bytes)
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_two_turn_exchange(make_client: Callable[..., AnthropicClient], stream: bool) -> None:
    events, emit = collect()
    with FakeModelServer([FIRST_STEP, SECOND_STEP]) as server:
        client = make_client(base_url=server.base_url, stream=stream)
        history: list[Message] = [SystemMessage("You are agent-ls."), UserMessage("What is in a.py?")]
        first = await client.complete(history, [READ_FILE], emit)
        history += [first.message, ToolResultMessage("call_1_1", "read_file", "x = 1")]
        second = await client.complete(history, [READ_FILE], emit)

    thinking = {"type": "thinking", "thinking": "Look at a.py first.", "signature": "sig-1"}
    assert first == ModelResponse(
        message=AssistantMessage(
            text="Reading a.py.",
            tool_calls=(ToolCall("call_1_1", "read_file", '{"path": "a.py"}'),),
            reasoning="Look at a.py first.",
            opaque=(OpaqueItem("anthropic", json.dumps(thinking)),),
        ),
        usage=served_usage(server, 1, FIRST_STEP),
        finish_reason="tool_use",
    )
    assert second == ModelResponse(
        message=AssistantMessage(text="a.py holds x = 1."),
        usage=served_usage(server, 2, SECOND_STEP),
        finish_reason="end_turn",
    )
    if stream:
        assert events == [
            MessageDelta("Look at ", "reasoning"),
            MessageDelta("a.py fir", "reasoning"),
            MessageDelta("st.", "reasoning"),
            MessageDelta("Reading "),
            MessageDelta("a.py."),
            MessageDelta("a.py hol"),
            MessageDelta("ds x = 1"),
            MessageDelta("."),
        ]
    else:
        assert events == [
            MessageDelta("Look at a.py first.", "reasoning"),
            MessageDelta("Reading a.py."),
            MessageDelta("a.py holds x = 1."),
        ]
    assert [request["stream"] for request in server.requests] == [stream, stream]
    assert server.requests[1]["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "What is in a.py?", "cache_control": EPHEMERAL}],
        },
        {
            "role": "assistant",
            "content": [
                thinking,
                {"type": "text", "text": "Reading a.py."},
                {"type": "tool_use", "id": "call_1_1", "name": "read_file", "input": {"path": "a.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1_1",
                    "content": "x = 1",
                    "is_error": False,
                    "cache_control": EPHEMERAL,
                }
            ],
        },
    ]


async def test_interleaved_and_redacted_thinking_go_back_in_place(
    make_client: Callable[..., AnthropicClient],
) -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}
    second_thinking = {"type": "thinking", "thinking": "Now b.py.", "signature": "c2lnLTI="}
    content: list[dict[str, Any]] = [
        THINKING,
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.py"}},
        redacted,
        second_thinking,
        {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "b.py"}},
    ]
    recorder = Recorder(
        message_body(content, stop_reason="tool_use"), message_body([{"type": "text", "text": "ok"}])
    )
    client = make_client(recorder, stream=False)

    response = await client.complete([UserMessage("go")], [READ_FILE], collect()[1])
    results = [ToolResultMessage(call.call_id, call.name, "x") for call in response.message.tool_calls]
    await client.complete([UserMessage("go"), response.message, *results], [READ_FILE], collect()[1])

    assert response.message == AssistantMessage(
        text="Reading.",
        tool_calls=(
            ToolCall("toolu_a", "read_file", '{"path": "a.py"}'),
            ToolCall("toolu_b", "read_file", '{"path": "b.py"}'),
        ),
        reasoning="The bug is in a.py.\n\nNow b.py.",
        opaque=(
            OpaqueItem("anthropic", json.dumps(THINKING)),
            OpaqueItem("anthropic", json.dumps(redacted), before_call=1),
            OpaqueItem("anthropic", json.dumps(second_thinking), before_call=1),
        ),
    )
    assert recorder.sent(1)["messages"][1] == {"role": "assistant", "content": content}


async def test_streamed_blocks_accumulate_signature_fragments_and_whole_start_input(
    make_client: Callable[..., AnthropicClient],
) -> None:
    chunks = [
        sse(
            {"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}},
            "message_start",
        ),
        sse(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}
        ),
        sse(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "Hm."},
            }
        ),
        sse(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "ab"},
            }
        ),
        sse(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "cd"},
            }
        ),
        sse({"type": "content_block_stop", "index": 0}),
        sse(
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "thinking", "thinking": "More."},
            }
        ),
        sse({"type": "content_block_stop", "index": 1}),
        # A proxy that sends the input whole at the start and no fragments.
        sse(
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_x",
                    "name": "bash",
                    "input": {"command": "ls"},
                },
            }
        ),
        sse({"type": "content_block_stop", "index": 2}),
        sse({"type": "future_event", "detail": "ignored"}, "future_event"),
        sse({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        sse({"type": "message_stop"}),
    ]
    events, emit = collect()
    with FakeModelServer([{"chunks": chunks}]) as server:
        client = make_client(base_url=server.base_url)
        response = await client.complete([UserMessage("go")], [BASH], emit)

    assert response == ModelResponse(
        message=AssistantMessage(
            tool_calls=(ToolCall("toolu_x", "bash", '{"command": "ls"}'),),
            reasoning="Hm.\n\nMore.",
            opaque=(
                OpaqueItem(
                    "anthropic", json.dumps({"type": "thinking", "thinking": "Hm.", "signature": "abcd"})
                ),
                OpaqueItem(
                    "anthropic", json.dumps({"type": "thinking", "thinking": "More.", "signature": ""})
                ),
            ),
        ),
        usage=Usage(input_tokens=5, output_tokens=9),
        finish_reason="tool_use",
    )
    assert events == [
        MessageDelta("Hm.", "reasoning"),
        MessageDelta("\n\n", "reasoning"),
        MessageDelta("More.", "reasoning"),
    ]


async def test_calls_written_into_the_text_are_recovered_only_with_tools(
    make_client: Callable[..., AnthropicClient],
) -> None:
    text = 'Reading. <tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>'
    recorder = Recorder(*[message_body([{"type": "text", "text": text}])] * 2)
    client = make_client(recorder, stream=False)

    offered = await client.complete([UserMessage("go")], [READ_FILE], collect()[1])
    not_offered = await client.complete([UserMessage("go")], [], collect()[1])

    assert offered.message.text == "Reading."
    assert [(c.name, json.loads(c.arguments)) for c in offered.message.tool_calls] == [
        ("read_file", {"path": "a.py"})
    ]
    assert all(c.call_id for c in offered.message.tool_calls)
    assert not_offered.message == AssistantMessage(text=text)


# --- usage -------------------------------------------------------------------------------------------


async def test_whole_usage_counts_cache_reads_and_writes_as_input(
    make_client: Callable[..., AnthropicClient],
) -> None:
    usage = {
        "input_tokens": 50,
        "cache_creation_input_tokens": 1000,
        "cache_read_input_tokens": 3000,
        "output_tokens": 20,
    }
    recorder = Recorder(message_body([{"type": "text", "text": "ok"}], usage=usage))
    prices = Prices(input=3.0, output=15.0, cached_input=0.3)
    client = make_client(recorder, stream=False, prices=prices)

    response = await client.complete([UserMessage("hi")], [], collect()[1])

    assert response.usage == Usage(
        input_tokens=4050,
        output_tokens=20,
        cached_input_tokens=3000,
        cost_usd=(1050 * 3.0 + 3000 * 0.3 + 20 * 15.0) / 1_000_000,
    )


async def test_streamed_usage_joins_message_start_and_message_delta(
    make_client: Callable[..., AnthropicClient],
) -> None:
    start_usage = {
        "input_tokens": 12,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 2048,
        "output_tokens": 1,
    }
    chunks = [
        sse({"type": "message_start", "message": {"content": [], "usage": start_usage}}, "message_start"),
        sse({"type": "ping"}, "ping"),
        sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done."}}),
        sse({"type": "content_block_stop", "index": 0}),
        sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 42}}),
        sse({"type": "message_stop"}, "message_stop"),
    ]
    with FakeModelServer([{"chunks": chunks}]) as server:
        client = make_client(base_url=server.base_url)
        response = await client.complete([UserMessage("hi")], [], collect()[1])

    assert response == ModelResponse(
        message=AssistantMessage(text="Done."),
        usage=Usage(input_tokens=2060, output_tokens=42, cached_input_tokens=2048),
        finish_reason="end_turn",
    )


async def test_missing_usage_is_estimated(make_client: Callable[..., AnthropicClient]) -> None:
    body = message_body([{"type": "text", "text": "12345678"}])
    del body["usage"]
    client = make_client(Recorder(body), stream=False)

    response = await client.complete([UserMessage("hi")], [], collect()[1])

    assert response.usage.estimated
    assert response.usage.output_tokens == 2


# --- failures ----------------------------------------------------------------------------------------


def error_event(error_type: str, message: str) -> str:
    return sse({"type": "error", "error": {"type": error_type, "message": message}}, "error")


PARTIAL = [
    sse(
        {"type": "message_start", "message": {"usage": {"input_tokens": 9, "output_tokens": 1}}},
        "message_start",
    ),
    sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "I'll start"}}),
]


@pytest.mark.parametrize(
    ("error_type", "message", "error_class"),
    [
        ("overloaded_error", "Overloaded", ModelOverloadedError),
        ("rate_limit_error", "Number of request tokens has exceeded your rate limit", ModelRateLimitError),
        ("invalid_request_error", "messages.1.content: tool_use ids must be unique", ModelRequestError),
        (
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
            ModelContextOverflowError,
        ),
        ("api_error", "Internal server error", ModelServerError),
        ("some_new_error", "", ModelServerError),
    ],
)
async def test_in_band_error_event_fails_the_call(
    make_client: Callable[..., AnthropicClient], error_type: str, message: str, error_class: type[ModelError]
) -> None:
    events, emit = collect()
    with FakeModelServer([{"chunks": [*PARTIAL, error_event(error_type, message)]}]) as server:
        client = make_client(base_url=server.base_url)
        with pytest.raises(ModelError) as caught:
            await client.complete([UserMessage("go")], [], emit)

    assert type(caught.value) is error_class
    assert caught.value.retryable == issubclass(error_class, (ModelRateLimitError, ModelServerError))
    assert str(caught.value) == (
        f"the model server at {server.base_url}/messages sent an error after HTTP 200 for model {SHOWN}: "
        f"{message or 'no message'} ({error_type})"
    )
    assert events == [MessageDelta("I'll start")]


async def test_error_body_with_status_200_is_an_error(make_client: Callable[..., AnthropicClient]) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with FakeModelServer([{"body": body}]) as server:
        client = make_client(base_url=server.base_url, stream=False)
        with pytest.raises(ModelOverloadedError) as caught:
            await client.complete([UserMessage("go")], [], collect()[1])

    assert caught.value.retryable
    assert SHOWN in str(caught.value)


async def test_stream_without_message_stop_is_a_stream_error(
    make_client: Callable[..., AnthropicClient],
) -> None:
    events, emit = collect()
    with FakeModelServer([{"chunks": PARTIAL}]) as server:
        client = make_client(base_url=server.base_url)
        with pytest.raises(ModelStreamError) as caught:
            await client.complete([UserMessage("go")], [], emit)

    assert str(caught.value) == (
        f"the stream from {server.base_url}/messages for model {SHOWN} broke: "
        "the stream ended before message_stop"
    )
    assert caught.value.retryable
    assert events == [MessageDelta("I'll start")]


async def test_connection_reset_mid_stream_is_a_retryable_connection_error(
    make_client: Callable[..., AnthropicClient],
) -> None:
    with FakeModelServer([{"chunks": PARTIAL, "end": "reset"}]) as server:
        client = make_client(base_url=server.base_url)
        with pytest.raises(ModelConnectionError) as caught:
            await client.complete([UserMessage("go")], [], collect()[1])

    assert caught.value.retryable
    assert f"{server.base_url}/messages" in str(caught.value)


async def test_event_that_is_not_json_is_a_stream_error(make_client: Callable[..., AnthropicClient]) -> None:
    with FakeModelServer(
        [{"chunks": [PARTIAL[0], "event: content_block_start\ndata: {not json\n\n"]}]
    ) as server:
        client = make_client(base_url=server.base_url)
        with pytest.raises(ModelStreamError, match="'content_block_start' is not JSON"):
            await client.complete([UserMessage("go")], [], collect()[1])


async def test_body_without_content_is_a_response_error(make_client: Callable[..., AnthropicClient]) -> None:
    client = make_client(Recorder({"id": "msg_1", "type": "message"}), stream=False)

    with pytest.raises(ModelResponseError) as caught:
        await client.complete([UserMessage("go")], [], collect()[1])

    assert str(caught.value) == (
        f"the model server at {BASE_URL}/messages sent an unreadable response for model {SHOWN}: "
        "unexpected body: content: Field required"
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_http_529_is_overloaded_with_the_servers_wait(
    make_client: Callable[..., AnthropicClient], stream: bool
) -> None:
    step = {
        "status": 529,
        "body": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        "headers": {"retry-after": "7"},
    }
    with FakeModelServer([step]) as server:
        client = make_client(base_url=server.base_url, stream=stream)
        with pytest.raises(ModelOverloadedError) as caught:
            await client.complete([UserMessage("go")], [], collect()[1])

    assert caught.value.retry_after_s == 7.0
    assert str(caught.value) == (
        f"the model server at {server.base_url}/messages is overloaded (HTTP 529) "
        f"for model {SHOWN}: Overloaded"
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_key_never_appears_in_an_error(
    make_client: Callable[..., AnthropicClient], stream: bool
) -> None:
    echoed = f"invalid x-api-key: {KEY}"
    in_band_body = {"type": "error", "error": {"type": "api_error", "message": echoed}}
    steps: list[dict[str, Any]] = [
        {
            "status": 401,
            "body": {"type": "error", "error": {"type": "authentication_error", "message": echoed}},
        },
        {"chunks": [*PARTIAL, sse(in_band_body, "error")]} if stream else {"body": in_band_body},
    ]
    with FakeModelServer(steps) as server:
        client = make_client(base_url=server.base_url, stream=stream)
        with pytest.raises(ModelAuthError) as auth:
            await client.complete([UserMessage("go")], [], collect()[1])
        with pytest.raises(ModelServerError) as in_band:
            await client.complete([UserMessage("go")], [], collect()[1])

    assert server.request_headers[0]["x-api-key"] == KEY
    for error in (auth.value, in_band.value):
        assert KEY not in str(error)
        assert SHOWN in str(error)
    assert "invalid x-api-key: ***" in str(in_band.value)
