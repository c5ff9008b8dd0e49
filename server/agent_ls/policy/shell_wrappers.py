"""Exec wrappers: programs that run a command given as their arguments, and the command each runs.

``unwrap(words)`` reads a wrapper's options (``shell_options``) and returns the command it runs, so that
``timeout 5 setsid env X=1 rm x`` is judged as ``rm x``; the parser keeps each wrapper's own argv in
``SimpleCommand.wrappers``, where deny and ask rules still see it (``sudo *``). A wrapper that changes
the user, the root directory, the namespaces or the security context, or that runs the command later
or outside the sandbox, makes it "risky": never auto-allowed. One that runs a shell (``su`` without
``-c``, ``chroot DIR``, ``unshare``) runs ``sh``, which reads its script from standard input (a heredoc
is parsed; anything else cannot be read).

The list, and where each grammar comes from (the ``--help`` and manual page of the version named):

- GNU coreutils 9.1: ``env`` (``-S`` split as env does, ``-C`` risky), ``nice``, ``nohup``, ``timeout``,
  ``stdbuf``, ``chroot``, ``runcon``; bash 5.2 builtins and keywords: ``command``, ``builtin``,
  ``exec``, ``coproc``, ``time`` (and GNU time 1.9's ``-o``); GNU findutils 4.9: ``xargs``.
- util-linux 2.38: ``setsid``, ``taskset``, ``ionice``, ``chrt``, ``flock`` (``FILE -c SCRIPT``),
  ``unshare``, ``nsenter``, ``setpriv``, ``script -c``, ``runuser``, ``su`` (``-c``, or arguments
  given to the shell), ``prlimit``, ``setarch``/``linux32``/``linux64``/``i386``/``x86_64``/``uname26``,
  ``choom``, ``uclampset``; shadow 4.13: ``sg``, ``newgrp``.
- sudo 1.9, OpenDoas 6.8 (``doas``), polkit 122 (``pkexec``).
- BusyBox 1.36 and toybox 0.8 (``busybox APPLET ...``, ``toybox APPLET ...``); procps-ng's ``watch``
  is read in ``shell_argv``.
- tracers and debuggers: strace 6.1 (``-o |CMD`` runs a command), ltrace 0.7, gdb 13 (``--args``;
  ``-ex 'shell CMD'``), valgrind 3.19, perf 6.1 (``record``, ``stat``, ``trace``), glibc's
  ``catchsegv``.
- job and session runners: ``at``/``batch`` (at 3.2: commands on standard input, run later by atd,
  outside the sandbox), GNU parallel 20221122 (the command is shell code; with none, each argument
  after ``:::`` is one), systemd-run 252, ``dbus-run-session`` 1.14, OpenSSH 9.2 ``ssh-agent``,
  ``fakeroot`` 1.31, firejail 0.9.72, ``npx``/``npm exec`` ``-c``/``--call`` (npm 9), ``nix-shell``
  ``--run``/``--command``.

Package runners that run a command by argv (``uv run``, ``poetry run``, ``npx prettier``...) are not
unwrapped: an allow rule names them as written (``uv run pytest*``), and ``wrapped_rules`` finds a
command a deny rule names among their arguments. ``sudo`` is unwrapped with its own argv kept, so the
``sudo *`` rule still applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from agent_ls.policy.shell_options import Options, scan_options
from agent_ls.policy.shell_state import variable_risk
from agent_ls.policy.shell_words import Word


@dataclass(frozen=True)
class Unwrapped:
    """The command a wrapper runs.

    Attributes:
        words: that command's words; empty when the wrapper runs none (``env``, ``command -v x``,
            ``taskset -p 1``): the wrapper is then judged as written.
        risky: reasons the wrapper itself adds (``time -o FILE`` writes a file, ``sudo`` changes user).
        error: why the wrapper could not be read (an undocumented option, a script not static).
        placeholder: a string the wrapper replaces at run time (``xargs -I {}``).
        inner_stdin_unknown: the command's standard input is not the wrapper's (xargs).
        scripts: shell scripts the wrapper also runs (``strace -o '|CMD'``, ``npx -c CMD``,
            ``parallel ::: CMD``), each parsed as ``sh -c`` would.
    """

    words: tuple[Word, ...]
    risky: tuple[str, ...] = ()
    error: str | None = None
    placeholder: str | None = None
    inner_stdin_unknown: bool = False
    scripts: tuple[Word, ...] = ()


_SHELL = (Word("sh"),)  # an interactive shell: reads its script from standard input
_HELP = frozenset({"help", "version"})
_AS_USER = "runs the command as another user"
_NAMESPACES = "runs the command in other namespaces or another root directory"
_LATER = "runs the command later or through a service manager, outside the sandbox"


@dataclass(frozen=True)
class _Wrapper:
    """How a wrapper's words are read: ``wrapper [options] [leading operands] command...``.

    Attributes:
        options: its options.
        leading: operands before the command (``timeout DURATION``, ``chroot NEWROOT``).
        script: options whose value is a shell script it runs with ``sh -c`` (``flock -c``).
        runs_nothing: options with which it runs no command (``taskset -p``, ``sudo -l``).
        no_command: what runs without a command: ``nothing``, or an interactive ``shell``.
        assignments: ``NAME=value`` words may come before the command (``env``, ``sudo``).
        risky: why every command it runs is risky, or None.
        risky_options: option -> why it makes the command risky (``time -o`` writes a file).
    """

    options: Options = field(default_factory=Options)
    leading: int = 0
    script: frozenset[str] = frozenset()
    runs_nothing: frozenset[str] = frozenset()
    no_command: str = "nothing"
    assignments: bool = False
    risky: str | None = None
    risky_options: Mapping[str, str] = field(default_factory=dict)


def _o(flags: str = "", valued: str = "", optional: str = "", long_flags: str = "", long_valued: str = "",
       **kwargs: bool) -> Options:  # fmt: skip
    """Options from space-separated long names; ``help`` and ``version`` are always flags."""
    return Options(
        flags,
        valued,
        optional,
        frozenset(long_flags.split()) | _HELP,
        frozenset(long_valued.split()),
        **kwargs,
    )


_SU = _o(
    "flmpP", "cgGsw", long_flags="fast login preserve-environment pty",
    long_valued="command session-command group supp-group shell whitelist-environment", dash_alone=True,
)  # fmt: skip
_WRITES = "writes a file"
_UNSHARE_FLAGS = (
    "mount uts ipc net pid user cgroup time fork map-root-user map-current-user map-auto kill-child"
)
_WRAPPERS: dict[str, _Wrapper] = {
    # bash builtins and keywords
    "command": _Wrapper(_o("pvV"), runs_nothing=frozenset({"-v", "-V"})),
    "builtin": _Wrapper(),
    "exec": _Wrapper(_o("cl", "a")),
    "coproc": _Wrapper(),
    "time": _Wrapper(
        _o("pvaq", "fo", long_flags="verbose append portability quiet", long_valued="format output"),
        risky_options={"-o": "time -o writes a file", "--output": "time -o writes a file"},
    ),
    # GNU coreutils
    "nice": _Wrapper(_o(valued="n", long_valued="adjustment", numeric=True)),
    "nohup": _Wrapper(_o()),
    "timeout": _Wrapper(
        _o("vfp", "sk", long_flags="preserve-status foreground verbose", long_valued="signal kill-after"),
        leading=1,
    ),
    "stdbuf": _Wrapper(_o(valued="ioe", long_valued="input output error")),
    "chroot": _Wrapper(
        _o(long_flags="skip-chdir", long_valued="groups userspec"),
        leading=1,
        no_command="shell",
        risky=_NAMESPACES,
    ),
    # util-linux
    "setsid": _Wrapper(_o("cfw", long_flags="ctty fork wait")),
    "taskset": _Wrapper(
        _o("apc", long_flags="all-tasks pid cpu-list"), leading=1, runs_nothing=frozenset({"-p", "--pid"})
    ),
    "ionice": _Wrapper(
        _o("t", "cnpPu", long_flags="ignore", long_valued="class classdata pid pgid uid"),
        runs_nothing=frozenset({"-p", "-P", "-u", "--pid", "--pgid", "--uid"}),
    ),
    "chrt": _Wrapper(
        _o(
            "bdfioraRmvp",
            "TPD",
            long_flags="batch deadline fifo idle other rr reset-on-fork all-tasks max pid verbose",
            long_valued="sched-runtime sched-period sched-deadline",
        ),
        leading=1,
        runs_nothing=frozenset({"-p", "--pid", "-m", "--max"}),
    ),  # fmt: skip
    "unshare": _Wrapper(
        _o(
            "frc",
            "RwSG",
            "muinpCTU",
            long_flags=_UNSHARE_FLAGS + " mount-proc keep-caps",
            long_valued="root wd setuid setgid propagation setgroups monotonic boottime map-user map-group "
            "map-users map-groups",
        ),
        no_command="shell",
        risky=_NAMESPACES,
    ),  # fmt: skip
    "nsenter": _Wrapper(
        _o(
            "aFZ",
            "tSGW",
            "muinpCUTrw",
            long_flags="all mount uts ipc net pid cgroup user time root wd no-fork "
            "follow-context preserve-credentials user-parent keep-caps env",
            long_valued="target setuid setgid wdns",
        ),
        no_command="shell",
        risky=_NAMESPACES,
    ),  # fmt: skip
    "setpriv": _Wrapper(
        _o(
            "d",
            long_flags="dump nnp no-new-privs clear-groups keep-groups init-groups reset-env",
            long_valued="ambient-caps inh-caps bounding-set ruid euid rgid egid reuid regid groups securebits "
            "pdeathsig selinux-label apparmor-profile landlock-access landlock-rule",
        ),
        runs_nothing=frozenset({"-d", "--dump"}),
        risky=_AS_USER,
    ),  # fmt: skip
    "script": _Wrapper(
        _o(
            "aefq",
            "IOBTmcEo",
            "t",
            long_flags="append return flush force quiet timing",
            long_valued="log-in log-out log-io log-timing logging-format command echo output-limit",
        ),
        script=frozenset({"-c", "--command"}),
        no_command="shell",
        risky="script writes a typescript file",
    ),  # fmt: skip
    "runuser": _Wrapper(
        Options(
            _SU.flags,
            _SU.valued + "u",
            long_flags=_SU.long_flags,
            long_valued=_SU.long_valued | {"user"},
            dash_alone=True,
        ),
        script=frozenset({"-c", "--command", "--session-command"}),
        risky=_AS_USER,
    ),  # fmt: skip
    "prlimit": _Wrapper(
        _o(
            valued="po",
            optional="cdefilmnqrstuvxy",
            long_flags="noheadings raw verbose core data nice fsize "
            "sigpending memlock rss nofile msgqueue rtprio stack cpu nproc as locks rttime",
            long_valued="pid output",
        ),
        runs_nothing=frozenset({"-p", "--pid"}),
    ),  # fmt: skip
    "choom": _Wrapper(_o(valued="np", long_valued="adjust pid"), runs_nothing=frozenset({"-p", "--pid"})),
    "uclampset": _Wrapper(
        _o("Rasv", "mMp", long_flags="reset-on-fork all-tasks system verbose", long_valued="pid"),
        runs_nothing=frozenset({"-p", "--pid", "-s", "--system"}),
    ),
    # sudo, doas, pkexec
    "sudo": _Wrapper(
        _o(
            "ABbEeHiKklnPSsVv",
            "aCcDgpRrTtUu",
            "h",
            long_flags="askpass background bell preserve-env edit set-home login remove-timestamp "
            "reset-timestamp list non-interactive preserve-groups stdin shell validate",
            long_valued="close-from chdir group host prompt chroot role type command-timeout other-user user "
            "auth-type login-class",
        ),
        runs_nothing=frozenset(
            {
                "-e",
                "--edit",
                "-l",
                "--list",
                "-v",
                "--validate",
                "-k",
                "-K",
                "--reset-timestamp",
                "--remove-timestamp",
                "-V",
            }
        ),
        assignments=True,
        risky=_AS_USER,
    ),  # fmt: skip
    "doas": _Wrapper(_o("Lns", "aCu"), runs_nothing=frozenset({"-C", "-L"}), risky=_AS_USER),
    "pkexec": _Wrapper(_o(long_flags="disable-internal-agent keep-cwd", long_valued="user"), risky=_AS_USER),
    # tracers and debuggers
    "ltrace": _Wrapper(
        _o(
            "bcCfhiLrStTVv", "aADeFlnopsuwx", long_flags="demangle library", long_valued="align indent output"
        ),
        runs_nothing=frozenset({"-p"}),
        risky_options={"-o": _WRITES, "--output": _WRITES},
    ),
    "catchsegv": _Wrapper(),
    "heaptrack": _Wrapper(
        _o("d", "op", long_flags="debug use-inject record-only raw", long_valued="output pid"),
        runs_nothing=frozenset({"-p", "--pid"}),
        risky="heaptrack writes its profile file",
    ),
    # job and session runners
    "dbus-run-session": _Wrapper(
        _o(long_valued="config-file dbus-daemon"),
        risky_options={"--dbus-daemon": "dbus-run-session --dbus-daemon runs another program"},
    ),
    "ssh-agent": _Wrapper(_o("cDdks", "aEOPt"), runs_nothing=frozenset({"-k"})),
    "fakeroot": _Wrapper(
        _o("uhv", "lisb", long_flags="unknown-is-real", long_valued="lib faked fd-base"),
        no_command="shell",
        risky_options={"-s": _WRITES, "--faked": "fakeroot --faked runs another program"},
    ),
    "systemd-run": _Wrapper(
        _o(
            "qrtPSGd",
            "upHMEn",
            long_flags="user system scope no-block no-ask-password wait pipe pty quiet "
            "remain-after-exit collect shell same-dir send-sighup expand-environment ignore-failure",
            long_valued="unit property description slice slice-inherit uid gid nice working-directory setenv "
            "on-active on-boot on-startup on-unit-active on-unit-inactive on-calendar on-timezone-change "
            "on-clock-change timer-property path-property socket-property service-type host machine",
        ),
        no_command="nothing",
        risky=_LATER,
    ),  # fmt: skip
}
_SU_WRAPPERS = frozenset({"su", "runuser"})
_ARCHES = frozenset({"linux32", "linux64", "i386", "x86_64", "uname26"})
_SETARCH = _o("BFILRSTXZ3v", long_flags="32bit fdpic-funcptrs short-inode addr-compat-layout addr-no-randomize "
              "whole-seconds sticky-timeouts read-implies-exec mmap-page-zero 3gb 4gb uname-2.6 verbose list")  # fmt: skip


def unwrap(words: Sequence[Word]) -> Unwrapped | None:
    """The command run by an exec wrapper (module docstring), or None if ``words[0]`` is not one."""
    name = words[0].text
    special = _SPECIAL.get(name)
    if special is not None:
        return special(words)
    if name in _ARCHES or name == "setarch":
        skip = 2 if name == "setarch" and len(words) > 1 and not words[1].text.startswith("-") else 1
        return _generic(name, [words[0], *words[skip:]], _Wrapper(_SETARCH, no_command="shell"))
    spec = _WRAPPERS.get(name)
    return None if spec is None else _generic(name, words, spec)


def _generic(name: str, words: Sequence[Word], spec: _Wrapper) -> Unwrapped:
    scanned = scan_options(name, words[1:], spec.options)
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    if scanned.has("--help", "--version", *spec.runs_nothing):
        return Unwrapped(())
    risky = [spec.risky] if spec.risky else []
    risky += [reason for option, reason in spec.risky_options.items() if scanned.has(option)]
    for option in spec.script:
        value = scanned.value(option)
        if value is not None:
            return Unwrapped(
                (Word("sh"), Word("-c"), Word(value, static=option not in scanned.dynamic)), tuple(risky)
            )
    rest = tuple(words[1 + scanned.index :])
    if len(rest) < spec.leading:
        return Unwrapped((), tuple(risky))  # an error when it runs: nothing runs
    rest = rest[spec.leading :]
    if spec.assignments:
        rest = _assignments(rest, risky)
    if not rest:
        return Unwrapped(_SHELL if spec.no_command == "shell" else (), tuple(risky))
    return Unwrapped(rest, tuple(risky))


def _assignments(rest: tuple[Word, ...], risky: list[str]) -> tuple[Word, ...]:
    """``rest`` without its leading ``NAME=value`` words; a risky variable's reason goes to ``risky``."""
    while rest and (name := _assignment_name(rest[0])) is not None:
        reason = variable_risk(name, session=False)
        if reason is not None:
            risky.append(reason)
        rest = rest[1:]
    return rest


