"""Temporary directories that say whether their process is alive, so leftovers of dead ones can go.

A session's shadow copy lives in ``<temp>/agent-ls-shadow-XXXXXXXX``. The session deletes it when it
ends (``close``; also on Ctrl-C, SIGTERM and SIGHUP for ``agent-ls run``), but a process that is
killed (SIGKILL, a crash, a power loss) cannot. So each such directory holds a lock file
(``OWNER_LOCK``) that its process keeps locked (``flock``) for as long as it lives; the kernel releases
the lock when the process dies, however it dies. ``make_owned_dir``, called when a session makes its
copy, first removes the directories of the same prefix whose lock it can take: their process is dead.

Why a lock and not a pid in the name: a pid is reused, and it means nothing across pid namespaces (two
containers sharing ``/tmp``), so a pid check could remove a live session's copy; a lock cannot be
taken while its holder lives, on any of them. The lock file is locked under another name and renamed
into place, so it is never seen unlocked while its owner lives. A directory without a lock file (one
being made right now, or one made by a version before this) is never removed; neither is anything
owned by another user, or anything that is not a real directory.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

OWNER_LOCK = ".owner.lock"


@dataclass
class OwnedDir:
    """A temporary directory and the open, locked file that marks it as alive.

    Attributes:
        path: the directory.
        lock_fd: the descriptor holding the lock (not inherited by child processes).
    """

    path: Path
    lock_fd: int

    def remove(self) -> None:
        """Delete the directory and its contents, then release the lock. Idempotent."""
        if self.lock_fd < 0:
            return
        _remove_tree(self.path)
        os.close(self.lock_fd)
        self.lock_fd = -1

    def remove_in_background(self) -> threading.Thread | None:
        """Move the directory aside at once (a rename), then delete it in a thread: a copy of a large
        workspace takes seconds to delete, and the caller may be the editor's event loop. The thread
        is not a daemon, so the process finishes it before it exits; if the process is killed first,
        the lock is released with it and the next ``make_owned_dir`` removes the rest (the new name
        keeps the prefix). Returns the thread, None when there was nothing to remove. Idempotent."""
        if self.lock_fd < 0:
            return None
        aside = self.path.with_name(f"{self.path.name}-closed")
        try:
            os.rename(self.path, aside)
        except OSError:
            aside = self.path  # deleted where it is, still off the caller's thread
        fd, self.lock_fd = self.lock_fd, -1

        def remove() -> None:
            _remove_tree(aside)
            os.close(fd)

        thread = threading.Thread(target=remove, name="agent-ls-remove-temp", daemon=False)
        thread.start()
        return thread


def make_owned_dir(prefix: str, parent: Path | None = None) -> OwnedDir:
    """Remove the dead leftovers of ``prefix`` in ``parent``, then make a new directory there, held by
    this process (module docstring).

    Args:
        prefix: the start of the directory's name (``agent-ls-shadow-``).
        parent: where to make it; the system's temporary directory when None.

    Raises:
        OSError: the directory or its lock file cannot be made.
    """
    where = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    remove_dead_leftovers(prefix, where)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=where))
    draft = path / f"{OWNER_LOCK}.new"
    try:
        fd = os.open(draft, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        _remove_tree(path)
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, f"{os.getpid()}\n".encode())  # for a human looking at it; never read
        os.rename(draft, path / OWNER_LOCK)
    except OSError:
        os.close(fd)
        _remove_tree(path)
        raise
    return OwnedDir(path, fd)


def remove_dead_leftovers(prefix: str, parent: Path) -> list[Path]:
    """Remove every directory ``parent/<prefix>*`` of this user whose lock file is not held; returns them.

    Never raises: a directory that cannot be looked at or removed is left.
    """
    removed: list[Path] = []
    try:
        with os.scandir(parent) as entries:
            candidates = [Path(e.path) for e in entries if e.name.startswith(prefix)]
    except OSError:
        return removed
    for path in candidates:
        try:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                continue
            fd = os.open(path / OWNER_LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # no lock file: being made now, or made before locks; not ours to judge
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # held: its process is alive
        try:
            _remove_tree(path)
            removed.append(path)
        finally:
            os.close(fd)
    return removed


def _remove_tree(path: Path) -> None:
    """Remove ``path`` and its contents as far as possible; never follows a symlink (``shutil.rmtree``
    uses file descriptors on Linux and macOS: ``rmtree.avoids_symlink_attacks``)."""
    shutil.rmtree(path, ignore_errors=True)
