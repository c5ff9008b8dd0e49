"""Writing a set of files all or nothing: ``agent-ls run --apply`` and the demo's editor.

One apply (``apply_files``), in order:

1. **check** (``apply_check``): every target is looked at before anything is written, and any
   problem (a folder on the way that is a file, a name too long for the file system, no space...)
   refuses the apply with nothing written, one line per problem;
2. **journal** (``apply_journal``): ``.agent-ls-apply.json`` at the root lists the files, their
   temporary names and the hashes of their old and new bytes; it stays locked while the apply runs;
3. **stage**: the missing folders are created, then each new text is written in full to a temporary
   file beside its target (``.agent-ls-<id>-<n>.tmp``: short, so a long target name still fits),
   created with the user's umask for a new file, or with the existing file's mode bits (and owner,
   when we may) for a replaced one;
4. **commit point**: the journal says ``commit``;
5. **replace**: each temporary file is renamed over its target (``os.replace``: each file is whole,
   old or new, at every instant); a deletion unlinks its target; a target whose ``lstat`` changed
   since the check (the user saved meanwhile) stops the apply;
6. the journal is removed.

Any error in 3 or 5 (``OSError``, or Ctrl-C: ``BaseException``) rolls back: files already replaced
get their old bytes and mode back, new ones are removed, temporary files and created folders too; the
outcome is one line saying what failed and that nothing changed (or which files could not be restored).
A kill (SIGKILL, a crash) cannot roll back: the journal stays, and ``recover`` (called at the start of
the next apply, and by ``agent-ls run``) undoes the apply if it was killed before step 4, or
completes it after. A power loss or an OS crash is not covered: nothing is fsynced.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_ls.workspace.apply_check import FileWrite, Target, check, key_of

__all__ = ["ApplyOutcome", "FileWrite", "StagedApply", "apply_files", "stage_files"]
from agent_ls.workspace.apply_journal import (
    ApplyBusy,
    Journal,
    JournalEntry,
    JournalRecord,
    new_apply_id,
    now_text,
    recover,
    remove_empty_dirs,
    sha256_hex,
)


@dataclass(frozen=True)
class ApplyOutcome:
    """What an apply did: ``applied`` (every file written) and one line for the user.

    ``recovered`` is the line of an interrupted earlier apply that was finished first, if any.
    """

    applied: bool
    message: str
    recovered: str | None = None


def apply_files(root: Path, writes: Sequence[FileWrite]) -> ApplyOutcome:
    """Write ``writes`` under ``root`` all or nothing (module docstring); never raises ``OSError``.

    Raises:
        KeyboardInterrupt, SystemExit: after rolling back.
    """
    staged = stage_files(root, writes)
    return staged if isinstance(staged, ApplyOutcome) else staged.commit()


def stage_files(root: Path, writes: Sequence[FileWrite]) -> StagedApply | ApplyOutcome:
    """Steps 1 to 3 of the module docstring: recover an interrupted apply, check, journal, stage.

    Returns:
        The staged apply, to ``commit`` or ``abandon``; or the outcome when it is refused (nothing
        written) or there is nothing to do.

    Raises:
        KeyboardInterrupt, SystemExit: after removing what was staged.
    """
    real_root = Path(os.path.realpath(root))
    if not real_root.is_dir():
        return ApplyOutcome(False, f"not applying, nothing written: {root} is not a folder")
    try:
        recovered = recover(real_root)
    except ApplyBusy as exc:
        return ApplyOutcome(False, f"not applying, nothing written: {exc}")
    except OSError as exc:
        return ApplyOutcome(
            False, f"not applying, nothing written: cannot finish an interrupted apply: {exc}"
        )
    targets, problems = check(real_root, writes)
    if problems:
        return ApplyOutcome(False, f"not applying, nothing written: {'; '.join(problems)}", recovered)
    if not targets:
        return ApplyOutcome(True, "nothing to apply", recovered)
    apply_id = new_apply_id()
    for n, target in enumerate(targets):
        if target.write.data is not None:
            target.temp = target.path.parent / f".agent-ls-{apply_id}-{n}.tmp"
    new_dirs = sorted({d for t in targets for d in t.new_dirs}, key=lambda d: len(d.parts))
    record = JournalRecord(
        apply_id=apply_id,
        pid=os.getpid(),
        started=now_text(),
        files=tuple(
            JournalEntry(
                path=t.path.relative_to(real_root).as_posix(),
                temp=t.temp.name if t.temp else None,
                old=sha256_hex(t.original),
                new=sha256_hex(t.write.data),
            )
            for t in targets
        ),
        dirs=tuple(d.relative_to(real_root).as_posix() for d in new_dirs),
    )
    try:
        journal = Journal.begin(real_root, record)
    except (ApplyBusy, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return ApplyOutcome(
            False, f"not applying, nothing written: cannot start the apply: {reason}", recovered
        )
    staged = StagedApply(real_root, apply_id, targets, journal, recovered)
    current = targets[0]
    try:
        for directory in new_dirs:
            with contextlib.suppress(FileExistsError):
                os.mkdir(directory)  # the user's umask applies
                staged.created.append(directory)
        for current in targets:
            if current.temp is not None and current.write.data is not None:
                _write_new(current.temp, current.write.data, current.mode, current.owner)
    except BaseException as exc:
        failed = staged.roll_back(committing=False)
        if not isinstance(exc, OSError):
            raise
        return staged.failure(current, exc, failed)
    return staged


@dataclass
class StagedApply:
    """An apply checked, journaled and staged (steps 1 to 3): ``commit`` it, or ``abandon`` it."""

    root: Path
    apply_id: str
    targets: list[Target]
    journal: Journal
    recovered: str | None
    created: list[Path] = field(default_factory=list)

    def commit(self) -> ApplyOutcome:
        """Steps 4 to 6: replace every target, or roll back on the first error.

        Raises:
            KeyboardInterrupt, SystemExit: after rolling back.
        """
        current = self.targets[0]
        try:
            self.journal.commit()
            for current in self.targets:
                _replace(current)
        except BaseException as exc:
            failed = self.roll_back(committing=True)
            if not isinstance(exc, OSError):
                raise
            return self.failure(current, exc, failed)
        self.journal.finish()
        return ApplyOutcome(True, f"applied {len(self.targets)} file(s)", self.recovered)

    def abandon(self) -> None:
        """Remove what was staged; the user's files were not touched."""
        self.roll_back(committing=False)

    def roll_back(self, *, committing: bool) -> list[Target]:
        """Undo this apply in this process; returns the targets that could not be restored.

        Which targets were replaced is read from the disk, not from our own bookkeeping, so an
        interruption between a rename and the next statement cannot hide one: once committing,
        every temporary file exists until its rename, so a write whose temporary file is gone was
        done, and so was a deletion whose file is gone. The journal says ``undo`` meanwhile, so a kill
        during the rollback is recovered as an undo that names the files left with the new text.
        """
        self.journal.undo()
        failed: list[Target] = []
        for n, target in enumerate(reversed(self.targets)):
            if target.temp is not None and os.path.lexists(target.temp):
                with contextlib.suppress(OSError):
                    target.temp.unlink()
                continue
            if not committing or not _was_replaced(target):
                continue
            try:
                if target.original is None:
                    target.path.unlink()
                else:
                    restore = target.path.parent / f".agent-ls-{self.apply_id}-r{n}.tmp"
                    try:
                        _write_new(restore, target.original, target.mode, target.owner)
                        os.replace(restore, target.path)
                    finally:
                        restore.unlink(missing_ok=True)
            except OSError:
                failed.append(target)
        remove_empty_dirs(self.created)
        self.journal.finish()
        return failed

    def failure(self, at: Target, exc: OSError, failed: list[Target]) -> ApplyOutcome:
        """The outcome of a rolled-back apply: one line naming the file and the error."""
        reason = f"{at.path.relative_to(self.root).as_posix()}: {exc.strerror or exc}"
        if failed:
            kept = ", ".join(t.path.relative_to(self.root).as_posix() for t in failed)
            message = (
                f"apply failed ({reason}); rolled back, except these files, which keep the new text: {kept}"
            )
        else:
            message = f"apply failed ({reason}); rolled back, nothing changed"
        return ApplyOutcome(False, message, self.recovered)


def _was_replaced(target: Target) -> bool:
    """Whether ``target`` was replaced (its temporary file is gone), or deleted, by ``_replace``."""
    if target.write.data is not None:
        return True  # the caller found no temporary file
    return target.original is not None and not os.path.lexists(target.path)


def _write_new(temp: Path, data: bytes, mode: int | None, owner: tuple[int, int] | None) -> None:
    """Create ``temp`` (never existing before) holding ``data``: with ``mode`` and ``owner`` (when we may)
    for a file that replaces another, else 0666 less the user's umask."""
    first_mode = 0o666 if mode is None else 0o600  # a copy of a private file is never readable meanwhile
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, first_mode)
    with open(fd, "wb") as handle:
        handle.write(data)
        if mode is not None:
            os.fchmod(fd, mode)
        if owner is not None and owner != (os.geteuid(), os.getegid()):
            with contextlib.suppress(PermissionError):
                os.fchown(fd, *owner)


def _replace(target: Target) -> None:
    if key_of(target.path) != target.key:
        raise OSError(0, "changed on disk during the apply")
    if target.temp is None:
        target.path.unlink()
    else:
        os.replace(target.temp, target.path)
