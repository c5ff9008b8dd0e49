"""Exec wrappers: programs that run a command given as their arguments, and the command each runs.

``unwrap(words)`` reads a wrapper's options (``shell_options``; the wrappers with a grammar of their own
are in ``special_wrappers``) and returns the command it runs, so that
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

from collections.abc import Sequence

from agent_ls.policy.shell_words import Word
from agent_ls.policy.special_wrappers import SPECIAL
from agent_ls.policy.wrapper_grammar import (
    AS_USER,
    LATER,
    NAMESPACES,
    WRITES,
    Unwrapped,
    WrapperSpec,
    options,
    read_wrapper,
)

_UNSHARE_FLAGS = (
    "mount uts ipc net pid user cgroup time fork map-root-user map-current-user map-auto kill-child"
)
_WRAPPERS: dict[str, WrapperSpec] = {
    # bash builtins and keywords
    "command": WrapperSpec(options("pvV"), runs_nothing=frozenset({"-v", "-V"})),
    "builtin": WrapperSpec(),
    "exec": WrapperSpec(options("cl", "a")),
    "coproc": WrapperSpec(),
    "time": WrapperSpec(
        options("pvaq", "fo", long_flags="verbose append portability quiet", long_valued="format output"),
        risky_options={"-o": "time -o writes a file", "--output": "time -o writes a file"},
    ),
    # GNU coreutils
    "nice": WrapperSpec(options(valued="n", long_valued="adjustment", numeric=True)),
    "nohup": WrapperSpec(options()),
    "timeout": WrapperSpec(
        options(
            "vfp", "sk", long_flags="preserve-status foreground verbose", long_valued="signal kill-after"
        ),
        leading=1,
    ),
    "stdbuf": WrapperSpec(options(valued="ioe", long_valued="input output error")),
    "chroot": WrapperSpec(
        options(long_flags="skip-chdir", long_valued="groups userspec"),
        leading=1,
        no_command="shell",
        risky=NAMESPACES,
    ),
    # util-linux
    "setsid": WrapperSpec(options("cfw", long_flags="ctty fork wait")),
    "taskset": WrapperSpec(
        options("apc", long_flags="all-tasks pid cpu-list"),
        leading=1,
        runs_nothing=frozenset({"-p", "--pid"}),
    ),
    "ionice": WrapperSpec(
        options("t", "cnpPu", long_flags="ignore", long_valued="class classdata pid pgid uid"),
        runs_nothing=frozenset({"-p", "-P", "-u", "--pid", "--pgid", "--uid"}),
    ),
    "chrt": WrapperSpec(
        options(
            "bdfioraRmvp",
            "TPD",
            long_flags="batch deadline fifo idle other rr reset-on-fork all-tasks max pid verbose",
            long_valued="sched-runtime sched-period sched-deadline",
        ),
        leading=1,
        runs_nothing=frozenset({"-p", "--pid", "-m", "--max"}),
    ),
    "unshare": WrapperSpec(
        options(
            "frc",
            "RwSG",
            "muinpCTU",
            long_flags=_UNSHARE_FLAGS + " mount-proc keep-caps",
            long_valued="root wd setuid setgid propagation setgroups monotonic boottime map-user map-group "
            "map-users map-groups",
        ),
        no_command="shell",
        risky=NAMESPACES,
    ),
    "nsenter": WrapperSpec(
        options(
            "aFZ",
            "tSGW",
            "muinpCUTrw",
            long_flags="all mount uts ipc net pid cgroup user time root wd no-fork "
            "follow-context preserve-credentials user-parent keep-caps env",
            long_valued="target setuid setgid wdns",
        ),
        no_command="shell",
        risky=NAMESPACES,
    ),
    "setpriv": WrapperSpec(
        options(
            "d",
            long_flags="dump nnp no-new-privs clear-groups keep-groups init-groups reset-env",
            long_valued="ambient-caps inh-caps bounding-set ruid euid rgid egid reuid regid groups "
            "securebits "
            "pdeathsig selinux-label apparmor-profile landlock-access landlock-rule",
        ),
        runs_nothing=frozenset({"-d", "--dump"}),
        risky=AS_USER,
    ),
    "script": WrapperSpec(
        options(
            "aefq",
            "IOBTmcEo",
            "t",
            long_flags="append return flush force quiet timing",
            long_valued="log-in log-out log-io log-timing logging-format command echo output-limit",
        ),
        script=frozenset({"-c", "--command"}),
        no_command="shell",
        risky="script writes a typescript file",
    ),
    "prlimit": WrapperSpec(
        options(
            valued="po",
            optional="cdefilmnqrstuvxy",
            long_flags="noheadings raw verbose core data nice fsize "
            "sigpending memlock rss nofile msgqueue rtprio stack cpu nproc as locks rttime",
            long_valued="pid output",
        ),
        runs_nothing=frozenset({"-p", "--pid"}),
    ),
    "choom": WrapperSpec(
        options(valued="np", long_valued="adjust pid"), runs_nothing=frozenset({"-p", "--pid"})
    ),
    "uclampset": WrapperSpec(
        options("Rasv", "mMp", long_flags="reset-on-fork all-tasks system verbose", long_valued="pid"),
        runs_nothing=frozenset({"-p", "--pid", "-s", "--system"}),
    ),
    # sudo, doas, pkexec
    "sudo": WrapperSpec(
        options(
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
        risky=AS_USER,
    ),
    "doas": WrapperSpec(options("Lns", "aCu"), runs_nothing=frozenset({"-C", "-L"}), risky=AS_USER),
    "pkexec": WrapperSpec(
        options(long_flags="disable-internal-agent keep-cwd", long_valued="user"), risky=AS_USER
    ),
    # tracers and debuggers
    "ltrace": WrapperSpec(
        options(
            "bcCfhiLrStTVv", "aADeFlnopsuwx", long_flags="demangle library", long_valued="align indent output"
        ),
        runs_nothing=frozenset({"-p"}),
        risky_options={"-o": WRITES, "--output": WRITES},
    ),
    "catchsegv": WrapperSpec(),
    "heaptrack": WrapperSpec(
        options("d", "op", long_flags="debug use-inject record-only raw", long_valued="output pid"),
        runs_nothing=frozenset({"-p", "--pid"}),
        risky="heaptrack writes its profile file",
    ),
    # job and session runners
    "dbus-run-session": WrapperSpec(
        options(long_valued="config-file dbus-daemon"),
        risky_options={"--dbus-daemon": "dbus-run-session --dbus-daemon runs another program"},
    ),
    "ssh-agent": WrapperSpec(options("cDdks", "aEOPt"), runs_nothing=frozenset({"-k"})),
    "fakeroot": WrapperSpec(
        options("uhv", "lisb", long_flags="unknown-is-real", long_valued="lib faked fd-base"),
        no_command="shell",
        risky_options={"-s": WRITES, "--faked": "fakeroot --faked runs another program"},
    ),
    "systemd-run": WrapperSpec(
        options(
            "qrtPSGd",
            "upHMEn",
            long_flags="user system scope no-block no-ask-password wait pipe pty quiet "
            "remain-after-exit collect shell same-dir send-sighup expand-environment ignore-failure",
            long_valued="unit property description slice slice-inherit uid gid nice working-directory setenv "
            "on-active on-boot on-startup on-unit-active on-unit-inactive on-calendar on-timezone-change "
            "on-clock-change timer-property path-property socket-property service-type host machine",
        ),
        no_command="nothing",
        risky=LATER,
    ),
}
_ARCHES = frozenset({"linux32", "linux64", "i386", "x86_64", "uname26"})
_SETARCH = options(
    "BFILRSTXZ3v",
    long_flags="32bit fdpic-funcptrs short-inode addr-compat-layout addr-no-randomize "
    "whole-seconds sticky-timeouts read-implies-exec mmap-page-zero 3gb 4gb uname-2.6 verbose list",
)


def unwrap(words: Sequence[Word]) -> Unwrapped | None:
    """The command run by an exec wrapper (module docstring), or None if ``words[0]`` is not one."""
    name = words[0].text
    special = SPECIAL.get(name)
    if special is not None:
        return special(words)
    if name in _ARCHES or name == "setarch":
        skip = 2 if name == "setarch" and len(words) > 1 and not words[1].text.startswith("-") else 1
        return read_wrapper(name, [words[0], *words[skip:]], WrapperSpec(_SETARCH, no_command="shell"))
    spec = _WRAPPERS.get(name)
    return None if spec is None else read_wrapper(name, words, spec)


WRAPPERS = frozenset(_WRAPPERS) | frozenset(SPECIAL) | _ARCHES | {"setarch"}
"""Every program ``unwrap`` reads."""
