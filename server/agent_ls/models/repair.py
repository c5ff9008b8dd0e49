"""Repair of the tool calls servers get wrong, shared by every wire API.

Applied only when tools were offered. What is repaired, each seen in a public bug report (see
``../shared/corpus/tool-calls/`` and ``../shared/research/harness-conventions.md`` §5.4):

- arguments sent as a JSON object instead of a string (llama.cpp, corpus tc01), or double-encoded (a JSON
  string whose content is a JSON object or array: one layer is unwrapped, and only then);
- missing or null arguments, which mean ``{}``;
- a missing or empty id, replaced by a stable synthetic one (``synthetic_call_id``); a repeated id is
  made unique;
- an empty or missing name: the call is dropped (logged), never run (corpus tc04, tc06);
- calls written into the answer text instead of the structured field (``recover_text_calls``), when no
  structured call came: Hermes/Qwen ``<tool_call>{json}</tool_call>``, Qwen3-Coder XML
  ``<tool_call><function=name><parameter=x>value</parameter></function></tool_call>`` (closing tags may be
  missing, corpus tc02), Mistral ``[TOOL_CALLS]name[ARGS]{json}`` (tc03a) and
  ``[TOOL_CALLS][{"name": …, "arguments": …, "id": …}]`` (tc03b). Such a call is kept only when its name
  is a declared tool and its arguments validate against that tool's JSON Schema; its markup is then
  removed from the text. Anything else stays in the text, and nothing of it runs.

A wire module calls ``finalize_reply`` once per response, which does the steps above in that order.
Arguments stay raw JSON text otherwise: malformed JSON is reported to the model by the dispatcher.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from agent_ls.core.messages import ToolCall, ToolSpec

log = logging.getLogger(__name__)


@dataclass
class PartialCall:
    """A tool call as a server sent it (or as a stream accumulated it), before repair.

    ``arguments`` is whatever came: JSON text, an object, None.
    """

    id: str | None
    name: str | None
    arguments: Any = None


def raw_arguments(value: Any) -> str:
    """Arguments as JSON text.

    - None, or blank text: ``{}``;
    - an object, array or other JSON value: serialized;
    - text that decodes to a JSON string which itself decodes to an object or array (double-encoded):
      that inner text; any other text: unchanged, malformed or not.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return "{}"
    if not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    if isinstance(decoded, str):
        try:
            inner = json.loads(decoded)
        except ValueError:
            return value
        if isinstance(inner, dict | list):
            return decoded
    return value


def synthetic_call_id(position: int, name: str, arguments: str) -> str:
    """A stable id for a call sent without one: ``call_<position>_<12 hex of sha256(name, arguments)>``.

    ``position`` is the 1-based place of the call in the response.
    """
    digest = hashlib.sha256(f"{name}\x00{arguments}".encode()).hexdigest()[:12]
    return f"call_{position}_{digest}"


def finalize_calls(partials: Sequence[PartialCall]) -> tuple[ToolCall, ...]:
    """The executable calls of one response, in order (the rules are in the module docstring)."""
    calls: list[ToolCall] = []
    seen: set[str] = set()
    for position, partial in enumerate(partials, start=1):
        name = (partial.name or "").strip()
        if not name:
            log.warning("dropped a tool call without a name (id %r): it is never run", partial.id)
            continue
        arguments = raw_arguments(partial.arguments)
        call_id = (partial.id or "").strip() or synthetic_call_id(position, name, arguments)
        if call_id in seen:
            call_id = f"{call_id}_{position}"
        seen.add(call_id)
        calls.append(ToolCall(call_id=call_id, name=name, arguments=arguments))
    return tuple(calls)


def finalize_reply(
    text: str, partials: Sequence[PartialCall], tools: Sequence[ToolSpec]
) -> tuple[str, tuple[ToolCall, ...]]:
    """The visible text and the executable calls of one response.

    Args:
        text: the answer text as received (reasoning already taken out).
        partials: the structured calls as received, in order.
        tools: the tools offered with the request; without any, no call is recovered from the text.

    Returns:
        ``(text, calls)``: ``finalize_calls(partials)`` when that gives any call; otherwise the calls
        ``recover_text_calls`` finds in ``text`` (finalized the same way), and the text without their markup.
    """
    calls = finalize_calls(partials)
    if calls or not tools:
        return text, calls
    visible, recovered = recover_text_calls(text, tools)
    return visible, finalize_calls(recovered)


TOOL_CALL_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|(?=<tool_call>)|\Z)", re.DOTALL)
"""A Hermes/Qwen block; an unclosed one ends at the next block or at the end of the text."""

