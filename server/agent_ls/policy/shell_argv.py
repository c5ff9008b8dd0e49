"""The argv side of shell parsing: shells, ``find -exec``, ``watch``, ``trap``, variable names.

``shell_parse`` turns the syntax tree into ``Word`` lists; the functions here read the commands that
run a script or another command (``bash -c``, ``watch``, ``find -exec``) and the builtins that assign
variables named by their arguments (``read``, ``printf -v``...). Option syntax follows GNU findutils,
procps-ng and the bash 5 builtins (``shell_options``). Exec wrappers (``env``, ``timeout``, ``sudo``...)
are read in ``shell_wrappers``, git in ``shell_git``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_ls.policy.shell_options import Options, scan_options
from agent_ls.policy.shell_words import Word

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})
_SYSTEM_BIN_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})


def system_bin_dir(directory: str) -> bool:
    """Whether a command run as ``DIRECTORY/name`` is the system's own ``name`` (``/usr/bin``...)."""
    return directory in _SYSTEM_BIN_DIRS


# -- commands that run a script or a command given as arguments ------------------------------------


@dataclass(frozen=True)
class ShellRun:
    """How a shell (``bash``, ``sh``...) gets its script.

    Attributes:
        script: the ``-c`` script word (may be non-static: the caller decides).
        from_stdin: the script is read from standard input (no ``-c`` and no file, or ``-s``/``-i``).
        error: why it cannot be told (a non-static option or file, ``-c`` without a script).
        Neither ``script`` nor ``from_stdin``: the shell runs a script file, or only prints (``--version``).
    """

    script: Word | None = None
    from_stdin: bool = False
    error: str | None = None


def shell_invocation(words: Sequence[Word]) -> ShellRun:
    """Read ``bash [options] [-c SCRIPT | FILE] [args]`` (bash 5 INVOCATION; sh, dash, zsh alike)."""
    name = words[0].text
    args = words[1:]
    has_c = from_stdin = False
    i = 0
    while i < len(args):
        word = args[i]
        if not word.static:
            return ShellRun(error=f"cannot tell what {name} runs: {word.text}")
        arg = word.text
        if arg in ("--", "-"):
            i += 1
            break
        if arg in ("--version", "--help"):
            return ShellRun()
        if arg in ("--rcfile", "--init-file"):
            i += 2
        elif arg.startswith("--"):
            i += 1
        elif len(arg) > 1 and arg[0] in "-+":
            letters = arg[1:]
            if arg[0] == "-":
                has_c = has_c or "c" in letters
                from_stdin = from_stdin or "s" in letters or "i" in letters
            i += 1 + letters.count("o") + letters.count("O")  # -o OPTION, -O SHOPT_OPTION
        else:
            break
    operands = args[i:]
    if has_c:
        return ShellRun(script=operands[0]) if operands else ShellRun(error=f"{name} -c without a script")
    if from_stdin or not operands:
        return ShellRun(from_stdin=True)
    if not operands[0].static:
        return ShellRun(error=f"cannot tell what {name} runs: {operands[0].text}")
    return ShellRun()


@dataclass(frozen=True)
class WatchRun:
    """What ``watch`` runs: argv (``watch -x``), or a script for ``sh -c`` made of its arguments joined."""

    exec_words: tuple[Word, ...] = ()
    script_words: tuple[Word, ...] = ()
    error: str | None = None


_WATCH = Options(
    flags="bcCdefgprtwxhv",
    valued="nq",
    long_flags=frozenset(
        {"beep", "color", "no-color", "differences", "errexit", "chgexit", "exec", "precise", "no-rerun",
         "no-title", "no-wrap", "no-linewrap", "help", "version"}
    ),
    long_valued=frozenset({"interval", "equexit"}),
)  # fmt: skip


def watch_command(words: Sequence[Word]) -> WatchRun | None:
    """Read ``watch [options] command...`` (procps-ng); None when there is no command."""
    scanned = scan_options("watch", words[1:], _WATCH)
    if scanned.error is not None:
        return WatchRun(error=scanned.error)
    rest = tuple(words[1 + scanned.index :])
    if not rest:
        return None
    if any(option in ("-x", "--exec") for option, _ in scanned.seen):
        return WatchRun(exec_words=rest)
    return WatchRun(script_words=rest)


