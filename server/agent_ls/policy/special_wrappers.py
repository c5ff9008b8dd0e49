"""Exec wrappers with a grammar of their own (``shell_wrappers`` lists the sources).

``env`` (``-S`` split as coreutils does), ``xargs``, ``su``/``runuser`` (``-c``, or arguments for the
user's shell), ``sg``, ``newgrp``, ``flock`` (``FILE -c SCRIPT``), ``runcon``, ``busybox``/``toybox`` applets,
``strace`` (``-o |CMD``), ``gdb`` (``--args``, ``-ex 'shell CMD'``), ``valgrind`` and ``firejail``
(every option in one word), ``perf record|stat|trace``, ``at``/``batch`` (commands on standard
input), GNU ``parallel`` (shell code, or ``::: CMD...``), and the runners whose option takes shell code
(``npx -c``, ``npm exec --call``, ``nix-shell --run``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent_ls.policy.shell_options import Options, scan_options
from agent_ls.policy.shell_words import Word
from agent_ls.policy.wrapper_grammar import (
    AS_USER,
    LATER,
    SHELL,
    WRITES,
    Unwrapped,
    WrapperSpec,
    options,
    read_wrapper,
    strip_assignments,
)

_SU = options(
    "flmpP",
    "cgGsw",
    long_flags="fast login preserve-environment pty",
    long_valued="command session-command group supp-group shell whitelist-environment",
    dash_alone=True,
)
_SU_SPEC = WrapperSpec(
    Options(
        _SU.flags,
        _SU.valued + "u",
        long_flags=_SU.long_flags,
        long_valued=_SU.long_valued | {"user"},
        dash_alone=True,
    ),
    script=frozenset({"-c", "--command", "--session-command"}),
    risky=AS_USER,
)


# -- wrappers read by their own function -----------------------------------------------------------

_ENV = options(
    "i0v",
    "uCS",
    long_flags="ignore-environment null debug list-signal-handling block-signal default-signal ignore-signal",
    long_valued="unset chdir split-string",
    dash_alone=True,
)


def _env(words: Sequence[Word]) -> Unwrapped:
    scanned = scan_options("env", words[1:], _ENV)
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    if scanned.has("--help", "--version"):
        return Unwrapped(())
    risky: list[str] = []
    if scanned.has("-C", "--chdir"):
        # The command then resolves relative paths from another directory than the one the
        # permission checks use (found by an adversarial review: "env -C /proc/self cat environ").
        risky.append("env -C changes the directory the command's paths are relative to")
    rest = tuple(words[1 + scanned.index :])
    split = [value for option, value in scanned.seen if option in ("-S", "--split-string")]
    if split:
        if scanned.dynamic & {"-S", "--split-string"}:
            return Unwrapped((), error="the string of env -S is not static")
        parts: list[Word] = []
        for value in split:
            words_of = env_split_string(value or "")
            if words_of is None:
                return Unwrapped((), error=f"env -S {value!r} cannot be read (a variable or an open quote)")
            parts.extend(Word(part) for part in words_of)
        rest = (*parts, *rest)
    return Unwrapped(strip_assignments(rest, risky), tuple(risky))


_ENV_S_ESCAPES = {
    "\\": "\\",
    '"': '"',
    "'": "'",
    "_": " ",
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "f": "\f",
    "v": "\v",
    "#": "#",
    "$": "$",
}


def env_split_string(text: str) -> list[str] | None:
    """The words of ``env -S TEXT`` (coreutils 9.1 ``env.c`` ``build_argv``), or None when they depend on
    the environment (``${VAR}``) or the string cannot be read (an open quote, an unknown escape).

    Blanks separate words; ``'...'`` is literal; in ``"..."`` and outside quotes ``\\`` escapes one of
    ``\\ " ' _ n t r f v # $`` (``\\_`` is a space; ``\\c`` ends the string outside quotes); ``#`` at a
    word's start comments out the rest.
    """
    words: list[str] = []
    current: list[str] = []
    started = False
    quote = ""
    i = 0
    while i < len(text):
        char = text[i]
        if quote == "'":
            if char == "'":
                quote = ""
            else:
                current.append(char)
        elif char == "\\" and i + 1 < len(text):
            escape = text[i + 1]
            i += 1
            if escape == "c" and not quote:
                break
            if escape not in _ENV_S_ESCAPES:
                return None
            current.append(_ENV_S_ESCAPES[escape])
            started = True
        elif char == "$":
            return None
        elif quote == '"':
            if char == '"':
                quote = ""
            else:
                current.append(char)
        elif char in "'\"":
            quote = char
            started = True
        elif char in " \t\n\v\f\r":
            if started or current:
                words.append("".join(current))
            current, started = [], False
        elif char == "#" and not (started or current):
            break
        else:
            current.append(char)
        i += 1
    if quote:
        return None
    if started or current:
        words.append("".join(current))
    return words


_XARGS = options(
    "0rtpxo",
    "aEdILnPs",
    "eil",
    long_flags="null no-run-if-empty verbose interactive exit open-tty show-limits eof replace max-lines",
    long_valued="arg-file delimiter max-args max-procs max-chars process-slot-var",
)


def _xargs(words: Sequence[Word]) -> Unwrapped:
    scanned = scan_options("xargs", words[1:], _XARGS)
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    if scanned.has("--help", "--version"):
        return Unwrapped(())
    placeholder = None
    for option, value in scanned.seen:
        if option in ("-I", "-i", "--replace"):
            placeholder = value or "{}"
    command = tuple(words[1 + scanned.index :]) or (Word("echo"),)  # xargs with no command runs echo
    return Unwrapped(command, placeholder=placeholder, inner_stdin_unknown=True)


def _su(words: Sequence[Word]) -> Unwrapped:
    """``su``/``runuser [options] [-] [USER [ARG...]]``: ``-c SCRIPT``, or the arguments given to the
    user's shell; ``runuser -u USER [--] COMMAND...`` runs COMMAND."""
    name = words[0].text
    spec = _SU_SPEC  # su's options, and runuser's -u
    scanned = scan_options(name, words[1:], spec.options)
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    if scanned.has("--help", "--version"):
        return Unwrapped(())
    unwrapped = read_wrapper(name, words, spec)
    rest = tuple(words[1 + scanned.index :])
    if unwrapped.words[:2] == (Word("sh"), Word("-c")) or (name == "runuser" and scanned.has("-u", "--user")):
        return Unwrapped(unwrapped.words or SHELL, (AS_USER,))
    return Unwrapped((*SHELL, *rest[1:]), (AS_USER,))  # the user's shell gets the arguments


