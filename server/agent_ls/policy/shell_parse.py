"""Shell commands parsed with tree-sitter-bash into the simple commands they would execute.

``parse_shell`` reads a command line the way bash would and lists every simple command it can run, so
that the permission engine judges ``rm`` in ``git status && rm -rf b``, in ``ls $(rm x)``, in
``bash -c 'rm x'`` or in ``find . -exec rm {} \\;`` alike. Steps, in order:

1. Parse the text with tree-sitter-bash. An ERROR or MISSING node sets ``error`` (the commands found
   are still returned); so do an escaped blank starting a word, which the grammar drops (``\\ rm``),
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
   ``shell_words``), its redirections (plus those of enclosing compound statements), then
   normalization of argv: prefix assignments dropped (noting risky ones), directory prefix of the
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
``shell-commands/README.md`` (semantics 1-7). Word decoding is in ``shell_words``; exec wrappers in
``shell_wrappers``; the options of shells, ``find``, ``watch`` and name-taking builtins in
``shell_argv``; git in ``shell_git``; variables and shell options in ``shell_state``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

# py-tree-sitter with the tree-sitter-bash wheel: a maintained, complete bash grammar (the one editors
# use) that needs no compiler at install time; a home-made tokenizer or shlex would miss constructs
# (backticks in double quotes, heredocs, process substitution) and regexes are how other harnesses
# were bypassed.
import tree_sitter
import tree_sitter_bash

from agent_ls.policy.shell_argv import (
    SHELLS,
    find_exec_segments,
    mapfile_callback,
    shell_invocation,
    system_bin_dir,
    trap_script,
    variable_operands,
    watch_command,
)
from agent_ls.policy.shell_git import git_normalize
from agent_ls.policy.shell_state import arithmetic_subscript, name_and_subscript, state_change, variable_risk
from agent_ls.policy.shell_tree_checks import arithmetic_on_variables, dropped_escaped_blank, first_problem
from agent_ls.policy.shell_words import (
    Word,
    adjacent_groups,
    backquote_scripts,
    heredoc_delimiter,
    joined,
    resolve_word,
    unescape_backquoted,
    unescape_heredoc,
)
from agent_ls.policy.shell_wrappers import unwrap

MAX_INPUT_BYTES = 100_000
MAX_SCRIPT_DEPTH = 8  # bash -c / eval / watch / trap / heredoc-to-shell scripts inside each other
_MAX_TREE_DEPTH = 150  # syntax nesting; keeps the recursive walk far from Python's recursion limit

_HARMLESS_FILES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_EXPANSIONS = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "arithmetic_expansion", "process_substitution"}
)
_DECLARATIONS = frozenset({"declaration_command", "unset_command"})


@dataclass(frozen=True)
class Redirect:
    """One redirection of a simple command.

    Attributes:
        op: the operator as written, with its file descriptor (``>``, ``>>``, ``<``, ``&>``, ``&>>``,
            ``>|``, ``2>``, ``2>&``, ``<&-``, ``<<``, ``<<-``, ``<<<``...).
        target: the target path as the shell would see it after quote removal, a leading ``~`` kept as
            written (``~/...``: the engine expands it); the fd for duplications (``1`` in ``2>&1``) and
            ``-`` for closings; None when it cannot be known statically (``> $OUT``, ``> "$(…)"``) and
            for heredocs and here-strings (no file).
        write: True for output redirections (the target is written or created), False for input.
        harmless: True when there is no file access to judge: fd duplications and closings (``2>&1``,
            ``>&2``, ``<&-``), ``/dev/null``, ``/dev/stdin``, ``/dev/stdout``, ``/dev/stderr``,
            ``/dev/tty``, heredocs and here-strings. The engine checks ``harmless`` before ``target``.
    """

    op: str
    target: str | None
    write: bool
    harmless: bool = False


@dataclass(frozen=True)
class SimpleCommand:
    """One command the input would execute, normalized for matching.

    Attributes:
        argv: the words as bash decodes them (``$'\\x2eenv'`` is ``.env``), normalized: ``VAR=value``
            prefixes stripped, a leading backslash and directory prefixes removed from the command
            word (``/bin/rm`` -> ``rm``), exec wrappers unwrapped (``setsid``, ``timeout [opts] N``,
            ``sudo``, ``busybox``...: ``shell_wrappers``), and git global options removed (``git -C dir
            status`` -> ``git status``). A word that cannot be decoded statically (``$VAR``,
            ``$(...)``) is kept as written (``undecoded``). Empty for a redirection without a command
            (``> file``).
        text: the command's source text (for messages); for a command found inside a ``bash -c``
            script or a heredoc, the text of that inner command.
        static: False when the command word (argv[0]) cannot be resolved statically: ``$CMD``,
            ``"${VAR:-rm}"``, ``$'\\u00e9'``, ``${IFS}`` tricks, globs and brace expansion, ``eval $x``,
            a shell whose script cannot be read... Such a command is never allowed.
        risky: why this command can execute or write more than its name says, or None. Set for git
            options, subcommands and config writes that run programs or point git at another
            repository (``shell_git``: ``-c``, ``-p``, ``--git-dir``, ``-C dir``, ``difftool``,
            ``--ext-diff``, ``--textconv``...), ``GIT_PAGER``-style, ``GIT_DIR``, ``PATH``,
            ``LD_PRELOAD``, ``BASH_ENV``... variables in the prefix, and for every command of the input
            when such a variable or one that changes expansion (``GLOBIGNORE``, ``IFS``...) is assigned
            anywhere in it, or a shell option changes (``shopt -s dotglob``, ``set -k``: ``shell_state``);
            also a command word run by path outside the system bin directories (``./ls``,
            ``/tmp/x/ls``), brace expansion in arguments, ``find -fprint``. Several reasons are joined
            by ``; ``. A risky command is never auto-allowed.
        redirects: its redirections, in order: its own, then those of enclosing compound statements.
        undecoded: the indexes (from 1) of the argv words that cannot be decoded statically, kept as
            written (``$F``, ``"$(ls)"``, ``<(...)``, ``$'\\u00e9'``): each could be any word.
        wrappers: the commands this one runs inside, outermost first, each as its normalized argv
            before that step: a wrapper unwrapped (``("timeout", "5", "rm", "x")`` for ``rm x``), a
            directory prefix or git's global options removed, the shell or ``eval`` whose script holds
            it, the ``find``/``xargs``/``watch`` that runs it. Deny and ask rules are matched against
            these too (``wrapped_rules``), so a wrapper never lifts them.
    """

    argv: tuple[str, ...]
    text: str
    static: bool = True
    risky: str | None = None
    redirects: tuple[Redirect, ...] = ()
    undecoded: tuple[int, ...] = ()
    wrappers: tuple[tuple[str, ...], ...] = ()

    @property
    def normalized(self) -> str:
        """The string bash rules are matched against: ``argv`` joined by single spaces."""
        return " ".join(self.argv)


@dataclass(frozen=True)
class ParsedShell:
    """Everything a shell input would execute.

    Attributes:
        commands: every simple command, in source order, including those inside pipelines, lists,
            subshells, brace groups, ``$(...)``, backticks (also inside double quotes), process
            substitution, loop and if bodies, function bodies, heredocs fed to a shell, the script of
            ``bash -c``/``sh -c``/``eval``/``watch``/``trap``, and the command run by
            ``find -exec/-execdir/-ok`` and by ``xargs``.
        error: None, or one line saying why the input could not be fully read (a parse error, a script
            that is not static such as ``bash -c "$X"`` or ``sh`` reading its script from stdin, an
            undocumented wrapper option, arithmetic on variables, nesting too deep, input too long).
            Several reasons are joined by ``; ``. An input with an error is never allowed.
    """

    commands: tuple[SimpleCommand, ...]
    error: str | None = None


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


@functools.cache
def _parser() -> tree_sitter.Parser:
    """The bash parser, built once on first use (loading the grammar costs a few milliseconds)."""
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@dataclass
class _Output:
    commands: list[SimpleCommand] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Exec:
    """What a simple command runs with: its source text, redirections, risks, stdin and ``{}`` marker."""

    text: str
    redirects: tuple[Redirect, ...]
    risky: tuple[str, ...] = ()
    stdin: str | None = None  # the text of a static heredoc or here-string on fd 0
    placeholder: str | None = None  # "{}" under find -exec, the -I string under xargs: replaced at run
    wrappers: tuple[tuple[str, ...], ...] = ()  # SimpleCommand.wrappers of what it runs

    def inside(self, words: Sequence[Word]) -> _Exec:
        """This context for a command that ``words`` runs (``SimpleCommand.wrappers`` grows by one)."""
        return replace(self, wrappers=(*self.wrappers, tuple(word.text for word in words)))


class _Script:
    """One script (the input, or a nested ``bash -c`` script) walked into ``out``."""

    def __init__(self, data: bytes, out: _Output, *, depth: int) -> None:
        self.src = data
        self.out = out
        self.depth = depth
        self.first = len(out.commands)
        self.session_risky: list[str] = []  # risky variables assigned for the rest of the script

    def run(self) -> None:
        with _PARSE_LOCK:
            tree = _parser().parse(self.src)
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
                commands[i] = _with_risky(commands[i], self.session_risky)

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
                redirect = self.heredoc(node, [], [], later)[0]
            else:
                redirect = self.redirect(node, [], later)
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
        self.with_redirects(body, _field_children(node, "redirect"), node, outer, level)

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
            nodes = _field_children(body, "redirect") + redirect_nodes
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
                own.append(self.heredoc(child, own, extra, later)[0])
            else:
                own.append(self.redirect(child, extra, later))
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
                self.declared(keyword, word)
        argv = [keyword] if keyword else []
        argv += [word.text for word in words]
        undecoded = tuple(i for i, word in enumerate(words, start=len(argv) - len(words)) if not word.static)
        command = SimpleCommand(tuple(argv), self.text(node), redirects=outer, undecoded=undecoded)
        self.out.commands.append(command)
        self.walk_children(node, outer, level)

    def declared(self, keyword: str, word: Word) -> None:
        """Note what one word of ``declare``/``export``/``local``/``readonly``/``typeset``/``unset`` changes.

        A name not known statically or a risky variable assigned (or unset: without ``PATH`` bash
        searches a default path ending in ``.``) makes every command risky; so does a nameref
        (``declare -n``), through which later assignments reach any variable. The integer attribute
        (``declare -i``) and arithmetic subscripts (``declare 'a[x]=1'``) evaluate values as arithmetic,
        which runs the ``$(...)`` a value may hold: an error.
        """
        text = word.text
        if not word.static:
            self.session_risky.append(f"{keyword} {text} may assign any variable")
        elif text[:1] in ("-", "+") and keyword in ("declare", "typeset", "local"):
            if "n" in text:
                self.session_risky.append(
                    f"{keyword} {text}: a nameref lets later assignments change any variable"
                )
            if "i" in text and text[0] == "-":
                self.out.errors.append(
                    f"{keyword} {text} makes assignments arithmetic, which runs the $(...) a value may hold"
                )
        elif (parsed := name_and_subscript(text)) is not None:
            self.named_variable(keyword, word, parsed, assigns=keyword == "unset" or "=" in text)

    def named_variable(
        self, command: str, word: Word, parsed: tuple[str, str | None], *, assigns: bool
    ) -> None:
        """A variable named by an argument (``read IFS``, ``printf -v 'a[x]'``, ``export 'PATH=x'``)."""
        name, subscript = parsed
        if arithmetic_subscript(subscript):
            self.out.errors.append(
                f"{command} {word.text}: the array subscript is evaluated as arithmetic, which runs the"
                " $(...) a value may hold"
            )
        reason = variable_risk(name, session=True) if assigns else None
        if reason is not None:
            self.session_risky.append(f"{command} {word.text}: {reason}")

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
                redirect = self.redirect(child, extra, later, fd_hint)
                own.append(redirect)
                stdin = None if fd_hint == "0" and not redirect.write else stdin
            elif child.type == "heredoc_redirect":
                redirect, body = self.heredoc(child, own, extra, later)
                own.append(redirect)
                stdin = body
            else:
                redirect = self.redirect(child, extra, later)
                own.append(redirect)
                if child.type == "herestring_redirect":
                    stdin = self.herestring(child)
                elif not redirect.write and redirect.op.lstrip("0").startswith("<"):
                    stdin = None
        resolved = [resolve_word(self.src, group) for group in words]
        resolved += [resolve_word(self.src, list(group)) for group in extra]
        end = max([node.end_byte, *(_written_end(child) for child in redirect_nodes)])
        text = self.src[node.start_byte : end].decode("utf-8", errors="replace")
        context = _Exec(text, (*own, *outer), tuple(risky), stdin)
        if resolved:
            self.execute(resolved, context)
        else:
            self.emit_bare_redirects(own, outer, node)
        for child in nested:
            self.walk(child, outer, level + 1)
        for cont in later:
            self.walk(cont, outer, level + 1)

    def execute(self, words: list[Word], ctx: _Exec) -> None:
        """Normalize ``words`` (wrappers, shells, find, git) and emit the command(s) they run."""
        while True:
            head = words[0]
            if not head.is_static_command(ctx.placeholder):
                self.emit(words, ctx, static=False)
                return
            directory, _, name = head.text.rpartition("/")
            if directory or head.text.startswith("/"):
                if not system_bin_dir(directory):
                    ctx = replace(ctx, risky=(*ctx.risky, f"runs {head.text} by path"))
                ctx = ctx.inside(words)
                words = [replace(head, text=name), *words[1:]]
            if name in SHELLS:
                self.shell(words, ctx)
                return
            if name == "eval":
                if len(words) > 1:
                    self.script(words, words[1:], ctx)
                return
            if name == "trap":
                script = trap_script(words)
                self.emit(words, ctx)
                if script is not None:
                    self.script(words, [script], ctx, emit_on_error=False)
                return
            if name in ("mapfile", "readarray") and mapfile_callback(words):
                self.fail(words, ctx, f"{name} -C runs its callback as code, which is not read")
                return
            if name == "watch":
                run = watch_command(words)
                if run is None:
                    self.emit(words, ctx)
                elif run.error is not None:
                    self.fail(words, ctx, run.error)
                elif run.exec_words:
                    ctx = ctx.inside(words)
                    words = list(run.exec_words)
                    continue
                elif run.script_words:
                    self.script(words, list(run.script_words), ctx)
                return
            unwrapped = unwrap(words)
            if unwrapped is not None:
                if unwrapped.error is not None:
                    self.fail(words, ctx, unwrapped.error)
                    return
                ctx = replace(ctx, risky=(*ctx.risky, *unwrapped.risky))
                if unwrapped.inner_stdin_unknown:
                    ctx = replace(ctx, stdin=None)
                if unwrapped.placeholder is not None:
                    ctx = replace(ctx, placeholder=unwrapped.placeholder)
                for script in unwrapped.scripts:
                    self.script(words, [script], ctx, emit_on_error=False)
                if not unwrapped.words:
                    self.emit(words, ctx)
                    return
                ctx = ctx.inside(words)
                words = list(unwrapped.words)
                continue
            self.builtin_effects(name, words)
            if name == "find":
                find = find_exec_segments(words)
                self.emit(words, replace(ctx, risky=(*ctx.risky, *find.risky)))
                for segment in find.segments:
                    self.execute(list(segment), replace(ctx.inside(words), stdin=None, placeholder="{}"))
                return
            if name == "git":
                normal = git_normalize(words)
                if len(normal.words) != len(words):
                    ctx = ctx.inside(words)
                self.emit(list(normal.words), replace(ctx, risky=(*ctx.risky, *normal.risky)))
                return
            self.emit(words, ctx)
            return

    def builtin_effects(self, name: str, words: list[Word]) -> None:
        """Note what a builtin changes for the rest of the script (``shell_state``), or runs as arithmetic."""
        if name == "let" and any(c.isalpha() or c in "$`" for word in words[1:] for c in word.text):
            self.out.errors.append(
                "let evaluates its arguments as arithmetic, which runs the $(...) a value may hold"
            )
        if name in ("set", "shopt", "enable", "hash"):
            change = state_change(words)
            if change is not None:
                self.session_risky.append(change)
        for word in variable_operands(words) or ():
            if not word.static:
                self.session_risky.append(f"{name} {word.text} may assign any variable")
            elif (parsed := name_and_subscript(word.text)) is not None:
                self.named_variable(name, word, parsed, assigns=name not in ("test", "["))

    def shell(self, words: list[Word], ctx: _Exec) -> None:
        """``bash``/``sh``/...: recurse into ``-c SCRIPT`` or a heredoc script; a file is kept as is."""
        run = shell_invocation(words)
        if run.error is not None:
            self.fail(words, ctx, run.error)
        elif run.script is not None:
            self.script(words, [run.script], ctx)
        elif not run.from_stdin:
            self.emit(words, ctx)  # runs a script file (judged by its own name), or --version
        elif ctx.stdin is None:
            self.fail(words, ctx, f"{words[0].text} reads its script from standard input")
        else:
            self.nested(ctx.stdin, ctx, words)

    def script(self, words: list[Word], parts: list[Word], ctx: _Exec, *, emit_on_error: bool = True) -> None:
        """Parse ``parts`` joined by spaces as a script (``eval`` joins its arguments the same way)."""
        name = words[0].text
        for part in parts:
            if not part.static or (ctx.placeholder is not None and ctx.placeholder in part.text):
                if emit_on_error:
                    self.fail(words, ctx, f"the script of {name} is not static: {part.text}")
                else:
                    self.out.errors.append(f"the script of {name} is not static: {part.text}")
                return
        self.nested(" ".join(part.text for part in parts), ctx, words)

    def nested(self, script: str, ctx: _Exec, words: list[Word]) -> None:
        if self.depth + 1 > MAX_SCRIPT_DEPTH:
            self.fail(words, ctx, f"scripts nested deeper than {MAX_SCRIPT_DEPTH} levels")
            return
        inner = _Output()
        nested = _Script(script.encode("utf-8"), inner, depth=self.depth + 1)
        nested.run()
        # eval and trap scripts run in this shell: what they change holds for the rest of the input
        # (for a child shell, `bash -c`, this is only cautious).
        self.session_risky.extend(nested.session_risky)
        self.out.errors.extend(inner.errors)
        outer = ctx.inside(words).wrappers
        for command in inner.commands:
            command = _with_risky(command, ctx.risky)
            redirects = (*command.redirects, *ctx.redirects)
            self.out.commands.append(
                replace(command, redirects=redirects, wrappers=(*outer, *command.wrappers))
            )

    def fail(self, words: list[Word], ctx: _Exec, error: str) -> None:
        self.out.errors.append(error)
        self.emit(words, ctx, static=False)

    def emit(self, words: list[Word], ctx: _Exec, *, static: bool = True) -> None:
        risky = list(ctx.risky)
        if any(word.brace for word in words[1:]):
            risky.append("brace expansion can turn one argument into several")
        argv = tuple(word.text for word in words)
        undecoded = tuple(i for i, word in enumerate(words) if i and not word.static)
        command = SimpleCommand(argv, ctx.text, static, None, ctx.redirects, undecoded, ctx.wrappers)
        self.out.commands.append(_with_risky(command, risky))

    # -- redirections ----------------------------------------------------------------------------

    def redirect(
        self,
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
        fd = self.text(descriptor) if descriptor is not None else fd_hint
        operator = next((c for c in node.children if not c.is_named), None)
        op = fd + (self.text(operator) if operator is not None else "")
        later.extend(child for child in node.named_children if child.type != "file_descriptor")
        if node.type == "herestring_redirect":
            return Redirect(op, None, write=False, harmless=True)
        groups = adjacent_groups(self.src, _field_children(node, "destination"))
        extra.extend(tuple(group) for group in groups[1:])
        bare = op[len(fd) :]
        if bare.endswith("&-"):
            return Redirect(op, "-", write=False, harmless=True)
        if not groups:
            return Redirect(op, None, write=bare in _WRITE_OPS)
        word = resolve_word(self.src, groups[0])
        target = word.text if word.static else None
        if bare in (">&", "<&") and target is not None and (target.isdigit() or target == "-"):
            return Redirect(op, target, write=False, harmless=True)
        return Redirect(op, target, write=bare in _WRITE_OPS, harmless=target in _HARMLESS_FILES)

    def herestring(self, node: tree_sitter.Node) -> str | None:
        groups = adjacent_groups(self.src, node.named_children)
        if len(groups) != 1:
            return None
        word = resolve_word(self.src, groups[0])
        return word.text + "\n" if word.static else None

    def heredoc(
        self,
        node: tree_sitter.Node,
        own: list[Redirect],
        extra: list[tuple[tree_sitter.Node, ...]],
        later: list[tree_sitter.Node],
    ) -> tuple[Redirect, str | None]:
        """A heredoc: its redirection, and its body when static (the script of ``bash <<EOF``).

        tree-sitter-bash hangs the rest of the heredoc's line on this node: more redirections of the
        same command go to ``own`` (words after them to ``extra``), following statements (``| sh``,
        ``&& rm x``) and substitutions in an unquoted body to ``later``.
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
                quoted = any(q in self.text(child) for q in "'\"\\")
                delimiter = heredoc_delimiter(self.text(child))
            elif kind == "heredoc_end":
                ended = self.text(child)
            elif kind == "heredoc_body":
                if quoted:
                    body = self.text(child)
                else:
                    later.append(child)  # walk() reads its substitutions
                    text = self.text(child)
                    expanded = any(c.type in _EXPANSIONS for c in child.named_children)
                    body = None if expanded or backquote_scripts(text) != [] else unescape_heredoc(text)
            elif node.field_name_for_child(i) == "redirect":
                own.append(self.redirect(child, extra, later))
            elif child.is_named and kind != "heredoc_end":
                later.append(child)
        if delimiter != ended:
            # Where the grammar ends the body is not where bash does (`<<E"O"F` ends at a line `EOF`):
            # the lines between would be misread as text or as commands.
            self.out.errors.append(
                f"cannot parse: a heredoc delimiter the grammar reads differently: {ended!r}"
            )
        if body is not None and op == "<<-":
            body = "".join(line.lstrip("\t") for line in body.splitlines(keepends=True))
        return Redirect(op, None, write=False, harmless=True), body


# -- helpers -----------------------------------------------------------------------------------------


def _written_end(redirect: tree_sitter.Node) -> int:
    """Where a redirection ends on its line (a heredoc's body and the rest of its line excluded)."""
    if redirect.type == "heredoc_redirect":
        start = next((c for c in redirect.children if c.type == "heredoc_start"), redirect)
        return start.end_byte
    return redirect.end_byte


def _field_children(node: tree_sitter.Node, name: str) -> list[tree_sitter.Node]:
    return [child for i, child in enumerate(node.children) if node.field_name_for_child(i) == name]


def _with_risky(command: SimpleCommand, reasons: Sequence[str]) -> SimpleCommand:
    if not reasons:
        return command
    known = command.risky.split("; ") if command.risky else []
    merged = list(dict.fromkeys([*known, *reasons]))
    return replace(command, risky="; ".join(merged))
