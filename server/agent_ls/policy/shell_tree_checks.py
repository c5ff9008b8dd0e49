"""Checks on a whole tree-sitter-bash syntax tree, made before ``shell_parse`` walks it.

Each returns None, or one line saying why the input cannot be read as bash would read it (the parser
adds it to ``ParsedShell.error``, so the input is never allowed): a parse error (``first_problem``),
an escaped blank the grammar drops at the start of a word (``dropped_escaped_blank``), and arithmetic
on a variable's value, which runs the ``$(...)`` the value may hold (``arithmetic_on_variables``), and
where bash ends a command the grammar runs on into the next line (``missed_command_end``).
"""

from __future__ import annotations

import itertools

import tree_sitter

from agent_ls.policy.shell_state import arithmetic_subscript, name_and_subscript


def first_problem(root: tree_sitter.Node) -> str | None:
    """Where the parse failed: the first ERROR or MISSING node, 1-based line and column (bytes)."""
    if not root.has_error:
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            line, column = node.start_point
            return f"missing {node.type!r} at line {line + 1}, column {column + 1}"
        if node.type == "ERROR":
            line, column = node.start_point
            snippet = (node.text or b"").decode("utf-8", errors="replace")[:30]
            return f"unexpected {snippet!r} at line {line + 1}, column {column + 1}"
        if node.has_error:
            stack.extend(reversed(node.children))
    return "syntax error"


_WORD_NODES = frozenset(
    {"word", "raw_string", "string", "string_content", "ansi_c_string", "concatenation", "heredoc_body",
     "heredoc_content", "heredoc_start", "heredoc_end", "comment", "regex", "extglob_pattern"}
)  # fmt: skip


def dropped_escaped_blank(src: bytes, root: tree_sitter.Node) -> str | None:
    """Where tree-sitter-bash dropped an escaped blank that starts a word (``echo \\ x``), or None.

    Bash reads ``\\<space>`` outside quotes as a literal space inside a word; at the start of a word
    the grammar takes it for a separator, so the word would be read without it.
    """
    i = src.find(b"\\")
    while 0 <= i < len(src) - 1:
        if src[i + 1 : i + 2] in (b" ", b"\t"):
            node = root.descendant_for_byte_range(i, i + 2)
            if node is not None and node.type not in _WORD_NODES:
                return f"an escaped blank the grammar drops at {_where(src, i)}"
        i = src.find(b"\\", i + 2)
    return None


# Nodes whose children are the words and redirections of one simple command: bash ends each of them
# at an unescaped line break (``man bash``: SHELL GRAMMAR, "Simple Commands"; ``[[ ]]`` is not one).
_ONE_LINE = frozenset({"command", "declaration_command", "unset_command", "redirected_statement"})


def missed_command_end(src: bytes, root: tree_sitter.Node) -> int | None:
    """Where bash ends a simple command that tree-sitter-bash runs on into the next line, or None.

    After a pipeline of three or more commands the grammar can join the next line to the last command
    (``ls | ls | ls`` newline ``rm -rf b && ls`` comes back as ``ls rm -rf b``), so ``rm`` would be
    judged as arguments of ``ls``. Bash ends a simple command at a line break that is not a
    backslash-newline continuation (``man bash``: SHELL GRAMMAR). Line breaks inside words,
    substitutions and heredocs belong to those child nodes, not to the gaps between children that this
    looks at. The offset returned is where a ``;`` says what bash reads there: before the line break,
    or before a comment the grammar put inside the command (``ls # c`` newline ``rm``), since a ``;``
    after ``#`` would be part of the comment. (The same grammar also nests ``a | b | c && d`` as a list
    inside the pipeline; every command is still judged, so that is left alone.)
    """
    stack = [root]
    while stack:
        node = stack.pop()
        children = node.children
        kind = node.type
        if kind in _ONE_LINE or (kind == "test_command" and bool(children) and children[0].type == "["):
            for before, after in itertools.pairwise(children):
                at = src.find(b"\n", before.end_byte, after.start_byte)
                while at != -1 and src[at - 1 : at] == b"\\":  # a backslash-newline continues the line
                    at = src.find(b"\n", at + 1, after.start_byte)
                if at != -1:
                    return before.start_byte if before.type == "comment" else at
        stack.extend(children)
    return None


