"""Repair of the tool calls servers get wrong, shared by every wire API.

Applied only when tools were offered. What is repaired, each seen in a public bug report (see
``../shared/corpus/tool-calls/`` and ``../shared/research/harness-conventions.md`` §5.4):

- arguments sent as a JSON object instead of a string (llama.cpp, corpus tc01), or double-encoded (a JSON
  string whose content is a JSON object or array: one layer is unwrapped, and only then);
- missing or null arguments, which mean ``{}``;
- a missing or empty id, replaced by a stable synthetic one (``synthetic_call_id``); a repeated id is
  made unique;
- an empty or missing name: the call is dropped (logged), never run (corpus tc04, tc06).

Arguments stay raw JSON text otherwise: malformed JSON is reported to the model by the dispatcher.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_ls.core.messages import ToolCall

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
