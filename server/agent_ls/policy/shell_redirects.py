"""Redirection nodes of a tree-sitter-bash tree read into ``Redirect`` values.

``shell_parse`` walks statements; these functions read one ``file_redirect``, ``herestring_redirect`` or
``heredoc_redirect`` node each: the operator with its file descriptor, the target after quote removal,
whether it writes, whether there is no file access to judge, and the text a static heredoc or
here-string feeds to standard input (the script of ``bash <<EOF``). They are apart from the walk
because they only read nodes: the nodes that may hold commands (substitutions in a target or an
unquoted heredoc body, statements the grammar hangs on a heredoc's line) are handed back in ``later``
for the walk to visit. Semantics follow bash 5 (``man bash``: REDIRECTION, Here Documents).
"""

from __future__ import annotations

import tree_sitter

from agent_ls.policy.shell_commands import Redirect
from agent_ls.policy.shell_words import (
    adjacent_groups,
    backquote_scripts,
    heredoc_delimiter,
    resolve_word,
    unescape_heredoc,
)

_HARMLESS_FILES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_EXPANSIONS = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "arithmetic_expansion", "process_substitution"}
)


def read_redirect(
    src: bytes,
    node: tree_sitter.Node,
    extra: list[tuple[tree_sitter.Node, ...]],
    later: list[tree_sitter.Node],
    fd_hint: str = "",
) -> Redirect:
    """A ``file_redirect`` or ``herestring_redirect`` (``fd_hint``: its fd, when the grammar missed it).

    Words after the target (``echo a > f b``: ``b`` is an argument) go to ``extra``; the nodes
    that may hold substitutions go to ``later``, to be walked after the command is emitted.
    """
    descriptor = node.child_by_field_name("descriptor")
    fd = _text(src, descriptor) if descriptor is not None else fd_hint
    operator = next((c for c in node.children if not c.is_named), None)
    op = fd + (_text(src, operator) if operator is not None else "")
    later.extend(child for child in node.named_children if child.type != "file_descriptor")
    if node.type == "herestring_redirect":
        return Redirect(op, None, write=False, harmless=True)
    groups = adjacent_groups(src, field_children(node, "destination"))
    extra.extend(tuple(group) for group in groups[1:])
    bare = op[len(fd) :]
    if bare.endswith("&-"):
        return Redirect(op, "-", write=False, harmless=True)
    if not groups:
        return Redirect(op, None, write=bare in _WRITE_OPS)
    word = resolve_word(src, groups[0])
    target = word.text if word.static else None
    if bare in (">&", "<&") and target is not None and (target.isdigit() or target == "-"):
        return Redirect(op, target, write=False, harmless=True)
    return Redirect(op, target, write=bare in _WRITE_OPS, harmless=target in _HARMLESS_FILES)


def read_herestring(src: bytes, node: tree_sitter.Node) -> str | None:
    """What a here-string feeds to standard input (its word and a newline), or None when not static."""
    groups = adjacent_groups(src, node.named_children)
    if len(groups) != 1:
        return None
    word = resolve_word(src, groups[0])
    return word.text + "\n" if word.static else None


def read_heredoc(
    src: bytes,
    node: tree_sitter.Node,
    own: list[Redirect],
    extra: list[tuple[tree_sitter.Node, ...]],
    later: list[tree_sitter.Node],
    errors: list[str],
) -> tuple[Redirect, str | None]:
    """A heredoc: its redirection, and its body when static (the script of ``bash <<EOF``).

    tree-sitter-bash hangs the rest of the heredoc's line on this node: more redirections of the
    same command go to ``own`` (words after them to ``extra``), following statements (``| sh``,
    ``&& rm x``) and substitutions in an unquoted body to ``later``. A delimiter the grammar reads
    differently from bash appends an error to ``errors``.
    """
    op = "<<"
    quoted = False
    body: str | None = ""
    delimiter: str | None = None
    ended = ""
    for i, child in enumerate(node.children):
        kind = child.type
        if not child.is_named and kind in ("<<", "<<-"):
            op = kind
        elif kind == "heredoc_start":
            quoted = any(q in _text(src, child) for q in "'\"\\")
            delimiter = heredoc_delimiter(_text(src, child))
        elif kind == "heredoc_end":
            ended = _text(src, child)
        elif kind == "heredoc_body":
            if quoted:
                body = _text(src, child)
            else:
                later.append(child)  # the walk reads its substitutions
                text = _text(src, child)
                expanded = any(c.type in _EXPANSIONS for c in child.named_children)
                body = None if expanded or backquote_scripts(text) != [] else unescape_heredoc(text)
        elif node.field_name_for_child(i) == "redirect":
            own.append(read_redirect(src, child, extra, later))
        elif child.is_named and kind != "heredoc_end":
            later.append(child)
    if delimiter != ended:
        # Where the grammar ends the body is not where bash does (`<<E"O"F` ends at a line `EOF`):
        # the lines between would be misread as text or as commands.
        errors.append(f"cannot parse: a heredoc delimiter the grammar reads differently: {ended!r}")
    if body is not None and op == "<<-":
        body = "".join(line.lstrip("\t") for line in body.splitlines(keepends=True))
    return Redirect(op, None, write=False, harmless=True), body


def written_end(redirect: tree_sitter.Node) -> int:
    """Where a redirection ends on its line (a heredoc's body and the rest of its line excluded)."""
    if redirect.type == "heredoc_redirect":
        start = next((c for c in redirect.children if c.type == "heredoc_start"), redirect)
        return start.end_byte
    return redirect.end_byte


def field_children(node: tree_sitter.Node, name: str) -> list[tree_sitter.Node]:
    """The children of ``node`` in the grammar field ``name`` (``redirect``, ``destination``), in order."""
    return [child for i, child in enumerate(node.children) if node.field_name_for_child(i) == name]


def _text(src: bytes, node: tree_sitter.Node) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
