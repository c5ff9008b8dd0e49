"""What fills the model's context: the parts of the next request, measured on the exact body sent.

``agent.context`` and the ``/context`` task answer with a ``ContextReport``. The body is the one the
session's model client builds (``models.request_body.encoder_of``: the same function its ``complete``
sends), so the total is the request's size, not a guess from the parts.

How the bytes are split, in order:
1. the whole body with the tools, and without them: the difference is the tool definitions;
2. the body of each closed prefix of the history (a cut never falls between a tool call and its
   results, so no synthetic "interrupted" result is counted): each step's growth is the bytes of its
   messages; the body of no message at all is the request options (model, stream, max tokens);
3. inside a step, a tool result counts its JSON-escaped content, the assistant message the rest;
4. known texts found inside a message are moved to their own part: each AGENTS.md file's block and the
   skills catalog (system message), each activated skill's body, each nested AGENTS.md block, the reminder.
   A text counts its JSON-escaped length, as it is on the wire.

Tokens are estimated as bytes / 4, the estimate ``models.base.estimate_usage`` uses when a provider
reports no usage; each part is rounded, ``used`` is the whole body's bytes / 4.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from agent_ls.instructions.activation import Activation
from agent_ls.instructions.agent_context import AgentContext
from agent_ls.instructions.agents_md import InstructionFile, render_nested
from agent_ls.instructions.catalog import render_catalog
from agent_ls.models.request_body import Encoder

BYTES_PER_TOKEN = 4

SYSTEM_PROMPT = "system prompt"
TOOL_DEFINITIONS = "tool definitions"
SKILLS_CATALOG = "skills catalog"
HISTORY = "history messages"
TOOL_RESULTS = "tool results"
REMINDER = "reminder"
OPTIONS = "request options"


@dataclass(frozen=True)
class ContextPart:
    """One part of the request: ``name`` (``system prompt``, ``instructions: AGENTS.md``, ``skill:
    explain``, ...), its size in bytes of the JSON body and in estimated tokens (bytes / 4, rounded)."""

    name: str
    size_bytes: int

    @property
    def tokens(self) -> int:
        return round(self.size_bytes / BYTES_PER_TOKEN)


@dataclass(frozen=True)
class ContextReport:
    """The next request, measured.

    Attributes:
        context_window: the model's window in tokens (the provider's ``context_window`` in agent-ls.toml,
            else ``DEFAULT_CONTEXT_WINDOW``); ``window_known`` says which.
        request_bytes: the size of the whole JSON body.
        parts: in the order of the request, each name once, empty parts left out.
        memory_path: the workspace's memory notes file (``tools.memory``), "" for none; not part of the
            request: the model reads it with ``memory_read``.
        memory_bytes: its size in bytes (0 when it does not exist yet).
        no_model: why no model could be opened ("" when one was): the body was then measured as a Chat
            Completions request, the most common wire, with the default window.
    """

    context_window: int
    window_known: bool
    request_bytes: int
    parts: tuple[ContextPart, ...]
    memory_path: str = ""
    memory_bytes: int = 0
    no_model: str = ""

    @property
    def used(self) -> int:
        """Estimated tokens of the whole request (bytes / 4)."""
        return self.request_bytes // BYTES_PER_TOKEN

    @property
    def free(self) -> int:
        """Tokens left in the window (never below 0)."""
        return max(0, self.context_window - self.used)

    def text(self) -> str:
        """The report as ``/context`` shows it: a header line, then one line per part with its share."""
        known = (
            "" if self.window_known else " (default; set context_window for the provider in agent-ls.toml)"
        )
        lines = [
            f"Context: ~{self.used:,} of {self.context_window:,} tokens used{known}, ~{self.free:,} free "
            f"({self.request_bytes:,} bytes; tokens estimated as bytes / 4)"
        ]
        width = max((len(part.name) for part in self.parts), default=0)
        for part in self.parts:
            share = part.size_bytes / self.request_bytes * 100 if self.request_bytes else 0.0
            lines.append(f"  {part.name.ljust(width)}  ~{part.tokens:>7,} tokens  {share:5.1f}%")
        if self.memory_path:
            lines.append(
                f"Memory notes (not in the request until memory_read): {self.memory_path}, "
                f"{self.memory_bytes:,} bytes"
            )
        if self.no_model:
            lines.append(
                f"No model to measure with ({self.no_model}): measured as a Chat Completions request"
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class KnownText:
    """A text counted as its own part wherever it is in a message (an instruction block, a skill body)."""

    name: str
    text: str


def known_texts(
    context: AgentContext, nested: Sequence[InstructionFile], active: Sequence[Activation]
) -> list[KnownText]:
    """The texts that get their own part: each AGENTS.md block of the chain (``instructions: <label>``),
    each nested AGENTS.md block attached so far (same name), the skills catalog, each activated skill
    (``skill: <name>``). The chain's blocks are taken from ``render_nested`` (its second line on is the
    very block ``render_chain`` writes), so they match the prompt byte for byte."""
    found: list[KnownText] = []
    chain_files = context.chain.files if context.chain is not None else ()
    for file in chain_files:
        found.append(KnownText(f"instructions: {file.label}", render_nested(file).split("\n", 1)[1]))
    for file in nested:
        found.append(KnownText(f"instructions: {file.label}", render_nested(file)))
    catalog = render_catalog(context.skills.model_invocable(), context.catalog_budget)
    if catalog:
        found.append(KnownText(SKILLS_CATALOG, catalog))
    found.extend(KnownText(f"skill: {activation.name}", activation.text) for activation in active)
    return found


def measure(
    encode: Encoder,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    known: Sequence[KnownText],
    *,
    context_window: int,
    window_known: bool,
) -> ContextReport:
    """Split the body ``encode(messages, tools)`` into parts (the steps are in the module docstring).

    Args:
        encode: the model client's body builder (``encoder_of``).
        messages: the request's messages as the loop passes them (reminder included when there is one).
        known: texts that get their own part; the first listed wins where two overlap.
    """
    sizes: dict[str, int] = {}

    def add(name: str, size: int) -> None:
        if size:
            sizes[name] = sizes.get(name, 0) + size

    total = len(encode(messages, tools))
    without_tools = len(encode(messages, []))
    previous = len(encode([], []))
    add(OPTIONS, previous)
    start = 0
    for end in range(1, len(messages) + 1):
        if end < len(messages) and isinstance(messages[end], ToolResultMessage):
            continue  # never cut between a tool call and its results
        size = len(encode(messages[:end], []))
        _split_step(messages[start:end], size - previous, known, add)
        previous, start = size, end
    add(TOOL_DEFINITIONS, total - without_tools)
    add(OPTIONS, without_tools - previous)  # what the full body adds beyond its steps (normally 0)
    order = [OPTIONS, SYSTEM_PROMPT, TOOL_DEFINITIONS]
    names = [*order, *(name for name in sizes if name not in order)]
    parts = tuple(ContextPart(name, sizes[name]) for name in names if sizes.get(name))
    return ContextReport(
        context_window=context_window, window_known=window_known, request_bytes=total, parts=parts
    )


def wire_length(text: str) -> int:
    """The bytes ``text`` takes inside a JSON string (escapes included, UTF-8, ``ensure_ascii=False``)."""
    return len(json.dumps(text, ensure_ascii=False).encode()) - 2


Adder = Callable[[str, int], None]


def _split_step(step: Sequence[Message], size: int, known: Sequence[KnownText], add: Adder) -> None:
    """Add one step's ``size`` bytes: its tool results' contents, the known texts, the rest to the head."""
    results = [m for m in step if isinstance(m, ToolResultMessage)]
    rest = size
    for result in results:
        share = min(rest, _split_text(result.content, TOOL_RESULTS, known, add))
        rest -= share
    head = step[0]
    category = (
        SYSTEM_PROMPT
        if isinstance(head, SystemMessage)
        else HISTORY
        if isinstance(head, UserMessage | AssistantMessage)
        else TOOL_RESULTS
    )
    text = head.text if isinstance(head, SystemMessage | UserMessage | AssistantMessage) else ""
    moved = _split_text(text, None, known, add)
    add(category, rest - moved)


def _split_text(text: str, category: str | None, known: Sequence[KnownText], add: Adder) -> int:
    """Add the known texts found in ``text`` to their parts and, with ``category``, the rest of ``text``
    to it. Returns the bytes added in all."""
    moved = 0
    remaining = text
    for item in known:
        if item.text and item.text in remaining:
            size = wire_length(item.text)
            add(item.name, size)
            moved += size
            remaining = remaining.replace(item.text, "", 1)
    if category is None:
        return moved
    rest = wire_length(text) - moved
    add(category, rest)
    return moved + rest
