"""Shell commands parsed with tree-sitter-bash into the simple commands they would execute.

``parse_shell`` reads a command line the way bash would and lists every simple command it can run, so
that the permission engine judges ``rm`` in ``git status && rm -rf b``, in ``ls $(rm x)``, in
``bash -c 'rm x'`` or in ``find . -exec rm {} \\;`` alike. Steps, in order:

1. Parse the text with tree-sitter-bash. Where the grammar runs a simple command on into the next line
   (after a pipeline of three: ``a | b | c`` newline ``rm x`` read as ``c rm x``), a ``;`` is put where
   bash ends it and the text parsed again (``shell_tree_checks.missed_command_end``). An ERROR or
   MISSING node sets ``error`` (the commands found are still returned); so do an escaped blank
   starting a word, which the grammar drops (``\\ rm``),
   and arithmetic on variables or command output (``$((x))``, ``((x))``, ``[[ x -eq 0 ]]``,
   ``${s:x}``, ``${a[x]}``, ``a[x]=1``, ``let``, ``declare -i``, ``read 'a[x]'``, ``[ -v 'a[x]' ]``,
   and ``${x@P}``, ``${!x}``), which runs a ``$(...)`` held in the value or the subscript
   (``shell_tree_checks``); so does a heredoc whose delimiter the grammar reads differently from bash.
2. Walk the tree: lists, pipelines, subshells, brace groups, loop/if/case bodies and conditions,
   function bodies, assignments, declarations, and every ``$(...)``, backtick, ``<(...)``, ``>(...)``
   and unquoted heredoc body inside words and redirections. ``[ ]`` and ``[[ ]]`` are read by the
   grammar as test expressions (no file is opened or written): only their substitutions are emitted;
   ``test`` is an ordinary command.
3. Per simple command: each word decoded as bash would (quote removal, ``$'...'``, ``$"..."``:
   ``shell_words``), its redirections (``shell_redirects``; plus those of enclosing compound
   statements), prefix assignments dropped (noting risky ones), then normalization of argv
   (``shell_exec``, whose steps this walk performs in order): directory prefix of the
   command word dropped, exec wrappers unwrapped (``shell_wrappers``), scripts of
   ``bash -c``/``eval``/``watch``/``trap``/a heredoc fed to a shell parsed recursively, the command of
   ``find -exec`` and ``xargs`` emitted, git global options removed (``shell_git``). What a command
   changes for the commands after it (``GLOBIGNORE=x``, ``shopt -s dotglob``, ``read IFS``, ``eval
   PATH=x``: ``shell_state``) makes every command of the script risky.

Order of ``ParsedShell.commands``: each command, then the commands nested in its words and
redirections (outer before inner), then the next command. Redirections of a compound statement
(``{ a; b; } > out``, ``while ...; done < in``) are appended to every command inside it, after the
command's own. A redirection with no command (``> file``) is a ``SimpleCommand`` with an empty argv.

Semantics follow bash 5 (``man bash``: SHELL GRAMMAR, QUOTING, REDIRECTION) and the corpus
``shell-commands/README.md`` (semantics 1-7). This module parses and walks the tree, recursing into
nested scripts. The values it returns are in ``shell_commands``; redirections are read in
``shell_redirects``; what one simple command runs, in ``shell_exec``; word decoding in ``shell_words``;
exec wrappers in ``shell_wrappers``; the options of shells, ``find``, ``watch`` and name-taking builtins
in ``shell_argv``; git in ``shell_git``; variables and shell options in ``shell_state``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import assert_never

# py-tree-sitter with the tree-sitter-bash wheel: a maintained, complete bash grammar (the one editors
# use) that needs no compiler at install time; a home-made tokenizer or shlex would miss constructs
# (backticks in double quotes, heredocs, process substitution) and regexes are how other harnesses
# were bypassed.
import tree_sitter
import tree_sitter_bash

from agent_ls.policy.shell_commands import ParsedShell, Redirect, SimpleCommand, with_risky
from agent_ls.policy.shell_exec import Exec, NestedScript, Step, command_steps, failed
from agent_ls.policy.shell_redirects import (
    field_children,
    read_heredoc,
    read_herestring,
    read_redirect,
    written_end,
)
from agent_ls.policy.shell_state import ScriptNotes, declaration_notes, variable_risk
from agent_ls.policy.shell_tree_checks import (
    arithmetic_on_variables,
    dropped_escaped_blank,
    first_problem,
    missed_command_end,
)
from agent_ls.policy.shell_words import Word, backquote_scripts, joined, resolve_word, unescape_backquoted

MAX_INPUT_BYTES = 100_000
MAX_SCRIPT_DEPTH = 8  # bash -c / eval / watch / trap / heredoc-to-shell scripts inside each other
_MAX_MISSED_ENDS = 64  # command ends tree-sitter-bash missed, put back one parse at a time
_MAX_TREE_DEPTH = 150  # syntax nesting; keeps the recursive walk far from Python's recursion limit

_DECLARATIONS = frozenset({"declaration_command", "unset_command"})


def parse_shell(text: str) -> ParsedShell:
    """Parse ``text`` as bash and return every simple command it would execute (see ``ParsedShell``).

    Inputs over ``MAX_INPUT_BYTES`` (UTF-8) are not parsed. Never raises: any failure is in ``error``.
    """
    out = _Output()
    try:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            return ParsedShell((), "cannot parse: the input is not valid Unicode text (lone surrogate)")
        if len(data) > MAX_INPUT_BYTES:
            return ParsedShell((), f"input is {len(data)} bytes, over the {MAX_INPUT_BYTES}-byte limit")
        _Script(data, out, depth=0).run()
    except RecursionError:
        out.errors.append("nesting too deep")
    except Exception as exc:  # the contract is "never raises"; the error makes the input "never allow"
        out.errors.append(f"cannot parse: {type(exc).__name__}: {exc}")
    # One line: messages may quote words of the input, which can hold newlines.
    error = "; ".join(dict.fromkeys(out.errors)).replace("\n", "\\n") if out.errors else None
    return ParsedShell(tuple(out.commands), error)


_PARSE_LOCK = threading.Lock()  # a tree_sitter.Parser must not parse on two threads at once


def _parse(src: bytes) -> tree_sitter.Tree:
    with _PARSE_LOCK:
        return _parser().parse(src)


@functools.cache
def _parser() -> tree_sitter.Parser:
    """The bash parser, built once on first use (loading the grammar costs a few milliseconds)."""
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@dataclass
class _Output:
    commands: list[SimpleCommand] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class _Script:
    """One script (the input, or a nested ``bash -c`` script) walked into ``out``."""

    def __init__(self, data: bytes, out: _Output, *, depth: int) -> None:
        self.src = data
        self.out = out
        self.depth = depth
        self.first = len(out.commands)
        self.session_risky: list[str] = []  # risky variables assigned for the rest of the script

    def run(self) -> None:
        tree = _parse(self.src)
        for _ in range(_MAX_MISSED_ENDS):  # two lines the grammar joined: say with a ";" where bash ends
            end = missed_command_end(self.src, tree.root_node)
            if end is None:
                break
            self.src = self.src[:end] + b";" + self.src[end:]
            tree = _parse(self.src)
        else:
            self.out.errors.append("cannot parse: too many lines read as one command")
        problem = first_problem(tree.root_node)
        if problem is not None:
            self.out.errors.append(f"cannot parse: {problem}")
        dropped = dropped_escaped_blank(self.src, tree.root_node)
        if dropped is not None:
            self.out.errors.append(f"cannot parse: {dropped}")
        arithmetic = arithmetic_on_variables(tree.root_node)
        if arithmetic is not None:
            self.out.errors.append(arithmetic)
        self.walk(tree.root_node, (), 0)
        if self.session_risky:
            commands = self.out.commands
            for i in range(self.first, len(commands)):
                commands[i] = with_risky(commands[i], self.session_risky)

    def text(self, node: tree_sitter.Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    # -- the tree --------------------------------------------------------------------------------

    def walk(self, node: tree_sitter.Node, outer: tuple[Redirect, ...], level: int) -> None:
        """Emit the commands of any node: statements, words, expansions."""
        if level > _MAX_TREE_DEPTH:
            self.out.errors.append(f"nesting deeper than {_MAX_TREE_DEPTH} levels")
            return
        kind = node.type
        if kind == "command":
            self.command(node, [], outer, level)
        elif kind == "redirected_statement":
            self.redirected(node, outer, level)
        elif kind in _DECLARATIONS:
            self.declaration(node, outer, level)
        elif kind == "variable_assignment":
            self.note_assignment(node, session=True)
            self.walk_children(node, outer, level)
        elif kind == "heredoc_body":
            self.backquotes(node)
            self.walk_children(node, outer, level)
        elif kind == "command_substitution" and self.src[node.start_byte : node.start_byte + 1] == b"`":
            # The grammar does not unescape nested backquotes (`a \`b\``): read the script as bash does.
            parent = node.parent
            inside_string = parent is not None and parent.type == "string"
            self.subscript(unescape_backquoted(self.text(node)[1:-1], in_double_quotes=inside_string))
        elif kind == "function_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                self.walk(body, outer, level + 1)
        elif kind in ("heredoc_redirect", "file_redirect", "herestring_redirect"):
            # Only in error recovery: a redirection the grammar could not attach to a statement.
            later: list[tree_sitter.Node] = []
            if kind == "heredoc_redirect":
                redirect = read_heredoc(self.src, node, [], [], later, self.out.errors)[0]
            else:
                redirect = read_redirect(self.src, node, [], later)
            self.emit_bare_redirects([redirect], outer, node)
            for child in later:
                self.walk(child, outer, level + 1)
        else:
            self.walk_children(node, outer, level)

    def walk_children(self, node: tree_sitter.Node, outer: tuple[Redirect, ...], level: int) -> None:
        for child in node.named_children:
            self.walk(child, outer, level + 1)

    def redirected(self, node: tree_sitter.Node, outer: tuple[Redirect, ...], level: int) -> None:
        body = node.child_by_field_name("body")
        self.with_redirects(body, field_children(node, "redirect"), node, outer, level)

    def with_redirects(
        self,
        body: tree_sitter.Node | None,
        redirect_nodes: list[tree_sitter.Node],
        node: tree_sitter.Node,
        outer: tuple[Redirect, ...],
        level: int,
    ) -> None:
        """Walk ``body`` with the redirections ``redirect_nodes`` written after it."""
        if body is not None and body.type in ("pipeline", "list") and body.named_children:
            # tree-sitter-bash hangs the redirections of `a | b > out` and `a && bash <<EOF` on the
            # whole pipeline or list; bash gives them to its last command only.
            *first, last = body.named_children
            for part in first:
                self.walk(part, outer, level + 1)
            self.with_redirects(last, redirect_nodes, node, outer, level + 1)
            return
        if body is not None and body.type == "redirected_statement":
            nodes = field_children(body, "redirect") + redirect_nodes
            self.with_redirects(body.child_by_field_name("body"), nodes, body, outer, level + 1)
            return
        if body is not None and body.type == "command":
            self.command(body, redirect_nodes, outer, level)
            return
        extra: list[tuple[tree_sitter.Node, ...]] = []
        later: list[tree_sitter.Node] = []
        own: list[Redirect] = []
        for child in redirect_nodes:
            if child.type == "heredoc_redirect":
                own.append(read_heredoc(self.src, child, own, extra, later, self.out.errors)[0])
            else:
                own.append(read_redirect(self.src, child, extra, later))
        if extra:
            self.out.errors.append("cannot parse: words after the redirection of a compound command")
        inner = (*own, *outer)
        before = len(self.out.commands)
        if body is not None:
            self.walk(body, inner, level + 1)
        if len(self.out.commands) == before:
            self.emit_bare_redirects(own, outer, node)
        for cont in later:
            self.walk(cont, outer, level + 1)

    def emit_bare_redirects(
        self, own: Sequence[Redirect], outer: tuple[Redirect, ...], node: tree_sitter.Node
    ) -> None:
        if own:
            self.out.commands.append(SimpleCommand((), self.text(node), redirects=(*own, *outer)))

    def declaration(self, node: tree_sitter.Node, outer: tuple[Redirect, ...], level: int) -> None:
        """``export``/``declare``/``local``/``readonly``/``typeset``/``unset``: emitted as commands."""
        keyword = node.children[0].type if node.children else ""
        words = [resolve_word(self.src, [child]) for child in node.named_children]
        for child, word in zip(node.named_children, words, strict=True):
            if child.type != "variable_assignment":  # those are read by walk() and the arithmetic check
                self.note(declaration_notes(keyword, word))
        argv = [keyword] if keyword else []
        argv += [word.text for word in words]
        undecoded = tuple(i for i, word in enumerate(words, start=len(argv) - len(words)) if not word.static)
        command = SimpleCommand(tuple(argv), self.text(node), redirects=outer, undecoded=undecoded)
        self.out.commands.append(command)
        self.walk_children(node, outer, level)

    def backquotes(self, node: tree_sitter.Node) -> None:
        """Walk the backquote substitutions of an unquoted heredoc body (the grammar leaves them as text)."""
        found = backquote_scripts(self.text(node))
        expansions = [child for child in node.named_children if child.type != "heredoc_content"]
        if found is None or (found and any("`" in self.text(child) for child in expansions)):
            self.out.errors.append("cannot parse: backquotes in a heredoc body")
            return
        for script in found:
            self.subscript(script)

    def subscript(self, script: str) -> None:
        """Walk the script of a backquote substitution into ``out``."""
        if self.depth + 1 > MAX_SCRIPT_DEPTH:
            self.out.errors.append(f"scripts nested deeper than {MAX_SCRIPT_DEPTH} levels")
            return
        nested = _Script(script.encode("utf-8"), self.out, depth=self.depth + 1)
        nested.run()
        self.session_risky.extend(nested.session_risky)  # cautious: a backquote runs in a subshell

    def note_assignment(self, node: tree_sitter.Node, *, session: bool) -> str | None:
        """The risk of assigning this variable (``PATH=``, ``GIT_PAGER=``...), recorded for the script."""
        name_node = node.child_by_field_name("name")
        name = self.text(name_node) if name_node is not None else ""
        reason = variable_risk(name, session=session)
        if reason is not None and session:
            self.session_risky.append(reason)
        return reason

    # -- one simple command ----------------------------------------------------------------------

    def command(
        self,
        node: tree_sitter.Node,
        redirect_nodes: list[tree_sitter.Node],
        outer: tuple[Redirect, ...],
        level: int,
    ) -> None:
        risky: list[str] = []
        words: list[list[tree_sitter.Node]] = []
        nested: list[tree_sitter.Node] = []
        inner_redirects: list[tree_sitter.Node] = []
        previous_end = -1
        for i, child in enumerate(node.children):
            name = node.field_name_for_child(i)
            if child.type == "variable_assignment" and not words:
                reason = self.note_assignment(child, session=False)
                if reason is not None:
                    risky.append(reason)
                nested.extend(child.named_children)
            elif name in ("name", "argument"):
                # tree-sitter-bash splits some single words in two ($"..." and similar, and at a
                # line continuation): nodes with no blank between them are one shell word.
                if words and joined(self.src, previous_end, child.start_byte):
                    words[-1].append(child)
                else:
                    words.append([child])
                previous_end = child.end_byte
                nested.append(child)
            elif child.type.endswith("_redirect"):
                inner_redirects.append(child)
            elif child.is_named:
                nested.append(child)
        fd_hint = ""
        if redirect_nodes and words and len(words[-1]) == 1:
            last = words[-1][0]
            if last.type == "command_name" and last.named_child_count == 1:
                last = last.named_children[0]  # `0<in cat`: the grammar reads `0` as the command
            if last.type == "number" and last.end_byte == redirect_nodes[0].start_byte:
                fd_hint = self.text(words.pop()[0])  # tree-sitter-bash reads `cat 0<in` as `cat 0` `<in`
        extra: list[tuple[tree_sitter.Node, ...]] = []
        later: list[tree_sitter.Node] = []
        own: list[Redirect] = []
        stdin: str | None = None
        for child in [*inner_redirects, *redirect_nodes]:
            if fd_hint and child == redirect_nodes[0]:
                redirect = read_redirect(self.src, child, extra, later, fd_hint)
                own.append(redirect)
                stdin = None if fd_hint == "0" and not redirect.write else stdin
            elif child.type == "heredoc_redirect":
                redirect, body = read_heredoc(self.src, child, own, extra, later, self.out.errors)
                own.append(redirect)
                stdin = body
            else:
                redirect = read_redirect(self.src, child, extra, later)
                own.append(redirect)
                if child.type == "herestring_redirect":
                    stdin = read_herestring(self.src, child)
                elif not redirect.write and redirect.op.lstrip("0").startswith("<"):
                    stdin = None
        resolved = [resolve_word(self.src, group) for group in words]
        resolved += [resolve_word(self.src, list(group)) for group in extra]
        end = max([node.end_byte, *(written_end(child) for child in redirect_nodes)])
        text = self.src[node.start_byte : end].decode("utf-8", errors="replace")
        context = Exec(text, (*own, *outer), tuple(risky), stdin)
        if resolved:
            self.execute(resolved, context)
        else:
            self.emit_bare_redirects(own, outer, node)
        for child in nested:
            self.walk(child, outer, level + 1)
        for cont in later:
            self.walk(cont, outer, level + 1)

    def execute(self, words: list[Word], ctx: Exec) -> None:
        """Emit the command(s) ``words`` run (``shell_exec``), walking the scripts they hold."""
        for step in command_steps(words, ctx):
            self.perform(step)

    def perform(self, step: Step) -> None:
        if isinstance(step, SimpleCommand):
            self.out.commands.append(step)
        elif isinstance(step, ScriptNotes):
            self.note(step)
        elif isinstance(step, NestedScript):
            self.nested(step)
        else:
            assert_never(step)

    def note(self, notes: ScriptNotes) -> None:
        self.out.errors.extend(notes.errors)
        self.session_risky.extend(notes.risky)

    def nested(self, step: NestedScript) -> None:
        """Walk the script a command runs; its commands get the command's risks, redirections, wrappers."""
        ctx = step.ctx
        if self.depth + 1 > MAX_SCRIPT_DEPTH:
            for failure in failed(step.words, ctx, f"scripts nested deeper than {MAX_SCRIPT_DEPTH} levels"):
                self.perform(failure)
            return
        inner = _Output()
        nested = _Script(step.script.encode("utf-8"), inner, depth=self.depth + 1)
        nested.run()
        # eval and trap scripts run in this shell: what they change holds for the rest of the input
        # (for a child shell, `bash -c`, this is only cautious).
        self.session_risky.extend(nested.session_risky)
        self.out.errors.extend(inner.errors)
        outer = ctx.inside(step.words).wrappers
        for command in inner.commands:
            command = with_risky(command, ctx.risky)
            redirects = (*command.redirects, *ctx.redirects)
            self.out.commands.append(
                replace(command, redirects=redirects, wrappers=(*outer, *command.wrappers))
            )
