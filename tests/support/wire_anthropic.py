"""Renders a scripted step as an Anthropic Messages response for the fake model server (see wire_formats.py).

Whole: one ``message`` object whose content is, in order, a ``thinking`` block (when the step has
``reasoning``; signature ``sig-<n>``), a ``text`` block (when it has ``content``) and one ``tool_use`` block
per call (id ``call_<n>_<i>`` unless given). Streamed, as the API sends it: ``message_start`` (input usage),
``ping``, then per block ``content_block_start`` / ``content_block_delta`` (``thinking_delta`` then one
``signature_delta``; ``text_delta``; ``input_json_delta`` in several fragments, the first one empty) /
``content_block_stop``, then ``message_delta`` (stop reason, output usage) and ``message_stop``.
Format per the Anthropic Messages API reference, "Streaming messages".
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.support.wire_formats import JSON, SSE, _arguments, _pieces, _token_counts, sse

if TYPE_CHECKING:
    from tests.support.model_server import Rendered, ServerStep


def render(step: ServerStep, number: int, model: str, request_bytes: int, stream: bool) -> Rendered:
    input_tokens, output_tokens = _token_counts(step, request_bytes)
    blocks: list[dict[str, Any]] = []
    if step.reasoning:
        blocks.append({"type": "thinking", "thinking": step.reasoning, "signature": f"sig-{number}"})
    if step.content:
        blocks.append({"type": "text", "text": step.content})
    for i, call in enumerate(step.tool_calls, start=1):
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id or f"call_{number}_{i}",
                "name": call.name,
                "input": _arguments(call),
            }
        )
    stop_reason = "tool_use" if step.tool_calls else "end_turn"
    message: dict[str, Any] = {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        },
    }
    if not stream:
        content = [
            {**block, "input": _input_object(block["input"])} if "input" in block else block
            for block in blocks
        ]
        return JSON, [json.dumps({**message, "content": content, "stop_reason": stop_reason})]

    chunks = [
        sse(
            {
                "type": "message_start",
                "message": {**message, "usage": {**message["usage"], "output_tokens": 1}},
            },
            "message_start",
        ),
        sse({"type": "ping"}, "ping"),
    ]
    for index, block in enumerate(blocks):
        chunks += _block_events(index, block)
    chunks.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
            "message_delta",
        )
    )
    chunks.append(sse({"type": "message_stop"}, "message_stop"))
    return SSE, chunks


def _block_events(index: int, block: dict[str, Any]) -> list[str]:
    def delta(body: dict[str, Any]) -> str:
        return sse({"type": "content_block_delta", "index": index, "delta": body}, "content_block_delta")

    kind = block["type"]
    start: dict[str, Any]
    if kind == "thinking":
        start = {"type": "thinking", "thinking": ""}
        deltas = [
            delta({"type": "thinking_delta", "thinking": piece}) for piece in _pieces(block["thinking"])
        ]
        deltas.append(delta({"type": "signature_delta", "signature": block["signature"]}))
    elif kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [delta({"type": "text_delta", "text": piece}) for piece in _pieces(block["text"])]
    else:
        start = {**block, "input": {}}
        fragments = ["", *_pieces(block["input"], size=5)]
        deltas = [delta({"type": "input_json_delta", "partial_json": piece}) for piece in fragments]
    return [
        sse({"type": "content_block_start", "index": index, "content_block": start}, "content_block_start"),
        *deltas,
        sse({"type": "content_block_stop", "index": index}, "content_block_stop"),
    ]


def _input_object(arguments: str) -> Any:
    """The ``input`` of a whole response: the parsed object, or the text itself when it is not JSON (a
    server gone wrong, for malformed-argument tests)."""
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments
