"""Shell state a command line can change: variables, ``set`` and ``shopt`` options, builtins.

The parser reads each command as a fresh ``bash -c`` would, but a command line can first change how
bash reads the rest of it (``GLOBIGNORE=x; cat *`` also matches dotfiles, ``set -k`` turns later
``NAME=value`` arguments into environment, ``BASH_CMDS[ls]=./x; ls`` runs ``./x``, ``PWD=/etc; cat
~+/passwd`` reads ``/etc/passwd``) or what the programs it runs do (``GIT_DIR=r git status`` reads
``r/config``, whose ``core.fsmonitor`` runs a program). Such a change makes the command risky when it
is a prefix assignment, and every command of the input risky when it is made on its own: the parser
does not follow state from one command to the next. ``declaration_notes`` and ``builtin_notes`` say what
one word of ``declare``/``export``/``unset``... or one builtin (``set``, ``shopt``, ``read``, ``let``...)
changes for the rest of its script, as ``ScriptNotes``.

The lists are conservative; they follow bash 5.2 (``man bash``: Shell Variables, Tilde Expansion,
Pathname Expansion, the ``set``, ``shopt``, ``enable`` and ``hash`` builtins), git(1) ENVIRONMENT, ld.so(8),
iconv(3) (``GCONV_PATH``) and the interpreters' documented start-up variables.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_ls.policy.shell_argv import variable_operands
from agent_ls.policy.shell_words import Word

# Variables that make a program run other code, load libraries, read another configuration or write
# files. HOME and XDG_CONFIG_HOME: git reads ~/.gitconfig and $XDG_CONFIG_HOME/git/config.
_RUNS_CODE = frozenset(
    {
        "PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "HOME", "XDG_CONFIG_HOME",
        "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "EDITOR", "VISUAL",
        "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND",
        "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR",
        "GIT_ALLOW_PROTOCOL", "GIT_PROTOCOL_FROM_USER",
        "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB",
        "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTEST_ADDOPTS", "PYTEST_PLUGINS",
        "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GCONV_PATH", "BASH_LOADABLES_PATH",
    }
)  # fmt: skip
_RUNS_CODE_PREFIXES = ("LD_", "DYLD_", "GIT_CONFIG", "GIT_TRACE", "GIT_REDIRECT_")
# Variables that make git read another repository (and its configuration) or write elsewhere.
_GIT_REPOSITORY = frozenset(
    {"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
     "GIT_ALTERNATE_OBJECT_DIRECTORIES"}
)  # fmt: skip
# Variables that change how bash expands later words or finds commands: word splitting (IFS),
# pathname expansion (GLOBIGNORE), tilde expansion (HOME is above; ~+ and ~- read PWD and OLDPWD),
# cd (CDPATH), command lookup (BASH_CMDS, EXECIGNORE), aliases, options, compatibility levels, and
# the message catalog that translates $"..." (TEXTDOMAIN, TEXTDOMAINDIR).
_SHELL_STATE = frozenset(
    {"IFS", "GLOBIGNORE", "CDPATH", "PWD", "OLDPWD", "SHELLOPTS", "BASHOPTS", "BASH_ALIASES", "BASH_CMDS",
     "BASH_COMPAT", "BASH_XTRACEFD", "EXECIGNORE", "POSIXLY_CORRECT", "TEXTDOMAIN", "TEXTDOMAINDIR"}
)  # fmt: skip

_RUNS_CODE_REASON = "can make the program run other code"
OTHER_REPOSITORY_REASON = "can point git at another repository, whose configuration can run programs"
_SHELL_STATE_REASON = "changes how the shell expands words or finds commands"


def variable_risk(name: str, *, session: bool) -> str | None:
    """Why assigning ``name`` is risky, or None.

    ``session`` False: a prefix of one command (``GIT_PAGER=x git log``): "``NAME= can make the program
    run other code``". True: assigned on its own, exported or declared, for the rest of the script:
    "``NAME= assigned in the script can make later programs run other code``". A subscripted name
    (``BASH_CMDS[ls]``) is judged by its array's name.
    """
    base = name.partition("[")[0]
    if base in _RUNS_CODE or base.startswith(_RUNS_CODE_PREFIXES):
        reason = "can make later programs run other code" if session else _RUNS_CODE_REASON
    elif base in _GIT_REPOSITORY:
        reason = OTHER_REPOSITORY_REASON
    elif base in _SHELL_STATE:
        reason = "changes how later commands are expanded or found" if session else _SHELL_STATE_REASON
    else:
        return None
    return f"{base}= assigned in the script {reason}" if session else f"{base}= {reason}"


# set -o options (and their letters) that change nothing the parser relies on: error handling,
# tracing, noglob (fewer expansions), noclobber (fewer writes), job control, hashing.
_SAFE_SET_LETTERS = frozenset("euxvfnCbhmtETB")
_SAFE_SET_OPTIONS = frozenset(
    {"errexit", "nounset", "xtrace", "verbose", "noglob", "noexec", "noclobber", "notify", "onecmd",
     "hashall", "monitor", "errtrace", "functrace", "pipefail", "emacs", "vi", "ignoreeof", "braceexpand",
     "history"}
)  # fmt: skip
# shopt options that change neither expansion nor command lookup.
_SAFE_SHOPT_OPTIONS = frozenset(
    {"inherit_errexit", "execfail", "gnu_errfmt", "huponexit", "checkwinsize", "lithist", "cmdhist",
     "histappend"}
)  # fmt: skip
_STATE_CHANGE = "changes how the shell reads and expands later commands"


def state_change(words: Sequence[Word]) -> str | None:
    """Why ``set``/``shopt``/``enable``/``hash`` here changes how later commands are read, or None.

    Risky: ``set`` options turned on (``-``; ``+`` turns them back off) other than
    ``_SAFE_SET_LETTERS``/``_SAFE_SET_OPTIONS`` (``-k``, ``-a``, ``-H``, ``-P``, ``-p``, ``-o posix``...),
    ``shopt -s/-u`` of options other than
    ``_SAFE_SHOPT_OPTIONS`` (``dotglob``, ``extglob``, ``nullglob``, ``failglob``, ``globstar``,
    ``nocaseglob``, ``expand_aliases``, ``cdable_vars``...), ``enable`` with arguments (loads or hides
    builtins), ``hash -p`` (a name runs another program). A word that is not static counts as risky.
    """
    name = words[0].text
    text = " ".join(word.text for word in words)
    if any(not word.static for word in words[1:]):
        return f"{text}: {name} with an argument not known statically may change how later commands run"
    args = [word.text for word in words[1:]]
    risky = False
    if name == "set":
        risky = _set_is_risky(args)
    elif name == "shopt":
        risky = _shopt_is_risky(args)
    elif name == "enable":
        risky = any(arg not in ("-a", "-p", "-s") for arg in args)
    elif name == "hash":
        risky = any(arg.startswith("-") and "p" in arg for arg in args)
    return f"{text} {_STATE_CHANGE}" if risky else None


def _set_is_risky(args: Sequence[str]) -> bool:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-", "--") or len(arg) < 2 or arg[0] not in "-+":
            return False  # positional parameters follow
        for letter in arg[1:]:
            if letter == "o":
                i += 1
                if arg[0] == "-" and i < len(args) and args[i] not in _SAFE_SET_OPTIONS:
                    return True
            elif arg[0] == "-" and letter not in _SAFE_SET_LETTERS:
                return True
        i += 1
    return False


def _shopt_is_risky(args: Sequence[str]) -> bool:
    letters = "".join(arg[1:] for arg in args if arg.startswith("-"))
    names = [arg for arg in args if not arg.startswith("-")]
    safe = _SAFE_SET_OPTIONS if "o" in letters else _SAFE_SHOPT_OPTIONS
    return ("s" in letters or "u" in letters) and any(name not in safe for name in names)


_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(.*)\])?(?:\+?=|$)", re.DOTALL)


def name_and_subscript(text: str) -> tuple[str, str | None] | None:
    """``("a", "x")`` for ``a[x]`` or ``a[x]=1``, ``("IFS", None)`` for ``IFS`` or ``IFS=x``; None when
    ``text`` does not start with a variable name."""
    match = _NAME.match(text)
    return (match.group(1), match.group(2)) if match else None


def arithmetic_subscript(index: str | None) -> bool:
    """Whether bash evaluates this array subscript as arithmetic that may run code: any subscript but
    a number, ``@`` or ``*`` (a variable's value is evaluated again, ``$(...)`` included)."""
    if index is None:
        return False
    index = index.strip()
    return not (index.lstrip("-").isdigit() or index in ("@", "*"))


@dataclass(frozen=True)
class ScriptNotes:
    """What one command tells the parser about its whole script.

    Attributes:
        risky: reasons that make every command of the script risky (``SimpleCommand.risky``), in order.
        errors: reasons the input cannot be fully read (``ParsedShell.error``), in order.
    """

    risky: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


def declaration_notes(keyword: str, word: Word) -> ScriptNotes:
    """What one word of ``declare``/``export``/``local``/``readonly``/``typeset``/``unset`` changes.

    A name not known statically or a risky variable assigned (or unset: without ``PATH`` bash
    searches a default path ending in ``.``) makes every command risky; so does a nameref
    (``declare -n``), through which later assignments reach any variable. The integer attribute
    (``declare -i``) and arithmetic subscripts (``declare 'a[x]=1'``) evaluate values as arithmetic,
    which runs the ``$(...)`` a value may hold: an error.
    """
    text = word.text
    if not word.static:
        return ScriptNotes(risky=(f"{keyword} {text} may assign any variable",))
    if text[:1] in ("-", "+") and keyword in ("declare", "typeset", "local"):
        risky: tuple[str, ...] = ()
        errors: tuple[str, ...] = ()
        if "n" in text:
            risky = (f"{keyword} {text}: a nameref lets later assignments change any variable",)
        if "i" in text and text[0] == "-":
            errors = (
                f"{keyword} {text} makes assignments arithmetic, which runs the $(...) a value may hold",
            )
        return ScriptNotes(risky, errors)
    if (parsed := name_and_subscript(text)) is not None:
        return _named_variable(keyword, word, parsed, assigns=keyword == "unset" or "=" in text)
    return ScriptNotes()


def builtin_notes(name: str, words: Sequence[Word]) -> ScriptNotes:
    """What the command ``words`` (named ``name``) changes for the rest of its script, or runs as arithmetic.

    ``let`` with a variable or substitution in its arguments is an error; ``set``/``shopt``/``enable``/
    ``hash`` are judged by ``state_change``; the variables a builtin names (``read IFS``, ``printf -v``,
    ``test -v``: ``shell_argv.variable_operands``) as by ``declaration_notes``.
    """
    risky: list[str] = []
    errors: list[str] = []
    if name == "let" and any(c.isalpha() or c in "$`" for word in words[1:] for c in word.text):
        errors.append("let evaluates its arguments as arithmetic, which runs the $(...) a value may hold")
    if name in ("set", "shopt", "enable", "hash"):
        change = state_change(words)
        if change is not None:
            risky.append(change)
    for word in variable_operands(words) or ():
        if not word.static:
            risky.append(f"{name} {word.text} may assign any variable")
        elif (parsed := name_and_subscript(word.text)) is not None:
            notes = _named_variable(name, word, parsed, assigns=name not in ("test", "["))
            risky.extend(notes.risky)
            errors.extend(notes.errors)
    return ScriptNotes(tuple(risky), tuple(errors))


def _named_variable(
    command: str, word: Word, parsed: tuple[str, str | None], *, assigns: bool
) -> ScriptNotes:
    """A variable named by an argument (``read IFS``, ``printf -v 'a[x]'``, ``export 'PATH=x'``)."""
    name, subscript = parsed
    errors: tuple[str, ...] = ()
    if arithmetic_subscript(subscript):
        errors = (
            f"{command} {word.text}: the array subscript is evaluated as arithmetic, which runs the"
            " $(...) a value may hold",
        )
    reason = variable_risk(name, session=True) if assigns else None
    return ScriptNotes((f"{command} {word.text}: {reason}",) if reason is not None else (), errors)
