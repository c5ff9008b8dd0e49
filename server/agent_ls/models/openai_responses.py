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

A response's ``output`` items map back, in order, in ``models/responses_output.py``: ``message`` -> text,
``function_call`` -> a tool call, ``reasoning`` -> visible reasoning plus an ``OpaqueItem`` placed before
the following item. A streamed response is rebuilt from its events in ``models/responses_stream.py``;
only ``response.completed`` or ``response.incomplete`` end it, so a stream cut short is an error, never
a shorter answer.

Behaviour follows the OpenAI Responses API reference (create, streaming events, function calling,
reasoning items) and Codex, which sends ``strict: false`` function tools: the API defaults ``strict`` to
true, which would reject our JSON Schemas (optional properties, no ``additionalProperties: false``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, ClassVar, assert_never

from pydantic import ValidationError

from agent_ls.core.errors import ModelResponseError
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    OpaqueItem,
    SystemMessage,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from agent_ls.models.base import HttpModelClient, StreamReader, WireConfig
from agent_ls.models.errors import in_band_error
from agent_ls.models.responses_output import WIRE, ResponseError, ResponseObject, model_response, unreadable
from agent_ls.models.responses_stream import ResponsesStreamReader

log = logging.getLogger(__name__)


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
