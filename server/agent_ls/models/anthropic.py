"""Anthropic Messages (``POST {base_url}/messages``), streamed (server-sent events) or whole.

One ``complete`` call (the shared steps are in ``models/base.py``):
1. ``request_body``: system messages become the top-level ``system`` text blocks; the conversation becomes
   alternating user/assistant messages (consecutive same-role messages merged); an assistant message is
   its own ``thinking``/``redacted_thinking`` blocks (echoed unchanged), its text and its ``tool_use``
   blocks; the results of a parallel batch are ``tool_result`` blocks in one user message, before any
   text; prompt-cache breakpoints close the stable prefix (``cache_breakpoints``);
2. whole: ``read_response`` maps the content blocks back (``assistant_message``: tool calls repaired, or
   recovered from the text, by ``models/repair.py``); an ``{"type": "error"}`` body sent with 200 is an
   error (``in_band_error``);
3. streamed: ``AnthropicStreamReader`` accumulates the events per content block index (``partial_json``
   concatenated per block, empty meaning ``{}``; never a delta replayed), emits text and thinking deltas
   as they arrive, rebuilds the blocks a whole response would hold, maps them as in 2, and
   fails the call on an in-band ``error`` event or a stream without ``message_stop``: such a call is never
   returned as a completed, truncated answer (corpus tc11, tc12).

Behaviour follows the Anthropic Messages API reference, "Streaming messages", "Prompt caching" and
"Extended thinking" (thinking blocks with their signature go back unchanged with the tool-use turn).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, assert_never

from pydantic import BaseModel, ConfigDict, ValidationError

from agent_ls.core.errors import ModelError, ModelResponseError, ModelStreamError
from agent_ls.core.events import EventSink, MessageDelta
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    OpaqueItem,
    SystemMessage,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from agent_ls.core.reminder import REMINDER_TAG
from agent_ls.core.untrusted_json import loads, loads_bounded
from agent_ls.models.base import HttpModelClient, StreamReader, estimate_usage
from agent_ls.models.errors import Endpoint, in_band_error
from agent_ls.models.partial_call import PartialCall
from agent_ls.models.repair import finalize_reply

log = logging.getLogger(__name__)

ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` header: the API version whose request and event shapes this module speaks."""

DEFAULT_ANTHROPIC_MAX_TOKENS = 8192
"""``max_tokens`` (output tokens) when the configuration sets none; the API requires a value. 8192 is
within the output limit of every current Claude model and leaves room for a long edit."""

MAX_CACHE_BREAKPOINTS = 4
"""The API refuses a request with more than 4 ``cache_control`` blocks."""

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}

OPAQUE_BLOCK_TYPES = ("thinking", "redacted_thinking")

# Anthropic's error ``type`` values and the HTTP status each one comes with (Messages API "Errors"); an
# in-band error is classified as that status would be (``models/errors.py``). Unknown types count as 500.


class _Lenient(BaseModel):
    # Built at the first response, not at import: the first request does not need them (start-up time).
    model_config = ConfigDict(extra="ignore", defer_build=True)


class AnthropicUsage(_Lenient):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


class AnthropicMessage(_Lenient):
    """The parts of a Messages response we read. Blocks stay dicts: thinking blocks go back unchanged."""

    content: list[dict[str, Any]]
    stop_reason: str | None = None
    usage: AnthropicUsage | None = None


