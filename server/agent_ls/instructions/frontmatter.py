"""Frontmatter: the one splitter every reader of SKILL.md uses, and the lenient YAML loading of its text.

Why one: two readers that disagree on where the frontmatter ends let one file claim two identities
(pssah4/vault-operator#71, corpus README section 2); CRLF and BOM bugs in hand-rolled splitters are the most
reported skill-loading failures (crewAIInc/crewAI#7503, #7538, SJTU-IPADS/SkVM#122).

The rules, in order:

1. One leading U+FEFF (a UTF-8 BOM decoded) is dropped.
2. Line breaks are normalized: ``\\r\\n`` and a lone ``\\r`` both become ``\\n`` (YAML 1.2 §5.4 and LSP count
   all three as line breaks, so line numbers agree with both).
3. The file has frontmatter only when its first line is exactly ``---`` (trailing blanks allowed).
4. The frontmatter ends at the next line that is exactly ``---`` (trailing blanks allowed), a line of its
   own: ``---`` inside a value (``a---b``) or indented never closes it. ``...`` (the YAML document-end
   marker) does **not** close it either; it stays in the YAML text, where the YAML loader takes it as the end
   of the document (anything after it then fails to load, with a diagnostic).
5. An opening ``---`` without a closing line means *no frontmatter*: :func:`split_frontmatter` returns
   ``None`` for the YAML and the whole text as the body; :func:`frontmatter_unclosed` tells that case apart
   from a file that never opened one, so callers can say which.

Loading (:func:`load_frontmatter`): PyYAML ``safe_load`` semantics (libyaml when present, for speed). On a
YAML error, one retry on :func:`quote_colon_scalars` of the text (the fix Gemini CLI shipped in PR #16345 for
``description: Use when: …``, the most common real-world breakage). Loaded only by the retry → a warning
naming the original error and its line; still failing → an error on that line. Scalars are also kept *as
written* (``version: 1.10`` → ``"1.10"``), as the reference parser ``skills-ref`` (strictyaml) reads them.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# PyYAML: the maintained YAML loader with node positions (diagnostics point at keys) and a C accelerator;
# the reference validator's strictyaml rejects too much real-world YAML (flow lists…) to load skills with.
import yaml

from agent_ls.core.file_diagnostics import FileDiagnostic
from agent_ls.workspace.regular_files import open_regular

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

BOM = "\ufeff"
_DELIMITER = re.compile(r"---[ \t]*")
_LINE_BREAK = re.compile(r"\r\n?")

MAX_FRONTMATTER_BYTES = 64 * 1024
"""How far :func:`read_head` reads looking for the closing ``---`` before giving up (bytes)."""


def normalize_text(text: str) -> str:
    """``text`` without one leading BOM and with every line break as ``\\n``."""
    if text.startswith(BOM):
        text = text[1:]
    return _LINE_BREAK.sub("\n", text) if "\r" in text else text


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """Split a Markdown file into its YAML frontmatter and its body.

    Args:
        text: the whole file (or a prefix ending at a line break, see :func:`read_head`), as decoded.

    Returns:
        ``(yaml_text, body, body_line)``: ``yaml_text`` is the text between the delimiter lines (LF
        endings, no BOM; ``""`` for an empty frontmatter) or ``None`` when the file has no frontmatter (rules
        3 and 5 of the module docstring); ``body`` is the rest with LF endings (the whole normalized text when
        there is no frontmatter); ``body_line`` is the 0-based line of the file where the body starts (0
        without frontmatter). The YAML text starts on line 1 of the file.
    """
    text = normalize_text(text)
    first_end = text.find("\n")
    first = text if first_end < 0 else text[:first_end]
    if first_end < 0 or not _DELIMITER.fullmatch(first):
        return None, text, 0
    start = first_end + 1
    pos = start
    line = 1
    while pos <= len(text):
        end = text.find("\n", pos)
        current = text[pos:] if end < 0 else text[pos:end]
        if _DELIMITER.fullmatch(current):
            body = "" if end < 0 else text[end + 1 :]
            return text[start:pos], body, line + 1
        if end < 0:
            break
        pos = end + 1
        line += 1
    return None, text, 0


def frontmatter_unclosed(text: str) -> bool:
    """Whether ``text`` opens a frontmatter with a ``---`` first line that no ``---`` line closes."""
    yaml_text, _, _ = split_frontmatter(text)
    if yaml_text is not None:
        return False
    first = normalize_text(text).split("\n", 1)
    return len(first) == 2 and _DELIMITER.fullmatch(first[0]) is not None


def read_head(
    path: Path, max_bytes: int = MAX_FRONTMATTER_BYTES, *, hard_links_base: Path | None = None
) -> tuple[str, bool]:
    """Read the start of a file, far enough to split its frontmatter, without reading the body.

    Reads 4 KiB, then doubling chunks, until :func:`split_frontmatter` finds the closing line within the
    complete lines read so far, the file has no frontmatter, the file ends, or ``max_bytes`` were read.

    Args:
        path: the file (symlinks followed).
        max_bytes: the most bytes read (the body of a long SKILL.md is never read in full at discovery).
        hard_links_base: as ``regular_files.open_regular`` (a FIFO is refused whatever it is).

    Returns:
        ``(text, complete)``: the decoded prefix, cut after its last line break unless the whole file was read
        (``complete`` True), so a ``\\r\\n`` or a closing ``---`` line is never split across two reads.

    Raises:
        OSError: the file cannot be opened or read, or is not a regular file, or a refused hard link.
        UnicodeDecodeError: the bytes read are not UTF-8.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    text = ""
    read = 0
    chunk = 4096
    with open_regular(path, hard_links_base=hard_links_base) as handle:
        while True:
            want = min(chunk, max_bytes - read)
            data = handle.read(want)
            read += len(data)
            eof = len(data) < want
            text += decoder.decode(data, final=eof)
            if eof:
                return text, True
            prefix = text[: text.rfind("\n") + 1]
            yaml_text, _, _ = split_frontmatter(prefix)
            done = yaml_text is not None or (prefix != "" and not frontmatter_unclosed(prefix))
            if done or read >= max_bytes:
                return prefix, False
            chunk *= 2