def _sg(words: Sequence[Word]) -> Unwrapped:
    """``sg [-] GROUP [[-c] SCRIPT]`` (shadow): the script runs with ``/bin/sh -c``."""
    rest = list(words[1:])
    if rest and rest[0].static and rest[0].text == "-":
        rest = rest[1:]
    rest = rest[1:]  # the group
    if rest and rest[0].static and rest[0].text == "-c":
        rest = rest[1:]
    if not rest:
        return Unwrapped(SHELL, (AS_USER,))
    if len(rest) > 1:
        return Unwrapped((), error="sg takes one command string")
    return Unwrapped((Word("sh"), Word("-c"), rest[0]), (AS_USER,))


_FLOCK = options(
    "sexnoFu",
    "wE",
    long_flags="shared exclusive unlock nonblock nb no-fork close verbose",
    long_valued="timeout wait conflict-exit-code",
)


def _flock(words: Sequence[Word]) -> Unwrapped:
    """``flock [options] FILE COMMAND...``, ``flock [options] FILE -c SCRIPT``, ``flock [options] FD``
    (util-linux: ``-c`` comes after FILE and takes exactly one word). FILE is created when missing."""
    scanned = scan_options("flock", words[1:], _FLOCK)
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    rest = tuple(words[1 + scanned.index :])
    if scanned.has("--help", "--version") or len(rest) < 2:
        return Unwrapped(())
    risky = (f"flock creates its lock file {rest[0].text}",)
    if rest[1].static and rest[1].text in ("-c", "--command"):
        if len(rest) != 3:
            return Unwrapped((), error="flock -c takes exactly one command string")
        return Unwrapped((Word("sh"), Word("-c"), rest[2]), risky)
    return Unwrapped(rest[1:], risky)


_RUNCON = options("c", "rtul", long_flags="compute", long_valued="role type user range")


def _runcon(words: Sequence[Word]) -> Unwrapped:
    """``runcon CONTEXT COMMAND...`` or ``runcon [-c] [-u U] [-r R] [-t T] [-l L] COMMAND...``
    (coreutils: the first operand is the whole context unless one of these options is given)."""
    given = scan_options("runcon", words[1:], _RUNCON).seen
    spec = WrapperSpec(
        _RUNCON, leading=0 if given else 1, risky="runs the command in another SELinux context"
    )
    return read_wrapper("runcon", words, spec)


