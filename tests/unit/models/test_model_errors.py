"""models/errors.py: every httpx exception, HTTP status and in-band error kind maps to the right ModelError,
with a one-line message that names the URL and the model and never the API key."""

from __future__ import annotations

import datetime
import email.utils
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from agent_ls.core.errors import (
    ModelAuthError,
    ModelConnectionError,
    ModelContextOverflowError,
    ModelError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelRateLimitError,
    ModelRequestError,
    ModelResponseError,
    ModelServerError,
    ModelTimeoutError,
)
from agent_ls.core.messages import UserMessage
from agent_ls.models.base import WireConfig
from agent_ls.models.errors import (
    IN_BAND_KIND_STATUS,
    UNTRANSLATED,
    Endpoint,
    in_band_error,
    redact,
    retry_after_s,
    status_error_class,
)
from agent_ls.models.openai_chat import OpenAIChatClient
from tests.support.model_server import FakeModelServer

KEY = "sk-secret-0123456789abcdef"
URL = "http://llm.test/v1/chat/completions"
MODEL = "openai/gpt-4.1"

# Every exception class httpx exports, and what it becomes. A new httpx class fails the completeness test.
TRANSPORT_EXPECTED: dict[type[Exception], type[ModelError]] = {
    httpx.ConnectTimeout: ModelConnectionError,
    httpx.ReadTimeout: ModelTimeoutError,
    httpx.WriteTimeout: ModelConnectionError,
    httpx.PoolTimeout: ModelTimeoutError,
    httpx.TimeoutException: ModelConnectionError,
    httpx.ConnectError: ModelConnectionError,
    httpx.ReadError: ModelConnectionError,
    httpx.WriteError: ModelConnectionError,
    httpx.CloseError: ModelConnectionError,
    httpx.NetworkError: ModelConnectionError,
    httpx.ProxyError: ModelConnectionError,
    httpx.RemoteProtocolError: ModelConnectionError,
    httpx.LocalProtocolError: ModelRequestError,
    httpx.ProtocolError: ModelConnectionError,
    httpx.UnsupportedProtocol: ModelConnectionError,
    httpx.InvalidURL: ModelConnectionError,
    httpx.TransportError: ModelConnectionError,
    httpx.DecodingError: ModelResponseError,
    httpx.TooManyRedirects: ModelRequestError,
    httpx.RequestError: ModelConnectionError,
    httpx.HTTPError: ModelConnectionError,
}


