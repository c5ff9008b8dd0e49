"""The argv side of shell parsing: transparent wrappers, ``find -exec``, ``watch``, variable names.

``shell_parse`` turns the syntax tree into ``Word`` lists; the functions here read the options of the
commands that run other commands, so that ``timeout 5 env X=1 rm x`` is judged as ``rm x``, and of the
builtins that assign variables named by their arguments (``read``, ``printf -v``...). Option syntax
follows GNU coreutils/findutils/procps-ng and the bash 5 builtins. An option a wrapper does not
document is an error, never a guess: guessing wrong whether it takes a value would shift which word is
the command. git is read in ``shell_git``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_ls.policy.shell_state import variable_risk
from agent_ls.policy.shell_words import Word

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})
_SYSTEM_BIN_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})


def system_bin_dir(directory: str) -> bool:
    """Whether a command run as ``DIRECTORY/name`` is the system's own ``name`` (``/usr/bin``...)."""
    return directory in _SYSTEM_BIN_DIRS


# -- option scanning -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Options:
    flags: str = ""  # short options without a value
    valued: str = ""  # short options with a value (attached or next word)
    optional: str = ""  # short options with an optional attached value (xargs -i, -l, -e)
    long_flags: frozenset[str] = frozenset()  # also accept "--name=value" (optional value)
    long_valued: frozenset[str] = frozenset()  # "--name value" or "--name=value"
    numeric: bool = False  # "-10" is an option (nice)
    dash_alone: bool = False  # "-" is an option (env)


@dataclass(frozen=True)
class _Scanned:
    index: int  # of the first operand
    seen: tuple[tuple[str, str | None], ...]  # options in order, as ("-n", "5") or ("--signal", "KILL")
    error: str | None = None
    dynamic: frozenset[str] = frozenset()  # options whose value is a word not known statically


def _scan(name: str, args: Sequence[Word], spec: _Options) -> _Scanned:
    seen: list[tuple[str, str | None]] = []
    dynamic: set[str] = set()
    i = 0
    while i < len(args):
        word = args[i]
        arg = word.text
        if not word.static or not arg.startswith("-") or (arg == "-" and not spec.dash_alone):
            break
        if arg == "--":
            return _Scanned(i + 1, tuple(seen), dynamic=frozenset(dynamic))
        if arg == "-" or (spec.numeric and arg.lstrip("-").isdigit()):
            seen.append((arg, None))
            i += 1
            continue
        if arg.startswith("--"):
            option, equals, value = arg.partition("=")
            if option[2:] in spec.long_valued:
                if not equals:
                    if i + 1 >= len(args):
                        return _Scanned(len(args), tuple(seen), f"{name} {option} needs a value")
                    value = args[i + 1].text
                    if not args[i + 1].static:
                        dynamic.add(option)
                    i += 1
                seen.append((option, value))
            elif option[2:] in spec.long_flags:
                seen.append((option, value if equals else None))
            else:
                return _Scanned(i, tuple(seen), f"unknown option of {name}: {option}")
            i += 1
            continue
        j = 1
        while j < len(arg):
            letter = arg[j]
            if letter in spec.flags:
                seen.append((f"-{letter}", None))
                j += 1
            elif letter in spec.valued or letter in spec.optional:
                attached = arg[j + 1 :]
                if not attached and letter in spec.valued:
                    if i + 1 >= len(args):
                        return _Scanned(len(args), tuple(seen), f"{name} -{letter} needs a value")
                    attached = args[i + 1].text
                    if not args[i + 1].static:
                        dynamic.add(f"-{letter}")
                    i += 1
                seen.append((f"-{letter}", attached or None))
                break
            else:
                return _Scanned(i, tuple(seen), f"unknown option of {name}: -{letter}")
        i += 1
    return _Scanned(i, tuple(seen), dynamic=frozenset(dynamic))


# -- transparent wrappers --------------------------------------------------------------------------


@dataclass(frozen=True)
class Unwrapped:
    """The command a wrapper runs.

    Attributes:
        words: that command's words; empty when the wrapper runs none (``env``, ``command -v x``):
            the wrapper is then judged as written.
        risky: reasons the wrapper itself adds (``time -o FILE`` writes a file).
        error: why the wrapper could not be read (an undocumented option, ``env -S``).
        placeholder: a string the wrapper replaces at run time (``xargs -I {}``).
        inner_stdin_unknown: the command's standard input is not the wrapper's (xargs).
    """

    words: tuple[Word, ...]
    risky: tuple[str, ...] = ()
    error: str | None = None
    placeholder: str | None = None
    inner_stdin_unknown: bool = False


