"""A tool call as a model server sent it, or as it was read from the answer text, before repair.

Shared by the wire modules (which fill it from structured fields), the readers of tool-call markup in the
text (``text_calls``, ``call_markup``, ``harmony``) and ``repair`` (which turns it into a ``ToolCall``).
Argument JSON from a model is decoded with ``core.untrusted_json``: strings well-formed, nesting bounded,
never a ``RecursionError``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agent_ls.core.untrusted_json import loads, loads_bounded


@dataclass
class PartialCall:
    """One call before repair. ``arguments`` is whatever came: JSON text, an object, None."""

    id: str | None
    name: str | None
    arguments: Any = None


def raw_arguments(value: Any) -> str:
    """Arguments as JSON text.

    - None, or blank text: ``{}``;
    - an object, array or other JSON value: serialized;
    - text that decodes to a JSON string which itself decodes to an object or array (double-encoded):
      that inner text; any other text (malformed, or nested too deep to decode): unchanged, for the
      dispatcher to report.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return "{}"
    if not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        decoded = loads(value)
    except ValueError:
        return value
    if isinstance(decoded, str):
        try:
            inner = loads(decoded)
        except ValueError:
            return value
        if isinstance(inner, dict | list):
            return decoded
    return value


def as_json_value(value: Any) -> Any:
    """Arguments as a JSON value: None means ``{}``, JSON text is decoded (``loads_bounded``: what is
    nested too deep becomes ``TOO_DEEP``), and text that does not decode stays text."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            return loads_bounded(raw_arguments(value))
        except ValueError:
            return value
    return value
