"""JSON from outside the process (a model server, an editor, a script), decoded so nothing later breaks on it.

The standard decoder accepts two things that fail far from where they came in:

- **lone surrogates.** JSON may escape half of a UTF-16 pair (``"\\ud83d"``); Python decodes it to a
  string that no UTF-8 encoder accepts, so writing it to a file, a terminal, a diff or an HTTP body raises
  ``UnicodeEncodeError``. Every decoded string (object keys too) goes through ``well_formed``: a lone half
  becomes U+FFFD, a high and low half side by side become the one character they encode.
- **deep nesting.** ``json.loads`` recurses once per level, so ``[[[…]]]`` 100,000 levels deep raises
  ``RecursionError``, which is not a ``ValueError`` and escapes every ``except ValueError``; so do
  ``json.dumps``, pydantic and ``repr`` on a value nested a few hundred levels deep. ``loads`` refuses a
  value nested deeper than ``max_depth`` (``JSONTooDeep``, a ``ValueError``); ``loads_bounded`` and
  ``decode_prefix`` keep the rest of the value and put the string ``TOO_DEEP`` in place of each array or
  object nested deeper, so that one deep tool call does not make a whole model response unreadable
  (the dispatcher then refuses that call: its arguments are still nested past its own limit).

Integers longer than Python's 4,300-digit conversion limit are a ``ValueError`` in ``loads``; the
bounded decoders keep them as their digit string. The common case costs one regular-expression search
and one count of brackets over the text, on top of ``json.loads``.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

MAX_DEPTH = 128
"""Arrays and objects inside each other that the decoders keep, counting the outermost one as 1. Model
responses and editor messages nest about ten levels; tool arguments have their own, lower limit."""

ARGUMENT_MAX_DEPTH = 32
"""Arrays and objects inside each other that tool arguments may nest (every tool's schema needs 2 or 3);
the dispatcher refuses deeper arguments with an error the model reads."""

TOO_DEEP = "[nested too deep: left out]"
"""What ``loads_bounded`` and ``decode_prefix`` put in place of an array or object nested past the limit."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
# A JSON string (unrolled: no backtracking) or a bracket; everything else is skipped by finditer.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_DECODER = json.JSONDecoder()


class JSONTooDeep(ValueError):
    """A JSON value nests arrays or objects deeper than ``max_depth``; seen by whoever sent it (the model
    as an error tool result, the user as a config error)."""

    def __init__(self, max_depth: int) -> None:
        super().__init__(f"arrays or objects are nested more than {max_depth} levels deep")
        self.max_depth = max_depth


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate (U+D800 to U+DFFF) replaced by U+FFFD, and each high surrogate
    followed by a low one replaced by the character the pair encodes; ``text`` itself when it has none."""
    if _SURROGATE.search(text) is None:
        return text
    # A UTF-16 round trip is the codec's own definition of a pair; its "replace" handler gives U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def well_formed_value(value: Any) -> Any:
    """``value`` (JSON-shaped: dicts, lists, scalars) with every string, object keys included, made
    ``well_formed``; containers are changed in place, without recursion. For JSON another library decoded
    (the LSP messages pygls reads)."""
    return _walk(value, sys.maxsize, cut=False, fix=True)


def utf8(text: str) -> bytes:
    """``text`` encoded as UTF-8, its lone surrogates first replaced (``well_formed``) when it has any: a
    request body or file built from text of unknown origin never raises ``UnicodeEncodeError``."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return well_formed(text).encode("utf-8")


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with well-formed strings and a depth limit.

    Raises:
        JSONTooDeep: arrays or objects nest deeper than ``max_depth``.
        ValueError: the text is not JSON (``json.JSONDecodeError``, or ``UnicodeDecodeError`` for bytes
            that are not UTF-8), or an integer is too long to convert.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONTooDeep(max_depth) from None
    return _tidy(value, text, max_depth, cut=False)


def loads_bounded(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with well-formed strings, each array or object nested past ``max_depth`` replaced by
    ``TOO_DEEP``, and each integer past the conversion limit kept as its digit string.

    Raises:
        ValueError: the text is not JSON (``json.JSONDecodeError``, or ``UnicodeDecodeError`` for bytes
            that are not UTF-8).
    """
    if isinstance(text, bytes):
        text = text.decode(json.detect_encoding(text))
    value, end = decode_prefix(text, 0, max_depth=max_depth)
    if text[end:].strip():
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def decode_prefix(text: str, offset: int = 0, *, max_depth: int = MAX_DEPTH) -> tuple[Any, int]:
    """The JSON value that starts at ``offset`` (after whitespace) and the offset just after it, as
    ``json.JSONDecoder.raw_decode`` gives them, bounded and well-formed as ``loads_bounded``.

    Raises:
        json.JSONDecodeError: no JSON value starts there.
    """
    while offset < len(text) and text[offset] in " \t\r\n":
        offset += 1
    try:
        value, end = _raw_decode(text, offset)
    except RecursionError:
        closed = _value_end(text, offset)
        if closed is None:
            raise json.JSONDecodeError("Unterminated array or object", text, offset) from None
        end = closed
        value, _ = _raw_decode(_cut(text[offset:end], max_depth), 0)
    return _tidy(value, text[offset:end], max_depth, cut=True), end


def depth(value: Any) -> int:
    """How many arrays and objects ``value`` nests inside each other (0 for a scalar); no recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _raw_decode(text: str, offset: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, offset)
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
    decoder = json.JSONDecoder(parse_int=_long_int)
    return decoder.raw_decode(text, offset)


def _long_int(digits: str) -> int | str:
    return int(digits) if len(digits.lstrip("-")) <= sys.get_int_max_str_digits() else digits


def _value_end(text: str, offset: int) -> int | None:
    """The offset after the array or object that starts at ``offset``, or None when it is not closed."""
    level = 0
    for token in _TOKEN.finditer(text, offset):
        mark = token.group()
        if mark in "[{":
            level += 1
        elif mark in "]}":
            level -= 1
            if level == 0:
                return token.end()
    return None


def _cut(text: str, max_depth: int) -> str:
    """``text`` with each array or object nested past ``max_depth`` replaced by ``TOO_DEEP`` as JSON."""
    pieces: list[str] = []
    position = 0
    level = 0
    cut_from = 0
    for token in _TOKEN.finditer(text):
        mark = token.group()
        if mark in "[{":
            level += 1
            if level == max_depth + 1:
                cut_from = token.start()
        elif mark in "]}":
            level -= 1
            if level == max_depth:
                pieces += [text[position:cut_from], json.dumps(TOO_DEEP)]
                position = token.end()
    return "".join(pieces) + text[position:]


def _tidy(value: Any, text: str | bytes, max_depth: int, *, cut: bool) -> Any:
    """``value`` decoded from ``text``, tidied by ``_walk``; the walk is skipped when ``text`` shows it has
    nothing to do (no surrogate, fewer brackets than ``max_depth``)."""
    if isinstance(text, bytes):
        fix = _SURROGATE_ESCAPE_BYTES.search(text) is not None
        brackets = text.count(b"[") + text.count(b"{")
    else:
        fix = _SURROGATE_ESCAPE.search(text) is not None or _SURROGATE.search(text) is not None
        brackets = text.count("[") + text.count("{")
    if isinstance(value, str):
        return well_formed(value) if fix else value
    if not fix and brackets <= max_depth:
        return value
    return _walk(value, max_depth, cut=cut, fix=fix)


def _walk(value: Any, max_depth: int, *, cut: bool, fix: bool) -> Any:
    """``value`` with strings made well-formed (when ``fix``) and arrays or objects past ``max_depth`` cut
    (``cut``) or refused (``JSONTooDeep``), changed in place, without recursion."""
    if not isinstance(value, dict | list):
        return well_formed(value) if fix and isinstance(value, str) else value
    stack: list[tuple[dict[str, Any] | list[Any], int]] = [(value, 1)]
    while stack:
        container, level = stack.pop()
        if fix and isinstance(container, dict) and any(_SURROGATE.search(key) for key in container):
            fixed = {well_formed(key): item for key, item in container.items()}
            container.clear()
            container.update(fixed)
        slots = list(container.items()) if isinstance(container, dict) else list(enumerate(container))
        for slot, item in slots:
            if isinstance(item, dict | list):
                if level < max_depth:
                    stack.append((item, level + 1))
                elif not cut:
                    raise JSONTooDeep(max_depth)
                else:
                    container[slot] = TOO_DEEP  # type: ignore[index]
            elif fix and isinstance(item, str):
                container[slot] = well_formed(item)  # type: ignore[index]
    return value