_ENV_LONG_FLAGS = frozenset(
    {"ignore-environment", "null", "debug", "list-signal-handling", "block-signal", "default-signal",
     "ignore-signal"}
)  # fmt: skip
_XARGS_LONG_FLAGS = frozenset(
    {"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "show-limits", "eof", "replace",
     "max-lines"}
)  # fmt: skip
_XARGS_LONG_VALUED = frozenset(
    {"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}
)
_WRAPPERS: dict[str, _Options] = {
    "env": _Options(
        flags="i0v",
        valued="uCS",
        long_flags=_ENV_LONG_FLAGS,
        long_valued=frozenset({"unset", "chdir", "split-string"}),
        dash_alone=True,
    ),
    "command": _Options(flags="pvV"),
    "builtin": _Options(),
    "exec": _Options(flags="cl", valued="a"),
    "nohup": _Options(),
    "coproc": _Options(),
    "nice": _Options(valued="n", long_valued=frozenset({"adjustment"}), numeric=True),
    "timeout": _Options(
        flags="vfp",
        valued="sk",
        long_flags=frozenset({"preserve-status", "foreground", "verbose"}),
        long_valued=frozenset({"signal", "kill-after"}),
    ),
    "time": _Options(
        flags="pvaq",
        valued="fo",
        long_flags=frozenset({"verbose", "append", "portability", "quiet"}),
        long_valued=frozenset({"format", "output"}),
    ),
    "stdbuf": _Options(valued="ioe", long_valued=frozenset({"input", "output", "error"})),
    "xargs": _Options(
        flags="0rtpxo",
        valued="aEdILnPs",
        optional="eil",
        long_flags=_XARGS_LONG_FLAGS,
        long_valued=_XARGS_LONG_VALUED,
    ),
}


def unwrap(words: Sequence[Word]) -> Unwrapped | None:
    """The command run by a transparent wrapper (``env``, ``timeout``, ``xargs``...), or None if
    ``words[0]`` is not one. ``sudo`` is not a wrapper: ``sudo *`` rules must see it."""
    name = words[0].text
    spec = _WRAPPERS.get(name)
    if spec is None:
        return None
    scanned = _scan(name, words[1:], spec)
    rest = tuple(words[1 + scanned.index :])
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    options = dict(scanned.seen)
    risky: list[str] = []
    if name == "env":
        if "-S" in options or "--split-string" in options:
            return Unwrapped((), error="env -S (split a string into a command) is not supported")
        if "-C" in options or "--chdir" in options:
            # The command then resolves relative paths from another directory than the one the
            # permission checks use (found by an adversarial review: "env -C /proc/self cat environ").
            risky.append("env -C changes the directory the command's paths are relative to")
        while rest and _assignment_name(rest[0]) is not None:
            reason = variable_risk(_assignment_name(rest[0]) or "", session=False)
            if reason is not None:
                risky.append(reason)
            rest = rest[1:]
    elif name == "command" and ("-v" in options or "-V" in options):
        return Unwrapped(())  # a lookup, not a run
    elif name == "timeout":
        rest = rest[1:]  # the duration
    elif name == "time" and ("-o" in options or "--output" in options):
        risky.append("time -o writes a file")
    elif name == "xargs":
        return _xargs(rest, scanned.seen)
    return Unwrapped(rest, tuple(risky))


def _xargs(rest: tuple[Word, ...], seen: Sequence[tuple[str, str | None]]) -> Unwrapped:
    placeholder = None
    for option, value in seen:
        if option in ("-I", "-i", "--replace"):
            placeholder = value or "{}"
    command = rest or (Word("echo"),)  # xargs with no command runs echo
    return Unwrapped(command, placeholder=placeholder, inner_stdin_unknown=True)


def _assignment_name(word: Word) -> str | None:
    name, equals, _ = word.text.partition("=")
    if equals and name and (name[0].isalpha() or name[0] == "_") and name.replace("_", "a").isalnum():
        return name
    return None


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


_WATCH = _Options(
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
    scanned = _scan("watch", words[1:], _WATCH)
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


_MAPFILE = _Options(flags="t", valued="dnOsuCc")


def mapfile_callback(words: Sequence[Word]) -> bool:
    """Whether ``mapfile``/``readarray`` (bash builtin) has ``-C CALLBACK``, code run every few lines."""
    scanned = _scan(words[0].text, words[1:], _MAPFILE)
    return scanned.error is not None or any(option == "-C" for option, _ in scanned.seen)


# Builtins that assign or test variables named by their arguments (bash 5: read, printf -v, getopts,
# mapfile, wait -p, unset, test -v).
_NAME_TAKING: dict[str, _Options] = {
    "read": _Options(flags="ers", valued="adinNptu"),
    "printf": _Options(valued="v"),
    "getopts": _Options(),
    "mapfile": _MAPFILE,
    "readarray": _MAPFILE,
    "wait": _Options(flags="nf", valued="p"),
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
    scanned = _scan(name, args, spec)
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