def _assignment_name(word: Word) -> str | None:
    name, equals, _ = word.text.partition("=")
    if (
        word.static
        and equals
        and name
        and (name[0].isalpha() or name[0] == "_")
        and name.replace("_", "a").isalnum()
    ):
        return name
    return None


# -- wrappers read by their own function -----------------------------------------------------------

_ENV = _o("i0v", "uCS", long_flags="ignore-environment null debug list-signal-handling block-signal default-signal "
          "ignore-signal", long_valued="unset chdir split-string", dash_alone=True)  # fmt: skip


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
    return Unwrapped(_assignments(rest, risky), tuple(risky))


_ENV_S_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "_": " ", "n": "\n", "t": "\t", "r": "\r", "f": "\f",
                  "v": "\v", "#": "#", "$": "$"}  # fmt: skip


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


_XARGS = _o("0rtpxo", "aEdILnPs", "eil",
            long_flags="null no-run-if-empty verbose interactive exit open-tty show-limits eof replace max-lines",
            long_valued="arg-file delimiter max-args max-procs max-chars process-slot-var")  # fmt: skip


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
    spec = _WRAPPERS["runuser"]  # su's options, and runuser's -u
    scanned = scan_options(name, words[1:], spec.options)
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    if scanned.has("--help", "--version"):
        return Unwrapped(())
    unwrapped = _generic(name, words, spec)
    rest = tuple(words[1 + scanned.index :])
    if unwrapped.words[:2] == (Word("sh"), Word("-c")) or (name == "runuser" and scanned.has("-u", "--user")):
        return Unwrapped(unwrapped.words or _SHELL, (_AS_USER,))
    return Unwrapped((*_SHELL, *rest[1:]), (_AS_USER,))  # the user's shell gets the arguments


