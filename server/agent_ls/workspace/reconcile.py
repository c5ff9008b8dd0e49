"""After a client applied part of a proposal: which of its changes landed, and what stays pending.

A client with a preview (VS Code's refactor preview) lets the user untick some of the edits of a
``workspace/applyEdit`` and still answers ``applied: true``. The server then learns what happened from the
documents' new text (the buffers ``didChange`` updates, else the disk) and reconciles, per file:

1. the **changes** of a file are the line-diff hunks its ``TextEdit``s are made of (``text_edits.line_hunks``
   of the base and the proposed text; one ``TextEdit`` each, so a preview ticks or unticks them whole);
2. the document is matched against the base with each hunk either applied or not (left to right over the
   lines; the first match that applies the most wins): the hunks applied **landed**, the others are
   **kept**, and what stays pending is the proposed text over the document's new text as its base;
3. when no such match exists (the user or a formatter also changed the document), the kept part is found by
   the same three-way merge as a stale apply (``rebase.rebase_change``: base, document, proposal); the
   changes kept are then counted as the hunks between the document and the merged text;
4. when that merge conflicts, the file's change is kept as it was (its old base): the next apply re-bases or
   refuses it with the overlapping lines named, and nothing the user unticked is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.line_diff import split_lines, text_diff
from agent_ls.workspace.rebase import MergeConflict, rebase_change
from agent_ls.workspace.text_edits import line_hunks


@dataclass(frozen=True)
class Reconciled:
    """One file of an applied edit, reconciled with its document's new text.

    Attributes:
        path: the workspace-relative path (``FileChange.path``).
        total: the changes (line-diff hunks) the edit held for this file.
        landed: how many of them are in the document now.
        remaining: what stays pending: its base is the document's new text (and version), its new text the
            proposal's with the kept changes; None when nothing is left to apply.
        conflict: why the kept part could not be re-based (the user's change overlaps a kept one); the
            change is then kept as it was. None otherwise.
    """

    path: str
    total: int
    landed: int
    remaining: FileChange | None
    conflict: str | None = None

    @property
    def kept(self) -> int:
        """The changes still pending for this file."""
        return self.total - self.landed


def reconcile(change: FileChange, current: str | None, version: int | None) -> Reconciled:
    """``change`` after the client applied some of its hunks: what landed and what remains (module docstring).

    Args:
        change: the file's change as it was sent (``base_text`` is the text the edit was computed against).
        current: the document's text now (the editor buffer, else the disk); None when the file does not
            exist (a new file whose creation was unticked).
        version: the editor buffer's version of ``current``; None for a closed file.

    Returns:
        The counts and the remaining change. Never raises.
    """
    base = "" if change.is_new else change.base_text
    total = len(line_hunks(base, change.new_text))
    if current is None:  # not created (a new file), or deleted meanwhile: nothing of it landed
        return Reconciled(change.path, total, 0, change if total or change.is_new else None)
    if current == change.new_text:
        return Reconciled(change.path, total, total, None)
    rest = replace(change, is_new=False, base_text=current, base_version=version)
    landed = _landed_hunks(base, change.new_text, current)
    if landed is not None:
        return Reconciled(change.path, total, landed, rest)
    try:
        merged = rebase_change(replace(change, is_new=False, base_text=base), current, version)
    except MergeConflict as conflict:
        return Reconciled(change.path, total, 0, change, conflict=str(conflict))
    if merged.new_text == current:
        return Reconciled(change.path, total, total, None)
    kept = min(total, len(line_hunks(current, merged.new_text)))
    return Reconciled(change.path, total, total - kept, merged)


def _landed_hunks(base: str, new: str, current: str) -> int | None:
    """How many of the hunks of ``base`` → ``new`` ``current`` holds, when ``current`` is ``base`` with some
    of them applied; None when it is not (other changes too).

    A dynamic programme over (hunk, line of ``current``): each hunk's old or new lines must follow the equal
    lines before it. Where both readings match, the one applying more hunks is kept.
    """
    diff = text_diff(base, new)
    lines = split_lines(current)
    # Each line of ``current`` reachable after a stage, with the most hunks applied to reach it.
    reach: dict[int, int] = {0: 0}
    for tag, i1, i2, j1, j2 in diff.opcodes:
        segments = [(diff.old_lines[i1:i2], 0)]
        if tag != "equal":
            segments.append((diff.new_lines[j1:j2], 1))
        after: dict[int, int] = {}
        for at, applied in reach.items():
            for segment, counts in segments:
                end = at + len(segment)
                if tuple(lines[at:end]) == segment and after.get(end, -1) < applied + counts:
                    after[end] = applied + counts
        reach = after
        if not reach:
            return None
    return reach.get(len(lines))
