"""OpenAI Responses (``POST {base_url}/responses``), streamed or not, stateless.

The conversation maps onto the API's items, in order (``responses_request_body``):

- system messages -> ``instructions`` (joined by a blank line);
- a user message -> ``{role: "user", content: [{type: "input_text", text}]}``;
- an assistant message -> its reasoning items (``OpaqueItem`` of this wire, unchanged), its text as a
  ``message`` item with one ``output_text`` part, its tool calls as ``function_call`` items (arguments
  as JSON text); each reasoning item goes right before the item that followed it in the response
  (``OpaqueItem.before_call``), and one whose following item is gone is dropped, never sent alone
  (the API refuses an orphan: "Item rs_* of type reasoning was provided without its required following
  item", coder/mux#59);
- a tool result -> ``{type: "function_call_output", call_id, output}``.

Requests are stateless: ``store: false`` and ``include: ["reasoning.encrypted_content"]``, never
``previous_response_id``; the whole history is resent each turn. With ``store: false`` a reasoning item
without ``encrypted_content`` is refused ("Item with id 'rs_…' not found. Items are not persisted when
`store` is set to false", vercel/ai#7543), so such items are dropped too.

A response's ``output`` items map back, in order: ``message`` -> text (``output_text`` and ``refusal``
parts joined), ``function_call`` -> a tool call (repaired by ``models/repair.py``), ``reasoning`` ->
its summary text as visible reasoning plus an ``OpaqueItem`` placed before the following item. A
streamed response is rebuilt from its events (``ResponsesStreamReader``); only ``response.completed``
or ``response.incomplete`` end it, so a stream cut short is an error, never a shorter answer.

Behaviour follows the OpenAI Responses API reference (create, streaming events, function calling,
reasoning items) and Codex, which sends ``strict: false`` function tools: the API defaults ``strict`` to
true, which would reject our JSON Schemas (optional properties, no ``additionalProperties: false``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, assert_never

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_ls.core.errors import (
    ModelResponseError,
    ModelStreamError,
)
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
from agent_ls.core.untrusted_json import loads_bounded
from agent_ls.models.base import HttpModelClient, StreamReader, WireConfig, estimate_usage
from agent_ls.models.errors import Endpoint, in_band_error
from agent_ls.models.partial_call import PartialCall
from agent_ls.models.repair import finalize_calls

log = logging.getLogger(__name__)

WIRE = "openai-responses"
REASONING_SEPARATOR = "\n\n"
"""Between two reasoning summary parts, in ``AssistantMessage.reasoning`` and in the streamed deltas."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ContentPart(_Lenient):
    type: str | None = None
    text: str | None = None
    refusal: str | None = None


class MessageItem(_Lenient):
    content: list[ContentPart] | None = None


class FunctionCallItem(_Lenient):
    call_id: str | None = None
    name: str | None = None
    # A JSON string per the API; kept as whatever came, for repair.
    arguments: Any = None


class SummaryPart(_Lenient):
    text: str | None = None


class ReasoningItem(_Lenient):
    summary: list[SummaryPart] | None = None


class InputTokensDetails(_Lenient):
    cached_tokens: int | None = None


class ResponseUsage(_Lenient):
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_tokens_details: InputTokensDetails | None = None


class ResponseError(_Lenient):
    code: str | None = None
    message: str | None = None


class IncompleteDetails(_Lenient):
    reason: str | None = None


class ResponseObject(_Lenient):
    """The parts of a ``response`` object we read; ``output`` items stay raw (reasoning is echoed as is)."""

    status: str | None = None
    output: list[Any] = Field(default_factory=list)
    usage: ResponseUsage | None = None
    error: ResponseError | None = None
    incomplete_details: IncompleteDetails | None = None


class StreamEvent(_Lenient):
    """One streamed event; which fields are set depends on ``type``."""

    type: str | None = None
    output_index: int | None = None
    item_id: str | None = None
    content_index: int | None = None
    summary_index: int | None = None
    delta: str | None = None
    text: str | None = None
    arguments: Any = None
    name: str | None = None
    item: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    code: str | None = None
    message: str | None = None
    error: ResponseError | None = None


