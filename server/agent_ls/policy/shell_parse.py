"""Shell commands parsed with tree-sitter-bash into the simple commands they would execute.

INTERFACE STUB (issue 5): the types and the signature below are the contract the permission engine
codes against; the implementation is being written.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Redirect:
    """One redirection of a simple command.

    Attributes:
        op: the operator as written (``>``, ``>>``, ``<``, ``&>``, ``&>>``, ``>|``, ``<<<``, ``2>``...).
        target: the target path as the shell would see it after quote removal and tilde expansion of a
            leading ``~`` (kept as ``~/...``: the engine expands it), or None when it cannot be known
            statically (``> $OUT``, ``> "$(…)"``).
        write: True for output redirections (the target is written or created), False for input.
        harmless: True for fd duplications and closings (``2>&1``, ``>&2``, ``<&-``) and ``/dev/null``
            (read or write), ``/dev/stdout``, ``/dev/stderr``: no file access to judge.
    """

    op: str
    target: str | None
    write: bool
    harmless: bool = False


@dataclass(frozen=True)
class SimpleCommand:
    """One command the input would execute, normalized for matching.

    Attributes:
        argv: the words after quote removal, normalized: ``VAR=value`` prefixes stripped, a leading
            backslash and directory prefixes removed from the command word (``/bin/rm`` -> ``rm``),
            transparent wrappers unwrapped (``env``, ``command``, ``builtin``, ``exec``, ``nohup``,
            ``nice [-n N]``, ``timeout [opts] N``, ``time``, ``stdbuf ...``, ``xargs [opts]``), and git
            global options removed (``git -C dir status`` -> ``git status``). A word that is not
            static (``$VAR``, ``$(...)``) is kept as written.
        text: the command's source text (for messages).
        static: False when the command word (argv[0]) cannot be resolved statically: ``$CMD``,
            ``"${VAR:-rm}"``, ``$'r\\x6d'``, ``${IFS}`` tricks, ``eval $x``... Such a command is never
            allowed.
        risky: why this command can execute or write more than its name says, or None. Set for git
            ``-c``/``-p``/``--paginate``/``--ext-diff``/``--output``/``--exec-path``, ``GIT_*`` pager,
            editor, ssh or external-diff variables in the prefix, and similar. A risky command is never
            auto-allowed (at least ask).
        redirects: its redirections, in order.
    """

    argv: tuple[str, ...]
    text: str
    static: bool = True
    risky: str | None = None
    redirects: tuple[Redirect, ...] = ()

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
            ``bash -c``/``sh -c``/``eval``/``watch``, and the command run by ``find -exec/-execdir/-ok``
            and by ``xargs``.
        error: None, or one line saying why the input could not be fully read (a parse error, a script
            that is not static such as ``bash -c "$X"`` or ``sh`` reading its script from stdin, nesting
            too deep). An input with an error is never allowed.
    """

    commands: tuple[SimpleCommand, ...]
    error: str | None = None


def parse_shell(text: str) -> ParsedShell:
    """Parse ``text`` as bash and return every simple command it would execute (see ``ParsedShell``).

    Never raises.
    """
    raise NotImplementedError("issue 5: being written")
