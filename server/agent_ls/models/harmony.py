"""gpt-oss "Harmony" markup written into the answer text, read back into text, reasoning and tool calls.

A Harmony message (OpenAI's harmony guide, cookbook.openai.com/articles/openai-harmony) is
``<|start|>ROLE<|channel|>CHANNEL<|constrain|>TYPE<|message|>CONTENT`` ended by ``<|end|>``, ``<|call|>``
(a tool call) or ``<|return|>`` (the final answer); ``<|start|>ROLE`` and ``<|constrain|>TYPE`` are
optional, and a tool call names its recipient with ``to=functions.NAME`` in the role or the channel part.
A server that does not parse Harmony passes it on as the answer, usually without the first
``<|start|>assistant`` (it ended the prompt)::

    <|channel|>analysis<|message|>Need the file.<|end|><|start|>assistant<|channel|>commentary
    to=functions.read_file <|constrain|>json<|message|>{"path": "a.py"}<|call|>

Read back, in order: an ``analysis`` message is reasoning; a ``final`` or ``commentary`` message without a
recipient (a preamble the user may see) and text outside any message are text; an assistant message to
``functions.NAME`` (or to ``NAME``) is a call when NAME is offered and the content is a JSON object valid
for it. Calls must be the last messages (only reasoning and whitespace after them). When any part cannot
be read that way (another role, an unknown recipient such as the built-in ``browser`` and ``python``
tools, invalid arguments, calls followed by text, stray tokens), nothing is read: the whole text stays as
it was written, so the loop can say the model emitted markup that was not understood. Markup inside a
code fence is not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from agent_ls.models.call_markup import ToolCatalog, json_object_at
from agent_ls.models.partial_call import PartialCall

TOKEN = re.compile(r"<\|(start|channel|constrain|message|end|call|return)\|>")
RECIPIENT = re.compile(r"\bto=(\S+)")
_HEADER_PARTS = ("start", "channel", "constrain")
_ENDS = ("end", "call", "return")


@dataclass(frozen=True)
class HarmonyReply:
    """What a Harmony-framed answer holds: ``text`` (parts joined by a blank line), ``reasoning`` (the
    analysis messages, the same way) and ``calls`` in order."""

    text: str
    reasoning: str
    calls: list[PartialCall] = field(default_factory=list)


@dataclass(frozen=True)
class _Part:
    kind: Literal["text", "reasoning", "call", "raw"]
    content: str
    call: PartialCall | None = None
    message: bool = False
    """Read from a Harmony message (not text outside one, not markup kept as written)."""


def read_harmony(text: str, catalog: ToolCatalog | None) -> HarmonyReply | None:
    """The text, reasoning and calls of ``text`` when it holds Harmony messages that can all be read (rules
    in the module docstring), else None. With ``catalog`` None (no tools offered, or structured calls
    came), a call message cannot be read."""
    first = TOKEN.search(text)
    if first is None or "<|message|>" not in text or text.count("```", 0, first.start()) % 2:
        return None
    parts = _parts(text, catalog)
    if any(part.kind == "raw" for part in parts) or not any(part.message for part in parts):
        return None
    calls_at = [index for index, part in enumerate(parts) if part.kind == "call"]
    if calls_at and any(part.kind == "text" and part.content.strip() for part in parts[calls_at[0] :]):
        return None
    shown = [part.content.strip() for part in parts if part.kind == "text" and part.content.strip()]
    thought = [part.content.strip() for part in parts if part.kind == "reasoning" and part.content.strip()]
    calls = [part.call for part in parts if part.call is not None and part.kind == "call"]
    return HarmonyReply("\n\n".join(shown), "\n\n".join(thought), calls)


def _parts(text: str, catalog: ToolCatalog | None) -> list[_Part]:
    """``text`` cut into plain text, messages and stray tokens, in order."""
    tokens = list(TOKEN.finditer(text))
    parts: list[_Part] = []
    position = 0
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.start() > position:
            parts.append(_Part("text", text[position : token.start()]))
        header: dict[str, str] = {}
        cursor = index
        while cursor < len(tokens) and tokens[cursor].group(1) in _HEADER_PARTS:
            kind = tokens[cursor].group(1)
            if kind in header:
                break
            following = tokens[cursor + 1].start() if cursor + 1 < len(tokens) else len(text)
            header[kind] = text[tokens[cursor].end() : following]
            cursor += 1
        if not header or cursor >= len(tokens) or tokens[cursor].group(1) != "message":
            # A stray token, or a header without content: kept as written.
            if not header:
                end, index = token.end(), index + 1
            else:
                end, index = (tokens[cursor].start() if cursor < len(tokens) else len(text)), cursor
            parts.append(_Part("raw", text[token.start() : end]))
            position = end
            continue
        body_start = tokens[cursor].end()
        closing = tokens[cursor + 1] if cursor + 1 < len(tokens) else None
        body_end = closing.start() if closing is not None else len(text)
        position = closing.end() if closing is not None and closing.group(1) in _ENDS else body_end
        index = cursor + 2 if closing is not None and closing.group(1) in _ENDS else cursor + 1
        parts.append(_message(header, text[body_start:body_end], text[token.start() : position], catalog))
    if position < len(text):
        parts.append(_Part("text", text[position:]))
    return parts


def _message(header: dict[str, str], body: str, raw: str, catalog: ToolCatalog | None) -> _Part:
    role_part, channel_part = header.get("start", "assistant"), header.get("channel", "")
    role = (role_part.split() or ["assistant"])[0]
    recipient = RECIPIENT.search(role_part) or RECIPIENT.search(channel_part)
    if role != "assistant":
        return _Part("raw", raw)
    if recipient is not None:
        name = recipient.group(1).removeprefix("functions.")
        call = catalog.call(name, json_object_at(body)) if catalog is not None else None
        return _Part("raw", raw) if call is None else _Part("call", raw, call, message=True)
    channel = (RECIPIENT.sub("", channel_part).split() or [""])[0]
    return _Part("reasoning" if channel == "analysis" else "text", body, message=True)