class AnthropicClient(HttpModelClient):
    """A ``ModelClient`` over the Anthropic Messages API (see ``core/ports.py`` for the contract).

    Built as ``AnthropicClient(WireConfig(model="claude-sonnet-4-5", base_url="https://api.anthropic.com/v1",
    api_key=...))``. The key goes in ``x-api-key``, never in a message.
    """

    wire: ClassVar[str] = "anthropic"
    path: ClassVar[str] = "/messages"

    def auth_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self.config.api_key:
            headers["x-api-key"] = self.config.api_key
        return headers

    def request_body(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        """The Messages request (``messages_request``) with this client's model, output cap and stream."""
        return messages_request(
            self.config.model,
            messages,
            tools,
            max_tokens=self.config.max_output_tokens or DEFAULT_ANTHROPIC_MAX_TOKENS,
            stream=self.config.stream,
        )

    def read_response(self, body: Any, tools: Sequence[ToolSpec], request_bytes: int) -> ModelResponse:
        """Map a whole Messages response.

        Raises:
            ModelError: the body is an ``{"type": "error"}`` object (see ``in_band_error``).
            ModelResponseError: the body has no ``content`` list of blocks.
        """
        if isinstance(body, dict) and body.get("type") == "error":
            raise _in_band_error(body, self.endpoint)
        try:
            parsed = AnthropicMessage.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            raise ModelResponseError(
                f"the model server at {self.endpoint.url} sent an unreadable response for model "
                f"{self.endpoint.model_name}: unexpected body: {where}: {first['msg']}"
            ) from exc
        message = assistant_message(parsed.content, tools)
        return ModelResponse(
            message=message,
            usage=_usage(parsed.usage, request_bytes, message),
            finish_reason=parsed.stop_reason,
        )

    def stream_reader(self, tools: Sequence[ToolSpec], request_bytes: int) -> StreamReader:
        return AnthropicStreamReader(self.endpoint, tools, request_bytes, self.stream_failure)


def messages_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    *,
    max_tokens: int,
    stream: bool,
) -> dict[str, Any]:
    """The JSON body of a Messages request.

    Args:
        messages: an already valid history (``valid_history``), oldest first.
        tools: offered as ``{name, description, input_schema}`` in order; no ``tools`` key when empty.
        max_tokens: the output cap in tokens.

    Shapes: ``system`` is a list of text blocks, one per non-empty ``SystemMessage`` in order (absent when
    there is none); ``messages`` alternate user/assistant, each with a list of content blocks; the
    breakpoints of ``cache_breakpoints`` are set.
    """
    system = [{"type": "text", "text": m.text} for m in messages if isinstance(m, SystemMessage) and m.text]
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    if system:
        body["system"] = system
    body["messages"] = _wire_messages(messages)
    if tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters or {"type": "object"}}
            for t in tools
        ]
    body["stream"] = stream
    cache_breakpoints(body)
    return body


def cache_breakpoints(body: dict[str, Any]) -> None:
    """Mark the prompt-cache breakpoints of ``body`` in place: ``cache_control: {"type": "ephemeral"}``.

    The prefix order is tools, system, messages. Marked, at most ``MAX_CACHE_BREAKPOINTS`` in all:
    1. the last tool (the tool definitions change only with the tool set);
    2. the last system block (system prompt, instructions and skills catalog are byte-stable);
    3. the last block of the newest user message (the whole conversation, read back next turn), or the
       block before it when that is the reminder (``core.reminder``: sent once, never read back, so a
       breakpoint on it would cache a prefix no later request has);
    4. the last block of the user message before it: the server looks for an earlier cache entry at most
       20 blocks back from a breakpoint, and a turn with many parallel calls adds more than that.
    A prefix shorter than the model's minimum (about 1024 tokens) is simply not cached.
    """
    marked: list[dict[str, Any]] = []
    if body.get("tools"):
        marked.append(body["tools"][-1])
    if body.get("system"):
        marked.append(body["system"][-1])
    user_messages = [m for m in body["messages"] if m["role"] == "user" and m["content"]]
    marked += [_last_kept_block(m["content"]) for m in reversed(user_messages[-2:])]
    for block in marked[:MAX_CACHE_BREAKPOINTS]:
        block["cache_control"] = dict(EPHEMERAL)


def _last_kept_block(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    """The last block of a user message that the next request holds too: not a trailing reminder."""
    last = blocks[-1]
    is_reminder = last.get("type") == "text" and str(last.get("text", "")).startswith(f"<{REMINDER_TAG}>\n")
    return blocks[-2] if is_reminder and len(blocks) > 1 else last


def _wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Alternating user/assistant messages; within a user message the ``tool_result`` blocks come first."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"].extend(blocks)
        else:
            merged.append({"role": role, "content": blocks})
    for wire_message in merged:
        if wire_message["role"] == "user":
            # The API requires a batch's tool_result blocks before any text of the same user message.
            wire_message["content"].sort(key=lambda block: block["type"] != "tool_result")
    return merged


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    """(role, content blocks) of one message; empty text is left out (the API refuses empty text blocks)."""
    match message:
        case SystemMessage():
            return "system", []
        case UserMessage(text=text):
            return "user", [{"type": "text", "text": text}] if text else []
        case ToolResultMessage(call_id=call_id, content=content, is_error=is_error):
            return "user", [
                {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}
            ]
        case AssistantMessage():
            return "assistant", _assistant_blocks(message)
        case _:
            assert_never(message)


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    """Thinking blocks first (or before the call they preceded), then the text, then the ``tool_use`` blocks.

    ``message.reasoning`` is not sent: the thinking blocks carry it, signed. Opaque items of other wires
    are dropped.
    """
    leading: list[dict[str, Any]] = []
    before_call: dict[int, list[dict[str, Any]]] = {}
    for item in message.opaque:
        if item.wire != AnthropicClient.wire:
            continue
        try:
            block = json.loads(item.data)
        except ValueError:
            log.warning("dropped an unreadable anthropic opaque item: %.80s", item.data)
            continue
        if item.before_call is not None and 0 <= item.before_call < len(message.tool_calls):
            before_call.setdefault(item.before_call, []).append(block)
        else:
            leading.append(block)
    blocks = leading
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for index, call in enumerate(message.tool_calls):
        blocks += before_call.get(index, [])
        blocks.append(
            {"type": "tool_use", "id": call.call_id, "name": call.name, "input": _input(call.arguments)}
        )
    return blocks


