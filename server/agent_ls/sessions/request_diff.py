"""The tolerant comparison of a model request with the recorded one (``replay:<session.jsonl>``): what a
replay checks before it answers, so that a change to the prompt, a tool or a tool result shows up as the
first place where the requests part (docs/replay-format.md "Replaying a session").

Ignored, on both sides, before comparing (what changes from one run to the next without the harness
changing):

- tool call ids: each request's ids are renumbered in order of appearance (``call#1``, ``call#2``);
- the workspace root (the recorded session's and the current one) → ``<workspace>``; a temporary
  directory made by a program (``/tmp/tmpab3x9``, ``/tmp/agent-ls-…``, ``/tmp/pytest-of-…``: a first
  segment holding a digit or starting so) → ``<tmp>``; an installed package's folder (``…/lib/python3.11/
  site-packages``, a virtual environment's) → ``<site-packages>``;
- timestamps (ISO 8601, and ``ls -l``'s ``Dec  1 10:08``) → ``<time>``, and durations with a fraction
  (``0.01s``, ``1.5 ms``: what test runners print) → ``<duration>``;
- provider items echoed back opaquely (``opaque``: encrypted reasoning), which only the provider reads;
- a ``[redacted]`` in the recording matches one run of key characters (``[A-Za-z0-9_.=+/-]``, at least
  one; matched possessively, so in linear time): the session log redacted a key there, and the current run
  may hold the key it stood for. Nothing is redacted on the current side.

Everything else must be equal: roles, texts, tool calls' names and arguments, tool results, the order of
messages and, when they were recorded, the tool specs (names, descriptions, parameter schemas).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Sequence
from typing import Any

REDACTED = "[redacted]"
CONTEXT_CHARS = 48
"""The characters shown on each side of the first difference."""

_TIME = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}\b"
)
_DURATION = re.compile(r"\b\d+\.\d+\s?(?:ms|s)\b")
_SITE_PACKAGES = re.compile(r"/lib/python\d+\.\d+/site-packages")
_PATH_STOP = frozenset(" \t\r\n\"'`")
_KEY_RUN = r"[A-Za-z0-9_.=+/\-]++"
"""What a ``[redacted]`` stands for: a possessive run of key characters (no backtracking)."""


class Normalizer:
    """Rewrites the strings of a request so that two runs of the same harness compare equal.

    Args:
        roots: the workspace roots to replace (the recorded one and the current one), as absolute paths.
    """

    def __init__(self, roots: Sequence[str]) -> None:
        self._roots = sorted({r.rstrip("/") for r in roots if r and r.strip("/")}, key=len, reverse=True)
        temp = sorted({"/tmp", "/var/tmp", tempfile.gettempdir().rstrip("/")}, key=len, reverse=True)
        self._temp = re.compile(
            r"(?:/private)?(?:" + "|".join(re.escape(t) for t in temp) + r"|/var/folders/[^/\s]+/[^/\s]+/T)"
            r"/(?:tmp|agent-ls-|pytest-of-|[^/\s\"'`]*\d)[^/\s\"'`]*"
        )

    def text(self, text: str) -> str:
        text = _site_packages(text)
        for root in self._roots:
            text = text.replace(root, "<workspace>")
        text = self._temp.sub("<tmp>", text)
        text = _TIME.sub("<time>", text)
        return _DURATION.sub("<duration>", text)

    def messages(self, messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages (``records`` shapes) normalized, call ids renumbered across the request."""
        ids: dict[str, str] = {}

        def call_id(value: object) -> str:
            return ids.setdefault(str(value), f"call#{len(ids) + 1}")

        out: list[dict[str, Any]] = []
        for message in messages:
            kept = {k: v for k, v in message.items() if k not in ("opaque", "callId", "toolCalls")}
            item = {k: self.value(v) for k, v in kept.items()}
            if "callId" in message:
                item["callId"] = call_id(message["callId"])
            if message.get("toolCalls"):
                item["toolCalls"] = [self._call(c, call_id(c.get("callId"))) for c in message["toolCalls"]]
            out.append(item)
        return out

    def _call(self, call: dict[str, Any], call_id: str) -> dict[str, Any]:
        return {"callId": call_id, "name": call.get("name"), "arguments": self._arguments(call)}

    def _arguments(self, call: dict[str, Any]) -> str:
        """The arguments as canonical JSON when they parse (spacing and key order ignored), else as text."""
        raw = str(call.get("arguments", ""))
        try:
            parsed = json.loads(raw)
        except ValueError:
            return self.text(raw)
        return self.text(json.dumps(parsed, sort_keys=True, ensure_ascii=False))

    def value(self, value: Any) -> Any:
        """``value`` (JSON-shaped) with every string normalized (``text``)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


def _site_packages(text: str) -> str:
    """``text`` with each ``<prefix>/lib/pythonX.Y/site-packages`` replaced: the match is found first,
    then its prefix is taken back to the previous space or quote (linear; a pattern starting with the
    prefix would rescan a long line from every position)."""
    if "/site-packages" not in text:
        return text
    out: list[str] = []
    done = 0
    for match in _SITE_PACKAGES.finditer(text):
        start = match.start()
        while start > done and text[start - 1] not in _PATH_STOP:
            start -= 1
        out += [text[done:start], "<site-packages>"]
        done = match.end()
    return "".join([*out, text[done:]])


def first_difference(
    recorded: Sequence[dict[str, Any]],
    current: Sequence[dict[str, Any]],
    *,
    trailing_note: bool = False,
) -> str | None:
    """Where two normalized message lists first part, in one line; None when they match.

    ``trailing_note``: ``current`` may end with one more user message than ``recorded`` (a status note
    that a session file's history never held).
    """
    extra = len(current) - len(recorded)
    if trailing_note and extra == 1 and current[-1].get("role") == "user":
        current = current[:-1]
    for index, (before, now) in enumerate(zip(recorded, current, strict=False), start=1):
        if _matches(before, now):
            continue
        return f"message {index} ({_label(before)}) {_field_difference(before, now)}"
    if len(recorded) != len(current):
        longer, which = (current, "now has") if len(current) > len(recorded) else (recorded, "recorded has")
        first = longer[min(len(recorded), len(current))]
        return (
            f"{len(recorded)} messages recorded, {len(current)} now; {which} message "
            f"{min(len(recorded), len(current)) + 1} ({_label(first)}): {_show(_body(first))}"
        )
    return None


def tools_difference(recorded: Sequence[dict[str, Any]], current: Sequence[dict[str, Any]]) -> str | None:
    """Where two tool spec lists (``exchanges.tool_json``) first part, in one line; None when equal."""
    names_before = [str(t.get("name")) for t in recorded]
    names_now = [str(t.get("name")) for t in current]
    if names_before != names_now:
        gone = [n for n in names_before if n not in names_now]
        added = [n for n in names_now if n not in names_before]
        parts = [f"missing {', '.join(gone)}" if gone else "", f"new {', '.join(added)}" if added else ""]
        said = "; ".join(p for p in parts if p) or "the same tools in another order"
        return f"the tools offered ({said})"
    for before, now in zip(recorded, current, strict=True):
        for key in ("description", "parameters"):
            old, new = _canonical(before.get(key)), _canonical(now.get(key))
            if old != new:
                return f"tool {before.get('name')}'s {key}: {_excerpts(old, new)}"
    return None


def _matches(recorded: Any, current: Any) -> bool:
    if isinstance(recorded, str) and isinstance(current, str):
        if recorded == current:
            return True
        return REDACTED in recorded and _wildcard(recorded).fullmatch(current) is not None
    if isinstance(recorded, dict) and isinstance(current, dict):
        return recorded.keys() == current.keys() and all(_matches(recorded[k], current[k]) for k in recorded)
    if isinstance(recorded, list) and isinstance(current, list):
        pairs = zip(recorded, current, strict=False)
        return len(recorded) == len(current) and all(_matches(a, b) for a, b in pairs)
    return bool(recorded == current)


def _wildcard(text: str) -> re.Pattern[str]:
    return re.compile(_KEY_RUN.join(re.escape(part) for part in text.split(REDACTED)), re.DOTALL)


def _field_difference(before: dict[str, Any], now: dict[str, Any]) -> str:
    for key in sorted(before.keys() | now.keys(), key=_field_order):
        if key not in now:
            return f"{key}: recorded {_show(_canonical(before[key]))}, now absent"
        if key not in before:
            return f"{key}: not recorded, now {_show(_canonical(now[key]))}"
        if not _matches(before[key], now[key]):
            return f"{key}: {_excerpts(_canonical(before[key]), _canonical(now[key]))}"
    return "differs"


def _field_order(key: str) -> tuple[int, str]:
    order = ("role", "name", "callId", "text", "content", "toolCalls", "isError", "reasoning")
    return (order.index(key) if key in order else len(order), key)


def _canonical(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _excerpts(old: str, new: str) -> str:
    """``recorded "…" now "…"``, around the first character where ``old`` and ``new`` part."""
    at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    start = max(0, at - CONTEXT_CHARS)
    end = at + CONTEXT_CHARS
    return f"recorded {_show(old[start:end], start > 0)} now {_show(new[start:end], start > 0)}"


def _show(text: str, cut_before: bool = False, limit: int = 2 * CONTEXT_CHARS) -> str:
    shown = json.dumps(text[:limit], ensure_ascii=True)  # one line: newlines and escapes made visible
    return ("…" if cut_before else "") + shown + ("…" if len(text) > limit else "")


def _label(message: dict[str, Any]) -> str:
    role = str(message.get("role", "?"))
    return f"{role}, {message['name']}" if role == "tool" and "name" in message else role


def _body(message: dict[str, Any]) -> str:
    return str(message.get("text", message.get("content", "")))
