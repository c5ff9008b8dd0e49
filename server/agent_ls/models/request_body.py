"""The request body a model client sends, without sending it: for ``agent.context`` and ``--debug``.

``encoder_of(model)`` finds the function that builds the exact UTF-8 JSON body a client's ``complete``
sends (``HttpModelClient.encode_request``; a ``RetryingModel`` is looked through; the replay model builds
a Chat Completions body). ``describe_request`` turns such a body into the text ``agent-ls run --debug`` and
the editor's ``agentLs.trace`` print: the options, the tool names, then the numbered messages with their
sizes and contents, every given secret replaced by ``[redacted]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from agent_ls.core.events import EventSink
from agent_ls.core.messages import Message, ModelResponse, ToolSpec
from agent_ls.core.ports import ModelClient
from agent_ls.models.openai_chat import chat_request_body

Encoder = Callable[[Sequence[Message], Sequence[ToolSpec]], bytes]
REDACTED = "[redacted]"


@runtime_checkable
class RequestEncoder(Protocol):
    """A model client that can build its request body without sending it."""

    def encode_request(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> bytes: ...


def encoder_of(model: ModelClient) -> Encoder:
    """The body builder of ``model``: its own ``encode_request``, the one of the client a wrapper holds
    in ``inner`` (``RetryingModel``), else a Chat Completions body for ``model.model_name`` (a scripted
    test model: the estimate then follows the most common wire)."""
    found: object = model
    for _ in range(4):  # wrappers nest at most a couple deep
        if isinstance(found, RequestEncoder):
            return found.encode_request
        found = getattr(found, "inner", None)
        if found is None:
            break
    return chat_encoder(model.model_name)


def chat_encoder(name: str) -> Encoder:
    """A Chat Completions body for the model ``name``: the estimate of the most common wire, for a model
    that builds no body of its own (or none at all: ``/context`` with no model configured)."""

    def chat(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> bytes:
        return chat_request_body(name, messages, tools)

    return chat


def redact_all(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each non-empty secret (and its JSON-escaped form) replaced by ``[redacted]`` where it
    stands as a token of its own: not inside a longer run of letters, digits, ``_`` or ``-`` (a local
    server's one-letter placeholder key must not blank every "k" of the trace; a real key is never part
    of a longer token)."""
    for secret in secrets:
        if not secret:
            continue
        for form in dict.fromkeys((secret, json.dumps(secret, ensure_ascii=False)[1:-1])):
            text = re.sub(rf"(?<![\w-]){re.escape(form)}(?![\w-])", REDACTED, text)
    return text


def describe_request(body: bytes, secrets: Iterable[str] = ()) -> str:
    """The body as ``--debug`` prints it, secrets redacted. Shape::

        request: 5,123 bytes (~1,280 tokens)
        options: {"model": "gpt-4.1", "stream": true, ...}
        tools (7): read_file, edit_file, ...
        message 1 system (2,001 bytes):
        <the content as sent>
        message 2 user (120 bytes):
        ...

    Sizes are the bytes of each message's JSON as sent; tokens are estimated as bytes / 4 (the estimate
    ``agent.context`` uses). Works for the Chat Completions (``messages``), Anthropic Messages
    (``system`` and ``messages``) and Responses (``instructions`` and ``input``) bodies.
    """
    secrets = list(secrets)
    try:
        data = json.loads(body)
    except ValueError:
        return redact_all(
            f"request: {len(body):,} bytes (not JSON)\n{body.decode(errors='replace')}", secrets
        )
    lines = [f"request: {len(body):,} bytes (~{len(body) // 4:,} tokens)"]
    if not isinstance(data, dict):
        return redact_all("\n".join([*lines, json.dumps(data, ensure_ascii=False)]), secrets)
    listed = ("messages", "input", "tools", "system", "instructions")
    options = {key: value for key, value in data.items() if key not in listed}
    lines.append(f"options: {json.dumps(options, ensure_ascii=False)}")
    tools = data.get("tools") or []
    lines.append(f"tools ({len(tools)}): {', '.join(_tool_name(tool) for tool in tools)}")
    entries: list[tuple[str, Any]] = []
    for key in ("system", "instructions"):
        if data.get(key):
            entries.append((key, data[key]))
    for item in data.get("messages") or data.get("input") or []:
        role = (item.get("role") or item.get("type") or "?") if isinstance(item, dict) else "?"
        entries.append((str(role), item))
    for number, (role, item) in enumerate(entries, start=1):
        encoded = json.dumps(item, ensure_ascii=False)
        lines.append(f"message {number} {role} ({len(encoded.encode()):,} bytes):")
        lines.append(_content_text(item))
    return redact_all("\n".join(lines), secrets)


def _tool_name(tool: Any) -> str:
    if not isinstance(tool, dict):
        return "?"
    function = tool.get("function")
    if isinstance(function, dict):
        return str(function.get("name", "?"))
    return str(tool.get("name", "?"))


def _content_text(item: Any) -> str:
    """The message as sent: its text content as it is, anything else (tool calls, blocks) as JSON."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and isinstance(item.get("content"), str) and len(item) <= 3:
        rest = {key: value for key, value in item.items() if key not in ("role", "content")}
        head = f"{json.dumps(rest, ensure_ascii=False)}\n" if rest else ""
        return head + str(item["content"])
    return json.dumps(item, ensure_ascii=False, indent=1)


def context_window_of(model: ModelClient) -> int | None:
    """The context window (tokens) the provider's config gives ``model`` (``context_window`` in
    agent-ls.toml), looked up through wrappers; None when it is not configured."""
    found: object = model
    for _ in range(4):
        config = getattr(found, "config", None)
        window = getattr(config, "context_window", None)
        if isinstance(window, int):
            return window
        found = getattr(found, "inner", None)
        if found is None:
            break
    return None


def api_key_of(model: ModelClient) -> str | None:
    """The API key ``model`` sends (looked up through wrappers), to redact it; None without one."""
    found: object = model
    for _ in range(4):
        key = getattr(getattr(found, "config", None), "api_key", None)
        if isinstance(key, str) and key:
            return key
        found = getattr(found, "inner", None)
        if found is None:
            break
    return None


class ObservedModel:
    """A ``ModelClient`` that shows each request before it is sent, then lets ``inner`` send it.

    ``show`` gets ``describe_request`` of the exact body (``encoder_of(inner)``), the API key redacted;
    it is called once per ``complete`` (a retried request is not shown again) and must not raise.
    Follows the contract of ``core.ports.ModelClient`` otherwise: every call goes to ``inner``.
    """

    def __init__(self, inner: ModelClient, show: Callable[[str], None]) -> None:
        self.inner = inner
        self._show = show
        self._encode = encoder_of(inner)
        key = api_key_of(inner)
        self._secrets = [key] if key else []

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def encode_request(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> bytes:
        return self._encode(messages, tools)

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], emit: EventSink
    ) -> ModelResponse:
        self._show(describe_request(self._encode(messages, tools), self._secrets))
        return await self.inner.complete(messages, tools, emit)

    async def aclose(self) -> None:
        await self.inner.aclose()
