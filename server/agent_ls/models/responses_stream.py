"""The stream reader of the OpenAI Responses API: server-sent events in, the response's output items out.

``ResponsesStreamReader`` keys what each event says by output item, rebuilds the items a whole response
would hold (``output_item.done`` wins over the accumulated deltas), emits text and reasoning deltas as they
arrive, and hands the items to ``model_response`` (``models/responses_output.py``), the mapping a whole
response goes through too. Only ``response.completed`` or ``response.incomplete`` end the response, so a
stream cut short is an error, never a shorter answer.

It is separate from the client (``models/openai_responses.py``, which builds the request) because event
bookkeeping is a concern of its own. Behaviour follows the OpenAI Responses API reference, "Streaming
events".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agent_ls.core.errors import ModelStreamError
from agent_ls.core.events import EventSink, MessageDelta
from agent_ls.core.messages import ModelResponse
from agent_ls.core.untrusted_json import loads_bounded
from agent_ls.models.base import StreamReader
from agent_ls.models.errors import Endpoint, in_band_error
from agent_ls.models.responses_output import (
    REASONING_SEPARATOR,
    ResponseError,
    ResponseObject,
    model_response,
)


class StreamEvent(BaseModel):
    """One streamed event; which fields are set depends on ``type``."""

    model_config = ConfigDict(extra="ignore", defer_build=True)  # built at the first event (start-up)

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
