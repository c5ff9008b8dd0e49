"""What a shell input would execute: the values ``shell_parse.parse_shell`` returns and the engine judges.

``ParsedShell`` holds every ``SimpleCommand`` of an input and why it could not be fully read; each
command carries its ``Redirect`` list. They are apart from the parser so that the permission engine,
the rules and the project-code checks read them without importing the tree walk and tree-sitter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace


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


def with_risky(command: SimpleCommand, reasons: Sequence[str]) -> SimpleCommand:
    """``command`` with ``reasons`` added to its ``risky`` (after the reasons it has, without repeats)."""
    if not reasons:
        return command
    known = command.risky.split("; ") if command.risky else []
    merged = list(dict.fromkeys([*known, *reasons]))
    return replace(command, risky="; ".join(merged))
