"""Shell words: quote removal of static words, read from tree-sitter-bash nodes.

A word is static when its value is known before the shell runs: plain text, ``'single'`` and
``"double"`` quotes without expansions, backslash escapes, and concatenations of these
(``"r"m`` -> ``rm``). Anything holding an expansion, ``$'...'`` or ``$"..."`` is not, and is kept as
written. Quoting rules follow bash 5 (``man bash``: QUOTING).
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
    for node in nodes:
        if not _pieces(src, node, pieces):
            brace = any(n.type == "brace_expression" for part in nodes for n in (part, *part.children))
            return Word(raw, static=False, brace=brace)
    return Word.from_pieces(pieces)


def _pieces(src: bytes, node: tree_sitter.Node, out: list[tuple[str, bool]]) -> bool:
    """Append (text, quoted) pieces of a static word node to ``out``; False if not static."""
    text = src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
    kind = node.type
    if kind in ("word", "number", "command_name", "variable_name") and not node.named_children:
        out.extend(_unescape_unquoted(text))
    elif kind == "command_name" or kind == "concatenation":
        return all(_pieces(src, child, out) for child in node.children)
    elif kind == "raw_string":
        out.append((text[1:-1], True))
    elif kind == "string":
        # The text between the quotes, not the string_content nodes: the grammar folds blanks
        # before the closing quote into that quote's token (`"a  "`).
        if any(child.type != "string_content" for child in node.named_children):
            return False
        out.append((_unescape(text[1:-1], _DOUBLE_QUOTE_ESCAPES), True))
    elif kind == "variable_assignment":
        return all(_pieces(src, child, out) for child in node.children)
    elif not node.is_named and kind != "$" and not kind.strip("=!~"):
        out.append((text, False))  # `==`, `=~`, `!=` that the grammar reads as operators
    else:
        return False
    return True


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
