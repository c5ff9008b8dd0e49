"""Readers of the text forms of tool calls that open-weight models write into their answer.

A server whose tool-call parser does not match the model (or has none) passes the model's own call markup
on as answer text. Each reader here finds one family's markup and yields ``Found`` blocks: the span of one
call (or of a group the family writes as one unit) with its calls, or with None when it is that family's
markup but cannot be run (a tool that was not offered, arguments that are not a JSON object valid for the
tool's schema). ``text_calls`` decides which blocks run: they must end the message, outside a code fence.

Families and forms (N a tool name, K a parameter, V a value), by reader:

- ``tool_call_blocks``: Hermes, Qwen 2.5/3, ERNIE 4.5, LongCat ``<tool_call>{"name": N, "arguments":
  {…}}</tool_call>``; Qwen3-Coder and Seed-OSS ``<tool_call><function=N><parameter=K>V</parameter>
  </function></tool_call>``; GLM-4.5 to 4.7 ``<tool_call>N<arg_key>K</arg_key><arg_value>V</arg_value>
  </tool_call>``;
- ``function_blocks``: a bare ``<function=N>`` with XML parameters (Qwen3-Coder) or JSON (Llama 3.1);
- ``mistral_blocks``: Mistral and Devstral ``[TOOL_CALLS]N[ARGS]{…}`` and ``[TOOL_CALLS][{"name": N,
  "arguments": {…}}]``;
- ``marked_json_blocks``: a marker then JSON calls: Llama 3.x ``<|python_tag|>`` (several separated by
  ``;``), Granite 3 ``<|tool_call|>``, InternLM 2.5 ``<|action_start|><|plugin|>``, Hunyuan ``<tool_calls>``;
- ``kimi_blocks``: Kimi K2 ``<|tool_call_begin|>functions.N:0<|tool_call_argument_begin|>{…}
  <|tool_call_end|>``;
- ``deepseek_blocks``: DeepSeek V3 and R1 ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>N`` then a fenced
  JSON block, V3.1 ``<｜tool▁call▁begin｜>N<｜tool▁sep｜>{…}``, each up to ``<｜tool▁call▁end｜>``;
- ``invoke_blocks``: MiniMax-M2 ``<invoke name="N"><parameter name="K">V</parameter></invoke>`` and
  DeepSeek V3.2 DSML, the same tags prefixed with ``｜DSML｜``.

XML-style values (``<parameter=…>``, ``<arg_value>``, ``<parameter name=…>``) are strings unless the tool's
schema gives the parameter a type among integer, number, boolean, array, object, null: then they are JSON.
The whole-message forms (Llama's bare JSON and pythonic lists) are in ``text_calls``; gpt-oss Harmony in
``harmony``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from agent_ls.core.messages import ToolSpec
from agent_ls.core.untrusted_json import ARGUMENT_MAX_DEPTH, decode_prefix, depth, loads
from agent_ls.models.partial_call import PartialCall, as_json_value

log = logging.getLogger(__name__)

# Schema types whose XML-style value is JSON text rather than a plain string.
JSON_VALUED_TYPES = frozenset({"integer", "number", "boolean", "array", "object", "null"})


@dataclass(frozen=True)
class Found:
    """Markup recognized in the text: its span (character offsets) and its calls, None when rejected."""

    start: int
    end: int
    calls: list[PartialCall] | None


class ToolCatalog:
    """The tools offered with the request, by name: what a call read from the text may name and pass."""

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        self.specs = {spec.name: spec for spec in tools}

    def property_schema(self, name: str, key: str) -> Any:
        spec = self.specs.get(name)
        properties = spec.parameters.get("properties", {}) if spec is not None else {}
        return properties.get(key) if isinstance(properties, dict) else None

    def accepts(self, name: str, arguments: Any) -> bool:
        """True when ``name`` was offered and ``arguments`` is a JSON object valid for its schema (logged
        otherwise). Arguments nested past ``ARGUMENT_MAX_DEPTH`` are accepted unchecked: the dispatcher
        refuses them with an error the model reads, and the run goes on."""
        spec = self.specs.get(name)
        if spec is None:
            log.warning("kept a tool call to %r in the text: no such tool was offered", name)
            return False
        if not isinstance(arguments, dict):
            log.warning("kept a tool call to %r in the text: its arguments are not a JSON object", name)
            return False
        if depth(arguments) > ARGUMENT_MAX_DEPTH:
            return True
        # jsonschema: the reference JSON Schema validator for Python (all drafts, maintained), so a recovered
        # call is checked against exactly the schema the model was shown. Imported here: it costs ~35 ms at
        # start-up and is needed only when a server wrote a call into its text.
        import jsonschema  # type: ignore[import-untyped]  # no stubs in the dev extra yet

        validator = jsonschema.validators.validator_for(spec.parameters)(spec.parameters)
        error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
        if error is not None:
            log.warning("kept a tool call to %r in the text: %.200s", name, error.message)
            return False
        return True

    def call(self, name: str, arguments: Any, call_id: str | None = None) -> PartialCall | None:
        """The call when ``accepts`` says so, else None."""
        name = name.strip()
        return (
            PartialCall(id=call_id, name=name, arguments=arguments) if self.accepts(name, arguments) else None
        )


def json_call(value: Any, catalog: ToolCatalog) -> PartialCall | None:
    """A call from ``{"name": …, "arguments": …, "id"?: …}`` (``parameters`` accepted for ``arguments``)."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        log.warning("kept a tool call in the text: it has no name")
        return None
    arguments = as_json_value(value.get("arguments", value.get("parameters")))
    call_id = value.get("id") if isinstance(value.get("id"), str) else None
    return catalog.call(value["name"], arguments, call_id)


