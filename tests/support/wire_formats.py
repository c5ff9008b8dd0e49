"""How the fake model server renders a scripted step in each wire API's format, whole or streamed.

One renderer per wire API, registered by request path in ``RENDERERS``. Each returns
(content type, chunks): a JSON reply is one chunk; a streamed reply is one chunk per server-sent event,
written and flushed one by one. Ids are ``<prefix>-<n>`` and ``call_<n>_<i>`` (both 1-based) unless the
step gives them. Formats follow the public API references (OpenAI Chat Completions and Responses,
Anthropic Messages).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.model_server import Rendered, Renderer, ServerStep

SSE = "text/event-stream"
JSON = "application/json"


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event; ``data`` is JSON-encoded unless it is a string."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n"


def _arguments(call: Any) -> str:
    return call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)


def _token_counts(step: ServerStep, request_bytes: int) -> tuple[int, int]:
    reply = len(step.content.encode()) + sum(len(c.name) + len(_arguments(c)) for c in step.tool_calls)
    return max(1, request_bytes // 4), max(1, reply // 4)


def render_chat(step: ServerStep, number: int, model: str, request_bytes: int, stream: bool) -> Rendered:
    """OpenAI Chat Completions: a ``chat.completion`` body, or ``chat.completion.chunk`` events ending in
    a usage chunk (as with ``stream_options.include_usage``) and ``[DONE]``."""
    calls = [
        {"id": call.id or f"call_{number}_{i}", "name": call.name, "arguments": _arguments(call)}
        for i, call in enumerate(step.tool_calls, start=1)
    ]
    prompt_tokens, completion_tokens = _token_counts(step, request_bytes)
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    finish = "tool_calls" if calls else "stop"
    head = {"id": f"chatcmpl-{number}", "created": int(time.time()), "model": model}
    if not stream:
        # Like OpenAI: null content next to tool calls, a string otherwise.
        message: dict[str, Any] = {"role": "assistant", "content": step.content or (None if calls else "")}
        if step.reasoning:
            message["reasoning_content"] = step.reasoning
        if calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in calls
            ]
        body = {
            **head,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return JSON, [json.dumps(body)]

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return sse({**head, "object": "chat.completion.chunk", "choices": [choice]})

    chunks = [chunk({"role": "assistant", "content": ""})]
    for piece in _pieces(step.reasoning):
        chunks.append(chunk({"reasoning_content": piece}))
    for piece in _pieces(step.content):
        chunks.append(chunk({"content": piece}))
    for index, call in enumerate(calls):
        function = {"name": call["name"], "arguments": ""}
        first = {"index": index, "id": call["id"], "type": "function", "function": function}
        chunks.append(chunk({"tool_calls": [first]}))
        for piece in _pieces(call["arguments"]):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    chunks.append(chunk({}, finish))
    chunks.append(sse({**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}))
    chunks.append(sse("[DONE]"))
    return SSE, chunks


def _pieces(text: str, size: int = 8) -> list[str]:
    """``text`` cut into pieces of ``size`` characters, as a streaming server would send it."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def _render_anthropic(
    step: ServerStep, number: int, model: str, request_bytes: int, stream: bool
) -> Rendered:
    from tests.support import wire_anthropic

    return wire_anthropic.render(step, number, model, request_bytes, stream)


def _render_responses(
    step: ServerStep, number: int, model: str, request_bytes: int, stream: bool
) -> Rendered:
    from tests.support import wire_responses

    return wire_responses.render(step, number, model, request_bytes, stream)


RENDERERS: dict[str, Renderer] = {
    "/v1/chat/completions": render_chat,
    "/v1/messages": _render_anthropic,
    "/v1/responses": _render_responses,
}