def _applet(words: Sequence[Word]) -> Unwrapped:
    """``busybox APPLET [ARG...]``, ``toybox APPLET [ARG...]``: the applet is the command."""
    if len(words) < 2 or not words[1].static or words[1].text.startswith("-"):
        return Unwrapped(())  # --list, --help, --install: runs no command
    return Unwrapped(tuple(words[1:]))


_STRACE = options(
    "AcCdDfFhiknqrtTvVwxyzZY",
    "abeEIoOpPsSuUX",
    long_flags="follow-forks output-separately summary-only summary seccomp-bpf instruction-pointer "
    "stack-traces syscall-number relative-timestamps absolute-timestamps syscall-times no-abbrev "
    "strings-in-hex decode-fds decode-pids successful-only failed-only summary-wall-clock daemonize "
    "output-append-mode debug tips",
    long_valued="output trace signal status abbrev verbose raw read write quiet env attach user detach-on "
    "interruptible trace-path columns string-limit const-print-style summary-syscall-overhead "
    "summary-sort-by summary-columns inject fault kvm",
)


def _strace(words: Sequence[Word]) -> Unwrapped:
    unwrapped = read_wrapper(
        "strace", words, WrapperSpec(_STRACE, runs_nothing=frozenset({"-p", "--attach"}))
    )
    if unwrapped.error is not None:
        return unwrapped
    output = scan_options("strace", words[1:], _STRACE).value("-o", "--output")
    if output is None:
        return unwrapped
    if output.startswith(("|", "!")):  # the output is piped to a shell command
        reason = "strace -o |CMD pipes its output to a command"
        return Unwrapped(unwrapped.words, (*unwrapped.risky, reason), scripts=(Word(output[1:]),))
    return Unwrapped(unwrapped.words, (*unwrapped.risky, "strace -o writes a file"))


def _gdb(words: Sequence[Word]) -> Unwrapped:
    """``gdb [options] --args PROGRAM [ARG...]`` runs PROGRAM; gdb's own commands (``-ex``, ``-x``, init
    files) can run anything, so it is always risky; ``-ex 'shell CMD'`` and ``-ex '!CMD'`` run CMD."""
    scripts: list[Word] = []
    for i, word in enumerate(words[1:-1], start=1):
        option = "-" + word.text.lstrip("-").partition("=")[0]
        if word.static and option in ("-ex", "-eval-command", "-iex", "-init-eval-command"):
            command = words[i + 1].text.strip()
            for prefix in ("shell ", "!", "pipe "):
                if command.startswith(prefix):
                    scripts.append(Word(command[len(prefix) :], static=words[i + 1].static))
    risky = ("gdb runs the debugger commands of its options and init files",)
    for i, word in enumerate(words[1:], start=1):
        if word.static and word.text in ("--args", "-args"):
            return Unwrapped(tuple(words[i + 1 :]), risky, scripts=tuple(scripts))
    return Unwrapped((), risky, scripts=tuple(scripts))


def _dash_options_only(words: Sequence[Word], writes: tuple[str, ...]) -> Unwrapped:
    """Wrappers whose options all keep their value in the same word (``valgrind --log-file=x``,
    ``firejail --private=dir``): the command is the first word that is not an option."""
    risky: list[str] = []
    for i, word in enumerate(words[1:], start=1):
        if not word.static or not word.text.startswith("-"):
            return Unwrapped(tuple(words[i:]), tuple(risky))
        if word.text == "--":
            return Unwrapped(tuple(words[i + 1 :]), tuple(risky))
        if word.text.partition("=")[0] in ("--help", "--version", "-h"):
            return Unwrapped(())
        if word.text.startswith(writes):
            risky.append(f"{words[0].text} {word.text.partition('=')[0]} writes a file or runs a program")
    return Unwrapped((), tuple(risky))


_PERF = options(
    "agqvnisTPWRdBNbAcx",
    "eFcCpGtomjuDrIkS",
    "z",
    long_flags="all-cpus no-inherit quiet verbose stat timestamp period weight raw-samples data no-buildid "
    "no-buildid-cache branch-any per-thread group no-samples detailed scale big-num summary no-aggr "
    "per-socket per-core per-thread per-node metric-only dry-run null all-user all-kernel",
    long_valued="event freq count cpu pid cgroup tid output mmap-pages branch-filter uid delay realtime "
    "call-graph repeat interval-print field-separator log-fd pre post filter clockid metrics",
)