FUNCTION_BLOCK = re.compile(r"<function=([^>\n]+)>(.*?)(?:</function>|(?=<function=)|\Z)", re.DOTALL)
"""A Qwen3-Coder ``<function=name>`` block, closing tag optional (vLLM qwen3coder format)."""

XML_PARAMETER = re.compile(
    r"<parameter=([^>\n]+)>(.*?)(?:</parameter>|(?=<parameter=)|(?=</function>)|\Z)", re.DOTALL
)

MISTRAL_NAMED = re.compile(r"\[TOOL_CALLS\]\s*([\w.\-]+)\s*(?:\[CALL_ID\]\s*([\w\-]+)\s*)?\[ARGS\]", re.ASCII)
"""``[TOOL_CALLS]name[ARGS]`` (Mistral tokenizer v11+), optionally with ``[CALL_ID]id`` before ``[ARGS]``."""

MISTRAL_MARKER = "[TOOL_CALLS]"

# Schema types whose Qwen XML parameter value is JSON text rather than a plain string.
JSON_VALUED_TYPES = frozenset({"integer", "number", "boolean", "array", "object", "null"})

_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class _Found:
    """Markup recognized in the text: its span (character offsets) and its calls, None when rejected."""

    start: int
    end: int
    calls: list[PartialCall] | None


def recover_text_calls(text: str, tools: Sequence[ToolSpec]) -> tuple[str, list[PartialCall]]:
    """Tool calls written into ``text`` instead of the structured field (formats in the module docstring).

    A block (one ``<tool_call>``, one bare ``<function=…>``, one ``[TOOL_CALLS]`` marker with what follows)
    is recovered only when each of its calls names a tool in ``tools`` and has arguments that are a JSON
    object valid against that tool's ``parameters`` schema, and the recovered blocks end the text (only
    whitespace between and after them; text before them is kept) outside any code fence. Qwen XML values
    are strings unless the parameter's schema type is integer, number, boolean, array, object or null;
    then they are parsed as JSON. A rejected block is logged and stays in the text.

    Returns:
        ``(visible_text, calls)``: the calls in text order (ids as written, else None for
        ``finalize_calls`` to synthesize); the text with recovered blocks removed and stripped, or
        ``text`` unchanged when nothing was recovered.
    """
    if not tools:
        return text, []
    specs = {spec.name: spec for spec in tools}
    found: list[_Found] = []
    for match in TOOL_CALL_BLOCK.finditer(text):
        found.append(_Found(match.start(), match.end(), _tool_call_block(match.group(1), specs)))
    for match in FUNCTION_BLOCK.finditer(text):
        if not _inside(found, match.start()):
            call = _xml_call(match.group(1), match.group(2), specs)
            found.append(_Found(match.start(), match.end(), None if call is None else [call]))
    for block in _mistral_blocks(text, specs):
        if not _inside(found, block.start):
            found.append(block)
    recovered = sorted((block for block in found if block.calls is not None), key=lambda b: b.start)
    if not recovered:
        return text, []
    if not _is_the_tail(text, recovered):
        log.warning("kept tool-call markup as text: it is quoted (in a code fence) or followed by more text")
        return text, []
    pieces: list[str] = []
    position = 0
    calls: list[PartialCall] = []
    for block in recovered:
        pieces.append(text[position : block.start])
        position = block.end
        calls += block.calls or []
    pieces.append(text[position:])
    log.info("recovered %d tool call(s) written into the text: %s", len(calls), [c.name for c in calls])
    return "".join(pieces).strip(), calls


def _is_the_tail(text: str, blocks: Sequence[_Found]) -> bool:
    """True when ``blocks`` (sorted) end the text, with only whitespace between and after them, and none
    is inside a Markdown code fence. A model that calls a tool in its text ends its message with the call;
    markup quoted mid-text or in a fence (an example, a README, an injected file) is never run."""
    if any(text.count("```", 0, block.start) % 2 for block in blocks):
        return False
    gaps = [text[a.end : b.start] for a, b in itertools.pairwise(blocks)] + [text[blocks[-1].end :]]
    return all(not gap.strip() for gap in gaps)


def _inside(found: Sequence[_Found], offset: int) -> bool:
    return any(block.start <= offset < block.end for block in found)


def _tool_call_block(body: str, specs: dict[str, ToolSpec]) -> list[PartialCall] | None:
    """The call in one ``<tool_call>`` body: JSON ``{"name", "arguments"|"parameters"}`` or Qwen XML."""
    stripped = body.strip()
    if stripped.startswith("{"):
        try:
            value, _ = _DECODER.raw_decode(stripped)
        except ValueError:
            log.warning("kept a <tool_call> block as text: its JSON is malformed")
            return None
        call = _json_call(value, specs)
        return None if call is None else [call]
    function = FUNCTION_BLOCK.search(body)
    if function is None:
        log.warning("kept a <tool_call> block as text: neither JSON nor <function=…>")
        return None
    call = _xml_call(function.group(1), function.group(2), specs)
    return None if call is None else [call]