class OpenAIResponsesClient(HttpModelClient):
    """A ``ModelClient`` over the OpenAI Responses API (contract in ``core/ports.py``; mapping above).

    Built as ``OpenAIResponsesClient(WireConfig(model=..., base_url=..., api_key=...))``; the key goes
    in ``Authorization: Bearer``.
    """

    wire: ClassVar[str] = WIRE
    path: ClassVar[str] = "/responses"

    def request_body(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        return responses_request_body(self.config, messages, tools)

    def read_response(self, body: Any, tools: Sequence[ToolSpec], request_bytes: int) -> ModelResponse:
        """Map a ``response`` object (``output`` items, ``usage``, ``status``).

        Raises:
            ModelResponseError: the body is not a response object, or its status is not final.
            ModelError: the response ``failed`` (the class from ``response.error.code``).
        """
        try:
            response = ResponseObject.model_validate(body)
        except ValidationError as exc:
            raise unreadable(self.endpoint, exc) from exc
        status = response.status or "completed"
        if status == "failed":
            error = response.error or ResponseError()
            raise in_band_error(self.endpoint, error.code, error.message)
        if status not in ("completed", "incomplete"):
            raise ModelResponseError(
                f"the model server at {self.endpoint.url} answered with a response that is {status!r}, "
                f"not completed, for model {self.endpoint.model_name}"
            )
        return model_response(self.endpoint, response, response.output, request_bytes)

    def stream_reader(self, tools: Sequence[ToolSpec], request_bytes: int) -> StreamReader:
        return ResponsesStreamReader(self.endpoint, self.stream_failure, request_bytes)


def responses_request_body(
    config: WireConfig, messages: Sequence[Message], tools: Sequence[ToolSpec]
) -> dict[str, Any]:
    """The JSON body for ``messages`` (valid history, in order); the mapping is in the module docstring.

    Keys: ``model``, ``instructions`` (only with system text), ``input``, ``tools`` and
    ``tool_choice: "auto"`` (only with tools), ``max_output_tokens`` (only when configured), ``store``,
    ``include``, ``stream``.
    """
    instructions = "\n\n".join(m.text for m in messages if isinstance(m, SystemMessage))
    items: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case SystemMessage():
                pass
            case UserMessage(text=text):
                items.append({"role": "user", "content": [{"type": "input_text", "text": text}]})
            case AssistantMessage():
                items.extend(_assistant_items(message))
            case ToolResultMessage(call_id=call_id, content=content):
                items.append({"type": "function_call_output", "call_id": call_id, "output": content})
            case _:
                assert_never(message)
    body: dict[str, Any] = {"model": config.model}
    if instructions:
        body["instructions"] = instructions
    body["input"] = items
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "strict": False,
            }
            for tool in tools
        ]
        body["tool_choice"] = "auto"
    if config.max_output_tokens is not None:
        body["max_output_tokens"] = config.max_output_tokens
    body["store"] = False
    body["include"] = ["reasoning.encrypted_content"]
    body["stream"] = config.stream
    return body


def _assistant_items(message: AssistantMessage) -> list[dict[str, Any]]:
    """The items of one assistant message: reasoning items each before its following item, then the
    text ``message`` item, then one ``function_call`` per tool call, in order."""
    before: dict[int | None, list[dict[str, Any]]] = {}
    for opaque in message.opaque:
        item = _replayable(opaque) if opaque.wire == WIRE else None
        if item is not None:
            before.setdefault(opaque.before_call, []).append(item)
    items: list[dict[str, Any]] = []
    if message.text:
        items.extend(before.pop(None, []))
        content = [{"type": "output_text", "text": message.text}]
        items.append({"type": "message", "role": "assistant", "content": content})
    for index, call in enumerate(message.tool_calls):
        items.extend(before.pop(index, []))
        items.append(
            {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments}
        )
    # What is left has no following item here (no text, or a call index past the calls): never sent alone.
    for slot, orphans in before.items():
        log.warning("dropped %d reasoning item(s) without their following item (at %r)", len(orphans), slot)
    return items


