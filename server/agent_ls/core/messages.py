"""The provider-neutral conversation: messages, tool calls, tool results and usage.

Every wire API in ``models/`` maps onto these types and back. A conversation is a list of
``Message`` in order; the invariant the loop keeps is that every ``ToolCall`` in an
``AssistantMessage`` is answered by exactly one ``ToolResultMessage`` with the same ``call_id``
before the next model request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class ToolCall:
    """A tool call requested by the model.

    Attributes:
        call_id: the provider's id, or a stable synthetic one when the provider sent none.
        name: the tool name as the model wrote it (it may not exist).
        arguments: the arguments as raw JSON text, exactly as received, so the dispatcher can report
            malformed JSON to the model instead of failing in the model adapter.
    """

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class SystemMessage:
    text: str
    role: Literal["system"] = "system"


@dataclass(frozen=True)
class UserMessage:
    text: str
    role: Literal["user"] = "user"


@dataclass(frozen=True)
class OpaqueItem:
    """Provider data that must go back to the same wire API unchanged, and nowhere else.

    Examples: an Anthropic ``thinking``/``redacted_thinking`` block (with its signature), an OpenAI
    Responses ``reasoning`` item (with ``encrypted_content``).

    Attributes:
        wire: the wire API that produced it (``anthropic``, ``openai-responses``); other wires drop it.
        data: the block or item as JSON text, exactly as received (after stream accumulation).
        before_call: the index of the tool call it preceded in the response, or None when it came
            before the text (or there were no tool calls after it). On replay it is put back there, so a
            reasoning item stays paired with its following item.
    """

    wire: str
    data: str
    before_call: int | None = None


@dataclass(frozen=True)
class AssistantMessage:
    """A model response: optional text and zero or more tool calls, in the order the model gave them.

    Attributes:
        text: the answer the user sees (reasoning and embedded tool-call markup removed).
        tool_calls: the calls to run, repaired and with non-empty names and ids.
        reasoning: visible reasoning text (``reasoning_content``, thinking or reasoning summaries); shown
            apart from the answer and never sent back as text.
        opaque: provider items to echo back unchanged to the same wire API (see ``OpaqueItem``).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"
    reasoning: str = ""
    opaque: tuple[OpaqueItem, ...] = ()


@dataclass(frozen=True)
class ToolResultMessage:
    """Our answer to one tool call. ``content`` is what the model reads; ``is_error`` flags failures."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    role: Literal["tool"] = "tool"


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


@dataclass(frozen=True)
class Usage:
    """Token usage of one or more model calls.

    Attributes:
        input_tokens: prompt tokens, cached ones included.
        output_tokens: completion tokens.
        cached_input_tokens: the part of ``input_tokens`` served from a provider cache (read).
        estimated: True when a provider reported nothing and the figures are bytes / 4.
        cost_usd: the cost in US dollars from the provider's price table, or None when no price is
            configured for any of the calls summed.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    estimated: bool = False
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            estimated=self.estimated or other.estimated,
            cost_usd=sum(costs) if costs else None,
        )


NO_USAGE = Usage()
"""The zero usage, for defaults (a ``Usage`` is immutable, so one instance serves everywhere)."""


@dataclass(frozen=True)
class ToolSpec:
    """What the model is shown of a tool: name, description and a JSON Schema for the arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RequestSent:
    """The request body a model call sent, for the trajectory: its size in bytes and the hex SHA-256 of
    those exact bytes (``hashlib.sha256``). The body itself is not kept: it holds the whole history."""

    size_bytes: int
    sha256: str


@dataclass(frozen=True)
class ModelResponse:
    """One completed model call: the assistant message, its usage and the provider's finish reason.
    ``request``: the body that was sent (``RequestSent``), when the client built one (the HTTP wires and
    ``replay:`` do; a scripted test model may not)."""

    message: AssistantMessage
    usage: Usage
    finish_reason: str | None = None
    request: RequestSent | None = field(default=None, compare=False)
    """Left out of equality: a fact of the sending, not of the answer."""