def _json_call(value: Any, specs: dict[str, ToolSpec]) -> PartialCall | None:
    """A call from ``{"name": …, "arguments": …, "id"?: …}`` (``parameters`` accepted for ``arguments``)."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        log.warning("kept a tool call in the text: it has no name")
        return None
    arguments = _as_object(value.get("arguments", value.get("parameters")))
    call_id = value.get("id") if isinstance(value.get("id"), str) else None
    if not _validates(value["name"], arguments, specs):
        return None
    return PartialCall(id=call_id, name=value["name"], arguments=arguments)


def _xml_call(raw_name: str, body: str, specs: dict[str, ToolSpec]) -> PartialCall | None:
    name = raw_name.strip()
    spec = specs.get(name)
    properties = spec.parameters.get("properties", {}) if spec is not None else {}
    arguments: dict[str, Any] = {}
    for parameter in XML_PARAMETER.finditer(body):
        key = parameter.group(1).strip()
        schema = properties.get(key) if isinstance(properties, dict) else None
        arguments[key] = _xml_value(parameter.group(2), schema)
    if not _validates(name, arguments, specs):
        return None
    return PartialCall(id=None, name=name, arguments=arguments)


def _xml_value(raw: str, schema: Any) -> Any:
    """A Qwen XML parameter value: surrounding newlines dropped (the template puts the value on its own
    lines), then parsed as JSON when the schema's type is not string-like (a failed parse keeps the
    string, which the schema check then rejects)."""
    value = raw.strip("\r\n")
    declared = schema.get("type") if isinstance(schema, dict) else None
    types = {declared} if isinstance(declared, str) else set(declared or [])
    if "string" in types or not types & JSON_VALUED_TYPES:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _mistral_blocks(text: str, specs: dict[str, ToolSpec]) -> Iterator[_Found]:
    """Each ``[TOOL_CALLS]`` marker and the call(s) after it, in either Mistral form."""
    start = text.find(MISTRAL_MARKER)
    while start != -1:
        named = MISTRAL_NAMED.match(text, start)
        end = start + len(MISTRAL_MARKER)
        calls: list[PartialCall] | None = None
        if named is not None:
            value, end = _json_at(text, named.end(), end)
            arguments = _as_object(value) if value is not None else None
            name = named.group(1)
            if arguments is not None and _validates(name, arguments, specs):
                calls = [PartialCall(id=named.group(2), name=name, arguments=arguments)]
        else:
            value, end = _json_at(text, end, end)
            items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
            recovered = [_json_call(item, specs) for item in items]
            if recovered and all(call is not None for call in recovered):
                calls = [call for call in recovered if call is not None]
            elif value is None:
                log.warning("kept a [TOOL_CALLS] marker as text: no JSON follows it")
        yield _Found(start, end, calls)
        start = text.find(MISTRAL_MARKER, max(end, start + 1))


def _json_at(text: str, offset: int, fallback_end: int) -> tuple[Any, int]:
    """The JSON value starting at ``offset`` (after whitespace) and the offset after it, or
    ``(None, fallback_end)`` when there is none."""
    while offset < len(text) and text[offset].isspace():
        offset += 1
    try:
        return _DECODER.raw_decode(text, offset)
    except ValueError:
        return None, fallback_end


def _as_object(value: Any) -> Any:
    """Arguments as a JSON value: None means ``{}``, JSON text is decoded (malformed text stays text)."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            return json.loads(raw_arguments(value))
        except ValueError:
            return value
    return value


def _validates(name: str, arguments: Any, specs: dict[str, ToolSpec]) -> bool:
    spec = specs.get(name)
    if spec is None:
        log.warning("kept a tool call to %r in the text: no such tool was offered", name)
        return False
    if not isinstance(arguments, dict):
        log.warning("kept a tool call to %r in the text: its arguments are not a JSON object", name)
        return False
    # jsonschema: the reference JSON Schema validator for Python (all drafts, maintained), so a recovered
    # call is checked against exactly the schema the model was shown. Imported here: it costs ~35 ms at
    # start-up and is needed only when a server wrote a call into its text.
    import jsonschema  # type: ignore[import-untyped]  # no stubs in the dev extra yet

    validator = jsonschema.validators.validator_for(spec.parameters)(spec.parameters)
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if error is not None:
        log.warning("kept a tool call to %r in the text: %s", name, error.message)
        return False
    return True
