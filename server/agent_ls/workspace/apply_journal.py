"""The apply journal: what lets an all-or-nothing apply (``apply_files``) survive a kill.

An apply writes ``.agent-ls-apply.json`` at the workspace root before it creates anything, keeps it
locked (``flock``) while it runs, and removes it when it is done or rolled back. So a journal that
exists and is not locked belongs to an apply whose process died (SIGKILL, a crash): ``recover``
finishes that apply's work at the next start. Its states:

- ``staged``: temporary files and folders may exist, but no file of the user's was replaced yet.
  Recovery removes the listed temporary files and the listed folders that are empty: nothing changed.
- ``commit``: every new text was written in full beside its file before this state was set (one
  7-byte write at the start of the journal, which a kill cannot split). Recovery completes the
  apply: each file still as it was before the apply gets its new text; a file already holding it is
  left; a file that is neither (the user changed it since the kill) is left alone and named.

File format: a first line with the state (``staged`` or ``commit``), then one JSON object
(``JournalRecord``). Paths are workspace-relative POSIX paths of the real files (symlinks resolved);
hashes are SHA-256 hex of the bytes, None for "no file".

A journal is read as untrusted input (a cloned repository could hold one): recovery only touches
paths inside the workspace, never inside a ``.git`` folder and never through a symlink, and only
temporary files named as ours (``TEMP_NAME``) in the folder of their target; a file is replaced only
when its bytes hash as the journal says, and the line recovery prints names what it did.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, ValidationError

JOURNAL_NAME = ".agent-ls-apply.json"
_STAGED, _COMMIT, _UNDO = b"staged\n", b"commit\n", b"undone\n"  # one length: a flip is one pwrite
_NEW_JOURNAL = re.compile(r"\.agent-ls-apply\.[0-9a-f]{12}\.new\Z")
TEMP_NAME = re.compile(r"\.agent-ls-[0-9a-f]{12}-r?[0-9]+\.tmp\Z")
"""The names of an apply's temporary files: ``.agent-ls-<apply id>-<n>.tmp`` (short and fixed, so a
target whose name is near the file system's limit still gets one), ``-r<n>`` while rolling back."""


class ApplyBusy(Exception):
    """Another apply holds the journal of this workspace: the user sees the message; nothing written."""


class JournalEntry(BaseModel):
    """One file of an apply."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built by an apply
    path: str
    temp: str | None
    old: str | None
    new: str | None


class JournalRecord(BaseModel):
    """The JSON part of a journal."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built by an apply
    apply_id: str
    pid: int
    started: str
    files: tuple[JournalEntry, ...]
    dirs: tuple[str, ...]


