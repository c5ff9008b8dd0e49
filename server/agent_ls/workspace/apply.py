"""Writing a proposal to disk outside an editor (``agent-ls run --apply``), and the staleness check
shared with the LSP apply path for files that are not open in the editor.

``apply_proposal`` checks every change for staleness, turns each into the bytes to write, and hands
them to ``apply_files`` (all or nothing, with a journal that survives a kill).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.apply_files import ApplyOutcome, FileWrite, apply_files
from agent_ls.workspace.apply_journal import ApplyBusy, recover
from agent_ls.workspace.rebase import MergeConflict, disk_text_now, rebase_change


def disk_stale_reason(root: Path, change: FileChange) -> str | None:
    """Why ``change`` no longer fits the file on disk, or None when it still does.

    An existing file is stale when its bytes differ from ``change.base_text`` in the file's encoding
    (``change.encoding``: the version the agent read, byte for byte); a new file is stale when
    something now exists at its path; any file is refused when its path now resolves outside ``root``
    (checked again at apply time, not only when the agent read it). The reason is one line naming the path.
    """
    path = root / change.path
    real_root = root.resolve()
    if not path.resolve().is_relative_to(real_root):
        # A directory on the way was swapped for a symlink since the agent read the file: writing now
        # would land outside the workspace.
        return f"{change.path} now resolves outside the workspace (a symlink on its path); not written"
    if change.is_new:
        return (
            f"{change.path} now exists on disk; the agent proposed it as a new file"
            if path.exists()
            else None
        )
    try:
        read = change.encoding.encode(change.base_text)
    except UnicodeEncodeError:
        read = None
    try:
        # The size first: a file that grew (to 2 GiB, say) is stale without being read whole.
        same = read is not None and path.stat().st_size == len(read) and path.read_bytes() == read
    except FileNotFoundError:
        return f"{change.path} was deleted since the agent read it"
    except OSError as exc:
        return f"{change.path} can no longer be read: {exc.strerror or exc}"
    return None if same else f"{change.path} changed on disk since the agent read it"


def apply_proposal(
    root: Path, changes: Sequence[FileChange], *, edit_refusal: Callable[[str], str | None]
) -> ApplyOutcome:
    """Write ``changes`` under ``root`` all or nothing: nothing when the edit rules refuse any of its
    files (``edit_refusal``: the deciding rule for a refused path, None for an allowed one;
    ``policy.apply_check.edit_refusal``), or any is stale (``disk_stale_reason``) or cannot be encoded in
    its file's encoding (``FileChange.encoding``: a legacy file keeps its code page and BOM), else
    ``apply_files`` (which checks the rest first and rolls back on an error).

    Never raises ``OSError``; the outcome's message is one line for the user.
    """
    if (refused := refused_edits(changes, edit_refusal)) is not None:
        return ApplyOutcome(False, f"not applying, nothing written: {refused}")
    problems = [reason for change in changes if (reason := disk_stale_reason(root, change))]
    writes: list[FileWrite] = []
    for change in changes:
        try:
            writes.append(FileWrite(change.path, change.encoding.encode(change.new_text)))
        except UnicodeEncodeError as exc:
            label = change.encoding.label
            problems.append(f"{change.path}: the new text cannot be written as {label} ({exc.reason})")
    if problems:
        return ApplyOutcome(False, f"not applying, nothing written: {'; '.join(problems)}")
    return apply_files(root, writes)


def refused_edits(changes: Sequence[FileChange], edit_refusal: Callable[[str], str | None]) -> str | None:
    """Why the edit rules refuse the apply of ``changes`` (each refused file with its rule, and the way
    out: discard them), or None when they allow every file. A stored proposal is judged again at apply
    time (``policy.apply_check``); one refused file refuses the whole apply."""
    refused = [f"{change.path} ({rule})" for change in changes if (rule := edit_refusal(change.path))]
    if not refused:
        return None
    return (
        f"the edit rules refuse {', '.join(refused)}; discard "
        f"{'it' if len(refused) == 1 else 'them'} to apply the rest"
    )


@dataclass(frozen=True)
class DiskRebase:
    """What ``rebase_on_disk`` found: ``merged``, the changes re-based onto the files' text now (empty
    when none changed on disk), or ``refusal``, why a changed file cannot be re-based (then nothing is
    re-based)."""

    merged: list[FileChange]
    refusal: str | None = None


def rebase_on_disk(root: Path, changes: Sequence[FileChange]) -> DiskRebase:
    """Re-base each change whose file changed on disk since the agent read it onto the file's text now
    (``rebase.rebase_change``: a three-way merge keeping the user's change and the agent's), as
    ``agent.applyProposal`` does for a file closed in the editor. Blocking (disk reads, merges).

    The caller keeps ``merged`` as the proposal and has the user apply again after a look (the editor's
    behaviour). A merge that conflicts, a new file that now exists, a file that can no longer be read
    are a ``refusal`` naming the file, with the way out (discard it)."""
    merged: list[FileChange] = []
    for change in changes:
        if (reason := disk_stale_reason(root, change)) is None:
            continue
        current = disk_text_now(root / change.path, change)
        if current is None or change.is_new:
            way_out = f"discard it (agent-ls discard {change.path}) or restore the file"
            return DiskRebase([], f"{reason}; {way_out}")
        try:
            merged.append(rebase_change(change, current, None))
        except MergeConflict as conflict:
            return DiskRebase(
                [],
                f"{change.path} changed on disk since the agent read it, and {conflict}; "
                f"undo your change there or discard the agent's (agent-ls discard {change.path})",
            )
    return DiskRebase(merged)


def recover_interrupted_apply(root: Path) -> str | None:
    """Finish an apply in ``root`` whose process was killed (``apply_journal.recover``); one line saying
    what was done, or None when there was nothing to do. Never raises ``OSError``."""
    try:
        return recover(root)
    except ApplyBusy as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot finish an interrupted apply: {exc}"