def _perf(words: Sequence[Word]) -> Unwrapped:
    """``perf record|stat|trace [options] COMMAND...``; other subcommands run no command."""
    if len(words) < 2 or not words[1].static or words[1].text not in ("record", "stat", "trace"):
        return Unwrapped(())
    spec = WrapperSpec(
        _PERF,
        runs_nothing=frozenset({"-p", "--pid", "-t", "--tid", "-a", "--all-cpus", "--dry-run"}),
        risky="perf record writes perf.data" if words[1].text == "record" else None,
        risky_options={"-o": WRITES, "--output": WRITES},
    )
    return read_wrapper(f"perf {words[1].text}", words[1:], spec)


_AT = options("VmMlvdrcbK", "qftu")


def _at(words: Sequence[Word]) -> Unwrapped:
    """``at``/``batch``: the commands come from standard input (or ``-f FILE``) and run later, via atd."""
    scanned = scan_options(words[0].text, words[1:], _AT)
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    if scanned.has("-l", "-d", "-r", "-c", "-V", "--help", "--version"):
        return Unwrapped(())
    script = scanned.value("-f")
    return Unwrapped((Word("sh"), Word(script)) if script is not None else SHELL, (LATER,))


_PARALLEL = options(
    "0kvqtuXmeEgGr",
    "jNnIaCdPS",
    long_flags="keep-order bar progress quote verbose null dry-run tag "
    "line-buffer will-cite no-notice eta shuf group ungroup pipe files xargs no-run-if-empty",
    long_valued="jobs max-args halt colsep arg-file delimiter delay timeout retries joblog results "
    "nice env sshlogin block tmpdir max-procs eof",
)
_PARALLEL_SEPARATORS = frozenset({":::", "::::", ":::+", "::::+"})


def _parallel(words: Sequence[Word]) -> Unwrapped:
    """GNU parallel: the command words are shell code, ``{}``-style placeholders filled at run time;
    with no command, each argument after ``:::`` is a command line."""
    scanned = scan_options("parallel", words[1:], _PARALLEL)
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    if scanned.has("--help", "--version"):
        return Unwrapped(())
    risky = ["parallel runs commands on other hosts"] if scanned.has("-S", "--sshlogin") else []
    if scanned.has("--joblog", "--results"):
        risky.append(f"parallel {WRITES}")
    rest = list(words[1 + scanned.index :])
    command = []
    while rest and not (rest[0].static and rest[0].text in _PARALLEL_SEPARATORS):
        command.append(rest.pop(0))
    if command:
        text = " ".join(word.text for word in command)
        static = all(word.static for word in command) and "{" not in text
        return Unwrapped((), tuple(risky), scripts=(Word(text, static=static),))
    if any(word.static and word.text.startswith("::::") for word in rest) or not rest:
        return Unwrapped((), error="parallel reads its commands from a file or standard input")
    return Unwrapped((), tuple(risky), scripts=tuple(w for w in rest if w.text not in _PARALLEL_SEPARATORS))


def _script_option(
    options: tuple[str, ...], *, subcommand: str | None = None
) -> Callable[[Sequence[Word]], Unwrapped]:
    """Runners whose option ``options`` takes shell code (``npx -c CMD``, ``nix-shell --run CMD``); any
    other form runs a command by argv and is left to the rules and ``wrapped_rules``."""

    def read(words: Sequence[Word]) -> Unwrapped:
        args = list(words[1:])
        if subcommand is not None:
            if not args or args[0].text not in subcommand.split():
                return Unwrapped(())
            args = args[1:]
        scripts: list[Word] = []
        for i, word in enumerate(args):
            option, equals, value = word.text.partition("=")
            if word.static and option in options:
                if equals:
                    scripts.append(Word(value))
                elif i + 1 < len(args):
                    scripts.append(args[i + 1])
        return Unwrapped((), scripts=tuple(scripts))

    return read


SPECIAL: dict[str, Callable[[Sequence[Word]], Unwrapped]] = {
    "env": _env,
    "xargs": _xargs,
    "flock": _flock,
    "runcon": _runcon,
    "su": _su,
    "runuser": _su,
    "sg": _sg,
    "newgrp": lambda words: Unwrapped(SHELL, (AS_USER,)),
    "busybox": _applet,
    "toybox": _applet,
    "strace": _strace,
    "gdb": _gdb,
    "valgrind": lambda words: _dash_options_only(
        words, ("--log-file", "--xml-file", "--log-socket", "--db-command")
    ),
    "firejail": lambda words: _dash_options_only(words, ("--output",)),
    "perf": _perf,
    "at": _at,
    "batch": _at,
    "parallel": _parallel,
    "npx": _script_option(("-c", "--call")),
    "npm": _script_option(("-c", "--call"), subcommand="exec x"),
    "nix-shell": _script_option(("--run", "--command")),
}
