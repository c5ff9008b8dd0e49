"""Shell words: quote removal of static words, read from tree-sitter-bash nodes.

A word is static when its value is known before the shell runs: plain text, ``'single'`` and
``"double"`` quotes without expansions, backslash escapes, ANSI-C quoting (``$'\\x2eenv'`` is
``.env``: ``ansi_c``), locale quoting (``$"..."``, read as double quotes: no message catalog is
assumed), and concatenations of these (``"r"m`` -> ``rm``, ``'.e'"nv"`` -> ``.env``). A word holding
an expansion (``$x``, ``$(...)``, ``<(...)``), or a form whose value bash gives only at run time or
that differs between bash versions and locales (``$'\\u00e9'``, ``$'\\x{41}'``), is not static: it is
kept as written and counts as unknown. Quoting rules follow bash 5.2 (``man bash``: QUOTING; ANSI-C
escapes as ``lib/sh/strtrans.c`` ``ansicstr`` decodes them for the parser).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import tree_sitter

_DOUBLE_QUOTE_ESCAPES = '$`"\\\n'
_HEREDOC_ESCAPES = "$`\\\n"
_BACKQUOTE_ESCAPES = "$`\\"


@dataclass(frozen=True)
class Word:
    """One shell word.

    Attributes:
        text: the value after quote removal when ``static``, else the source text as written.
        static: False when the word holds an expansion, ``$'...'`` or ``$"..."``.
        glob: an unquoted ``*``, ``?`` or ``[...]`` (pathname expansion may replace the word).
        brace: an unquoted brace expansion (``{a,b}``, ``{1..3}``): one word becomes several.
        braces: any unquoted ``{`` or ``}`` (never part of a command name).
    """

    text: str
    static: bool = True
    glob: bool = False
    brace: bool = False
    braces: bool = False

    @classmethod
    def from_pieces(cls, pieces: Sequence[tuple[str, bool]]) -> Word:
        """A static word from (text, quoted) pieces; pattern marks come from the unquoted characters."""
        glob = brace = braces = False
        bracket = brace_open = brace_list = False
        previous = ""
        for text, quoted in pieces:
            for char in text:
                if quoted:
                    previous = ""
                    continue
                if char in "*?" or (char == "]" and bracket):
                    glob = True
                elif char == "[":
                    bracket = True
                elif char == "{":
                    braces = brace_open = True
                    brace_list = False
                elif char == "}":
                    braces = True
                    brace = brace or (brace_open and brace_list)
                elif brace_open and (char == "," or (char == "." and previous == ".")):
                    brace_list = True
                previous = char
        return cls("".join(text for text, _ in pieces), True, glob, brace, braces)

    def is_static_command(self, placeholder: str | None) -> bool:
        """Whether this word names one known program (no expansion, pattern or run-time placeholder)."""
        if not self.static or self.glob or self.braces:
            return False
        return placeholder is None or placeholder not in self.text


def joined(src: bytes, end: int, start: int) -> bool:
    """Whether two nodes form one word: nothing between them but line continuations (``a\\<NL>b``)."""
    return end >= 0 and not src[end:start].replace(b"\\\n", b"")


def adjacent_groups(src: bytes, nodes: Sequence[tree_sitter.Node]) -> list[list[tree_sitter.Node]]:
    groups: list[list[tree_sitter.Node]] = []
    for node in nodes:
        if groups and joined(src, groups[-1][-1].end_byte, node.start_byte):
            groups[-1].append(node)
        else:
            groups.append([node])
    return groups


def resolve_word(src: bytes, nodes: Sequence[tree_sitter.Node]) -> Word:
    """One shell word from its nodes: the value after quote removal, or the source text if not static."""
    raw = src[nodes[0].start_byte : nodes[-1].end_byte].decode("utf-8", errors="replace")
    pieces: list[tuple[str, bool]] = []
    if not _sequence(src, nodes, pieces):
        brace = any(n.type == "brace_expression" for part in nodes for n in (part, *part.children))
        return Word(raw, static=False, brace=brace)
    return Word.from_pieces(pieces)


def _sequence(src: bytes, nodes: Sequence[tree_sitter.Node], out: list[tuple[str, bool]]) -> bool:
    """Append the pieces of adjacent sibling nodes; a ``$`` token before a string is locale quoting."""
    nodes = _flattened(nodes)
    for i, node in enumerate(nodes):
        if node.type != "$" or node.is_named:
            if not _pieces(src, node, out):
                return False
            continue
        following = nodes[i + 1] if i + 1 < len(nodes) else None
        if following is None and (i == 0 or nodes[i - 1].type != "$"):
            out.append(("$", True))  # a lone `$` ending a word is itself (`echo a$`)
        elif following is None or following.type != "string":
            return False
        # else `$"..."`: the string that follows is read as double quotes (no catalog translates it)
    return True


def _flattened(nodes: Sequence[tree_sitter.Node]) -> list[tree_sitter.Node]:
    """``nodes`` with concatenations opened: the grammar nests ``$"a"$"b"`` as ``$``, then a
    concatenation of a string, a ``$`` and a string."""
    flat: list[tree_sitter.Node] = []
    for node in nodes:
        if node.type in ("concatenation", "translated_string"):
            flat.extend(_flattened(node.children))
        else:
            flat.append(node)
    return flat


def _pieces(src: bytes, node: tree_sitter.Node, out: list[tuple[str, bool]]) -> bool:
    """Append (text, quoted) pieces of a static word node to ``out``; False if not static."""
    text = src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
    kind = node.type
    if kind in ("word", "number", "command_name", "variable_name") and not node.named_children:
        out.extend(_unescape_unquoted(text))
    elif kind in ("command_name", "concatenation", "translated_string", "variable_assignment"):
        return _sequence(src, node.children, out)
    elif kind == "raw_string":
        out.append((text[1:-1], True))
    elif kind == "ansi_c_string":
        decoded = ansi_c(text[2:-1])
        if decoded is None:
            return False
        out.append((decoded, True))
    elif kind == "string":
        # The text between the quotes, not the string_content nodes: the grammar folds blanks
        # before the closing quote into that quote's token (`"a  "`).
        if any(child.type != "string_content" for child in node.named_children):
            return False
        out.append((_unescape(text[1:-1], _DOUBLE_QUOTE_ESCAPES), True))
    elif not node.is_named and kind != "$" and not kind.strip("=!~"):
        out.append((text, False))  # `==`, `=~`, `!=` that the grammar reads as operators
    else:
        return False
    return True


_ANSI_C_SIMPLE = {
    "a": 0x07, "b": 0x08, "e": 0x1B, "E": 0x1B, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B,
    "\\": 0x5C, "'": 0x27, '"': 0x22, "?": 0x3F,
}  # fmt: skip
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"


def ansi_c(body: str) -> str | None:
    """The value of ``$'BODY'`` (bash 5.2 ``ansicstr`` as the parser calls it), or None when bash's
    value depends on its version or locale, or is not UTF-8 text.

    Decoded: ``\\a \\b \\e \\E \\f \\n \\r \\t \\v \\\\ \\' \\" \\?``, ``\\NNN`` (one to three
    octal digits, modulo 256), ``\\xHH`` (one or two hex digits), ``\\uHHHH`` and ``\\UHHHHHHHH`` up to
    U+007F, ``\\cX`` (control-X: ``X & 0x1f``, ``\\c?`` is DEL, ``\\c\\\\`` is 0x1c); any other escape,
    and ``\\x``/``\\u``/``\\U`` without digits or ``\\c`` at the end, stay as written with their
    backslash. The value ends at its first NUL byte, as in bash. None for ``\\u``/``\\U`` above U+007F
    (bash writes them in the locale's encoding, or as ``\\uXXXX`` text in the C locale), ``\\x{``
    (bash 5.3 reads ``\\x{HH...}``, 5.2 does not), ``\\c`` before a non-ASCII character, and bytes
    that are not UTF-8.
    """
    out = bytearray()
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 >= len(body):
            out += char.encode("utf-8", errors="surrogateescape")
            i += 1
            continue
        escape = body[i + 1]
        i += 2
        if escape in _ANSI_C_SIMPLE:
            out.append(_ANSI_C_SIMPLE[escape])
        elif escape in _OCTAL:
            value = int(escape)
            for _ in range(2):
                if i < len(body) and body[i] in _OCTAL:
                    value = value * 8 + int(body[i])
                    i += 1
            out.append(value & 0xFF)
        elif escape in "xuU":
            if escape == "x" and body[i : i + 1] == "{":
                return None
            limit = {"x": 2, "u": 4, "U": 8}[escape]
            digits = ""
            while len(digits) < limit and i < len(body) and body[i] in _HEX:
                digits += body[i]
                i += 1
            if not digits:
                out += b"\\" + escape.encode()
            elif escape == "x":
                out.append(int(digits, 16))
            elif int(digits, 16) <= 0x7F:
                out.append(int(digits, 16))
            else:
                return None
        elif escape == "c" and i < len(body):
            control = body[i]
            i += 1
            if not control.isascii():
                return None
            if control == "\\" and body[i : i + 1] == "\\":
                i += 1
            out.append(0x7F if control == "?" else ord(control.upper()) & 0x1F)
        else:
            out += b"\\" + escape.encode("utf-8", errors="surrogateescape")
    try:
        return bytes(out.partition(b"\0")[0]).decode("utf-8")
    except UnicodeDecodeError:
        return None


def heredoc_delimiter(text: str) -> str | None:
    """The delimiter bash ends a heredoc at, for the word written after ``<<`` (quote removal with
    ``$'...'`` decoded; no expansion: ``<<EO$x`` ends at ``EO$x``), or None when it cannot be read."""
    result: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            result.append(text[i + 1])
            i += 2
        elif char == "'" or (char == "$" and text[i + 1 : i + 2] == "'"):
            start = i + (2 if char == "$" else 1)
            end = start
            while end < len(text) and text[end] != "'":
                end += 2 if char == "$" and text[end] == "\\" else 1
            if end >= len(text):
                return None
            value = ansi_c(text[start:end]) if char == "$" else text[start:end]
            if value is None:
                return None
            result.append(value)
            i = end + 1
        elif char == '"' or (char == "$" and text[i + 1 : i + 2] == '"'):
            start = i + (2 if char == "$" else 1)
            end = start
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                return None
            result.append(_unescape(text[start:end], _DOUBLE_QUOTE_ESCAPES))
            i = end + 1
        else:
            result.append(char)
            i += 1
    return "".join(result)


def _unescape_unquoted(text: str) -> list[tuple[str, bool]]:
    """Backslash removal outside quotes: ``\\x`` -> ``x`` (quoted), ``\\<newline>`` -> nothing."""
    pieces: list[tuple[str, bool]] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                pieces.append((text[i + 1], True))
            i += 2
        else:
            pieces.append((char, False))
            i += 1
    return pieces


def _unescape(text: str, escapable: str) -> str:
    """Backslash removal where only ``escapable`` characters are escaped (and ``\\<newline>`` dropped
    when newline is one): double quotes ``$ ` " \\ <NL>``, heredocs ``$ ` \\ <NL>``, backquotes
    ``$ ` \\``."""
    result: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in escapable:
            if text[i + 1] != "\n":
                result.append(text[i + 1])
            i += 2
        else:
            result.append(text[i])
            i += 1
    return "".join(result)


def backquote_scripts(text: str) -> list[str] | None:
    """The scripts of the backquote substitutions in heredoc text, unescaped; None if one is open."""
    scripts: list[str] = []
    start = -1
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "`":
            if start < 0:
                start = i + 1
            else:
                scripts.append(unescape_backquoted(text[start:i], in_double_quotes=False))
                start = -1
        i += 1
    return scripts if start < 0 else None


def unescape_heredoc(text: str) -> str:
    """An unquoted heredoc body after backslash removal (``\\$``, ``\\```, ``\\\\``, ``\\<newline>``)."""
    return _unescape(text, _HEREDOC_ESCAPES)


def unescape_backquoted(text: str, *, in_double_quotes: bool) -> str:
    """The script inside `` `...` ``: backslashes escape only ``$``, `` ` ``, ``\\`` (and ``"`` within
    double quotes), so nested backquotes come out as plain ones (bash: Command Substitution)."""
    return _unescape(text, _BACKQUOTE_ESCAPES + ('"' if in_double_quotes else ""))