def typed_value(raw: str, schema: Any, *, as_json: bool | None = None) -> Any:
    """An XML-style parameter value: surrounding newlines dropped (templates put the value on its own
    lines), then parsed as JSON when ``as_json`` says so or, when it is None, when the schema's type is
    not string-like (a failed parse keeps the string, which the schema check then rejects)."""
    value = raw.strip("\r\n")
    if as_json is None:
        declared = schema.get("type") if isinstance(schema, dict) else None
        types = {declared} if isinstance(declared, str) else set(declared or [])
        as_json = "string" not in types and bool(types & JSON_VALUED_TYPES)
    if not as_json:
        return value
    try:
        return loads(value)
    except ValueError:
        return value


def json_object_at(text: str) -> Any:
    """The JSON value that is the whole of ``text`` (whitespace around it allowed), or None."""
    try:
        value, end = decode_prefix(text, 0)
    except ValueError:
        return None
    return value if not text[end:].strip() else None


TOOL_CALL_BLOCK = re.compile(r"<(tool_call|longcat_tool_call)>(.*?)(?:</\1>|(?=<\1>)|\Z)", re.DOTALL)
"""A Hermes/Qwen/GLM block; an unclosed one ends at the next block or at the end of the text."""

FUNCTION_BLOCK = re.compile(r"<function=([^>\n]+)>(.*?)(?:</function>|(?=<function=)|\Z)", re.DOTALL)
"""A ``<function=name>`` block (Qwen3-Coder XML parameters, or Llama 3.1 JSON), closing tag optional."""

XML_PARAMETER = re.compile(
    r"<parameter=([^>\n]+)>(.*?)(?:</parameter>|(?=<parameter=)|(?=</function>)|\Z)", re.DOTALL
)
GLM_NAME = re.compile(r"\s*([\w.\-]+)\s*(?=<arg_key>|\Z)", re.ASCII)
GLM_ARGUMENT = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.DOTALL)


def tool_call_blocks(text: str, catalog: ToolCatalog) -> Iterator[Found]:
    for match in TOOL_CALL_BLOCK.finditer(text):
        call = _tool_call_body(match.group(2), catalog)
        yield Found(match.start(), match.end(), None if call is None else [call])


