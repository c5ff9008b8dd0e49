"""What every HTTP wire API shares: its configuration, the request/stream plumbing, prices and history checks.

A wire module (``openai_chat.py``, ``anthropic.py``, ``openai_responses.py``) subclasses ``HttpModelClient``
and supplies four things: the request path, the request body, a reader for a whole JSON response, and a
``StreamReader`` for server-sent events. ``HttpModelClient.complete`` then does, in order:

1. ``valid_history``: every tool call answered exactly once (an orphan gets an "interrupted" result, a
   result without its call is dropped), so the request cannot be refused for a broken pairing;
2. POST the body; statuses and transport failures are translated once (``models/errors.py``);
3. non-streaming: read the body, emit the whole text as one ``MessageDelta``; streaming: feed each
   server-sent event to the reader, which emits deltas as they arrive; a server that answers a streaming
   request with plain JSON is read as non-streaming;
4. price the usage (``Prices``) and return the ``ModelResponse`` with the body's size and SHA-256
   (``RequestSent``, for the trajectory).

SSE framing is parsed by httpx-sse (a maintained parser of the WHATWG event-stream format, chosen over our
own line splitting). Cancelling the awaiting task closes the stream at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import ssl
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import httpx
from httpx_sse import EventSource, SSEError

from agent_ls.core.errors import ModelResponseError, ModelStreamError, ModelTimeoutError
from agent_ls.core.events import EventSink, MessageDelta
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    RequestSent,
    ToolResultMessage,
    ToolSpec,
    Usage,
)
from agent_ls.core.untrusted_json import loads_bounded, utf8
from agent_ls.models.errors import Endpoint, redact, status_error, translated_errors

log = logging.getLogger(__name__)

INTERRUPTED = "interrupted: the run stopped before this tool call finished; it may not have run."

WireApi = str
"""``openai-chat``, ``anthropic`` or ``openai-responses``."""


@dataclass(frozen=True)
class Prices:
    """US dollars per million tokens. ``cached_input`` defaults to ``input`` when not given."""

    input: float = 0.0
    output: float = 0.0
    cached_input: float | None = None

    def cost(self, usage: Usage) -> float:
        """The cost of ``usage`` in US dollars; cached input tokens are billed at ``cached_input``."""
        cached = min(usage.cached_input_tokens, usage.input_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return (
            (usage.input_tokens - cached) * self.input
            + cached * cached_rate
            + usage.output_tokens * self.output
        ) / 1_000_000


@dataclass(frozen=True)
class WireConfig:
    """How to reach one model over one wire API.

    Attributes:
        model: the model name the server knows (``gpt-4.1``, ``claude-sonnet-4-5``, ``qwen2.5-coder:7b``).
        base_url: the API root up to and including ``/v1``; a trailing slash is ignored.
        api_key: the key to send, or None; never logged, never in an error message.
        model_name: the user's model string shown in events and errors; defaults to ``model``.
        key_env: the variable the key comes from, named in auth errors (``OPENAI_API_KEY``).
        stream: use server-sent events (default); False for servers that break when streaming.
        max_output_tokens: the cap sent with each request, or None to send none (Anthropic requires one
            and uses ``DEFAULT_ANTHROPIC_MAX_TOKENS`` then).
        context_window: the model's context window in tokens, when known.
        prices: the price table, or None (costs are then unknown, never 0).
        timeout_s: the httpx connect/read/write timeout in seconds; for a stream, the longest silence.
        transport: an httpx transport to use instead of the network (tests).
    """

    model: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    model_name: str = ""
    key_env: str | None = None
    stream: bool = True
    max_output_tokens: int | None = None
    context_window: int | None = None
    prices: Prices | None = None
    timeout_s: float = 120.0
    transport: httpx.AsyncBaseTransport | None = field(default=None, repr=False, compare=False)

    @property
    def shown_name(self) -> str:
        return self.model_name or self.model


class StreamReader(ABC):
    """Accumulates one streamed response, event by event.

    ``feed`` gets each server-sent event in order and emits ``MessageDelta`` for text and reasoning as
    they arrive; ``finish`` is called once the stream ended and returns the response.

    Raises (from either method):
        ModelStreamError: the stream is incomplete (no final event) or an event is unreadable.
        ModelError: an in-band error event (``ModelOverloadedError`` for an overloaded one).
    """

    @abstractmethod
    def feed(self, event: str, data: str, emit: EventSink) -> None: ...

    @abstractmethod
    def finish(self) -> ModelResponse: ...

    saw_done: bool = False
    """True once the server sent the ``data: [DONE]`` sentinel (OpenAI Chat Completions)."""

    def done(self) -> None:
        """Called for ``data: [DONE]`` instead of ``feed``; ``finish`` follows."""
        self.saw_done = True


def tls_verify(base_url: str) -> ssl.SSLContext | bool:
    """What the HTTP client verifies TLS with: httpx's default (``True``: certifi's CA bundle) for an
    ``https`` endpoint; for a plain ``http`` one (a local server), a context that verifies but holds no
    CA, since loading the bundle costs about 45 ms of start-up (docs/benchmarks.md, "Start-up") and a
    plain endpoint makes no TLS handshake. Not when a proxy is configured (``HTTP_PROXY``, ``ALL_PROXY``,
    which httpx honours): the proxy may speak TLS. Should a handshake happen all the same, it fails
    verification: never a connection without it."""
    proxied = any(os.environ.get(name) for name in _PROXY_VARIABLES)
    if base_url.lower().startswith("http://") and not proxied:
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, host names checked
    return True


_PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


class HttpModelClient(ABC):
    """A ``ModelClient`` over one HTTP wire API (see ``core/ports.py`` for the contract)."""

    wire: ClassVar[WireApi]
    path: ClassVar[str]

    def __init__(self, config: WireConfig) -> None:
        self.config = config
        self._endpoint = Endpoint(
            url=config.base_url.rstrip("/") + self.path,
            model_name=config.shown_name,
            key_env=config.key_env,
            api_key=config.api_key,
        )
        headers = {"Content-Type": "application/json", **self.auth_headers()}
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(config.timeout_s, connect=min(config.timeout_s, 30.0)),
            transport=config.transport,
            verify=tls_verify(config.base_url),
        )

    @property
    def model_name(self) -> str:
        return self.config.shown_name

    @property
    def endpoint(self) -> Endpoint:
        return self._endpoint

    def auth_headers(self) -> dict[str, str]:
        """Headers carrying the key; Bearer by default."""
        return {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}

    @abstractmethod
    def request_body(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        """The JSON body for ``messages`` (already valid: ``valid_history``), honouring ``config.stream``."""

    @abstractmethod
    def read_response(self, body: Any, tools: Sequence[ToolSpec], request_bytes: int) -> ModelResponse:
        """Map a whole (non-streamed) JSON response to a ``ModelResponse``.

        Raises:
            ModelResponseError: the body does not have the expected shape.
        """

    @abstractmethod
    def stream_reader(self, tools: Sequence[ToolSpec], request_bytes: int) -> StreamReader: ...

    def encode_request(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> bytes:
        """The exact UTF-8 JSON body ``complete`` sends for ``messages`` and ``tools`` (after
        ``valid_history``); ``agent.context`` measures it and ``--debug`` prints it. Sends nothing."""
        return utf8(json.dumps(self.request_body(valid_history(messages), tools), ensure_ascii=False))

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        """Send the conversation once and return the answer (the steps are in the module docstring).

        Raises:
            ModelError: a subclass, one line naming the URL and the model (``models/errors.py``).
        """
        body = self.encode_request(messages, tools)
        log.debug("POST %s (%d bytes, stream=%s)", self._endpoint.url, len(body), self.config.stream)
        if not self.config.stream:
            with translated_errors(self._endpoint):
                response = await self._http.post(self._endpoint.url, content=body)
                response.raise_for_status()
            result = self.read_response(self._json(response), tools, len(body))
            _emit_whole(result.message, emit)
            return self._priced(result, body)
        with translated_errors(self._endpoint):
            async with self._http.stream("POST", self._endpoint.url, content=body) as response:
                if response.is_error or response.is_redirect:
                    await response.aread()
                    raise status_error(response, self._endpoint)
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    await response.aread()
                    result = self.read_response(self._json(response), tools, len(body))
                    _emit_whole(result.message, emit)
                    return self._priced(result, body)
                reader = self.stream_reader(tools, len(body))
                events = 0
                idle_s = self.config.timeout_s
                loop = asyncio.get_running_loop()
                try:
                    # Idle timeout between events: comments (": keep-alive", OpenRouter's ": PROCESSING")
                    # keep httpx's read timeout quiet, but they are not progress.
                    async with asyncio.timeout(idle_s) as idle:
                        async for sse in EventSource(response).aiter_sse():
                            idle.reschedule(loop.time() + idle_s)
                            events += 1
                            if sse.data.strip() == "[DONE]":
                                reader.done()
                                break
                            reader.feed(sse.event, sse.data, emit)
                except SSEError as exc:
                    raise ModelStreamError(self.stream_failure(f"unreadable event stream: {exc}")) from exc
                except TimeoutError:
                    raise ModelTimeoutError(
                        f"the stream from {self._endpoint.url} for model {self._endpoint.model_name} sent no "
                        f"event for {idle_s:g} s"
                    ) from None
                if events == 0:
                    raise ModelResponseError(self.no_events_message())
        return self._priced(reader.finish(), body)

    def no_events_message(self) -> str:
        """The message for a stream that brought no event at all after HTTP 200 (not retried: servers that
        cannot stream do this every time)."""
        return (
            f"the stream from {self._endpoint.url} for model {self._endpoint.model_name} ended with no event "
            "after HTTP 200; if this server cannot stream (llama-cpp-python with tools cannot), set "
            "stream = false for this provider in agent-ls.toml"
        )

    def stream_failure(self, reason: str) -> str:
        """A one-line message for a broken stream, naming the URL and the model (the key redacted: ``reason``
        may quote what the server sent)."""
        where = f"the stream from {self._endpoint.url} for model {self._endpoint.model_name}"
        return redact(f"{where} broke: {reason}", self._endpoint)

    def _json(self, response: httpx.Response) -> Any:
        try:
            return loads_bounded(response.content)
        except ValueError as exc:
            snippet = " ".join(response.text.split())[:80]
            raise ModelResponseError(
                f"the model server at {self._endpoint.url} sent an unreadable response "
                f"(HTTP {response.status_code}) for model {self._endpoint.model_name}: "
                f"the body is not JSON: {snippet!r}"
            ) from exc

    def _priced(self, result: ModelResponse, body: bytes) -> ModelResponse:
        """``result`` with its cost (when prices are known) and the facts of the ``body`` sent."""
        sent = RequestSent(size_bytes=len(body), sha256=hashlib.sha256(body).hexdigest())
        if self.config.prices is None:
            return replace(result, request=sent)
        usage = replace(result.usage, cost_usd=self.config.prices.cost(result.usage))
        return replace(result, usage=usage, request=sent)

    async def aclose(self) -> None:
        await self._http.aclose()


def _emit_whole(message: AssistantMessage, emit: EventSink) -> None:
    if message.reasoning:
        emit(MessageDelta(text=message.reasoning, kind="reasoning"))
    if message.text:
        emit(MessageDelta(text=message.text))


def valid_history(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every tool call answered exactly once, right after its assistant message.

    - A call with no result gets a synthetic error result (``INTERRUPTED``), placed with the others.
    - A result whose call is not in the assistant message before it, or a second result for the same
      call, is dropped (logged).
    Other messages keep their order. Behaviour follows the Chat Completions and Messages APIs, which
    answer 400 to an unanswered ``tool_call_id``/``tool_use_id``.
    """
    out: list[Message] = []
    pending: dict[str, str] = {}

    def close_pending() -> None:
        for call_id, name in pending.items():
            out.append(ToolResultMessage(call_id=call_id, name=name, content=INTERRUPTED, is_error=True))
        pending.clear()

    for message in messages:
        if isinstance(message, ToolResultMessage):
            if message.call_id in pending:
                del pending[message.call_id]
                out.append(message)
            else:
                log.warning("dropped a tool result without a pending call: %s", message.call_id)
            continue
        close_pending()
        if isinstance(message, AssistantMessage):
            pending = {call.call_id: call.name for call in message.tool_calls}
        out.append(message)
    close_pending()
    return out


def estimate_usage(request_bytes: int, reply: AssistantMessage) -> Usage:
    """Tokens as bytes / 4: the request body for input, the reply's text and arguments for output."""
    reply_bytes = (
        len(reply.text.encode())
        + len(reply.reasoning.encode())
        + sum(len(call.name.encode()) + len(call.arguments.encode()) for call in reply.tool_calls)
    )
    return Usage(input_tokens=request_bytes // 4, output_tokens=reply_bytes // 4, estimated=True)