def _sg(words: Sequence[Word]) -> Unwrapped:
    """``sg [-] GROUP [[-c] SCRIPT]`` (shadow): the script runs with ``/bin/sh -c``."""
    rest = list(words[1:])
    if rest and rest[0].static and rest[0].text == "-":
        rest = rest[1:]
    rest = rest[1:]  # the group
    if rest and rest[0].static and rest[0].text == "-c":
        rest = rest[1:]
    if not rest:
        return Unwrapped(_SHELL, (_AS_USER,))
    if len(rest) > 1:
        return Unwrapped((), error="sg takes one command string")
    return Unwrapped((Word("sh"), Word("-c"), rest[0]), (_AS_USER,))


_FLOCK = _o(
    "sexnoFu", "wE", long_flags="shared exclusive unlock nonblock nb no-fork close verbose",
    long_valued="timeout wait conflict-exit-code",
)  # fmt: skip


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


def _applet(words: Sequence[Word]) -> Unwrapped:
    """``busybox APPLET [ARG...]``, ``toybox APPLET [ARG...]``: the applet is the command."""
    if len(words) < 2 or not words[1].static or words[1].text.startswith("-"):
        return Unwrapped(())  # --list, --help, --install: runs no command
    return Unwrapped(tuple(words[1:]))


_STRACE = _o("AcCdDfFhiknqrtTvVwxyzZY", "abeEIoOpPsSuUX",
             long_flags="follow-forks output-separately summary-only summary seccomp-bpf instruction-pointer "
             "stack-traces syscall-number relative-timestamps absolute-timestamps syscall-times no-abbrev "
             "strings-in-hex decode-fds decode-pids successful-only failed-only summary-wall-clock daemonize "
             "output-append-mode debug tips",
             long_valued="output trace signal status abbrev verbose raw read write quiet env attach user detach-on "
             "interruptible trace-path columns string-limit const-print-style summary-syscall-overhead "
             "summary-sort-by summary-columns inject fault kvm")  # fmt: skip


