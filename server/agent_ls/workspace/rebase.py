"""A proposal re-based onto text the user changed after the agent read it: a 3-way merge, never a guess.

When the user types into (or saves) a file between the agent's read and the apply, the proposal's base is
no longer the file's text. Applying it as it is would undo the user's change; refusing forever would
lose the agent's. ``rebase_change`` merges, line by line: the base the agent read, the agent's proposed
text, and the user's current text. Where only one side changed a region, that side's lines are taken;
where both changed the same region differently, nothing is decided for the user: ``MergeConflict`` names
the lines (1-based, in the user's text). Line endings are kept byte for byte (lines split with their
endings).

The merge is breezy's ``merge3`` (the algorithm of bzr and of ``diff3``), a maintained library, rather
than our own: three-way merging has well-known subtle cases (adjacent changes, identical changes on both
sides) that it handles as version control users expect.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

# merge3: breezy's three-way merge, packaged alone (see the module docstring).
import merge3

from agent_ls.core.proposal import FileChange


class MergeConflict(Exception):
    """The user's change and the agent's overlap; ``lines`` are (first, last) 1-based line numbers of
    each overlapping region in the user's current text."""

    def __init__(self, path: str, lines: list[tuple[int, int]]) -> None:
        self.path = path
        self.lines = lines
        shown = ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in lines)
        super().__init__(f"your change to {path} overlaps the agent's at line(s) {shown}")


def rebase_change(change: FileChange, current_text: str, current_version: int | None) -> FileChange:
    """``change`` re-based onto ``current_text`` (module docstring).

    Args:
        change: the proposed edit, based on ``change.base_text``.
        current_text: the file's text now (the editor buffer's, else the disk's), decoded as the base was.
        current_version: the editor buffer's version of ``current_text``, or None for a closed file.

    Returns:
        A ``FileChange`` whose base is ``current_text`` (and ``current_version``) and whose new text holds
        both the user's and the agent's changes. Unchanged when ``current_text`` is the base.

    Raises:
        MergeConflict: both changed the same lines differently, or the file is new to the agent but
            exists now (there is no common base to merge from).
    """
    if current_text == change.base_text:
        return replace(change, base_version=current_version)
    if change.is_new:
        raise MergeConflict(change.path, [(1, max(1, len(current_text.splitlines())))])
    base = change.base_text.splitlines(keepends=True)
    user = current_text.splitlines(keepends=True)
    agent = change.new_text.splitlines(keepends=True)
    merged: list[str] = []
    conflicts: list[tuple[int, int]] = []
    for found in merge3.Merge3(base, user, agent).merge_regions():
        region: tuple[Any, ...] = tuple(found)  # merge3 types every region as a 3-tuple; conflicts have 7
        kind = region[0]
        if kind == "unchanged":
            merged.extend(base[region[1] : region[2]])
        elif kind in ("a", "same"):
            merged.extend(user[region[1] : region[2]])
        elif kind == "b":
            merged.extend(agent[region[1] : region[2]])
        else:  # "conflict": (kind, base start, base end, user start, user end, agent start, agent end)
            start, end = region[3], region[4]
            conflicts.append((start + 1, max(start + 1, end)))
    if conflicts:
        raise MergeConflict(change.path, conflicts)
    return replace(change, base_text=current_text, base_version=current_version, new_text="".join(merged))


MAX_REBASE_BYTES = 8 * 1024 * 1024
"""The largest file re-based from disk; a larger one that changed is refused, as before."""


def disk_text_now(path: Path, change: FileChange) -> str | None:
    """The text of ``path`` on disk, decoded as ``change``'s base was (its encoding and byte order mark),
    or None when it is missing, over ``MAX_REBASE_BYTES``, or no longer in that encoding."""
    try:
        if path.stat().st_size > MAX_REBASE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    bom = change.encoding.bom
    if bom and not data.startswith(bom):
        return None
    try:
        return data[len(bom) :].decode(change.encoding.codec)
    except (UnicodeDecodeError, LookupError):
        return None