def _replayable(opaque: OpaqueItem) -> dict[str, Any] | None:
    """The item to resend, or None (logged) when it is not a JSON object, or is a reasoning item without
    ``encrypted_content`` (refused under ``store: false``)."""
    try:
        item = json.loads(opaque.data)
    except ValueError:
        item = None
    if not isinstance(item, dict):
        log.warning("dropped an opaque %s item that is not a JSON object", WIRE)
        return None
    if item.get("type") == "reasoning" and not item.get("encrypted_content"):
        log.warning(
            "dropped reasoning item %s: no encrypted_content, refused with store=false", item.get("id")
        )
        return None
    return item


def model_response(
    endpoint: Endpoint, response: ResponseObject, output: Sequence[Any], request_bytes: int
) -> ModelResponse:
    """Map final ``output`` items and the ``response``'s usage and status to a ``ModelResponse``.

    ``finish_reason`` is ``incomplete_details.reason`` (``max_output_tokens``, ``content_filter``) for an
    incomplete response, else ``tool_calls`` or ``stop`` as in Chat Completions. Usage without a report
    from the server is estimated (bytes / 4).

    Raises:
        ModelResponseError: an output item of a type we read has the wrong shape.
    """
    try:
        message = assistant_message(output)
    except ValidationError as exc:
        raise unreadable(endpoint, exc) from exc
    if response.status == "incomplete":
        details = response.incomplete_details
        finish_reason = (details.reason if details else None) or "incomplete"
    else:
        finish_reason = "tool_calls" if message.tool_calls else "stop"
    reported = response.usage
    if reported is None or (reported.input_tokens is None and reported.output_tokens is None):
        usage = estimate_usage(request_bytes, message)
    else:
        details_in = reported.input_tokens_details
        usage = Usage(
            input_tokens=reported.input_tokens or 0,
            output_tokens=reported.output_tokens or 0,
            cached_input_tokens=(details_in.cached_tokens or 0) if details_in else 0,
        )
    return ModelResponse(message=message, usage=usage, finish_reason=finish_reason)


def assistant_message(output: Sequence[Any]) -> AssistantMessage:
    """The assistant message of ``output`` items, in order (rules in the module docstring).

    Reasoning items become ``OpaqueItem``: ``before_call`` is the index (in the final tool calls) of the
    ``function_call`` that follows, or None when a ``message`` follows. A reasoning item followed by
    nothing we replay (the end, another item type, a call dropped for its empty name) is not kept.
    Items that are not objects, and item types we do not use, are skipped.

    Raises:
        pydantic.ValidationError: an item of a type we read has the wrong shape.
    """
    texts: list[str] = []
    summaries: list[str] = []
    partials: list[PartialCall] = []
    pending: list[str] = []
    placed: list[tuple[str, int | None]] = []  # (reasoning JSON, index into partials or None)
    for raw in output:
        kind = raw.get("type") if isinstance(raw, dict) else None
        if kind == "reasoning":
            reasoning = ReasoningItem.model_validate(raw)
            summaries.extend(part.text for part in reasoning.summary or [] if part.text)
            pending.append(json.dumps(raw, ensure_ascii=False))
        elif kind == "message":
            for part in MessageItem.model_validate(raw).content or []:
                texts.append((part.refusal if part.type == "refusal" else part.text) or "")
            placed.extend((data, None) for data in pending)
            pending = []
        elif kind == "function_call":
            call = FunctionCallItem.model_validate(raw)
            placed.extend((data, len(partials)) for data in pending)
            pending = []
            partials.append(PartialCall(id=call.call_id, name=call.name, arguments=call.arguments))
        else:
            if pending:
                log.warning("dropped %d reasoning item(s) followed by a %r item", len(pending), kind)
            pending = []
    if pending:
        log.warning("dropped %d reasoning item(s) at the end of the output: no item follows", len(pending))
    calls = finalize_calls(partials)
    # finalize_calls drops exactly the calls without a name; map partial positions to final ones.
    final_index: dict[int, int] = {}
    for index, partial in enumerate(partials):
        if (partial.name or "").strip():
            final_index[index] = len(final_index)
    opaque: list[OpaqueItem] = []
    for data, position in placed:
        if position is None:
            opaque.append(OpaqueItem(wire=WIRE, data=data))
        elif position in final_index:
            opaque.append(OpaqueItem(wire=WIRE, data=data, before_call=final_index[position]))
        else:
            log.warning("dropped a reasoning item whose following tool call had no name")
    return AssistantMessage(
        text="".join(texts),
        tool_calls=calls,
        reasoning=REASONING_SEPARATOR.join(summaries),
        opaque=tuple(opaque),
    )


