"""OpenAI Chat Completions (``POST {base_url}/chat/completions``), streamed or not, for OpenAI, OpenRouter,
Ollama and any other OpenAI-compatible server (vLLM, llama.cpp, LM Studio).

``HttpModelClient.complete`` (``models/base.py``) sequences a call; this module supplies its parts:
1. the request body (``chat_request``): messages, tools with ``tool_choice: "auto"``, and for a streamed
   call ``stream: true`` with ``stream_options.include_usage``;
2. a whole JSON response read leniently (``ChatCompletion``), or a stream of ``chat.completion.chunk``
   events accumulated by ``ChatStreamReader``, which emits text and reasoning deltas as they arrive;
3. the reply: reasoning (``reasoning_content``, ``reasoning``, a leading ``<think>`` block) apart from
   the text, tool calls repaired and, when none came structured, recovered from the text
   (``repair.finalize_reply``); usage from the server, else estimated.

Behaviour follows the OpenAI Chat Completions API reference (streaming: ``choices[0].delta`` with
``tool_calls[].index``; a last chunk with empty ``choices`` and ``usage``; ``data: [DONE]``); the leniency
follows what servers send (../shared/corpus/tool-calls: tc01 object arguments, tc04/tc05 empty strings on
continuation deltas, tc06 an entry with no function, tc07 no index, tc08 one index for two calls, tc09
an index starting at 1, tc10 ``finish_reason: "stop"`` with tool calls).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, assert_never

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_ls.core.errors import (
    ModelError,
    ModelResponseError,
    ModelStreamError,
)
from agent_ls.core.events import EventSink, MessageDelta
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from agent_ls.core.untrusted_json import loads_bounded, utf8
from agent_ls.models.base import HttpModelClient, StreamReader, estimate_usage
from agent_ls.models.errors import Endpoint, in_band_error
from agent_ls.models.partial_call import PartialCall

log = logging.getLogger(__name__)


class _Lenient(BaseModel):
    # Built at the first response, not at import: the first request does not need them (start-up time).
    model_config = ConfigDict(extra="ignore", defer_build=True)


class ChatFunction(_Lenient):
    name: str | None = None
    # A JSON string per the API; llama.cpp has sent a JSON object (corpus tc01).
    arguments: Any = None


class ChatToolCall(_Lenient):
    id: str | None = None
    # Streaming only: the key that groups deltas of one call; missing on some servers (corpus tc07).
    index: int | None = None
    function: ChatFunction | None = None


class ChatContentPart(_Lenient):
    text: str | None = None


class ChatMessage(_Lenient):
    """A whole message (``choices[].message``) or a streamed piece of one (``choices[].delta``)."""

    content: str | list[ChatContentPart] | None = None
    # ``reasoning_content``: vLLM, DeepSeek, llama.cpp, Ollama; ``reasoning``: OpenRouter, newer vLLM.
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ChatToolCall] | None = None


class ChatChoice(_Lenient):
    message: ChatMessage
    finish_reason: str | None = None


class ChatPromptTokensDetails(_Lenient):
    cached_tokens: int | None = None


class ChatUsage(_Lenient):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: ChatPromptTokensDetails | None = None


class ChatCompletion(_Lenient):
    """The parts of a ``chat.completion`` we read; everything else is ignored."""

    choices: list[ChatChoice] = Field(min_length=1)
    usage: ChatUsage | None = None


class ChatChunkChoice(_Lenient):
    delta: ChatMessage | None = None
    finish_reason: str | None = None


class ChatChunk(_Lenient):
    """The parts of a ``chat.completion.chunk`` we read; the usage chunk has empty (vLLM: null) choices."""

    choices: list[ChatChunkChoice] | None = None
    usage: ChatUsage | None = None


class OpenAIChatClient(HttpModelClient):
    """A ``ModelClient`` over OpenAI Chat Completions (see ``core/ports.py`` for the contract).

    Built as ``OpenAIChatClient(WireConfig(...))``; ``config.stream`` chooses server-sent events (default)
    or one JSON body, ``config.max_output_tokens`` is sent as ``max_tokens`` when set.
    """

    wire: ClassVar[str] = "openai-chat"
    path: ClassVar[str] = "/chat/completions"

    def request_body(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        return chat_request(
            self.config.model,
            messages,
            tools,
            stream=self.config.stream,
            max_output_tokens=self.config.max_output_tokens,
        )

    def read_response(self, body: Any, tools: Sequence[ToolSpec], request_bytes: int) -> ModelResponse:
        """The first choice as a ``ModelResponse`` (steps in the module docstring).

        Raises:
            ModelOverloadedError / ModelServerError: the body is ``{"error": …}`` (see ``_in_band_error``).
            ModelResponseError: the body has no ``choices``, or they do not have the documented shape.
        """
        if isinstance(body, dict) and body.get("error"):
            raise _in_band_error(body["error"], self.endpoint)
        try:
            completion = ChatCompletion.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            raise ModelResponseError(
                f"the model server at {self.endpoint.url} sent an unreadable response for model "
                f"{self.endpoint.model_name}: unexpected body: {where}: {first['msg']}"
            ) from exc
        choice = completion.choices[0]
        partials = [
            PartialCall(
                id=entry.id,
                name=entry.function.name if entry.function else None,
                arguments=entry.function.arguments if entry.function else None,
            )
            for entry in choice.message.tool_calls or []
        ]
        reasoning = choice.message.reasoning_content or choice.message.reasoning or ""
        splitter = ThinkSplitter()
        pieces = splitter.feed(_text(choice.message.content)) + splitter.flush()
        message = _assistant_message(
            "".join(piece for kind, piece in pieces if kind == "text"),
            reasoning + "".join(piece for kind, piece in pieces if kind == "reasoning"),
            partials,
            tools,
        )
        usage = _usage(completion.usage, request_bytes, message)
        return ModelResponse(message=message, usage=usage, finish_reason=choice.finish_reason)

    def stream_reader(self, tools: Sequence[ToolSpec], request_bytes: int) -> StreamReader:
        return ChatStreamReader(self.endpoint, self.stream_failure, tools, request_bytes)


def chat_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    *,
    stream: bool = False,
    max_output_tokens: int | None = None,
) -> dict[str, Any]:
    """The JSON request for ``messages`` in order.

    ``tools`` with ``tool_choice: "auto"`` only when there are tools; ``stream`` and
    ``stream_options: {"include_usage": true}`` only when streaming; ``max_tokens`` only when
    ``max_output_tokens`` (tokens) is set. Reasoning and other wires' opaque items are never sent.
    """
    body: dict[str, Any] = {"model": model, "messages": [_wire_message(message) for message in messages]}
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in tools
        ]
        body["tool_choice"] = "auto"
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    if max_output_tokens is not None:
        body["max_tokens"] = max_output_tokens
    return body


def chat_request_body(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    *,
    stream: bool = False,
    max_output_tokens: int | None = None,
) -> bytes:
    """``chat_request`` as UTF-8 JSON, as ``HttpModelClient.complete`` sends it."""
    body = chat_request(model, messages, tools, stream=stream, max_output_tokens=max_output_tokens)
    return utf8(json.dumps(body, ensure_ascii=False))


def _wire_message(message: Message) -> dict[str, Any]:
    match message:
        case SystemMessage(text=text):
            return {"role": "system", "content": text}
        case UserMessage(text=text):
            return {"role": "user", "content": text}
        case AssistantMessage(text=text, tool_calls=()):
            return {"role": "assistant", "content": text}
        case AssistantMessage(text=text, tool_calls=calls):
            # "" rather than null: some local servers reject a null content next to tool calls.
            return {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": call.call_id,
                        "type": "function",
                        # Always a JSON string: servers answer 400 to an object here (corpus tc01).
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for call in calls
                ],
            }
        case ToolResultMessage(call_id=call_id, content=content):
            return {"role": "tool", "tool_call_id": call_id, "content": content}
        case _:
            assert_never(message)


@dataclass
class _CallDeltas:
    """One tool call being accumulated from stream deltas; empty strings never overwrite (tc04, tc05)."""

    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)

    def starts_new_call(self, call_id: str | None, name: str | None) -> bool:
        """A delta with another non-empty id (tc07, tc08) is a new call; so is one without an id that
        carries another non-empty name."""
        if call_id and self.id:
            return call_id != self.id
        return bool(name and self.name and name != self.name and not call_id)

    def add(self, call_id: str | None, name: str | None, arguments: Any) -> None:
        self.id = self.id or call_id
        self.name = self.name or name
        if isinstance(arguments, str):
            self.arguments.append(arguments)
        elif arguments is not None:
            self.arguments.append(json.dumps(arguments, ensure_ascii=False))


class ChatStreamReader(StreamReader):
    """Accumulates one streamed chat completion (see ``StreamReader``).

    Tool-call deltas are grouped by ``index`` used as an opaque key (tc09 starts at 1); a delta without an
    index continues the latest call. Under either key, a delta whose new non-empty id differs from
    the call's id starts a new call. Content and reasoning pieces are emitted as ``MessageDelta`` as they
    arrive (a leading ``<think>`` block as reasoning). The response is complete once a ``finish_reason``
    or ``[DONE]`` came; ``finish_reason`` itself does not decide whether calls run (tc10). Usage comes
    from the last chunk that carried it, else it is estimated.

    Raises:
        ModelStreamError: an event is not JSON or not a chunk; the stream ended incomplete.
        ModelOverloadedError / ModelServerError: a chunk carrying ``error`` (OpenAI, OpenRouter and vLLM send
            ``data: {"error": {...}}`` after HTTP 200), or ``finish_reason: "error"``.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        stream_failure: Callable[[str], str],
        tools: Sequence[ToolSpec],
        request_bytes: int,
    ) -> None:
        self._endpoint = endpoint
        self._stream_failure = stream_failure
        self._tools = tools
        self._request_bytes = request_bytes
        self._text = ThinkSplitter()
        self._answer: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_CallDeltas] = []
        self._by_index: dict[int, _CallDeltas] = {}
        self._finish_reason: str | None = None
        self._usage: ChatUsage | None = None
        # ``finish`` has no sink of its own: text the splitter still holds goes out on the last one fed.
        self._sink: EventSink = lambda event: None

    def feed(self, event: str, data: str, emit: EventSink) -> None:
        self._sink = emit
        if not data.strip():
            return
        try:
            payload = loads_bounded(data)
        except ValueError as exc:
            raise ModelStreamError(self._stream_failure(f"an event is not JSON: {data[:80]!r}")) from exc
        if isinstance(payload, dict) and payload.get("error"):
            raise _in_band_error(payload["error"], self._endpoint)
        if event == "error":
            raise _in_band_error(payload, self._endpoint)
        try:
            chunk = ChatChunk.model_validate(payload)
        except ValidationError as exc:
            raise ModelStreamError(
                self._stream_failure(f"an event is not a chat completion chunk: {data[:80]!r}")
            ) from exc
        if chunk.usage is not None:
            self._usage = chunk.usage
        if not chunk.choices:
            return
        choice = chunk.choices[0]
        if choice.delta is not None:
            self._take(choice.delta, emit)
        if choice.finish_reason == "error":
            raise _in_band_error("the server ended the response with finish_reason error", self._endpoint)
        if choice.finish_reason:
            self._finish_reason = choice.finish_reason

    def _take(self, delta: ChatMessage, emit: EventSink) -> None:
        reasoning = delta.reasoning_content or delta.reasoning
        if reasoning:
            self._emit("reasoning", reasoning, emit)
        for kind, piece in self._text.feed(_text(delta.content)):
            self._emit(kind, piece, emit)
        for entry in delta.tool_calls or []:
            call_id = entry.id or None
            name = (entry.function.name if entry.function else None) or None
            if entry.index is None:
                current = self._calls[-1] if self._calls else None
            else:
                current = self._by_index.get(entry.index)
            if current is None or current.starts_new_call(call_id, name):
                current = _CallDeltas()
                self._calls.append(current)
            if entry.index is not None:
                self._by_index[entry.index] = current
            current.add(call_id, name, entry.function.arguments if entry.function else None)

    def _emit(self, kind: str, piece: str, emit: EventSink) -> None:
        if kind == "reasoning":
            self._reasoning.append(piece)
            emit(MessageDelta(text=piece, kind="reasoning"))
        else:
            self._answer.append(piece)
            emit(MessageDelta(text=piece))

    def finish(self) -> ModelResponse:
        if self._finish_reason is None and not self.saw_done:
            raise ModelStreamError(
                self._stream_failure("ended before the response was complete (no finish_reason, no [DONE])")
            )
        for kind, piece in self._text.flush():
            self._emit(kind, piece, self._sink)
        partials = [
            PartialCall(id=call.id, name=call.name, arguments="".join(call.arguments) or None)
            for call in self._calls
        ]
        message = _assistant_message("".join(self._answer), "".join(self._reasoning), partials, self._tools)
        usage = _usage(self._usage, self._request_bytes, message)
        return ModelResponse(message=message, usage=usage, finish_reason=self._finish_reason)


