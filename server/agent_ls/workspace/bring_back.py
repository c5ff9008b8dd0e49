"""Bringing a command's file changes from the shadow copy back into the proposal, or saying why not.

After each command (``ShellRunner.run``), ``bring_back`` looks at the copy's reviewable files that the
command changed, created or deleted (``ShadowCopy.changes_since``), in path order:

1. after a timeout nothing comes back: every change is undone at the next sync;
2. a changed file comes back (``Overlay.propose``) when it is a regular file of at most
   ``max_file_bytes``, its bytes are text in the file's own encoding (a legacy file stays in its code
   page; a new file's encoding is detected, ``file_encoding.decode``), its path passes the path rules
   and ``may_propose`` (the permission engine's edit verdict), the workspace's version is still the one
   the command ran on (the user did not save or type meanwhile: its output would undo that), and the
   proposal accepts it (not changed since the agent read it, at most ``MAX_FILES_BROUGHT_BACK`` files
   per command);
3. anything else is undone in the copy at the next sync, and *left out*: each such file is named with
   its reason in a note after the command's output, and in ``BroughtBack.left_out`` so that the run's
   end names it too (a change is never dropped silently). Deletions are left out as well: a proposal
   cannot delete a file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_ls.core.errors import ToolError
from agent_ls.core.proposal import TextEncoding
from agent_ls.workspace import file_encoding
from agent_ls.workspace.disk_text import TooLarge
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.shadow_state import CommandTree, Snapshot

MAX_FILES_BROUGHT_BACK = 500
"""The most files one command brings back into the proposal; the rest are left out."""
_NAMES_SHOWN = 20


@dataclass(frozen=True)
class BroughtBack:
    """The outcome of one command's changes.

    Attributes:
        notes: the ``[agent-ls: ...]`` lines for after the output, each ending with a newline; "" for none.
        proposed: the paths whose proposal changed, in order.
        left_out: ``path (why)`` for each change that did not come into the proposal, in path order.
    """

    notes: str
    proposed: tuple[str, ...]
    left_out: tuple[str, ...]


async def bring_back(
    shadow: CommandTree,
    overlay: Overlay,
    before: Snapshot,
    *,
    timed_out: bool,
    max_file_bytes: int,
    may_propose: Callable[[str], bool] | None,
) -> BroughtBack:
    """Propose the command's reviewable changes since ``before``; undo and name the rest."""
    changes = await shadow.changes_since(before)
    if timed_out:
        undone = [*changes.changed, *changes.deleted]
        await shadow.restore(undone)
        note = _note("the command timed out; its file changes were undone, not proposed", undone)
        return BroughtBack(note, (), tuple(f"{rel} (the command timed out)" for rel in undone))
    proposed: list[str] = []
    refused: list[tuple[str, str]] = []
    for rel in changes.changed:
        if len(proposed) >= MAX_FILES_BROUGHT_BACK:
            refused.append((rel, f"over {MAX_FILES_BROUGHT_BACK} files changed by one command"))
            continue
        outcome = await _propose_from_copy(shadow, overlay, rel, max_file_bytes, may_propose)
        if isinstance(outcome, str):
            refused.append((rel, outcome))
        elif outcome:
            proposed.append(rel)
    await shadow.restore([*(rel for rel, _ in refused), *changes.deleted])
    named = [f"{rel} ({why})" for rel, why in refused]
    notes = "".join(
        (
            _note("brought into the proposal", proposed),
            _note("not brought into the proposal", named),
            _note("deleted in the copy, not proposed (a proposal cannot delete files)", changes.deleted),
        )
    )
    deleted = [f"{rel} (deleted; a proposal cannot delete files)" for rel in changes.deleted]
    return BroughtBack(notes, tuple(proposed), tuple(sorted([*named, *deleted])))


async def _propose_from_copy(
    shadow: CommandTree,
    overlay: Overlay,
    rel: str,
    max_file_bytes: int,
    may_propose: Callable[[str], bool] | None,
) -> bool | str:
    """Propose the copy's text of ``rel``: True when the proposal changed, False when it already held
    that text, else why it cannot come back (a few words)."""
    data = await asyncio.to_thread(shadow.read_changed, rel, max_file_bytes)
    if data is None:
        return f"over {max_file_bytes:,} bytes, or not a regular file"
    try:
        if overlay.resolve(rel) != rel:
            return "refused by the path rules"
    except ToolError:
        return "refused by the path rules"
    known: TextEncoding | None = None
    current: str | None = None
    if overlay.exists(rel):
        try:
            current = overlay.read_text(rel)
        except TooLarge:
            return "the workspace's file is too large to edit"
        except ToolError:
            return "binary, or not text"  # so is the workspace's file: nothing to review
        known = overlay.encoding_of(rel)
    decoded = _text_of(data, known)
    if isinstance(decoded, str):
        return decoded
    text, encoding = decoded
    if may_propose is not None and not may_propose(rel):
        return "refused by the policy"
    if shadow.moved_since_sync(rel, overlay.unsaved_file(rel)):
        return "the file changed in the workspace while the command ran; run it again"
    if current == text:
        return False
    try:
        return overlay.propose(rel, text, encoding=encoding)
    except ToolError as exc:
        return str(exc)


def _text_of(data: bytes, known: TextEncoding | None) -> tuple[str, TextEncoding] | str:
    """``data`` as text in the file's encoding ``known`` (None for a new file: detected), or why not."""
    try:
        if known is not None:
            return file_encoding.decode_as(data, known), known
        return file_encoding.decode(data)
    except file_encoding.NotText:
        pass
    if known is not None:
        try:
            _, found = file_encoding.decode(data)
        except file_encoding.NotText:
            return "binary, or not text"
        return f"now {found.label} text, no longer {known.label}, the file's encoding"
    return "binary, or not text"


def _note(what: str, rels: Sequence[str]) -> str:
    """``[agent-ls: <what>: a, b, and N more]`` and a newline, or ``""`` when ``rels`` is empty."""
    if not rels:
        return ""
    shown = ", ".join(rels[:_NAMES_SHOWN])
    more = f", and {len(rels) - _NAMES_SHOWN} more" if len(rels) > _NAMES_SHOWN else ""
    return f"[agent-ls: {what}: {shown}{more}]\n"