def _where(src: bytes, offset: int) -> str:
    """``line L, column C`` of a byte offset, both 1-based (the column in bytes)."""
    line = src.count(b"\n", 0, offset) + 1
    column = offset - src.rfind(b"\n", 0, offset)
    return f"line {line}, column {column}"


_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def arithmetic_on_variables(root: tree_sitter.Node) -> str | None:
    """Why a variable's value may run as code here (the first place found), or None.

    Bash evaluates array subscripts inside arithmetic recursively, command substitutions included:
    with ``x='a[$(rm -rf ~)]'`` (set here, or read from a file), ``$((x))``, ``((x))``,
    ``[[ x -eq 0 ]]``, ``${s:x}`` and ``${a[x]}`` run ``rm``; so does ``${x@P}``. ``[`` and ``test``
    do not. Numbers and special parameters (``$?``, ``$#``) are safe.
    """
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        first = node.children[0].type if node.children else ""
        arithmetic = kind in ("arithmetic_expansion", "c_style_for_statement") or (
            kind == "compound_statement" and first == "(("
        )
        if kind == "test_command" and first == "[[":
            tests = [n for n in node.named_children if n.type == "binary_expression"]
            arithmetic = any(_operator(n) in _ARITHMETIC_TESTS for n in tests)
        if kind == "test_command":
            for test in (n for n in node.named_children if n.type == "unary_expression"):
                operand = test.named_children[-1] if test.named_children else test
                name = (operand.text or b"").decode("utf-8", errors="replace")
                parsed = name_and_subscript(name.replace("'", "").replace('"', "").replace("\\", ""))
                if _operator(test) in ("-v", "-R") and parsed is not None and arithmetic_subscript(parsed[1]):
                    return f"{_snippet(test)} evaluates an array subscript, which runs the $(...) it may hold"
        elif kind == "variable_assignment":
            name_node = node.child_by_field_name("name")
            if name_node is not None and name_node.type == "subscript":
                index = name_node.child_by_field_name("index")
                if index is None or arithmetic_subscript(
                    (index.text or b"").decode("utf-8", errors="replace")
                ):
                    return f"{_snippet(node)} evaluates an array subscript, which runs the $(...) it may hold"
        elif kind == "expansion":
            text = _snippet(node)
            if text.endswith("@P}"):
                return f"{text} expands a variable as a prompt, which runs the $(...) its value holds"
            whole = (node.text or b"").decode("utf-8", errors="replace")
            listing = whole.endswith(("*}", "@}", "*]}", "@]}"))  # ${!p*}, ${!a[@]}: names, keys
            if whole.startswith("${!") and not listing:
                return f"{text} expands the variable a value names, which runs the $(...) its subscript holds"
            offsets = [n for n in node.named_children if n.type == "variable_name"][1:]  # ${s:x}
            indexes = [n.child_by_field_name("index") for n in node.named_children if n.type == "subscript"]
            arithmetic = bool(offsets) or any(
                i is not None and i.type != "number" and i.text not in (b"@", b"*") for i in indexes
            )
        if arithmetic and _mentions_variable(node):
            return f"{_snippet(node)} evaluates a value as arithmetic, which runs the $(...) it may hold"
        stack.extend(node.named_children)
    return None


def _snippet(node: tree_sitter.Node) -> str:
    text = (node.text or b"").decode("utf-8", errors="replace").replace("\n", " ")
    return text if len(text) <= 40 else text[:37] + "..."


def _operator(node: tree_sitter.Node) -> str:
    operator = node.child_by_field_name("operator")
    return (operator.text or b"").decode() if operator is not None else ""


def _mentions_variable(node: tree_sitter.Node) -> bool:
    """Whether a variable or a command's output takes part in ``node``'s arithmetic."""
    stack = list(node.named_children)
    while stack:
        child = stack.pop()
        if child.type in ("command_substitution", "process_substitution"):
            return True
        if child.type in ("variable_name", "word") and not (child.text or b"").isdigit():
            return True
        stack.extend(child.named_children)
    return False