def trap_script(words: Sequence[Word]) -> Word | None:
    """The script argument of ``trap SCRIPT SIGNAL...`` (bash builtin), or None when it sets none."""
    args = list(words[1:])
    if args and args[0].static and args[0].text == "--":
        args = args[1:]
    if len(args) < 2 or (args[0].static and (args[0].text in ("-", "-l", "-p") or args[0].text.isdigit())):
        return None
    return args[0]


_MAPFILE = Options(flags="t", valued="dnOsuCc")


def mapfile_callback(words: Sequence[Word]) -> bool:
    """Whether ``mapfile``/``readarray`` (bash builtin) has ``-C CALLBACK``, code run every few lines."""
    scanned = scan_options(words[0].text, words[1:], _MAPFILE)
    return scanned.error is not None or any(option == "-C" for option, _ in scanned.seen)


# Builtins that assign or test variables named by their arguments (bash 5: read, printf -v, getopts,
# mapfile, wait -p, unset, test -v).
_NAME_TAKING: dict[str, Options] = {
    "read": Options(flags="ers", valued="adinNptu"),
    "printf": Options(valued="v"),
    "getopts": Options(),
    "mapfile": _MAPFILE,
    "readarray": _MAPFILE,
    "wait": Options(flags="nf", valued="p"),
}


def variable_operands(words: Sequence[Word]) -> tuple[Word, ...] | None:
    """The words naming the variables a builtin assigns or tests, or None if ``words`` is no such builtin.

    ``read [-a NAME] NAME...``, ``printf -v NAME``, ``getopts OPTSTRING NAME``, ``mapfile``/``readarray
    [NAME]``, ``wait -p NAME``, ``test``/``[`` ``-v NAME``/``-R NAME``; ``unset`` is a declaration in the
    grammar. When the options cannot be read, every argument.
    """
    name = words[0].text
    args = list(words[1:])
    if name in ("test", "["):
        return tuple(
            args[i + 1] for i, word in enumerate(args[:-1]) if word.static and word.text in ("-v", "-R")
        )
    spec = _NAME_TAKING.get(name)
    if spec is None:
        return None
    scanned = scan_options(name, args, spec)
    if scanned.error is not None:
        return tuple(args)
    operands = args[scanned.index :]
    named_by = {"read": "-a", "printf": "-v", "wait": "-p"}.get(name)
    values = tuple(
        Word(value, static=option not in scanned.dynamic)
        for option, value in scanned.seen
        if option == named_by and value is not None
    )
    if name == "read":
        return (*values, *operands)
    if name == "getopts":
        return tuple(operands[1:2])
    if name in ("mapfile", "readarray"):
        return tuple(operands[:1])
    return values


@dataclass(frozen=True)
class FindRun:
    """The commands ``find`` runs (``-exec``/``-execdir``/``-ok``/``-okdir``, ``{}`` kept) and its risks."""

    segments: tuple[tuple[Word, ...], ...]
    risky: tuple[str, ...] = ()


def find_exec_segments(words: Sequence[Word]) -> FindRun:
    """Read the actions of ``find`` (GNU findutils): each ``-exec CMD ... ;`` or ``... {} +``."""
    segments: list[tuple[Word, ...]] = []
    risky: list[str] = []
    i = 1
    while i < len(words):
        arg = words[i].text if words[i].static else ""
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            segment: list[Word] = []
            i += 1
            while i < len(words):
                word = words[i]
                after_braces = bool(segment) and segment[-1].text == "{}"
                if word.static and (word.text == ";" or (word.text == "+" and after_braces)):
                    break
                segment.append(word)
                i += 1
            if segment:
                segments.append(tuple(segment))
        elif arg in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            risky.append(f"find {arg} writes a file")
        i += 1
    return FindRun(tuple(segments), tuple(risky))