def sha256_hex(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def new_apply_id() -> str:
    """Twelve random hex digits: the part of the temporary names that tells one apply from another."""
    return secrets.token_hex(6)


@dataclass
class Journal:
    """The open, locked journal of a running apply (``begin``); ``commit`` then ``finish``."""

    path: Path
    fd: int

    @classmethod
    def begin(cls, root: Path, record: JournalRecord) -> Journal:
        """Publish ``record`` in state ``staged`` at ``root/JOURNAL_NAME``, locked by this process.

        The journal is written in full under a temporary name, locked, then linked into place, so no
        other process ever sees it unlocked or half written.

        Raises:
            ApplyBusy: another apply's journal is there (alive: ``recover`` was called first).
            OSError: the journal cannot be written (the root is read-only, the disk full).
        """
        path = root / JOURNAL_NAME
        draft = root / f".agent-ls-apply.{new_apply_id()}.new"
        fd = os.open(draft, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, _STAGED + record.model_dump_json().encode("utf-8"))
            try:
                os.link(draft, path, follow_symlinks=False)  # fails when a journal is there
            except FileExistsError:
                raise ApplyBusy(f"another apply is running in this workspace ({JOURNAL_NAME})") from None
        except BaseException:
            if _still_linked(fd, path):  # interrupted right after publishing it
                path.unlink()
            os.close(fd)
            draft.unlink(missing_ok=True)
            raise
        draft.unlink(missing_ok=True)
        return cls(path, fd)

    def commit(self) -> None:
        """Mark the commit point: from now on recovery completes the apply instead of undoing it."""
        os.pwrite(self.fd, _COMMIT, 0)

    def undo(self) -> None:
        """Mark a rollback in progress: recovery removes what is left and names what kept the new text."""
        os.pwrite(self.fd, _UNDO, 0)

    def finish(self) -> None:
        """Remove the journal (the apply is done or rolled back) and release the lock."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self.fd)


def recover(root: Path) -> str | None:
    """Finish the work of an apply whose process died in ``root`` (module docstring).

    Returns:
        One line saying what was done, or None when there was no journal.

    Raises:
        ApplyBusy: a live apply holds the journal.
    """
    real_root = Path(os.path.realpath(root))
    _remove_dead_drafts(real_root)
    try:
        fd = os.open(real_root / JOURNAL_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read {JOURNAL_NAME} ({exc.strerror}); remove it once no apply is running"
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ApplyBusy(f"another apply is running in this workspace ({JOURNAL_NAME})") from None
        if not _still_linked(fd, real_root / JOURNAL_NAME):
            return None  # its apply finished between our open and our lock
        with os.fdopen(os.dup(fd), "rb") as handle:
            state, _, body = handle.read().partition(b"\n")
        try:
            record = JournalRecord.model_validate_json(body)
        except ValidationError:
            record = None
        if record is None or state + b"\n" not in (_STAGED, _COMMIT, _UNDO):
            # Killed while the journal itself was written: nothing else was created yet.
            line = f"removed the unreadable journal {JOURNAL_NAME} of an interrupted apply"
        elif state + b"\n" == _STAGED:
            line = _undo(real_root, record)
        elif state + b"\n" == _UNDO:
            line = _finish_rollback(real_root, record)
        else:
            line = _complete(real_root, record)
        (real_root / JOURNAL_NAME).unlink(missing_ok=True)
        return line
    finally:
        os.close(fd)


def _undo(root: Path, record: JournalRecord) -> str:
    for entry in record.files:
        temp = _temp_path(root, entry)
        if temp is not None:
            _remove_regular(temp)
    remove_empty_dirs([root / rel for rel in record.dirs if _inside(root, rel)])
    return (
        f"an apply interrupted at {record.started} had not changed any file yet; "
        "its temporary files were removed"
    )


def _finish_rollback(root: Path, record: JournalRecord) -> str:
    _undo(root, record)
    rollback_temp = re.compile(rf"\.agent-ls-{re.escape(record.apply_id)}-r[0-9]+\.tmp\Z")
    kept: list[str] = []
    for entry in record.files:
        if not _inside(root, entry.path):
            continue
        target = root / entry.path
        with contextlib.suppress(OSError), os.scandir(target.parent) as found:
            for temp in [Path(e.path) for e in found if rollback_temp.match(e.name)]:
                _remove_regular(temp)
        if entry.new != entry.old and _hash_of(target) == entry.new:
            kept.append(entry.path)
    if kept:
        return (
            "an apply that failed was interrupted while it was rolled back; these files keep the new "
            f"text: {', '.join(kept)}"
        )
    return "an apply that failed was interrupted while it was rolled back; nothing changed"


def _complete(root: Path, record: JournalRecord) -> str:
    written: list[str] = []
    left: list[str] = []
    for entry in record.files:
        target = root / entry.path if _inside(root, entry.path) else None
        temp = _temp_path(root, entry)
        current = _hash_of(target) if target is not None else "?"
        try:
            if target is None or current not in (entry.old, entry.new):
                left.append(entry.path)
            elif current == entry.old and entry.new is None:
                target.unlink()
                written.append(entry.path)
            elif current == entry.old and temp is not None and _hash_of(temp) == entry.new:
                os.replace(temp, target)
                written.append(entry.path)
            elif current == entry.old:
                left.append(entry.path)  # its new text is gone: cannot be completed
        except OSError:
            left.append(entry.path)
        if temp is not None:
            _remove_regular(temp)
    line = f"completed an apply interrupted at {record.started}: {len(written)} more file(s) written"
    if left:
        line += f"; left as they are (changed since, or their new text is missing): {', '.join(left)}"
    return line


def remove_empty_dirs(dirs: Sequence[Path]) -> None:
    """Remove each of ``dirs`` that is an empty folder, deepest first; anything else stays."""
    for directory in sorted(dirs, key=lambda d: len(d.parts), reverse=True):
        with contextlib.suppress(OSError):
            directory.rmdir()


def _inside(root: Path, rel: str) -> bool:
    """Whether the journal's ``rel`` is a place inside ``root`` reached without a symlink, not in ``.git``."""
    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or any(p in ("..", ".", ".git") for p in parts):
        return False
    current = root
    for part in parts[:-1]:
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True


def _temp_path(root: Path, entry: JournalEntry) -> Path | None:
    if entry.temp is None or not TEMP_NAME.match(entry.temp) or not _inside(root, entry.path):
        return None
    return (root / entry.path).parent / entry.temp


def _hash_of(path: Path) -> str | None:
    """The SHA-256 of the regular file ``path`` (never through a symlink); None when nothing is there,
    ``"?"`` for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        return "?"
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return "?"
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _still_linked(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _remove_regular(path: Path) -> None:
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.lstat(path).st_mode):
            path.unlink()


def _remove_dead_drafts(root: Path) -> None:
    """Remove journal drafts left by a process killed while it wrote one (never a live one's)."""
    drafts: list[Path] = []
    with contextlib.suppress(OSError), os.scandir(root) as entries:
        drafts = [Path(e.path) for e in entries if _NEW_JOURNAL.match(e.name)]
    for draft in drafts:
        try:
            fd = os.open(draft, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            draft.unlink(missing_ok=True)
        except OSError:
            pass  # locked: its apply is alive
        finally:
            os.close(fd)


def now_text() -> str:
    """The local time, to the second, as the journal records when an apply started."""
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")
