"""Tool calls written into the answer text instead of the structured field: which ones run.

Applied only when tools were offered and no structured call came. The readers in ``call_markup`` find
each family's markup; a found block is kept only when each of its calls names an offered tool and has
arguments valid for that tool's JSON Schema, and the kept blocks **end the message**: between and after
them there is only whitespace and the family's wrapper or end-of-turn tokens (``WRAPPER``), and none is
inside a Markdown code fence. A model that calls a tool in its text ends its message with the call; markup
quoted mid-text or in a fence (an example, a README, an injected file) is never run. The text before the
kept blocks (and their wrapper tokens) is the visible text.

When no block of any family is found, the whole message may still be calls (``whole_message_calls``):
Llama 3.x's bare JSON (``{"name": N, "parameters": {…}}``, several separated by ``;``) or Llama 3.2/4's
pythonic list (``[read_file(path="a.py")]``), each name offered and each argument set valid.
"""

from __future__ import annotations

import ast
import itertools
import logging
import re
from collections.abc import Sequence
from typing import Any

from agent_ls.core.messages import ToolSpec
from agent_ls.core.model_markup import leftover_markup
from agent_ls.core.untrusted_json import decode_prefix
from agent_ls.models.call_markup import READERS, Found, ToolCatalog
from agent_ls.models.partial_call import PartialCall, as_json_value

log = logging.getLogger(__name__)

_WRAPPER_TOKENS = (
    r"<\|tool_calls?_section_(?:begin|end)\|>",  # Kimi K2
    r"<[|｜]tool[▁_]calls[▁_](?:begin|end)[|｜]>",  # DeepSeek V3, R1, V3.1
    r"</?｜DSML｜function_calls>",  # DeepSeek V3.2
    r"</?minimax:tool_call>",  # MiniMax-M2
    r"</?seed:tool_call>",  # Seed-OSS
    r"<\|python_(?:start|end)\|>",  # Llama 4
    r"<\|action_end\|>",  # InternLM
    r"</tool_calls>",  # Hunyuan
)
END_OF_TURN = (
    r"<\|eom_id\|>|<\|eot_id\|>|<\|end_of_text\|>|<\|im_end\|>|<\|endoftext\|>|<\|end\|>|<\|return\|>"
    r"|<｜end▁of▁sentence｜>|</s>"
)
"""End-of-turn tokens a server should have stopped at (Llama, ChatML, GPT, Harmony, DeepSeek, Mistral)."""

WRAPPER = re.compile("|".join((*_WRAPPER_TOKENS, END_OF_TURN, r"<\|call\|>")))
_ONLY_WRAPPERS = re.compile(rf"(?:\s|{WRAPPER.pattern})*")
_WRAPPERS_AT_END = re.compile(rf"(?:\s|{WRAPPER.pattern})*\Z")
_END_OF_TURN_AT_END = re.compile(rf"(?:\s*(?:{END_OF_TURN}))+\s*\Z")


def recover_text_calls(text: str, tools: Sequence[ToolSpec]) -> tuple[str, list[PartialCall]]:
    """The calls written into ``text`` (rules in the module docstring).

    Returns:
        ``(visible_text, calls)``: the calls in text order (ids as written, else None for the caller to
        synthesize); the text before the kept blocks, stripped, or ``text`` unchanged when nothing is kept.
    """
    if not tools:
        return text, []
    catalog = ToolCatalog(tools)
    found: list[Found] = []
    for reader in READERS:
        found += [block for block in reader(text, catalog) if not _inside(found, block.start)]
    kept = sorted((block for block in found if block.calls is not None), key=lambda b: b.start)
    if not kept:
        whole = whole_message_calls(text, catalog) if not found else None
        return ("", whole) if whole else (text, [])
    start = _tail_start(text, kept)
    if start is None:
        log.warning("kept tool-call markup as text: it is quoted (in a code fence) or followed by more text")
        return text, []
    calls = [call for block in kept for call in block.calls or []]
    log.info("recovered %d tool call(s) written into the text: %s", len(calls), [c.name for c in calls])
    return text[:start].strip(), calls


def strip_end_of_turn(text: str) -> str:
    """``text`` without the end-of-turn tokens (``END_OF_TURN``) that end it, which a server leaves when it
    did not stop at them, when the text before them holds no other markup (``core.model_markup``): that
    answer is complete. Any other text is returned as written."""
    found = _END_OF_TURN_AT_END.search(text)
    if found is None or leftover_markup(text[: found.start()]):
        return text
    return text[: found.start()]


def _tail_start(text: str, blocks: Sequence[Found]) -> int | None:
    """Where the kept ``blocks`` (sorted), with the wrapper tokens right before them, begin; None when
    they do not end the text or one is in a Markdown code fence."""
    if any(text.count("```", 0, block.start) % 2 for block in blocks):
        return None
    gaps = [text[a.end : b.start] for a, b in itertools.pairwise(blocks)] + [text[blocks[-1].end :]]
    if not all(_ONLY_WRAPPERS.fullmatch(gap) for gap in gaps):
        return None
    before = _WRAPPERS_AT_END.search(text, 0, blocks[0].start)
    return blocks[0].start if before is None else before.start()


def _inside(found: Sequence[Found], offset: int) -> bool:
    return any(block.start <= offset < block.end for block in found)


_WHOLE_JSON_KEYS = frozenset({"name", "parameters", "arguments", "type", "id"})


def whole_message_calls(text: str, catalog: ToolCatalog) -> list[PartialCall] | None:
    """The calls when the whole of ``text`` (wrapper tokens aside) is Llama-style bare JSON or a pythonic
    list of calls, every one accepted by ``catalog``; else None."""
    body = WRAPPER.sub("", text).strip()
    if body.startswith("{"):
        return _bare_json_calls(body, catalog)
    if body.startswith("[") and body.endswith(")]"):
        return _pythonic_calls(body, catalog)
    return None


def _bare_json_calls(body: str, catalog: ToolCatalog) -> list[PartialCall] | None:
    calls: list[PartialCall] = []
    offset = 0
    while offset < len(body):
        try:
            value, offset = decode_prefix(body, offset)
        except ValueError:
            return None
        if (
            not isinstance(value, dict)
            or not set(value) <= _WHOLE_JSON_KEYS
            or value.get("type", "function") != "function"
        ):
            return None
        if not isinstance(value.get("name"), str) or ("parameters" not in value and "arguments" not in value):
            return None
        arguments = as_json_value(value.get("parameters", value.get("arguments")))
        call = catalog.call(value["name"], arguments)
        if call is None:
            return None
        calls.append(call)
        separator = re.match(r"\s*;?\s*", body[offset:])
        offset += separator.end() if separator else 0
    return calls or None


def _pythonic_calls(body: str, catalog: ToolCatalog) -> list[PartialCall] | None:
    """``[name(key=literal, …), …]``, read with ``ast`` (vLLM's ``pythonic`` parser does the same): only
    keyword arguments whose values are Python literals; nothing is evaluated."""
    try:
        tree = ast.parse(body, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(tree.body, ast.List) or not tree.body.elts:
        return None
    calls: list[PartialCall] = []
    for node in tree.body.elts:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
            return None
        arguments: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                return None
            try:
                arguments[keyword.arg] = ast.literal_eval(keyword.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                return None
        call = catalog.call(node.func.id, arguments)
        if call is None:
            return None
        calls.append(call)
    return calls