class ThinkSplitter:
    """Splits answer text that opens with ``<think>…</think>`` (DeepSeek-R1, Qwen3 and QwQ served without a
    reasoning parser) into reasoning and text, piece by piece as it streams.

    ``feed`` returns ``(kind, text)`` pairs, kind ``"reasoning"`` or ``"text"``, holding back only what
    could still be the start of a tag; ``flush`` returns what was held back. Only a block at the very
    start (after whitespace) counts; the whitespace after ``</think>`` is dropped. An unclosed block is
    reasoning to the end.
    """

    OPEN = "<think>"
    CLOSE = "</think>"

    def __init__(self) -> None:
        self._state = "start"
        self._held = ""

    def feed(self, piece: str) -> list[tuple[str, str]]:
        if not piece:
            return []
        out: list[tuple[str, str]] = []
        self._held += piece
        if self._state == "start":
            stripped = self._held.lstrip()
            if stripped.startswith(self.OPEN):
                self._state, self._held = "think", stripped[len(self.OPEN) :]
            elif self.OPEN.startswith(stripped):
                return out
            else:
                self._state = "text"
        if self._state == "think":
            end = self._held.find(self.CLOSE)
            if end == -1:
                keep = _partial_suffix(self._held, self.CLOSE)
                out.append(("reasoning", self._held[: len(self._held) - keep]))
                self._held = self._held[len(self._held) - keep :]
            else:
                out.append(("reasoning", self._held[:end]))
                self._state, self._held = "after", self._held[end + len(self.CLOSE) :]
        if self._state == "after":
            self._held = self._held.lstrip()
            if self._held:
                self._state = "text"
        if self._state == "text":
            out.append(("text", self._held))
            self._held = ""
        return [(kind, text) for kind, text in out if text]

    def flush(self) -> list[tuple[str, str]]:
        held, self._held = self._held, ""
        if not held or self._state == "after":
            return []
        return [("reasoning" if self._state == "think" else "text", held)]


