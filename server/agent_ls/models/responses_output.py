"""A Responses API answer read back: the shapes of a ``response`` object and its output items, and their
mapping to a ``ModelResponse``.

``output`` items map back in order (``assistant_message``): ``message`` -> text (``output_text`` and
``refusal`` parts joined), ``function_call`` -> a tool call (repaired by ``models/repair.py``),
``reasoning`` -> its summary text as visible reasoning plus an ``OpaqueItem`` placed before the following
item; usage and status come from the ``response`` object (``model_response``).

Both readers of the wire end here: ``OpenAIResponsesClient.read_response`` with a whole response, and
``ResponsesStreamReader`` (``models/responses_stream.py``) with the output items it rebuilt from the
events. It is its own module so that the client and the stream reader share it without importing each
other. Behaviour follows the OpenAI Responses API reference (the response object, reasoning items).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_ls.core.errors import ModelResponseError
from agent_ls.core.messages import AssistantMessage, ModelResponse, OpaqueItem, Usage
from agent_ls.models.base import estimate_usage
from agent_ls.models.errors import Endpoint
from agent_ls.models.partial_call import PartialCall
from agent_ls.models.repair import finalize_calls

log = logging.getLogger(__name__)

WIRE = "openai-responses"
"""``OpenAIResponsesClient.wire``, and the ``OpaqueItem.wire`` of the reasoning items it keeps and resends."""
REASONING_SEPARATOR = "\n\n"
"""Between two reasoning summary parts, in ``AssistantMessage.reasoning`` and in the streamed deltas."""


class _Lenient(BaseModel):
    # Built at the first response, not at import: the first request does not need them (start-up time).
    model_config = ConfigDict(extra="ignore", defer_build=True)


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