@pytest.fixture
async def make_client() -> AsyncIterator[Callable[..., OpenAIChatClient]]:
    clients: list[OpenAIChatClient] = []

    def make(
        handler: Callable[[httpx.Request], httpx.Response], api_key: str | None = KEY
    ) -> OpenAIChatClient:
        client = OpenAIChatClient(
            WireConfig(
                model="gpt-4.1",
                base_url="http://llm.test/v1",
                api_key=api_key,
                model_name=MODEL,
                key_env="OPENAI_API_KEY",
                stream=False,
                transport=httpx.MockTransport(handler),
            )
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


def answer(
    status: int, body: Any = None, text: str | None = None, **headers: str
) -> Callable[..., httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        if text is not None:
            return httpx.Response(status, text=text, headers=headers)
        return httpx.Response(status, json=body, headers=headers)

    return handler


def openai_error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


async def failure(client: OpenAIChatClient) -> ModelError:
    with pytest.raises(ModelError) as caught:
        await client.complete([UserMessage("hi")], [], lambda _event: None)
    return caught.value


def assert_one_line_naming_url_and_model(error: ModelError, url: str = URL) -> None:
    message = str(error)
    assert "\n" not in message and url in message and MODEL in message and KEY not in message


LONG = "x" * 400
STATUS_CASES = [
    pytest.param(
        answer(401, openai_error(f"Incorrect API key provided: {KEY}.")),
        KEY,
        ModelAuthError,
        f"the model server at {URL} rejected the API key (HTTP 401) for model {MODEL}; "
        "set AGENT_LS_API_KEY or OPENAI_API_KEY",
        id="401",
    ),
    pytest.param(
        answer(403, openai_error("forbidden")),
        KEY,
        ModelAuthError,
        f"the model server at {URL} rejected the API key (HTTP 403) for model {MODEL}; "
        "set AGENT_LS_API_KEY or OPENAI_API_KEY",
        id="403",
    ),
    pytest.param(
        answer(401, openai_error("You didn't provide an API key.")),
        None,
        ModelAuthError,
        f"the model server at {URL} requires an API key (HTTP 401) for model {MODEL}; "
        "set AGENT_LS_API_KEY or OPENAI_API_KEY",
        id="401-no-key",
    ),
    pytest.param(
        answer(404, openai_error("The model `gpt-4.1` does not exist")),
        KEY,
        ModelNotFoundError,
        f"the model server at {URL} answered HTTP 404 for model {MODEL}: The model `gpt-4.1` does not exist; "
        "check the base URL and the model name",
        id="404",
    ),
    pytest.param(
        answer(404, text="404 page not found"),
        KEY,
        ModelNotFoundError,
        f"the model server at {URL} answered HTTP 404 for model {MODEL}: 404 page not found; "
        "check the base URL and the model name",
        id="404-text",
    ),
    pytest.param(
        answer(301, text="", location="https://llm.test/v1/chat/completions"),
        KEY,
        ModelNotFoundError,
        f"the model server at {URL} redirected (HTTP 301) to https://llm.test/v1/chat/completions "
        f"for model {MODEL}; check the base URL",
        id="301",
    ),
    pytest.param(
        answer(400, openai_error(f"Invalid 'messages'\nat index 3 (key {KEY})")),
        KEY,
        ModelRequestError,
        f"the model server at {URL} rejected the request (HTTP 400) for model {MODEL}: "
        "Invalid 'messages' at index 3 (key ***)",
        id="400-message-redacted",
    ),
    pytest.param(
        answer(400, openai_error(LONG)),
        KEY,
        ModelRequestError,
        f"the model server at {URL} rejected the request (HTTP 400) for model {MODEL}: {'x' * 299}…",
        id="400-truncated",
    ),
    pytest.param(
        answer(422, {"detail": "messages: field required"}),
        KEY,
        ModelRequestError,
        f"the model server at {URL} rejected the request (HTTP 422) for model {MODEL}: "
        "messages: field required",
        id="422-detail",
    ),
    pytest.param(
        answer(429, {"error": "rate limited"}),
        KEY,
        ModelRateLimitError,
        f"the model server at {URL} is rate limiting (HTTP 429) model {MODEL}: rate limited",
        id="429-error-string",
    ),
    pytest.param(
        answer(500, openai_error("The server had an error while processing your request.")),
        KEY,
        ModelServerError,
        f"the model server at {URL} failed (HTTP 500) for model {MODEL}: "
        "The server had an error while processing your request.",
        id="500",
    ),
    pytest.param(
        answer(503, text=""),
        KEY,
        ModelServerError,
        f"the model server at {URL} failed (HTTP 503) for model {MODEL}",
        id="503-empty",
    ),
    pytest.param(
        answer(200, text="<html><body>Welcome to nginx!</body></html>"),
        KEY,
        ModelResponseError,
        f"the model server at {URL} sent an unreadable response (HTTP 200) for model {MODEL}: "
        "the body is not JSON: '<html><body>Welcome to nginx!</body></html>'",
        id="200-not-json",
    ),
    pytest.param(
        answer(200, {"object": "list", "data": []}),
        KEY,
        ModelResponseError,
        f"the model server at {URL} sent an unreadable response for model {MODEL}: "
        "unexpected body: choices: Field required",
        id="200-no-choices",
    ),
    pytest.param(
        answer(200, {"choices": []}),
        KEY,
        ModelResponseError,
        f"the model server at {URL} sent an unreadable response for model {MODEL}: "
        "unexpected body: choices: List should have at least 1 item after validation, not 0",
        id="200-empty-choices",
    ),
]


@pytest.mark.parametrize(("handler", "api_key", "error_class", "message"), STATUS_CASES)
async def test_http_failures_map_to_one_line_messages(
    make_client: Callable[..., OpenAIChatClient],
    handler: Callable[..., httpx.Response],
    api_key: str | None,
    error_class: type[ModelError],
    message: str,
) -> None:
    error = await failure(make_client(handler, api_key))

    assert (type(error), str(error)) == (error_class, message)
    assert_one_line_naming_url_and_model(error)


@pytest.mark.parametrize("exception_class", list(TRANSPORT_EXPECTED), ids=lambda c: c.__name__)
async def test_each_httpx_exception_family_maps_to_its_class(
    make_client: Callable[..., OpenAIChatClient], exception_class: type[Exception]
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exception_class(f"boom with Bearer {KEY}")

    error = await failure(make_client(handler))

    assert type(error) is TRANSPORT_EXPECTED[exception_class]
    assert isinstance(error.__cause__, exception_class)
    assert_one_line_naming_url_and_model(error)


def test_the_mapping_covers_every_exception_httpx_exports() -> None:
    exported = {
        obj
        for name in httpx.__all__
        if isinstance(obj := getattr(httpx, name), type) and issubclass(obj, Exception)
    }
    untranslated = {cls for cls in exported if issubclass(cls, UNTRANSLATED)}

    assert untranslated == {
        httpx.CookieConflict,
        httpx.StreamError,
        httpx.StreamClosed,
        httpx.StreamConsumed,
        httpx.RequestNotRead,
        httpx.ResponseNotRead,
    }
    assert exported - untranslated == set(TRANSPORT_EXPECTED) | {httpx.HTTPStatusError}


def test_every_status_class_has_an_error_class() -> None:
    expected = {
        **{status: ModelNotFoundError for status in range(300, 400)},
        **{status: ModelRequestError for status in range(400, 500)},
        401: ModelAuthError,
        403: ModelAuthError,
        404: ModelNotFoundError,
        429: ModelRateLimitError,
        **{status: ModelServerError for status in range(500, 600)},
        529: ModelOverloadedError,
    }

    assert {status: status_error_class(status) for status in range(300, 600)} == expected


@pytest.mark.parametrize(
    "said",
    [
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        "prompt is too long: 210000 tokens > 200000 maximum",
        "context_length_exceeded",
        "the request exceeds the available context size (exceed_context_size_error)",
        "the request exceeds the available context size, try increasing it",  # llama.cpp's error.message
    ],
)
@pytest.mark.parametrize("status", [400, 413])
def test_a_context_overflow_is_recognised_by_what_the_server_says(status: int, said: str) -> None:
    assert status_error_class(status, said) is ModelContextOverflowError
    assert status_error_class(status, "invalid tool schema") is ModelRequestError
    assert status_error_class(500, said) is ModelServerError


# Every in-band kind models/errors.py knows (Anthropic error types, OpenAI error types and codes, the
# Responses ``ResponseError.code`` enum) and the class it must give. A kind added there without a line here
# fails the completeness test.
IN_BAND_EXPECTED: dict[str, type[ModelError]] = {
    "invalid_request_error": ModelRequestError,
    "invalid_prompt": ModelRequestError,
    "context_length_exceeded": ModelContextOverflowError,
    **dict.fromkeys(
        [
            "invalid_image",
            "invalid_image_format",
            "invalid_base64_image",
            "invalid_image_url",
            "image_too_large",
            "image_too_small",
            "image_parse_error",
            "image_content_policy_violation",
            "invalid_image_mode",
            "image_file_too_large",
            "unsupported_image_media_type",
            "empty_image_file",
            "failed_to_download_image",
            "image_file_not_found",
        ],
        ModelRequestError,
    ),
    "authentication_error": ModelAuthError,
    "invalid_api_key": ModelAuthError,
    "billing_error": ModelRequestError,
    "permission_error": ModelAuthError,
    "not_found_error": ModelNotFoundError,
    "request_too_large": ModelRequestError,
    "rate_limit_error": ModelRateLimitError,
    "rate_limit_exceeded": ModelRateLimitError,
    "insufficient_quota": ModelRequestError,  # out of credit: retrying cannot help
    "api_error": ModelServerError,
    "server_error": ModelServerError,
    "internal_error": ModelServerError,
    "timeout_error": ModelServerError,
    "vector_store_timeout": ModelServerError,
    "overloaded_error": ModelOverloadedError,
    "server_is_overloaded": ModelOverloadedError,
    "slow_down": ModelOverloadedError,
}
ENDPOINT = Endpoint(url=URL, model_name=MODEL, key_env="OPENAI_API_KEY", api_key=KEY)


def test_every_in_band_kind_maps_to_its_class() -> None:
    through_status = {kind: status_error_class(status, kind) for kind, status in IN_BAND_KIND_STATUS.items()}
    raised = {kind: type(in_band_error(ENDPOINT, kind, "It went wrong.")) for kind in IN_BAND_KIND_STATUS}
    shouted = {kind: type(in_band_error(ENDPOINT, kind.upper(), None)) for kind in IN_BAND_KIND_STATUS}

    assert through_status == IN_BAND_EXPECTED
    assert raised == IN_BAND_EXPECTED
    assert shouted == IN_BAND_EXPECTED


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        (None, "An error occurred."),
        (None, None),
        ("", "upstream went away"),
        ("some_new_error", ""),
        ("502", "Provider disconnected unexpectedly"),
        ("api_error", "the context window of the router filled up"),
    ],
)
def test_an_unknown_in_band_kind_is_a_retried_server_error(kind: str | None, said: str | None) -> None:
    error = in_band_error(ENDPOINT, kind, said)

    assert type(error) is ModelServerError and error.retryable


@pytest.mark.parametrize(
    ("code", "error_class"),
    [
        ("400", ModelRequestError),
        ("401", ModelAuthError),
        ("403", ModelAuthError),
        ("429", ModelRateLimitError),
    ],
)
def test_a_numeric_in_band_code_is_read_as_its_status(code: str, error_class: type[ModelError]) -> None:
    """OpenRouter puts the upstream status in ``error.code`` after HTTP 200 (moderation is a 403)."""
    error = in_band_error(ENDPOINT, code, "Input was flagged")
    assert type(error) is error_class


def test_a_429_for_an_exhausted_quota_is_not_retried() -> None:
    said = "You exceeded your current quota, please check your plan and billing details. (insufficient_quota)"
    assert status_error_class(429, said) is ModelRequestError
    assert status_error_class(429, "Rate limit reached for gpt-4.1") is ModelRateLimitError


@pytest.mark.parametrize(
    ("kind", "said", "error_class"),
    [
        ("overloaded", "Try later.", ModelOverloadedError),
        ("engine_overloaded", None, ModelOverloadedError),
        (None, "model overloaded, try later", ModelOverloadedError),
        # A known kind wins over the words: only unknown kinds are read from the message.
        ("server_error", "The engine is currently OVERLOADED.", ModelServerError),
        ("529", None, ModelOverloadedError),
        ("rate_limit_reached", "Slow down.", ModelRateLimitError),
        (None, "Rate limit reached for requests", ModelRateLimitError),
    ],
)
def test_an_in_band_kind_or_message_naming_overload_or_rate_limit_is_retried_as_such(
    kind: str | None, said: str | None, error_class: type[ModelError]
) -> None:
    error = in_band_error(ENDPOINT, kind, said)

    assert type(error) is error_class and error.retryable


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
        ("invalid_request_error", "This model's maximum context length is 8192 tokens."),
        ("context_length_exceeded", "Long."),
        ("invalid_prompt", "the request exceeds the available context size (exceed_context_size_error)"),
    ],
)
def test_an_in_band_context_overflow_is_not_retried(kind: str, said: str) -> None:
    error = in_band_error(ENDPOINT, kind, said)

    assert type(error) is ModelContextOverflowError and not error.retryable