def _partial_suffix(text: str, tag: str) -> int:
    """The length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


def _in_band_error(error: Any, endpoint: Endpoint) -> ModelError:
    """The error for an ``error`` member sent after HTTP 200 (an object with ``message``/``type``/``code``,
    or text); translated in ``models/errors.py``."""
    if isinstance(error, dict):
        kind = error.get("type") or error.get("code")
        said = error.get("message") or json.dumps(error, ensure_ascii=False)
        return in_band_error(endpoint, str(kind) if kind else None, str(said))
    return in_band_error(endpoint, None, error if isinstance(error, str) else json.dumps(error))


def _assistant_message(
    text: str, reasoning: str, partials: Sequence[PartialCall], tools: Sequence[ToolSpec]
) -> AssistantMessage:
    # Imported at the first reply: the repairs of text-written calls (harmony, markup) are not needed to
    # send the first request (start-up time).
    from agent_ls.models.repair import finalize_reply

    reply = finalize_reply(text, partials, tools)
    found = "\n\n".join(part for part in (reasoning, reply.reasoning) if part)
    return AssistantMessage(text=reply.text, tool_calls=reply.calls, reasoning=found)


def _usage(usage: ChatUsage | None, request_bytes: int, message: AssistantMessage) -> Usage:
    """The server's usage (prompt, completion and cached prompt tokens), else an estimate."""
    if usage is None:
        return estimate_usage(request_bytes, message)
    details = usage.prompt_tokens_details
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cached_input_tokens=(details.cached_tokens or 0) if details else 0,
    )


def _text(content: str | list[ChatContentPart] | None) -> str:
    if isinstance(content, list):
        return "".join(part.text or "" for part in content)
    return content or ""
