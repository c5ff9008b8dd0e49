"""OpenAIResponsesClient: the request body (items, instructions, reasoning pairing, stateless flags), whole
and streamed responses, usage, in-band failures and broken streams, over httpx.MockTransport and over real
HTTP against the fake model server (``/v1/responses``, rendered by tests/support/wire_responses.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from agent_ls.core.errors import (
    ModelAuthError,
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
from agent_ls.models.base import Prices, WireConfig
from agent_ls.models.openai_responses import OpenAIResponsesClient
from tests.support.model_server import FakeModelServer
from tests.support.wire_formats import sse
from tests.support.wire_responses import encrypted_content

KEY = "sk-test-secret-4711"
READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
USAGE = {"input_tokens": 300, "input_tokens_details": {"cached_tokens": 128}, "output_tokens": 20}


def reasoning(item_id: str, summary: str, encrypted: str | None = "enc") -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning", "id": item_id, "summary": []}
    if summary:
        item["summary"] = [{"type": "summary_text", "text": summary}]
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def opaque(item: dict[str, Any], before_call: int | None = None) -> OpaqueItem:
    return OpaqueItem(wire="openai-responses", data=json.dumps(item), before_call=before_call)


def function_call(call_id: str, name: str, arguments: Any, item_id: str = "fc_1") -> dict[str, Any]:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name, "arguments": arguments}


def message(text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": content}


def response(output: list[dict[str, Any]], status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "status": status, "output": output, **extra}


class Recorder:
    """A MockTransport handler: answers with ``bodies`` in order and records each request."""

    def __init__(self, *bodies: Any) -> None:
        self.bodies = list(bodies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json=self.bodies[len(self.requests) - 1])

    def sent(self, index: int = 0) -> Any:
        return json.loads(self.requests[index].content)


MakeClient = Callable[..., OpenAIResponsesClient]


@pytest.fixture
async def make_client() -> AsyncIterator[MakeClient]:
    """``make_client(base_url or handler, **WireConfig fields)``; non-streaming unless ``stream=True``."""
    clients: list[OpenAIResponsesClient] = []

    def make(target: str | Callable[[httpx.Request], httpx.Response], **kwargs: Any) -> OpenAIResponsesClient:
        options: dict[str, Any] = {"model": "gpt-5", "model_name": "openai-responses/gpt-5", "stream": False}
        if isinstance(target, str):
            options["base_url"] = target
        else:
            options.update(base_url="http://llm.test/v1", transport=httpx.MockTransport(target))
        options.update(kwargs)
        client = OpenAIResponsesClient(WireConfig(**options))
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


def collect() -> tuple[list[Event], Callable[[Event], None]]:
    events: list[Event] = []
    return events, events.append


def deltas(events: list[Event], kind: str) -> list[str]:
    return [e.text for e in events if isinstance(e, MessageDelta) and e.kind == kind]


# --- the request -------------------------------------------------------------------------------------


async def test_request_maps_instructions_items_tools_and_stateless_flags(make_client: MakeClient) -> None:
    recorder = Recorder(response([message("ok")]))
    client = make_client(recorder, api_key=KEY, max_output_tokens=4096)
    first_reasoning = reasoning("rs_a", "Look at a.py first.", "enc-a")
    second_reasoning = reasoning("rs_b", "", "enc-b")
    history: list[Message] = [
        SystemMessage("You are a coding agent."),
        SystemMessage("Project instructions: use tabs."),
        UserMessage("Fix the bug."),
        AssistantMessage(
            "Let me look.",
            (ToolCall("call_a", "read_file", '{"path": "a.py"}'), ToolCall("call_b", "read_file", "{}")),
            reasoning="Look at a.py first.",
            opaque=(
                opaque(first_reasoning, None),
                opaque(second_reasoning, 1),
                OpaqueItem(wire="anthropic", data='{"type": "thinking", "thinking": "x", "signature": "s"}'),
            ),
        ),
        ToolResultMessage("call_a", "read_file", "1: print('hi')"),
        ToolResultMessage("call_b", "read_file", "error: path is required", is_error=True),
        AssistantMessage("Done."),
        UserMessage("Thanks."),
    ]

    await client.complete(history, [READ_FILE], lambda event: None)

    request = recorder.requests[0]
    assert (request.method, str(request.url)) == ("POST", "http://llm.test/v1/responses")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert recorder.sent() == {
        "model": "gpt-5",
        "instructions": "You are a coding agent.\n\nProject instructions: use tabs.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Fix the bug."}]},
            first_reasoning,
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Let me look."}],
            },
            {
                "type": "function_call",
                "call_id": "call_a",
                "name": "read_file",
                "arguments": '{"path": "a.py"}',
            },
            second_reasoning,
            {"type": "function_call", "call_id": "call_b", "name": "read_file", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_a", "output": "1: print('hi')"},
            {"type": "function_call_output", "call_id": "call_b", "output": "error: path is required"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
            {"role": "user", "content": [{"type": "input_text", "text": "Thanks."}]},
        ],
        "tools": [
            {
                "type": "function",
                "name": "read_file",
                "description": "Read a file.",
                "parameters": READ_FILE.parameters,
                "strict": False,
            }
        ],
        "tool_choice": "auto",
        "max_output_tokens": 4096,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "stream": False,
    }


async def test_request_without_tools_system_or_cap_sends_none_of_them(make_client: MakeClient) -> None:
    recorder = Recorder(response([message("ok")]))
    client = make_client(recorder, stream=True)

    await client.complete([UserMessage("Hi.")], [], lambda event: None)

    assert recorder.sent() == {
        "model": "gpt-5",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi."}]}],
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "stream": True,
    }
    assert "authorization" not in recorder.requests[0].headers


async def test_reasoning_items_without_their_following_item_are_dropped_never_sent_alone(
    make_client: MakeClient,
) -> None:
    recorder = Recorder(response([message("ok")]))
    client = make_client(recorder)
    paired = reasoning("rs_ok", "", "enc-ok")
    history: list[Message] = [
        UserMessage("Go."),
        AssistantMessage(
            "",  # no text item: a reasoning item placed before the text has nothing to precede
            (ToolCall("call_1", "read_file", "{}"),),
            opaque=(
                opaque(reasoning("rs_before_text", "", "enc-1"), None),
                opaque(reasoning("rs_past_the_calls", "", "enc-2"), 1),
                opaque(reasoning("rs_no_encrypted_content", "summary", None), 0),
                OpaqueItem(wire="openai-responses", data="not json", before_call=0),
                opaque(paired, 0),
            ),
        ),
        ToolResultMessage("call_1", "read_file", "x"),
    ]

    await client.complete(history, [READ_FILE], lambda event: None)

    assert recorder.sent()["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "Go."}]},
        paired,
        {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "x"},
    ]


async def test_an_unanswered_call_gets_an_interrupted_output(make_client: MakeClient) -> None:
    recorder = Recorder(response([message("ok")]))
    client = make_client(recorder)
    history: list[Message] = [UserMessage("Go."), AssistantMessage("", (ToolCall("call_1", "bash", "{}"),))]

    await client.complete(history, [], lambda event: None)

    output = recorder.sent()["input"][-1]
    assert (output["type"], output["call_id"]) == ("function_call_output", "call_1")
    assert output["output"].startswith("interrupted")


# --- whole responses -----------------------------------------------------------------------------------


async def test_output_items_map_to_text_calls_reasoning_and_paired_opaque_items(
    make_client: MakeClient,
) -> None:
    first = reasoning("rs_1", "Plan: read.", "enc-1")
    dropped_with_nameless_call = reasoning("rs_2", "", "enc-2")
    third = reasoning("rs_3", "Then edit.", "enc-3")
    trailing = reasoning("rs_4", "", "enc-4")
    body = response(
        [
            first,
            message("Reading."),
            dropped_with_nameless_call,
            function_call("call_x", "", "{}", "fc_x"),
            third,
            function_call("call_1", "read_file", '{"path": "a.py"}'),
            function_call("", "read_file", {"path": "b.py"}, "fc_2"),
            trailing,
        ],
        usage=USAGE,
    )
    client = make_client(Recorder(body))
    events, emit = collect()

    result = await client.complete([UserMessage("Go.")], [READ_FILE], emit)

    assert result.message.text == "Reading."
    assert result.message.reasoning == "Plan: read.\n\nThen edit."
    assert [(c.name, c.arguments) for c in result.message.tool_calls] == [
        ("read_file", '{"path": "a.py"}'),
        ("read_file", '{"path": "b.py"}'),
    ]
    assert result.message.tool_calls[0].call_id == "call_1"
    assert result.message.tool_calls[1].call_id.startswith(
        "call_3_"
    )  # synthetic: the 3rd call came without one
    assert [(json.loads(o.data), o.before_call, o.wire) for o in result.message.opaque] == [
        (first, None, "openai-responses"),
        (third, 0, "openai-responses"),
    ]
    assert result.usage == Usage(input_tokens=300, output_tokens=20, cached_input_tokens=128)
    assert result.finish_reason == "tool_calls"
    assert events == [
        MessageDelta("Plan: read.\n\nThen edit.", kind="reasoning"),
        MessageDelta("Reading."),
    ]


async def test_an_incomplete_response_keeps_what_came_with_its_reason(make_client: MakeClient) -> None:
    body = response(
        [message("The answer is")],
        status="incomplete",
        incomplete_details={"reason": "max_output_tokens"},
        usage=USAGE,
    )
    client = make_client(Recorder(body))

    result = await client.complete([UserMessage("Go.")], [], lambda event: None)

    assert result == ModelResponse(
        message=AssistantMessage("The answer is"),
        usage=Usage(input_tokens=300, output_tokens=20, cached_input_tokens=128),
        finish_reason="max_output_tokens",
    )


URL = "http://llm.test/v1/responses"


@pytest.mark.parametrize(
    ("code", "error_class"),
    [
        ("server_error", ModelServerError),
        ("rate_limit_exceeded", ModelRateLimitError),
        ("invalid_prompt", ModelRequestError),
        ("invalid_image_url", ModelRequestError),
        ("vector_store_timeout", ModelServerError),
    ],
)
async def test_a_failed_response_raises_its_error(
    make_client: MakeClient, code: str, error_class: type[ModelError]
) -> None:
    body = response([], status="failed", error={"code": code, "message": "It went wrong."})
    client = make_client(Recorder(body), api_key=KEY)

    with pytest.raises(ModelError) as caught:
        await client.complete([UserMessage("Go.")], [], lambda event: None)

    assert type(caught.value) is error_class
    assert str(caught.value) == (
        f"the model server at {URL} sent an error after HTTP 200 for model openai-responses/gpt-5: "
        f"It went wrong. ({code})"
    )
    assert caught.value.retryable == (error_class is not ModelRequestError)


@pytest.mark.parametrize(
    "body",
    [[{"output": []}], response([{"type": "function_call", "call_id": "c", "name": ["read_file"]}])],
    ids=["not-an-object", "call-name-not-text"],
)
async def test_a_body_without_the_documented_shape_is_a_response_error(
    make_client: MakeClient, body: Any
) -> None:
    client = make_client(Recorder(body))

    with pytest.raises(ModelResponseError) as caught:
        await client.complete([UserMessage("Go.")], [], lambda event: None)

    assert str(caught.value).startswith(
        f"the model server at {URL} sent an unreadable response for model openai-responses/gpt-5: unexpected "
    )


async def test_usage_is_estimated_when_missing_and_priced_when_prices_are_set(
    make_client: MakeClient,
) -> None:
    priced = make_client(Recorder(response([message("ok")], usage=USAGE)), prices=Prices(2.0, 8.0, 0.5))
    unreported = make_client(Recorder(response([message("12345678")])))

    priced_usage = (await priced.complete([UserMessage("Go.")], [], lambda event: None)).usage
    estimated = (await unreported.complete([UserMessage("Go.")], [], lambda event: None)).usage

    assert priced_usage.cost_usd == pytest.approx((172 * 2.0 + 128 * 0.5 + 20 * 8.0) / 1_000_000)
    assert (estimated.estimated, estimated.output_tokens) == (True, 2)
    assert estimated.input_tokens > 0


# --- two turns through the fake server, whole and streamed ---------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_two_turn_exchange_through_the_fake_server(make_client: MakeClient, stream: bool) -> None:
    steps: list[dict[str, Any]] = [
        {
            "reasoning": "I should read the file.",
            "tool_calls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "src/app.py"}}],
        },
        {"content": "The bug is on line 3: the loop starts at 1."},
    ]
    with FakeModelServer(steps) as server:
        client = make_client(server.base_url, stream=stream, api_key=KEY)
        history: list[Message] = [SystemMessage("Be brief."), UserMessage("Find the bug.")]
        events, emit = collect()

        first = await client.complete(history, [READ_FILE], emit)
        history += [first.message, ToolResultMessage("call_read", "read_file", "1: for i in range(1, n):")]
        second = await client.complete(history, [READ_FILE], emit)

    rendered_reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "I should read the file."}],
        "encrypted_content": encrypted_content(1),
    }
    assert first.message == AssistantMessage(
        text="",
        tool_calls=(ToolCall("call_read", "read_file", '{"path": "src/app.py"}'),),
        reasoning="I should read the file.",
        opaque=(OpaqueItem("openai-responses", json.dumps(rendered_reasoning), before_call=0),),
    )
    assert first.finish_reason == "tool_calls"
    assert second.message == AssistantMessage("The bug is on line 3: the loop starts at 1.")
    assert second.finish_reason == "stop"
    assert not first.usage.estimated and first.usage.input_tokens > 0
    assert "".join(deltas(events, "reasoning")) == "I should read the file."
    assert "".join(deltas(events, "text")) == "The bug is on line 3: the loop starts at 1."
    if stream:
        assert len(deltas(events, "text")) > 1  # arrived piece by piece
    assert server.request_headers[1]["authorization"] == f"Bearer {KEY}"
    assert server.requests[1] == {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Find the bug."}]},
            rendered_reasoning,
            {
                "type": "function_call",
                "call_id": "call_read",
                "name": "read_file",
                "arguments": '{"path": "src/app.py"}',
            },
            {"type": "function_call_output", "call_id": "call_read", "output": "1: for i in range(1, n):"},
        ],
        "tools": [
            {
                "type": "function",
                "name": "read_file",
                "description": "Read a file.",
                "parameters": READ_FILE.parameters,
                "strict": False,
            }
        ],
        "tool_choice": "auto",
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "stream": stream,
    }


# --- streams --------------------------------------------------------------------------------------------


def ev(kind: str, **fields: Any) -> str:
    return sse({"type": kind, **fields}, event=kind)


CREATED = ev("response.created", response=response([], status="in_progress"))
CALL_ADDED = ev(
    "response.output_item.added",
    output_index=0,
    item={**function_call("call_1", "read_file", ""), "status": "in_progress"},
)


def completed(output: list[dict[str, Any]] | None = None, **extra: Any) -> str:
    return ev("response.completed", response=response(output or [], usage=USAGE, **extra))


async def stream_once(
    make_client: MakeClient, chunks: list[str], **step: Any
) -> tuple[ModelResponse, list[Event]]:
    with FakeModelServer([{"chunks": chunks, **step}]) as server:
        client = make_client(server.base_url, stream=True, api_key=KEY)
        events, emit = collect()
        result = await client.complete([UserMessage("Go.")], [READ_FILE], emit)
    return result, events


@pytest.mark.parametrize(
    "last_events",
    [
        [
            ev(
                "response.function_call_arguments.done",
                item_id="fc_1",
                output_index=0,
                name="read_file",
                arguments='{"path": "a.py"}',
            )
        ],
        [
            ev(
                "response.output_item.done",
                output_index=0,
                item=function_call("call_1", "read_file", '{"path": "a.py"}'),
            )
        ],
        [
            ev("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"path": '),
            ev("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='"a.py"}'),
        ],
    ],
    ids=["arguments-done-only", "item-done-only", "deltas-only"],
)
async def test_streamed_arguments_come_from_done_events_when_no_deltas_came(
    make_client: MakeClient, last_events: list[str]
) -> None:
    chunks = [CREATED, CALL_ADDED, *last_events, completed()]

    result, _ = await stream_once(make_client, chunks)

    assert result.message.tool_calls == (ToolCall("call_1", "read_file", '{"path": "a.py"}'),)
    assert result.usage == Usage(input_tokens=300, output_tokens=20, cached_input_tokens=128)


async def test_streamed_item_done_wins_over_accumulated_deltas(make_client: MakeClient) -> None:
    chunks = [
        CREATED,
        CALL_ADDED,
        ev("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"pa'),
        ev(
            "response.output_item.done",
            output_index=0,
            item=function_call("call_1", "read_file", '{"path": "b"}'),
        ),
        completed(),
    ]

    result, _ = await stream_once(make_client, chunks)

    assert result.message.tool_calls == (ToolCall("call_1", "read_file", '{"path": "b"}'),)


async def test_streamed_text_and_reasoning_parts_are_emitted_as_they_arrive(make_client: MakeClient) -> None:
    summary_item = {"type": "reasoning", "id": "rs_1", "summary": []}
    chunks = [
        CREATED,
        ev("response.output_item.added", output_index=0, item=summary_item),
        ev(
            "response.reasoning_summary_text.delta",
            item_id="rs_1",
            output_index=0,
            summary_index=0,
            delta="One",
        ),
        ev(
            "response.reasoning_summary_text.delta",
            item_id="rs_1",
            output_index=0,
            summary_index=1,
            delta="Two",
        ),
        ev("response.output_item.added", output_index=1, item={"type": "message", "id": "m", "content": []}),
        ev("response.output_text.delta", item_id="m", output_index=1, content_index=0, delta="Hel"),
        ev("response.output_text.delta", item_id="m", output_index=1, content_index=0, delta="lo"),
        completed(),  # no output_item.done: the message is rebuilt from the deltas
    ]

    result, events = await stream_once(make_client, chunks)

    assert events == [
        MessageDelta("One", kind="reasoning"),
        MessageDelta("\n\n", kind="reasoning"),
        MessageDelta("Two", kind="reasoning"),
        MessageDelta("Hel"),
        MessageDelta("lo"),
    ]
    assert result.message.text == "Hello"
    assert result.message.reasoning == "One\n\nTwo"
    # Without its output_item.done the reasoning item has no encrypted_content: kept, dropped on replay.
    assert [o.before_call for o in result.message.opaque] == [None]


async def test_a_stream_of_only_the_completed_event_reads_its_output(make_client: MakeClient) -> None:
    result, events = await stream_once(make_client, [completed([message("All at once.")])])

    assert result.message == AssistantMessage("All at once.")
    assert events == []


async def test_a_streamed_incomplete_response_keeps_the_text(make_client: MakeClient) -> None:
    chunks = [
        CREATED,
        ev("response.output_text.delta", item_id="m", output_index=0, content_index=0, delta="Partial"),
        ev(
            "response.incomplete",
            response=response([], status="incomplete", incomplete_details={"reason": "max_output_tokens"}),
        ),
    ]

    result, _ = await stream_once(make_client, chunks)

    assert (result.message.text, result.finish_reason) == ("Partial", "max_output_tokens")
    assert result.usage.estimated


def failed(code: str, text: str) -> str:
    return ev(
        "response.failed", response=response([], status="failed", error={"code": code, "message": text})
    )


@pytest.mark.parametrize(
    ("event", "error_class"),
    [
        (failed("server_error", "Boom."), ModelServerError),
        (failed("rate_limit_exceeded", "Slow down."), ModelRateLimitError),
        (ev("error", code="overloaded", message="Try later.", param=None), ModelOverloadedError),
        (
            ev(
                "error",
                error={
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                    "message": "Long.",
                },
            ),
            ModelContextOverflowError,
        ),
        (ev("error", code=None, message="An error occurred.", param=None), ModelServerError),
    ],
    ids=["failed-server", "failed-rate-limit", "error-overloaded", "error-context", "error-no-code"],
)
async def test_in_band_failures_raise_after_http_200(
    make_client: MakeClient, event: str, error_class: type[ModelError]
) -> None:
    chunks = [CREATED, ev("response.output_text.delta", output_index=0, delta="Half"), event, completed()]

    with pytest.raises(ModelError) as caught:
        await stream_once(make_client, chunks)

    said = str(caught.value)
    assert type(caught.value) is error_class
    assert "/v1/responses sent an error after HTTP 200 for model openai-responses/gpt-5: " in said
    assert caught.value.retryable == (error_class is not ModelContextOverflowError)


@pytest.mark.parametrize("end", ["close", "reset"])
async def test_a_truncated_stream_is_an_error_never_a_completed_response(
    make_client: MakeClient, end: str
) -> None:
    chunks = [
        CREATED,
        CALL_ADDED,
        ev("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta='{"path": "a'),
    ]

    with pytest.raises(ModelError) as caught:
        await stream_once(make_client, chunks, end=end)

    assert caught.value.retryable
    if end == "close":
        assert type(caught.value) is ModelStreamError
        assert "ended before response.completed" in str(caught.value)
    assert "openai-responses/gpt-5" in str(caught.value)


async def test_an_event_that_is_not_json_is_a_stream_error(make_client: MakeClient) -> None:
    with pytest.raises(ModelStreamError, match="an event is not JSON"):
        await stream_once(
            make_client, [CREATED, "event: response.output_text.delta\ndata: {oops\n\n", completed()]
        )


async def test_the_key_never_appears_in_errors_even_when_the_server_echoes_it(
    make_client: MakeClient,
) -> None:
    echo = f"Incorrect API key provided: {KEY}."
    streamed = [CREATED, ev("error", code="invalid_api_key", message=echo, param=None)]
    whole = response([], status="failed", error={"code": "server_error", "message": echo})

    with pytest.raises(ModelAuthError) as from_stream:
        await stream_once(make_client, streamed)
    with pytest.raises(ModelServerError) as from_body:
        await make_client(Recorder(whole), api_key=KEY).complete([UserMessage("Go.")], [], lambda event: None)

    for error in (from_stream.value, from_body.value):
        assert KEY not in str(error)
        assert "Incorrect API key provided: ***." in str(error)