def _strace(words: Sequence[Word]) -> Unwrapped:
    unwrapped = _generic("strace", words, _Wrapper(_STRACE, runs_nothing=frozenset({"-p", "--attach"})))
    if unwrapped.error is not None:
        return unwrapped
    output = scan_options("strace", words[1:], _STRACE).value("-o", "--output")
    if output is None:
        return unwrapped
    if output.startswith(("|", "!")):  # the output is piped to a shell command
        reason = "strace -o |CMD pipes its output to a command"
        return Unwrapped(unwrapped.words, (*unwrapped.risky, reason), scripts=(Word(output[1:]),))
    return Unwrapped(unwrapped.words, (*unwrapped.risky, "strace -o writes a file"))


_GDB_VALUED = frozenset(
    {"-ex", "-eval-command", "-iex", "-init-eval-command", "-x", "-command", "-ix", "-init-command", "-p", "-pid",
     "-cd", "-d", "-directory", "-s", "-symbols", "-e", "-exec", "-se", "-c", "-core", "-b", "-l", "-tty", "-i",
     "-interpreter", "-data-directory", "-D"}
)  # fmt: skip


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


_PERF_COMMON = "a g q v n i s T P W R d B N b"
_PERF = _o("agqvnisTPWRdBNbAcx", "eFcCpGtomjuDrIkS", "z",
           long_flags="all-cpus no-inherit quiet verbose stat timestamp period weight raw-samples data no-buildid "
           "no-buildid-cache branch-any per-thread group no-samples detailed scale big-num summary no-aggr "
           "per-socket per-core per-thread per-node metric-only dry-run null all-user all-kernel",
           long_valued="event freq count cpu pid cgroup tid output mmap-pages branch-filter uid delay realtime "
           "call-graph repeat interval-print field-separator log-fd pre post filter clockid metrics")  # fmt: skip