@pytest.mark.parametrize(
    ("kind", "said", "message"),
    [
        (
            "overloaded_error",
            "Overloaded",
            f"the model server at {URL} sent an error after HTTP 200 for model {MODEL}: Overloaded "
            "(overloaded_error)",
        ),
        (
            None,
            f"Incorrect API key\nprovided: {KEY}.",
            f"the model server at {URL} sent an error after HTTP 200 for model {MODEL}: "
            "Incorrect API key provided: ***.",
        ),
        (
            "api_error",
            None,
            f"the model server at {URL} sent an error after HTTP 200 for model {MODEL}: no message "
            "(api_error)",
        ),
        (
            "server_error",
            LONG,
            f"the model server at {URL} sent an error after HTTP 200 for model {MODEL}: {'x' * 299}… "
            "(server_error)",
        ),
    ],
    ids=["with-kind", "key-redacted", "no-message", "clipped"],
)
def test_an_in_band_error_message_is_one_line_naming_url_and_model(
    kind: str | None, said: str | None, message: str
) -> None:
    error = in_band_error(ENDPOINT, kind, said)

    assert str(error) == message
    assert_one_line_naming_url_and_model(error)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
        ({}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_s(httpx.Headers(headers)) == seconds


def test_retry_after_as_an_http_date() -> None:
    when = email.utils.format_datetime(datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30))
    waited = retry_after_s(httpx.Headers({"retry-after": when}))
    assert waited is not None and 25 <= waited <= 31