def unreadable(endpoint: Endpoint, exc: ValidationError) -> ModelResponseError:
    """The error for a response body or output item without the shape the API documents (one line)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "body"
    return ModelResponseError(
        f"the model server at {endpoint.url} sent an unreadable response for model "
        f"{endpoint.model_name}: unexpected {where}: {first['msg']}"
    )


class ResponsesStreamReader(StreamReader):
    """Rebuilds one streamed response from its server-sent events.

    Per output item (keyed by ``output_index``, else by ``item_id``): ``response.output_item.added``
    gives its type and ids; ``response.output_text.delta`` / ``.done`` its text (each delta is emitted);
    ``response.reasoning_summary_text.delta`` / ``.done`` its summary (emitted as reasoning, parts
    separated by a blank line); ``response.function_call_arguments.delta`` / ``.done`` its arguments;
    ``response.output_item.done`` the whole item, which wins over what was accumulated.
    ``response.completed`` or ``response.incomplete`` ends the response and gives its usage.

    Raises:
        ModelStreamError: an event is not a JSON object, or the stream ended without a final event.
        ModelResponseError: a final output item of a type we read has the wrong shape.
        ModelError: ``response.failed`` or an ``error`` event (``models/errors.py`` ``in_band_error``).
    """

    def __init__(self, endpoint: Endpoint, stream_failure: Callable[[str], str], request_bytes: int) -> None:
        self._endpoint = endpoint
        self._stream_failure = stream_failure
        self._request_bytes = request_bytes
        self._added: dict[int, dict[str, Any]] = {}
        self._done: dict[int, dict[str, Any]] = {}
        self._slot_of: dict[str, int] = {}
        self._argument_deltas: dict[int, list[str]] = {}
        self._arguments_done: dict[int, StreamEvent] = {}
        self._text: dict[int, dict[int, list[str]]] = {}
        self._summary: dict[int, dict[int, list[str]]] = {}
        self._final: ResponseObject | None = None
        self._reasoning_part: tuple[int, int] | None = None

    def feed(self, event: str, data: str, emit: EventSink) -> None:
        if self._final is not None:
            return
        try:
            payload = loads_bounded(data)
        except ValueError as exc:
            raise ModelStreamError(self._stream_failure(f"an event is not JSON: {data[:80]!r}")) from exc
        if not isinstance(payload, dict):
            raise ModelStreamError(self._stream_failure(f"an event is not a JSON object: {data[:80]!r}"))
        try:
            parsed = StreamEvent.model_validate(payload)
        except ValidationError as exc:
            reason = f"unreadable {payload.get('type') or event} event: {exc.errors()[0]['msg']}"
            raise ModelStreamError(self._stream_failure(reason)) from exc
        self._handle(parsed.type or event, parsed, emit)

    def _handle(self, kind: str, event: StreamEvent, emit: EventSink) -> None:
        if kind == "response.output_item.added" and event.item is not None:
            self._added[self._slot(event, event.item.get("id"))] = event.item
        elif kind == "response.output_item.done" and event.item is not None:
            self._done[self._slot(event, event.item.get("id"))] = event.item
        elif kind in ("response.output_text.delta", "response.refusal.delta") and event.delta:
            self._part(self._text, event, event.content_index).append(event.delta)
            emit(MessageDelta(text=event.delta))
        elif kind == "response.output_text.done" and event.text is not None:
            pieces = self._part(self._text, event, event.content_index)
            pieces[:] = [event.text]
        elif kind == "response.reasoning_summary_text.delta" and event.delta:
            slot = self._slot(event)
            key = (slot, event.summary_index or 0)
            if self._reasoning_part is not None and key != self._reasoning_part:
                emit(MessageDelta(text=REASONING_SEPARATOR, kind="reasoning"))
            self._reasoning_part = key
            self._part(self._summary, event, event.summary_index).append(event.delta)
            emit(MessageDelta(text=event.delta, kind="reasoning"))
        elif kind == "response.reasoning_summary_text.done" and event.text is not None:
            pieces = self._part(self._summary, event, event.summary_index)
            pieces[:] = [event.text]
        elif kind == "response.function_call_arguments.delta" and event.delta:
            self._argument_deltas.setdefault(self._slot(event), []).append(event.delta)
        elif kind == "response.function_call_arguments.done":
            self._arguments_done[self._slot(event)] = event
        elif kind in ("response.completed", "response.incomplete"):
            try:
                self._final = ResponseObject.model_validate(event.response or {})
            except ValidationError as exc:
                raise ModelStreamError(self._stream_failure(f"unreadable {kind} event")) from exc
            if self._final.status is None:
                self._final.status = "incomplete" if kind == "response.incomplete" else "completed"
        elif kind == "response.failed":
            error = ResponseError.model_validate((event.response or {}).get("error") or {})
            raise in_band_error(self._endpoint, error.code, error.message)
        elif kind == "error":
            error = event.error or ResponseError(code=event.code, message=event.message)
            raise in_band_error(self._endpoint, error.code, error.message)

    def _slot(self, event: StreamEvent, item_id: Any = None) -> int:
        """The output index of the item ``event`` is about: ``output_index``; else the index recorded for
        its ``item_id`` (a new one after the last for an unseen id); else the last item's."""
        item_id = item_id if isinstance(item_id, str) and item_id else event.item_id
        if event.output_index is not None:
            if item_id:
                self._slot_of.setdefault(item_id, event.output_index)
            return event.output_index
        if item_id and item_id in self._slot_of:
            return self._slot_of[item_id]
        known = self._slots()
        if item_id:
            self._slot_of[item_id] = max(known, default=-1) + 1
            return self._slot_of[item_id]
        return max(known, default=0)

    def _slots(self) -> list[int]:
        """Every output index seen so far, in order."""
        return sorted(
            set(self._added)
            | set(self._done)
            | set(self._argument_deltas)
            | set(self._arguments_done)
            | set(self._text)
            | set(self._summary)
            | set(self._slot_of.values())
        )

    def _part(
        self, store: dict[int, dict[int, list[str]]], event: StreamEvent, index: int | None
    ) -> list[str]:
        return store.setdefault(self._slot(event), {}).setdefault(index or 0, [])

    def finish(self) -> ModelResponse:
        if self._final is None:
            raise ModelStreamError(
                self._stream_failure("the stream ended before response.completed (truncated response)")
            )
        slots = self._slots()
        output: list[Any] = [self._item(slot) for slot in slots] if slots else self._final.output
        return model_response(self._endpoint, self._final, output, self._request_bytes)

    def _item(self, slot: int) -> dict[str, Any]:
        """The item at ``slot``: ``output_item.done`` when it came, else rebuilt from the deltas."""
        done = self._done.get(slot)
        item = dict(done or self._added.get(slot) or {})
        kind = item.get("type")
        if kind is None:
            if slot in self._argument_deltas or slot in self._arguments_done:
                kind = "function_call"
            elif slot in self._text:
                kind = "message"
            elif slot in self._summary:
                kind = "reasoning"
            item["type"] = kind
        if kind == "function_call":
            event = self._arguments_done.get(slot)
            item["name"] = item.get("name") or (event.name if event else None)
            item["arguments"] = _first_filled(
                item.get("arguments") if done is not None else None,
                event.arguments if event else None,
                "".join(self._argument_deltas.get(slot, [])),
            )
        elif kind == "message" and done is None:
            parts = self._text.get(slot, {})
            item["content"] = [{"type": "output_text", "text": "".join(parts[i])} for i in sorted(parts)]
        elif kind == "reasoning" and done is None:
            parts = self._summary.get(slot, {})
            item["summary"] = [{"type": "summary_text", "text": "".join(parts[i])} for i in sorted(parts)]
        return item


def _first_filled(*values: Any) -> Any:
    """The first value that is not None or blank text; None when there is none."""
    for value in values:
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        return value
    return None