def _tool_call_body(body: str, catalog: ToolCatalog) -> PartialCall | None:
    """The call in one ``<tool_call>`` body: JSON, Qwen XML or GLM ``<arg_key>`` pairs."""
    stripped = body.strip()
    if stripped.startswith("{"):
        value = json_object_at(stripped)
        if value is None:
            log.warning("kept a <tool_call> block as text: its JSON is malformed")
            return None
        return json_call(value, catalog)
    function = FUNCTION_BLOCK.search(body)
    if function is not None:
        return _function_call(function.group(1), function.group(2), catalog)
    glm = GLM_NAME.match(body)
    if glm is not None:
        pairs = GLM_ARGUMENT.findall(body[glm.end() :])
        if GLM_ARGUMENT.sub("", body[glm.end() :]).strip():
            log.warning("kept a <tool_call> block as text: text around its <arg_key> pairs")
            return None
        name = glm.group(1)
        arguments = {
            key.strip(): typed_value(value, catalog.property_schema(name, key.strip()))
            for key, value in pairs
        }
        return catalog.call(name, arguments)
    log.warning("kept a <tool_call> block as text: neither JSON, <function=…> nor <arg_key> pairs")
    return None


def function_blocks(text: str, catalog: ToolCatalog) -> Iterator[Found]:
    for match in FUNCTION_BLOCK.finditer(text):
        call = _function_call(match.group(1), match.group(2), catalog)
        yield Found(match.start(), match.end(), None if call is None else [call])


def _function_call(raw_name: str, body: str, catalog: ToolCatalog) -> PartialCall | None:
    name = raw_name.strip()
    if body.strip().startswith("{"):  # Llama 3.1: <function=name>{"arg": …}</function>
        return catalog.call(name, json_object_at(body))
    arguments: dict[str, Any] = {}
    for parameter in XML_PARAMETER.finditer(body):
        key = parameter.group(1).strip()
        arguments[key] = typed_value(parameter.group(2), catalog.property_schema(name, key))
    return catalog.call(name, arguments)


MISTRAL_NAMED = re.compile(r"\[TOOL_CALLS\]\s*([\w.\-]+)\s*(?:\[CALL_ID\]\s*([\w\-]+)\s*)?\[ARGS\]", re.ASCII)
"""``[TOOL_CALLS]name[ARGS]`` (Mistral tokenizer v11+), optionally with ``[CALL_ID]id`` before ``[ARGS]``."""

MISTRAL_MARKER = "[TOOL_CALLS]"


def mistral_blocks(text: str, catalog: ToolCatalog) -> Iterator[Found]:
    """Each ``[TOOL_CALLS]`` marker and the call(s) after it, in either Mistral form."""
    start = text.find(MISTRAL_MARKER)
    while start != -1:
        named = MISTRAL_NAMED.match(text, start)
        if named is not None:
            value, end = _json_after(text, named.end(), start + len(MISTRAL_MARKER))
            call = (
                None if value is None else catalog.call(named.group(1), as_json_value(value), named.group(2))
            )
            calls = None if call is None else [call]
        else:
            calls, end = _json_calls_after(text, start + len(MISTRAL_MARKER), catalog)
        yield Found(start, end, calls)
        start = text.find(MISTRAL_MARKER, max(end, start + 1))


JSON_MARKERS = ("<|python_tag|>", "<|tool_call|>", "<|action_start|><|plugin|>", "<tool_calls>")
"""Markers followed by one JSON call, a JSON list of calls, or calls separated by ``;`` (Llama 3.x)."""


def marked_json_blocks(text: str, catalog: ToolCatalog) -> Iterator[Found]:
    for marker in JSON_MARKERS:
        start = text.find(marker)
        while start != -1:
            calls, end = _json_calls_after(text, start + len(marker), catalog)
            yield Found(start, end, calls)
            start = text.find(marker, max(end, start + 1))


def _json_calls_after(text: str, offset: int, catalog: ToolCatalog) -> tuple[list[PartialCall] | None, int]:
    """The calls written as JSON after ``offset``: one object, a list, or objects separated by ``;``; all
    of them must be accepted. Returns them (None when any is not) and the offset after the last."""
    items: list[Any] = []
    end = offset
    while True:
        value, after = _json_after(text, end, end)
        if value is None:
            break
        items += value if isinstance(value, list) else [value]
        end = after
        separator = re.match(r"\s*;", text[end:])
        if separator is None:
            break
        end += separator.end()
    if not items:
        log.warning("kept a tool-call marker as text: no JSON follows it")
        return None, max(end, offset)
    calls = [json_call(item, catalog) for item in items]
    return ([call for call in calls if call is not None] if all(calls) else None), end


