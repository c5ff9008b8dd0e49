"""Which commands can run code from the workspace: what an unsandboxed machine must never auto-allow.

Without a sandbox (no bubblewrap, or ``[sandbox] enabled = false``), a command runs with the user's
rights: it can read ``/proc/<pid>/environ`` of the user's other processes, write anywhere in the home and
open sockets. A command that *executes workspace content* (a test runner importing ``conftest.py``, a
build tool reading a ``Makefile``, an interpreter importing the project's modules, a package script
from ``package.json``) then runs whatever the agent proposed a moment before. So an allow rule, built
in or the user's, does not let such a command run unasked there: the engine turns the allow into an
ask that says why (``engine.NO_SANDBOX_RULE``).

The test is an allowlist, not a list of dangerous programs: a command runs no project code only when
its program is one that reads files as data and never loads, imports or executes them
(``INERT_PROGRAMS``), or git with a subcommand that only reads (``INERT_GIT``). Everything else (the
test runners, build tools, interpreters and package managers of every ecosystem, and any program we do
not know) counts as running project code. Wrappers were already unwrapped by the parser
(``env pytest`` is ``pytest``, ``find -exec python`` is its own ``python`` command), and a command word
run by path (``./cat``, ``bin/cat``) is already "risky", never auto-allowed.

Programs with an option that executes another program are left out on purpose: ``sort
--compress-program``, ``tar --to-command``/``-I``, ``rg --pre``, ``less`` (``LESSOPEN``), ``man``,
``awk``/``sed`` (``system()``, ``e``), ``make``, ``xargs``.
"""

from __future__ import annotations

from agent_ls.policy.shell_commands import SimpleCommand

INERT_PROGRAMS = frozenset(
    {
        # coreutils and friends that read files as data or print facts
        "basename", "cat", "cksum", "cmp", "comm", "cut", "date", "df", "diff", "dirname", "du", "echo",
        "expand", "false", "fmt", "fold", "grep", "egrep", "fgrep", "head", "id", "join", "ls", "dir",
        "vdir", "md5sum", "b2sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "nl",
        "od", "paste", "printf", "pwd", "readlink", "realpath", "rev", "seq", "sleep", "stat", "tac",
        "tail", "test", "[", "tr", "tree", "true", "uname", "unexpand", "uniq", "wc", "which", "whoami",
        "base64", "hexdump", "xxd", "file", "find",
    }
)  # fmt: skip
"""Programs that never load, import or execute the files they are given (``find -exec CMD`` is judged
as ``CMD`` on its own)."""

INERT_GIT = frozenset({"status", "diff", "log", "show", "blame", "ls-files", "rev-parse"})
"""git subcommands that only read. Options that make them run programs (``--ext-diff``,
``--textconv``, ``-c``) are already "risky" (``shell_git``)."""


def runs_project_code(simple: SimpleCommand) -> bool:
    """Whether ``simple`` may execute workspace content (module docstring): True unless its program
    is in ``INERT_PROGRAMS`` or it is ``git`` with a subcommand in ``INERT_GIT``. A command with no
    program (a bare redirection) runs nothing."""
    if not simple.argv:
        return False
    program = simple.argv[0]
    if program == "git":
        return len(simple.argv) < 2 or simple.argv[1] not in INERT_GIT
    return program not in INERT_PROGRAMS
