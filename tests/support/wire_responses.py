"""Renders a scripted step as an OpenAI Responses API reply for the fake model server (see wire_formats.py).

Whole: one ``response`` object whose ``output`` holds, in order, a ``reasoning`` item (when the step has
``reasoning``: its text as one summary part, plus an ``encrypted_content`` string), a ``message`` item
(when it has ``content``) and one ``function_call`` item per tool call. The reasoning item comes right
before the item that follows it, as the API pairs them.

Streamed: ``response.created``, then per item ``response.output_item.added``, its deltas
(``response.reasoning_summary_text.delta``, ``response.output_text.delta``,
``response.function_call_arguments.delta`` then ``.done``) and ``response.output_item.done``; finally
``response.completed`` with the whole response and its usage. Every event has ``event:`` and a
``sequence_number``; there is no ``[DONE]``. Ids: ``resp_<n>``, ``rs_<n>``, ``msg_<n>``, ``fc_<n>_<i>``,
``call_<n>_<i>`` (1-based) unless the step gives the call id. Format per the OpenAI Responses API reference.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from tests.support.wire_formats import JSON, SSE, _arguments, _pieces, _token_counts, sse

if TYPE_CHECKING:
    from tests.support.model_server import Rendered, ServerStep


def encrypted_content(number: int) -> str:
    """The opaque ``encrypted_content`` of the reasoning item of reply ``number``."""
    return f"gAAAA-encrypted-reasoning-{number}"


def output_items(step: ServerStep, number: int) -> list[dict[str, Any]]:
    """The final ``output`` items of reply ``number``, in order."""
    items: list[dict[str, Any]] = []
    if step.reasoning:
        items.append(
            {
                "type": "reasoning",
                "id": f"rs_{number}",
                "summary": [{"type": "summary_text", "text": step.reasoning}],
                "encrypted_content": encrypted_content(number),
            }
        )
    if step.content:
        items.append(
            {
                "type": "message",
                "id": f"msg_{number}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": step.content, "annotations": []}],
            }
        )
    for i, call in enumerate(step.tool_calls, start=1):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{number}_{i}",
                "call_id": call.id or f"call_{number}_{i}",
                "name": call.name,
                "arguments": _arguments(call),
                "status": "completed",
            }
        )
    return items


def response_object(
    number: int, model: str, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None
) -> dict[str, Any]:
    """A ``response`` object as the API returns it (fields we do not read kept to a plausible few)."""
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "usage": usage,
        "error": None,
        "incomplete_details": None,
        "store": False,
    }


def render(step: ServerStep, number: int, model: str, request_bytes: int, stream: bool) -> Rendered:
    input_tokens, output_tokens = _token_counts(step, request_bytes)
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }
    items = output_items(step, number)
    if not stream:
        return JSON, [json.dumps(response_object(number, model, "completed", items, usage))]

    events: list[str] = []

    def event(kind: str, **fields: Any) -> None:
        events.append(sse({"type": kind, "sequence_number": len(events), **fields}, event=kind))

    event("response.created", response=response_object(number, model, "in_progress", [], None))
    for index, item in enumerate(items):
        where = {"item_id": item["id"], "output_index": index}
        if item["type"] == "reasoning":
            event("response.output_item.added", output_index=index, item={**item, "summary": []})
            for piece in _pieces(step.reasoning):
                event("response.reasoning_summary_text.delta", **where, summary_index=0, delta=piece)
            event("response.reasoning_summary_text.done", **where, summary_index=0, text=step.reasoning)
        elif item["type"] == "message":
            event("response.output_item.added", output_index=index, item={**item, "content": []})
            for piece in _pieces(step.content):
                event("response.output_text.delta", **where, content_index=0, delta=piece)
            event("response.output_text.done", **where, content_index=0, text=step.content)
        else:
            added = {**item, "arguments": "", "status": "in_progress"}
            event("response.output_item.added", output_index=index, item=added)
            for piece in _pieces(item["arguments"]):
                event("response.function_call_arguments.delta", **where, delta=piece)
            event(
                "response.function_call_arguments.done",
                **where,
                name=item["name"],
                arguments=item["arguments"],
            )
        event("response.output_item.done", output_index=index, item=item)
    event("response.completed", response=response_object(number, model, "completed", items, usage))
    return SSE, events