def _json_after(text: str, offset: int, fallback_end: int) -> tuple[Any, int]:
    """The JSON value at ``offset`` (after whitespace) and the offset after it; or None, ``fallback_end``."""
    try:
        return decode_prefix(text, offset)
    except ValueError:
        return None, fallback_end


KIMI_CALL = re.compile(
    r"<\|tool_call_begin\|>\s*(?:functions\.)?([\w.\-]+?)(?::\d+)?\s*<\|tool_call_argument_begin\|>"
    r"(.*?)(?:<\|tool_call_end\|>|(?=<\|tool_call_begin\|>)|(?=<\|tool_calls?_section_end\|>)|\Z)",
    re.DOTALL | re.ASCII,
)


def kimi_blocks(text: str, catalog: ToolCatalog) -> Iterator[Found]:
    for match in KIMI_CALL.finditer(text):
        call = catalog.call(match.group(1), json_object_at(match.group(2)))
        yield Found(match.start(), match.end(), None if call is None else [call])


DEEPSEEK_CALL = re.compile(
    r"<[|｜]tool[▁_]call[▁_]begin[|｜]>(.*?)<[|｜]tool[▁_]sep[|｜]>(.*?)"
    r"(?:<[|｜]tool[▁_]call[▁_]end[|｜]>|(?=<[|｜]tool[▁_]call[▁_]begin[|｜]>)|\Z)",
    re.DOTALL,
)
DEEPSEEK_FENCED = re.compile(r"\s*([\w.\-]+)\s*```(?:json)?\s*(.*?)\s*```\s*\Z", re.DOTALL)


def deepseek_blocks(text: str, catalog: ToolCatalog) -> Iterator[Found]:
    """V3 and R1: ``function<｜tool▁sep｜>NAME`` then the arguments in a fenced JSON block; V3.1:
    ``NAME<｜tool▁sep｜>{…}``."""
    for match in DEEPSEEK_CALL.finditer(text):
        kind, rest = match.group(1).strip(), match.group(2)
        fenced = DEEPSEEK_FENCED.match(rest) if kind == "function" else None
        if fenced is not None:
            call = catalog.call(fenced.group(1), json_object_at(fenced.group(2)))
        else:
            call = catalog.call(kind, json_object_at(rest))
        yield Found(match.start(), match.end(), None if call is None else [call])


_DSML = "(?:｜DSML｜)?"
INVOKE_BLOCK = re.compile(rf'<{_DSML}invoke name="([^"\n]+)">(.*?)(?:</{_DSML}invoke>|\Z)', re.DOTALL)
INVOKE_PARAMETER = re.compile(
    rf'<{_DSML}parameter name="([^"\n]+)"(?:\s+string="(true|false)")?\s*>(.*?)</{_DSML}parameter>', re.DOTALL
)


def invoke_blocks(text: str, catalog: ToolCatalog) -> Iterator[Found]:
    """MiniMax-M2 ``<invoke>``, DeepSeek V3.2 ``<｜DSML｜invoke>`` (where ``string="false"`` marks JSON)."""
    for match in INVOKE_BLOCK.finditer(text):
        name, body = match.group(1), match.group(2)
        call = None
        if not INVOKE_PARAMETER.sub("", body).strip():
            arguments = {
                key: typed_value(
                    value, catalog.property_schema(name, key), as_json=raw == "false" if raw else None
                )
                for key, raw, value in INVOKE_PARAMETER.findall(body)
            }
            call = catalog.call(name, arguments)
        yield Found(match.start(), match.end(), None if call is None else [call])


READERS = (
    tool_call_blocks,
    function_blocks,
    mistral_blocks,
    marked_json_blocks,
    kimi_blocks,
    deepseek_blocks,
    invoke_blocks,
)
"""In this order: a block inside one found earlier (``<function=…>`` in ``<tool_call>``) is not read again."""
