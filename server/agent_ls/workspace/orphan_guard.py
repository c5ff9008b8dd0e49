"""Kills the process groups of our unsandboxed commands when this process dies, however it dies.

``processes.execute`` starts each command in a new session and kills its group when the command ends,
times out or is cancelled, which covers every way our process ends but one: SIGKILL (or a crash),
after which a ``sleep 300 &`` or a test server the command started in the background would live on.
In the sandbox, bubblewrap's ``--die-with-parent`` tears down the whole pid namespace then; without a
sandbox nothing would.

So, on the first unsandboxed command, a watchdog starts: a ``/bin/sh`` loop (about a megabyte; no
interpreter) in a session of its own, ignoring the signals that end us, reading lines from a pipe
whose only writer is this process: ``+<pgid>`` when a command starts, ``-<pgid>`` once its group was
killed and reaped. When the pipe reaches end of file (this process is gone, whatever the cause), it
kills every group still listed and exits. A group is unlisted before its number can be reused, so the
watchdog never kills a stranger's group.

A command must not run before its group is listed, or a kill in between would miss it: ``gate`` puts a
``/bin/sh`` before it that waits for one line on its stdin (a pipe from us) and then ``exec``s the
command with stdin from ``/dev/null`` (same pid, same exit status). ``Gate.open`` lists the group,
then writes the line; if this process dies first, the pipe closes and the command never starts. A
process that leaves its group (``setsid``) escapes, as it escapes any group kill.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass

# POSIX sh. ``groups`` is a space-separated list with a space at each end; removing " g " joins the parts
# before and after it.
_WATCHDOG = r"""
trap '' HUP INT TERM QUIT PIPE
groups=' '
while IFS= read -r line; do
  case $line in
    +*) groups="$groups${line#+} " ;;
    -*) g=${line#-}
        case $groups in *" $g "*) groups="${groups%%" $g "*} ${groups#*" $g "}" ;; esac ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
"""


# Waits for the gate's line on stdin (end of file: our process died; the command never starts), then
# becomes the command.
_GATE = 'IFS= read -r _ || exit 125; exec "$@" </dev/null'


@dataclass
class Gate:
    """A command held until its group is listed (module docstring): start ``argv`` with ``stdin`` as its
    standard input, then call ``open`` with its pid, and ``close`` in any case once done."""

    argv: list[str]
    stdin: int
    _guard: OrphanGuard
    _write_fd: int

    def open(self, pgid: int) -> None:
        """List the group ``pgid`` (the command's pid: it leads a new session), then let it run."""
        self._guard.watch(pgid)
        with contextlib.suppress(OSError):
            os.write(self._write_fd, b"go\n")
        self.close()

    def close(self) -> None:
        """Close our ends of the gate (idempotent): a command not let through yet never runs."""
        for fd in (self.stdin, self._write_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.stdin = self._write_fd = -1


class OrphanGuard:
    """The watchdog of this process (module docstring); started on the first ``watch``."""

    def __init__(self) -> None:
        self._watchdog: subprocess.Popen[bytes] | None = None

    def gate(self, argv: list[str]) -> Gate:
        """``argv`` behind a gate (module docstring). Raises ``OSError`` when no pipe can be made."""
        read_fd, write_fd = os.pipe()  # neither inheritable: subprocess dups read_fd to the child's stdin
        return Gate(["/bin/sh", "-c", _GATE, "agent-ls-gate", *argv], read_fd, self, write_fd)

    def watch(self, pgid: int) -> None:
        """Have the group ``pgid`` killed if this process dies before ``release(pgid)``. Never raises."""
        self._send(f"+{pgid}\n", start=True)

    def release(self, pgid: int) -> None:
        """Forget the group ``pgid`` (call once it was killed and its leader reaped). Never raises."""
        self._send(f"-{pgid}\n", start=False)

    def _send(self, line: str, *, start: bool) -> None:
        watchdog = self._watchdog
        if watchdog is None or watchdog.poll() is not None:
            if not start:
                return
            try:
                watchdog = subprocess.Popen(
                    ["/bin/sh", "-c", _WATCHDOG],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # a hangup or Ctrl-C of our terminal does not reach it
                )
            except OSError:
                return
            self._watchdog = watchdog
        assert watchdog.stdin is not None
        try:
            watchdog.stdin.write(line.encode("ascii"))
            watchdog.stdin.flush()
        except OSError:
            self._watchdog = None


ORPHAN_GUARD = OrphanGuard()
"""The one watchdog of this process: what it guards is the life of the process itself."""