@dataclass(frozen=True)
class KeySpan:
    """Where a top-level frontmatter key is written: 0-based file line, code-point columns (end exclusive)."""

    line: int
    start: int
    end: int


@dataclass(frozen=True)
class LoadedFrontmatter:
    """A frontmatter mapping as loaded.

    Attributes:
        data: raw key text (as written, e.g. ``"name"``, ``"true"``) → constructed value; a repeated key keeps
            its last value, as PyYAML does.
        texts: raw key → the value as text when it is a scalar (as written for non-strings; see module
            docstring), ``None`` for null or a collection.
        spans: raw key → where the key is written (its last occurrence).
        value_nodes: raw key → the YAML node of the value (for lists and maps).
        source: the YAML text the nodes index into (the quoted variant when loaded leniently).
        lenient: loaded only after :func:`quote_colon_scalars`.
    """

    data: dict[str, Any]
    texts: dict[str, str | None]
    spans: dict[str, KeySpan]
    value_nodes: dict[str, Any]
    source: str
    lenient: bool
    duplicates: tuple[tuple[str, int, int], ...] = ()
    """Repeated keys: ``(key, 0-based file line of the first, of the one that was kept)``."""


# A block-mapping entry ``key: value`` (possibly after list dashes): the key is plain or quoted, the value
# starts with a non-blank character.
_ENTRY = re.compile(
    r"""(?P<lead>[ \t]*(?:-[ \t]+)*)"""
    r"""(?P<key>"[^"\n]*"|'[^'\n]*'|[^\s#'"\[\]{},&*!|>%@`?:-][^:\n]*?|-[^\s:][^:\n]*?)"""
    r""":[ \t]+(?P<value>\S.*)"""
)
_NOT_PLAIN = tuple("\"'|>[{&*!#%")
_COMMENT = re.compile(r"[ \t]#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _needs_quotes(parts: list[str]) -> bool:
    if parts[0][0] in "@`":
        return True
    return any(": " in part or part.rstrip().endswith(":") for part in parts if part.strip())


def _flow_then_text(value: str) -> bool:
    """Whether ``value`` is a flow collection and more text (``[file] [--fix]``, Claude Code style)."""
    depth = 0
    for index, char in enumerate(value):
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                rest = value[index + 1 :].strip()
                return rest != "" and not rest.startswith("#")
    return False


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def quote_colon_scalars(yaml_text: str) -> str:
    """Rewrite plain scalar values that YAML rejects into double-quoted ones, keeping every line in place.

    A plain value (not quoted, block, flow, anchor, alias or tag) that contains ``": "``, ends with ``":"``
    or starts with the reserved ``@``/`````` is double-quoted together with its continuation lines (the
    lines indented deeper than its key); a ``" #"`` comment on its first line is dropped, as YAML would.
    A one-line flow collection followed by more text (``argument-hint: [file] [--fix]``, as Claude Code
    documents it) is quoted too.
    Double-quoted flow scalars fold line breaks exactly as plain ones do, so the value is unchanged apart
    from being loadable, and line numbers stay valid for diagnostics. Lines inside block scalars (``|``,
    ``>``) and other non-plain values are never touched.

    Behaviour follows Gemini CLI's lenient frontmatter fallback (PR #16345) and OpenCode's
    ``fallbackSanitization``.
    """
    lines = yaml_text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _ENTRY.fullmatch(line)
        if match is None:
            out.append(line)
            i += 1
            continue
        key_col = len(match["lead"])
        end = i + 1  # exclusive end of the continuation lines (trailing blank lines excluded)
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > key_col):
            j += 1
            if lines[j - 1].strip():
                end = j
        value = match["value"]
        if end == i + 1 and value.startswith(("[", "{")) and _flow_then_text(value):
            out.append(f'{line[: match.start("value")]}"{_escape(value.rstrip())}"')
            i = end
            continue
        if value.startswith(_NOT_PLAIN):
            out.extend(lines[i:end])
            i = end
            continue
        comment = _COMMENT.search(value)
        if comment is not None:
            value = value[: comment.start()]
        parts = [value, *lines[i + 1 : end]]
        if not _needs_quotes(parts):
            out.extend(lines[i:end])
            i = end
            continue
        head = line[: match.start("value")]
        if end == i + 1:
            out.append(f'{head}"{_escape(value.rstrip())}"')
        else:
            out.append(f'{head}"{_escape(value.rstrip())}')
            middle = [_escape(part.rstrip()) for part in lines[i + 1 : end]]
            middle[-1] += '"'
            out.extend(middle)
        i = end
    return "\n".join(out)


