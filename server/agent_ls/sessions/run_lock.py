"""One run per session at a time, across processes: an editor's server and ``agent-ls run --continue`` on
the same session would otherwise both append to its file and both extend its proposal.

The lock is ``flock(2)`` on ``<session id>.lock`` beside the session's file, taken without waiting when
a run starts and released when it ends. The kernel drops it when the holder dies (even by SIGKILL), so a
crash never leaves a session locked. The file holds the holder's pid, for the message. It is left in
place on release: unlinking a lock file lets a process that opened the old one and one that creates a new
one both hold "the" lock. Within one process, the front ends refuse a second run first (an LSP server's
``refuse_if_running``); ``flock`` locks of one process on two descriptors would also conflict, so a
second run in the same process is refused here too.

Source: the same scheme as Git's ``index.lock`` refusals (fail at once, say who holds it) with
``flock`` instead of ``O_EXCL`` so that a killed holder frees it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from agent_ls.workspace.private_dirs import make_private


class SessionBusy(RuntimeError):
    """Another run of the session holds its lock; the message says which process and what to do."""


class RunLock:
    """The lock of one session's runs. ``acquire`` raises ``SessionBusy``; ``release`` is idempotent."""

    def __init__(self, session_file: Path) -> None:
        self.path = session_file.with_suffix(".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock now or raise ``SessionBusy``. An unwritable state folder is not an error: the
        run goes on unlocked (the store itself reports the folder when it writes)."""
        if self._fd is not None:
            return
        try:
            make_private(self.path.parent)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f"agent-ls process {holder}" if holder and holder != os.getpid() else "this process"
            raise SessionBusy(
                f"session {self.path.stem} is running a task in {who}; wait for it to end or cancel it "
                "there, then continue the session"
            ) from None
        except OSError:  # a file system without locks: run unlocked
            os.close(fd)
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def is_running(session_file: Path) -> bool:
    """Whether a run of the session holds its lock now (in any process, this one included), for
    ``agent-ls sessions`` and ``agent.listSessions`` to say ``running`` rather than ``interrupted``.

    A lock file that is missing or empty (released, or never taken) means no run, without touching the
    lock. Otherwise a shared ``flock`` is tried without waiting: refused means a run holds it; granted (a
    holder killed before it could empty the file) is dropped at once. Never raises: an unreadable lock
    reads as "not running"."""
    path = session_file.with_suffix(".lock")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if _read_pid(fd) is None:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        return False
    finally:
        os.close(fd)  # drops the shared lock if it was granted


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