def _input(arguments: str) -> dict[str, Any]:
    """The ``tool_use`` input object; ``{}`` when ``arguments`` is not JSON object text, so that the history
    stays valid (the model already saw the dispatcher's error result for that call)."""
    try:
        value = loads(arguments)
    except ValueError:  # JSONTooDeep too
        return {}
    return value if isinstance(value, dict) else {}


def assistant_message(blocks: Sequence[dict[str, Any]], tools: Sequence[ToolSpec]) -> AssistantMessage:
    """Map response content blocks, in order, to an ``AssistantMessage``.

    - ``text``: concatenated into ``text``;
    - ``tool_use``: a call; ``input`` (an object, or JSON text accumulated from a stream) becomes the raw
      arguments text; repaired by ``finalize_reply`` (a call without a name is dropped; when no call came
      and ``tools`` were offered, calls written into the text as markup are recovered);
    - ``thinking``: its text joins ``reasoning`` (blocks separated by a blank line), and the whole block,
      signature included, becomes an ``OpaqueItem``; ``redacted_thinking``: an ``OpaqueItem`` only.
      ``before_call`` is None for a block before any text or call, else the index of the next call (None
      when no call follows);
    - other block types are ignored.
    """
    texts: list[str] = []
    reasoning: list[str] = []
    partials: list[PartialCall] = []
    opaque: list[OpaqueItem] = []
    waiting: list[str] = []  # opaque blocks after some text or call, placed before the next call
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind in OPAQUE_BLOCK_TYPES:
            if kind == "thinking" and block.get("thinking"):
                reasoning.append(str(block["thinking"]))
            data = json.dumps(block, ensure_ascii=False)
            if texts or partials:
                waiting.append(data)
            else:
                opaque.append(OpaqueItem(wire=AnthropicClient.wire, data=data))
        elif kind == "tool_use":
            name = str(block.get("name") or "").strip()
            if not name:
                log.warning("dropped a tool_use block without a name (id %r)", block.get("id"))
                continue
            opaque += [OpaqueItem(AnthropicClient.wire, data, before_call=len(partials)) for data in waiting]
            waiting.clear()
            partials.append(PartialCall(id=block.get("id"), name=name, arguments=block.get("input")))
    opaque += [OpaqueItem(AnthropicClient.wire, data) for data in waiting]
    reply = finalize_reply("".join(texts), partials, tools)
    return AssistantMessage(
        text=reply.text,
        tool_calls=reply.calls,
        reasoning="\n\n".join([*reasoning, reply.reasoning] if reply.reasoning else reasoning),
        opaque=tuple(opaque),
    )


def _usage(usage: AnthropicUsage | None, request_bytes: int, message: AssistantMessage) -> Usage:
    """Input tokens include cache reads and writes (the API reports them apart); reads are the cached part."""
    if usage is None or (usage.input_tokens is None and usage.output_tokens is None):
        return estimate_usage(request_bytes, message)
    cached = usage.cache_read_input_tokens or 0
    return Usage(
        input_tokens=(usage.input_tokens or 0) + cached + (usage.cache_creation_input_tokens or 0),
        output_tokens=usage.output_tokens or 0,
        cached_input_tokens=cached,
    )


def _in_band_error(body: Any, endpoint: Endpoint) -> ModelError:
    """The error for ``{"type": "error", "error": {"type", "message"}}``; see ``models/errors.py``."""
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    return in_band_error(endpoint, str(error.get("type") or "") or None, str(error.get("message") or ""))


@dataclass
class _Block:
    """One content block of a stream: its ``content_block_start`` object and the deltas since."""

    start: dict[str, Any]
    parts: list[str] = field(default_factory=list)  # text, thinking or partial_json pieces
    signature: list[str] = field(default_factory=list)

    def finished(self) -> dict[str, Any]:
        """The block as a whole response would hold it; a ``tool_use`` input is the accumulated JSON text
        (``{}`` when no fragment came, or the start's input when a server sent it whole there)."""
        block = dict(self.start)
        kind = block.get("type")
        if kind == "text":
            block["text"] = str(block.get("text") or "") + "".join(self.parts)
        elif kind == "thinking":
            block["thinking"] = str(block.get("thinking") or "") + "".join(self.parts)
            block["signature"] = str(block.get("signature") or "") + "".join(self.signature)
        elif kind == "tool_use":
            text = "".join(self.parts)
            block["input"] = text if text.strip() else (block.get("input") or {})
        return block