async def test_an_unreachable_server_is_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    client = OpenAIChatClient(
        WireConfig(model="gpt-4.1", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, model_name=MODEL)
    )
    try:
        error = await failure(client)
    finally:
        await client.aclose()

    assert type(error) is ModelConnectionError
    assert str(error).startswith(
        f"cannot reach the model server at {url} for model {MODEL}: connection failed"
    )
    assert_one_line_naming_url_and_model(error, url)


@pytest.mark.parametrize("stream", [True, False])
async def test_a_read_timeout_over_http_is_a_timeout_error(stream: bool) -> None:
    with FakeModelServer([{"content": "late", "delay_s": 30}]) as server:
        client = OpenAIChatClient(
            WireConfig(
                model="gpt-4.1",
                base_url=server.base_url,
                api_key=KEY,
                model_name=MODEL,
                timeout_s=0.1,
                stream=stream,
            )
        )
        try:
            error = await failure(client)
        finally:
            await client.aclose()
    url = f"{server.base_url}/chat/completions"

    assert (type(error), str(error)) == (
        ModelTimeoutError,
        f"the model server at {url} did not answer in time for model {MODEL}: "
        "no response before the read timeout",
    )


async def test_error_bodies_from_the_fake_server_round_trip() -> None:
    steps: list[dict[str, Any]] = [
        {"status": 400, "body": openai_error("'tool_call_id' must not be empty")},
        {"status": 401},
    ]
    with FakeModelServer(steps) as server:
        client = OpenAIChatClient(
            WireConfig(model="gpt-4.1", base_url=server.base_url, api_key=KEY, model_name=MODEL, stream=False)
        )
        try:
            first, second = await failure(client), await failure(client)
        finally:
            await client.aclose()
    url = f"{server.base_url}/chat/completions"

    assert [(type(first), str(first)), (type(second), type(second).__name__)] == [
        (
            ModelRequestError,
            f"the model server at {url} rejected the request (HTTP 400) for model {MODEL}: "
            "'tool_call_id' must not be empty",
        ),
        (ModelAuthError, "ModelAuthError"),
    ]


@pytest.mark.parametrize("placeholder", ["ollama", "EMPTY", "none", "k"])
def test_a_placeholder_key_does_not_garble_messages(placeholder: str) -> None:
    endpoint = Endpoint(
        url="http://127.0.0.1:11434/v1/chat/completions", model_name="ollama/qwen2.5", api_key=placeholder
    )
    said = in_band_error(endpoint, "not_found_error", "model 'qwen2.5' not found; try ollama pull")
    assert "ollama/qwen2.5" in str(said) and "11434" in str(said) and "ollama pull" in str(said)
    assert "***" not in str(said)


def test_a_real_key_is_redacted_even_inside_a_broken_stream_message() -> None:
    endpoint = Endpoint(url="http://llm.test/v1/chat/completions", model_name=MODEL, api_key=KEY)
    assert redact(f"an event is not JSON: 'echo {KEY}'", endpoint) == "an event is not JSON: 'echo ***'"
