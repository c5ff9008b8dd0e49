"""The argv side of shell parsing: words, transparent wrappers, ``find -exec``, ``watch``, git options.

``shell_parse`` turns the syntax tree into ``Word`` lists; the functions here read the options of the
commands that run other commands, so that ``timeout 5 env X=1 rm x`` is judged as ``rm x`` and
``git -C dir push`` as ``git push``. Option syntax follows GNU coreutils/findutils/procps-ng and git's
``git.c`` (global options are matched exactly; subcommand long options may be abbreviated, as git's
parse-options allows). An option a wrapper does not document is an error, never a guess: guessing
wrong whether it takes a value would shift which word is the command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_ls.policy.shell_words import Word

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})
_SYSTEM_BIN_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})

# Variables that make a program run other code, load libraries or write files: set as a command prefix
# they make that command risky; assigned on their own (or exported) they make every command risky.
_RISKY_VARIABLES = frozenset(
    {
        "PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS",
        "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "EDITOR", "VISUAL",
        "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND",
        "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR",
        "NODE_OPTIONS", "PERL5OPT", "RUBYOPT",
    }
)  # fmt: skip
_RISKY_VARIABLE_PREFIXES = ("LD_", "DYLD_", "GIT_CONFIG", "GIT_TRACE")

# git configuration keys whose value is a program to run, or that pull in other configuration.
_RISKY_GIT_KEYS = frozenset(
    {"core.pager", "core.sshcommand", "core.editor", "core.fsmonitor", "core.hookspath", "core.askpass",
     "core.gitproxy", "diff.external", "sequence.editor", "gpg.program", "credential.helper",
     "uploadpack.packobjectshook"}
)  # fmt: skip
_RISKY_GIT_KEY_PREFIXES = ("pager.", "alias.", "filter.", "include.", "includeif.", "credential.")
_RISKY_GIT_KEY_SUFFIXES = (".command", ".driver", ".textconv", ".program", ".cmd", ".helper")
# Subcommand options that run a program or write a file (matched as abbreviations too).
_RISKY_GIT_LONG = ("ext-diff", "output", "upload-pack", "receive-pack", "exec", "open-files-in-pager")


def is_risky_variable(name: str) -> bool:
    """Whether assigning ``name`` can make programs run other code (``PATH``, ``GIT_PAGER``...)."""
    return name in _RISKY_VARIABLES or name.startswith(_RISKY_VARIABLE_PREFIXES)


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


def _scan(name: str, args: Sequence[Word], spec: _Options) -> _Scanned:
    seen: list[tuple[str, str | None]] = []
    i = 0
    while i < len(args):
        word = args[i]
        arg = word.text
        if not word.static or not arg.startswith("-") or (arg == "-" and not spec.dash_alone):
            break
        if arg == "--":
            return _Scanned(i + 1, tuple(seen))
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
                    i += 1
                seen.append((f"-{letter}", attached or None))
                break
            else:
                return _Scanned(i, tuple(seen), f"unknown option of {name}: -{letter}")
        i += 1
    return _Scanned(i, tuple(seen))


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
        while rest and _assignment_name(rest[0]) is not None:
            variable = _assignment_name(rest[0]) or ""
            if is_risky_variable(variable):
                risky.append(f"{variable}= can make the program run other code")
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


# -- git -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GitNormal:
    """``git`` argv with its global options removed (``git <subcommand> ...``), and why it is risky."""

    words: tuple[Word, ...]
    risky: tuple[str, ...] = ()


_GIT_GLOBAL_FLAGS = frozenset(
    {"-P", "--no-pager", "--bare", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
     "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch", "--no-advice"}
)  # fmt: skip
_GIT_GLOBAL_VALUED = frozenset(
    {"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source"}
)


def git_normalize(words: Sequence[Word]) -> GitNormal:
    """Drop git's global options (``git.c`` handle_options) and note those that run or write."""
    risky: list[str] = []
    i = 1
    while i < len(words) and words[i].static:
        arg = words[i].text
        option, equals, value = arg.partition("=")
        if arg in ("-c", "--config-env") or option == "--config-env":
            if not equals:
                i += 1
                value = words[i].text if i < len(words) else ""
            risky.append(f"git {option} {value} changes configuration")
        elif arg in ("-p", "--paginate"):
            risky.append(f"git {arg} runs a pager")
        elif option == "--exec-path":
            risky.append("git --exec-path changes where git finds its programs")
        elif arg in _GIT_GLOBAL_FLAGS:
            pass
        elif option in _GIT_GLOBAL_VALUED:
            i += 0 if equals else 1
        else:
            break
        i += 1
    args = tuple(words[i + 1 :])
    subcommand = words[i].text if i < len(words) and words[i].static else ""
    for word in args:
        arg = word.text
        if not word.static:
            continue
        if arg.startswith("--") and len(arg) > 2:
            name = arg[2:].partition("=")[0]
            if any(long.startswith(name) for long in _RISKY_GIT_LONG):
                risky.append(f"git {subcommand} {arg} can run a program or write a file")
        elif subcommand == "grep" and arg.startswith("-O"):
            risky.append("git grep -O runs a program")
        if subcommand == "config" and _risky_git_key(arg):
            risky.append(f"git config {arg} sets a program to run")
    if word_glob := [word.text for word in args if word.glob]:
        risky.append(f"git arguments with patterns may expand to options: {' '.join(word_glob)}")
    return GitNormal((words[0], *words[i:]), tuple(risky))


def _risky_git_key(arg: str) -> bool:
    key = arg.partition("=")[0].lower()
    return (
        key in _RISKY_GIT_KEYS
        or key.startswith(_RISKY_GIT_KEY_PREFIXES)
        or key.endswith(_RISKY_GIT_KEY_SUFFIXES)
    )