def node_text(node: Any, source: str) -> str:
    """A node as text: a scalar as written (quotes and folding applied), a collection as its source span."""
    if isinstance(node, yaml.ScalarNode):
        return _LINE_BREAK.sub("\n", str(node.value))  # an escaped "\r" must not survive either
    return source[node.start_mark.index : node.end_mark.index].strip()


class _NotMapping(Exception):
    """The frontmatter loaded, but is not a mapping of keys (``kind``: what it is instead)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _compose(yaml_text: str, lenient: bool) -> LoadedFrontmatter:
    """Load ``yaml_text`` as a mapping, keeping where each top-level key is written.

    Raises:
        yaml.YAMLError: not YAML, or more than one document. RecursionError: absurdly nested.
        _NotMapping: empty, or not a mapping.
    """
    loader = _Loader(yaml_text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise _NotMapping("empty")
        if not isinstance(node, yaml.MappingNode):
            value = loader.construct_object(node, deep=True)
            raise _NotMapping("null" if value is None else f"a {type(value).__name__}, not a mapping of keys")
        data: dict[str, Any] = {}
        texts: dict[str, str | None] = {}
        spans: dict[str, KeySpan] = {}
        value_nodes: dict[str, Any] = {}
        duplicates: list[tuple[str, int, int]] = []
        for key_node, value_node in node.value:
            key = node_text(key_node, yaml_text)
            value = loader.construct_object(value_node, deep=True)
            mark, end = key_node.start_mark, key_node.end_mark
            end_column = end.column if end.line == mark.line else mark.column + 1
            span = KeySpan(mark.line + 1, mark.column, end_column)
            if key in spans:
                duplicates.append((key, spans[key].line, span.line))
            data[key] = value
            scalar = isinstance(value_node, yaml.ScalarNode) and value is not None
            texts[key] = (value if isinstance(value, str) else str(value_node.value)) if scalar else None
            spans[key] = span
            value_nodes[key] = value_node
        return LoadedFrontmatter(data, texts, spans, value_nodes, yaml_text, lenient, tuple(duplicates))
    finally:
        loader.dispose()


def _error_position(error: BaseException) -> tuple[int, int, str]:
    """0-based file line and column of a YAML error (the YAML starts on file line 1), and a one-line text."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or str(error).split("\n", 1)[0] or type(error).__name__
    context = getattr(error, "context", None)
    if context:
        problem = f"{context}, {problem}"
    if mark is None:
        return 0, 0, str(problem)
    return mark.line + 1, mark.column, f"{problem} (line {mark.line + 2}, column {mark.column + 1})"


def load_frontmatter(path: Path, yaml_text: str) -> tuple[LoadedFrontmatter | None, list[FileDiagnostic]]:
    """Load the YAML of a frontmatter: strictly, then once leniently (module docstring).

    Args:
        path: the file, for diagnostics.
        yaml_text: the frontmatter text from :func:`split_frontmatter` (file line 1 onwards).

    Returns:
        ``(frontmatter, diagnostics)``: ``None`` with an error diagnostic when the text does not load even
        leniently, is empty, or is not a mapping of keys; a warning ``loaded leniently: …`` (on the line of
        the original YAML error) when only the retry loaded. Never raises.
    """
    try:
        return _compose(yaml_text, lenient=False), []
    except _NotMapping as not_mapping:
        message = f"the frontmatter is {not_mapping.kind}; skill not loaded"
        return None, [FileDiagnostic(path, 0, 0, 3, "error", message)]
    except (yaml.YAMLError, RecursionError) as error:
        line, column, problem = _error_position(error)
    quoted = quote_colon_scalars(yaml_text)
    if quoted != yaml_text:
        try:
            loaded = _compose(quoted, lenient=True)
        except (yaml.YAMLError, RecursionError, _NotMapping):
            pass
        else:
            message = (
                f"loaded leniently: the frontmatter is not valid YAML ({problem}); quote the value (the Agent"
                " Skills spec and other tools reject this file)"
            )
            return loaded, [FileDiagnostic(path, line, column, column + 1, "warning", message)]
    message = f"invalid YAML frontmatter: {problem}; skill not loaded"
    return None, [FileDiagnostic(path, line, column, column + 1, "error", message)]