class AnthropicStreamReader(StreamReader):
    """Accumulates the server-sent events of one streamed Messages response.

    Events: ``message_start`` (usage), ``content_block_start``/``_delta``/``_stop`` per block index,
    ``message_delta`` (stop reason, cumulative usage), ``message_stop``; ``ping`` and unknown events are
    ignored (the API may add event types). Text and thinking deltas are emitted as they arrive; a second
    thinking block is preceded by a ``"\\n\\n"`` reasoning delta, so the deltas add up to ``reasoning``.

    Raises:
        ModelError: an ``error`` event (``in_band_error``).
        ModelStreamError: an event that is not JSON, or (from ``finish``) no ``message_stop``.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        tools: Sequence[ToolSpec],
        request_bytes: int,
        failure: Callable[[str], str],
    ) -> None:
        self._endpoint = endpoint
        self._tools = tools
        self._request_bytes = request_bytes
        self._failure = failure
        self._blocks: dict[int, _Block] = {}
        self._usage: dict[str, int] = {}
        self._stop_reason: str | None = None
        self._stopped = False
        self._reasoned = False

    def feed(self, event: str, data: str, emit: EventSink) -> None:
        if self._stopped:
            return
        try:
            payload = loads_bounded(data)
        except ValueError as exc:
            reason = f"event {event or 'message'!r} is not JSON: {data[:80]!r}"
            raise ModelStreamError(self._failure(reason)) from exc
        if not isinstance(payload, dict):
            raise ModelStreamError(self._failure(f"event {event or 'message'!r} is not a JSON object"))
        kind = payload.get("type") or event
        if kind == "error":
            raise _in_band_error(payload, self._endpoint)
        if kind == "message_start":
            message = payload.get("message")
            self._add_usage(message.get("usage") if isinstance(message, dict) else None)
        elif kind == "content_block_start":
            start = payload.get("content_block")
            block = _Block(dict(start) if isinstance(start, dict) else {})
            self._blocks[_index(payload)] = block
            self._started(block, emit)
        elif kind == "content_block_delta":
            delta = payload.get("delta")
            if isinstance(delta, dict):
                self._delta(self._blocks.setdefault(_index(payload), _Block({})), delta, emit)
        elif kind == "message_delta":
            delta = payload.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason"):
                self._stop_reason = str(delta["stop_reason"])
            self._add_usage(payload.get("usage"))
        elif kind == "message_stop":
            self._stopped = True

    def finish(self) -> ModelResponse:
        if not self._stopped:
            raise ModelStreamError(self._failure("the stream ended before message_stop"))
        blocks = [self._blocks[index].finished() for index in sorted(self._blocks)]
        message = assistant_message(blocks, self._tools)
        usage = AnthropicUsage.model_validate(self._usage) if self._usage else None
        return ModelResponse(
            message=message,
            usage=_usage(usage, self._request_bytes, message),
            finish_reason=self._stop_reason,
        )

    def _started(self, block: _Block, emit: EventSink) -> None:
        kind = block.start.get("type")
        if kind == "thinking":
            if self._reasoned:
                emit(MessageDelta(text="\n\n", kind="reasoning"))
            self._reasoned = True
            if block.start.get("thinking"):
                emit(MessageDelta(text=str(block.start["thinking"]), kind="reasoning"))
        elif kind == "text" and block.start.get("text"):
            emit(MessageDelta(text=str(block.start["text"])))

    def _delta(self, block: _Block, delta: dict[str, Any], emit: EventSink) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            text = str(delta.get("text") or "")
            block.parts.append(text)
            if text:
                emit(MessageDelta(text=text))
        elif kind == "thinking_delta":
            text = str(delta.get("thinking") or "")
            block.parts.append(text)
            if text:
                emit(MessageDelta(text=text, kind="reasoning"))
        elif kind == "input_json_delta":
            block.parts.append(str(delta.get("partial_json") or ""))
        elif kind == "signature_delta":
            block.signature.append(str(delta.get("signature") or ""))

    def _add_usage(self, usage: Any) -> None:
        """Merge a usage object; ``message_delta`` counts are cumulative: later ones replace earlier ones."""
        if isinstance(usage, dict):
            counts = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
            self._usage.update(counts)


def _index(payload: dict[str, Any]) -> int:
    index = payload.get("index")
    return index if isinstance(index, int) else 0