def _perf(words: Sequence[Word]) -> Unwrapped:
    """``perf record|stat|trace [options] COMMAND...``; other subcommands run no command."""
    if len(words) < 2 or not words[1].static or words[1].text not in ("record", "stat", "trace"):
        return Unwrapped(())
    spec = _Wrapper(
        _PERF,
        runs_nothing=frozenset({"-p", "--pid", "-t", "--tid", "-a", "--all-cpus", "--dry-run"}),
        risky="perf record writes perf.data" if words[1].text == "record" else None,
        risky_options={"-o": _WRITES, "--output": _WRITES},
    )
    return _generic(f"perf {words[1].text}", words[1:], spec)


_AT = _o("VmMlvdrcbK", "qftu")


def _at(words: Sequence[Word]) -> Unwrapped:
    """``at``/``batch``: the commands come from standard input (or ``-f FILE``) and run later, via atd."""
    scanned = scan_options(words[0].text, words[1:], _AT)
    if scanned.error is not None:
        return Unwrapped((), error=scanned.error)
    if scanned.has("-l", "-d", "-r", "-c", "-V", "--help", "--version"):
        return Unwrapped(())
    script = scanned.value("-f")
    return Unwrapped((Word("sh"), Word(script)) if script is not None else _SHELL, (_LATER,))


_PARALLEL = _o("0kvqtuXmeEgGr", "jNnIaCdPS", long_flags="keep-order bar progress quote verbose null dry-run tag "
               "line-buffer will-cite no-notice eta shuf group ungroup pipe files xargs no-run-if-empty",
               long_valued="jobs max-args halt colsep arg-file delimiter delay timeout retries joblog results "
               "nice env sshlogin block tmpdir max-procs eof")  # fmt: skip
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
        risky.append(f"parallel {_WRITES}")
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


_SPECIAL: dict[str, Callable[[Sequence[Word]], Unwrapped]] = {
    "env": _env,
    "xargs": _xargs,
    "flock": _flock,
    "su": _su,
    "runuser": _su,
    "sg": _sg,
    "newgrp": lambda words: Unwrapped(_SHELL, (_AS_USER,)),
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

WRAPPERS = frozenset(_WRAPPERS) | frozenset(_SPECIAL) | _ARCHES | {"setarch"}
"""Every program ``unwrap`` reads."""
