"""``agent-ls apply`` and ``agent-ls discard``: all or part of a stored session's proposal, from a terminal.

What ``agent.applyProposal {files}`` and ``agent.discardProposal {files}`` do in an editor, for a session
in the session store (docs/sessions.md), in order:

1. the files named (every pending file by default) are found in the stored proposal; a name that is not
   one of its files is refused (``NotInProposal``) and nothing changes;
2. ``apply`` writes them all or nothing (``workspace.apply.apply_proposal``: each file judged again by
   the edit rules, then checked against the text the agent read); a file the user changed since is
   re-based onto the user's text by a three-way merge and kept as the proposal, and the apply stops there
   for the user to apply again (``agent.applyProposal``'s behaviour); ``discard`` writes nothing;
3. the session file records it: ``apply {applied, failureReason}``, then the files that left the proposal
   (``proposal {changes: [], removed, why}``, or ``proposal_cleared {why}`` once nothing is left).

The caller holds the session's ``RunLock``. Prints nothing: the front end says what it returns.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_ls.core.proposal import FileChange
from agent_ls.sessions.records import change_json
from agent_ls.sessions.redaction import REDACTED
from agent_ls.sessions.saved import SavedSession
from agent_ls.sessions.store import SessionLog, SessionStore
from agent_ls.workspace.apply import apply_proposal, rebase_on_disk, refused_edits


class NotInProposal(ValueError):
    """User: a file named is not a file of the session's proposal; nothing was applied or discarded."""


@dataclass(frozen=True)
class Settled:
    """What ``settle`` did.

    Attributes:
        done: the workspace-relative paths applied (or discarded), in path order; ``[]`` when the apply
            was refused.
        pending: the paths still pending afterwards, in path order.
        message: one line for the user (the apply's own, or why it was refused).
        ok: False when the apply was refused (nothing written).
    """

    done: list[str]
    pending: list[str]
    message: str
    ok: bool = True


def chosen_paths(
    root: Path, saved: SavedSession, names: Sequence[Path], cwd: Path | None = None
) -> list[str]:
    """The proposal's paths of ``names``; every pending path when ``names`` is empty. Path order.

    A name is absolute (inside ``root``), or relative: to the current directory ``cwd`` (``Path.cwd()``
    when None) when that directory is inside ``root``, as Git reads a pathspec in a subfolder; else to
    ``root`` itself (``agent-ls apply --workspace DIR FILE`` from elsewhere names ``DIR/FILE``).

    Raises:
        NotInProposal: a name is outside ``root`` or not a file of the proposal; the message names the path
            it was read as and lists the proposal's files.
    """
    if not names:
        return sorted(saved.proposal)
    chosen: set[str] = set()
    real_root = root.resolve()
    here = (cwd or Path.cwd()).absolute()
    base_dir = here if here.is_relative_to(root) or here.resolve().is_relative_to(real_root) else root
    for name in names:
        absolute = name if name.is_absolute() else base_dir / name
        for base, target in ((root, Path(os.path.normpath(absolute))), (real_root, absolute.resolve())):
            rel = target.relative_to(base).as_posix() if target.is_relative_to(base) else None
            if rel in saved.proposal:
                chosen.add(rel)
                break
        else:
            pending = ", ".join(sorted(saved.proposal)) or "none"
            raise NotInProposal(
                f"{name} is not a file of the proposal of session {saved.session_id}: {pending} "
                f"(read as {absolute})"
            )
    return sorted(chosen)


def settle(
    store: SessionStore,
    root: Path,
    saved: SavedSession,
    paths: Sequence[str],
    *,
    apply: bool,
    edit_refusal: Callable[[str], str | None],
) -> Settled:
    """Apply (``apply``) or discard the pending edits of ``paths`` and record it (module docstring).

    ``edit_refusal`` judges each file again against the edit rules (``policy.apply_check``): the session
    file may have been written by another program, so a file the rules deny refuses the whole apply.

    A file whose proposed text lost a key to redaction (``[redacted]``) is never written: the apply is
    refused naming it (discarding it is fine). Never raises ``OSError`` for the files; the session file's
    own write errors are the store's (``SessionLog.append`` reports them).
    """
    changes = [saved.proposal[path] for path in paths]
    log = store.reopen(root, saved.session_id)
    message = ""
    try:
        if apply:
            redacted = [c.path for c in changes if REDACTED in c.new_text and REDACTED not in c.base_text]
            if redacted:
                message = f"not applying, nothing written: a key was redacted from {', '.join(redacted)}"
                log.append("apply", {"applied": False, "failureReason": message})
                return Settled([], sorted(saved.proposal), message, ok=False)
            if refused_edits(changes, edit_refusal) is None and (
                rebased := record_rebase(log, root, changes)
            ):
                return Settled([], sorted(saved.proposal), rebased, ok=False)
            outcome = apply_proposal(root, changes, edit_refusal=edit_refusal)
            message = "; ".join(filter(None, (outcome.recovered, outcome.message)))
            log.append(
                "apply", {"applied": outcome.applied, "failureReason": None if outcome.applied else message}
            )
            if not outcome.applied:
                return Settled([], sorted(saved.proposal), message, ok=False)
        why = "applied" if apply else "discarded"
        pending = sorted(set(saved.proposal) - set(paths))
        if pending:
            log.append("proposal", {"changes": [], "removed": list(paths), "why": why})
        else:
            log.append("proposal_cleared", {"why": why})
        return Settled(list(paths), pending, message)
    finally:
        log.close()


def record_rebase(log: SessionLog, root: Path, changes: Sequence[FileChange]) -> str | None:
    """When files changed on disk since the agent read them: the proposal re-based onto them and recorded
    in ``log`` (``workspace.apply.rebase_on_disk``), or the refusal of a merge that conflicts; returns the
    line saying so, recorded as a refused apply. None when no file changed: the apply goes on. The
    caller's ``Session``, if any, is not changed: the next process reads the re-based proposal."""
    rebased = rebase_on_disk(root, changes)
    if rebased.refusal is None and not rebased.merged:
        return None
    if rebased.refusal is not None:
        message = f"not applying, nothing written: {rebased.refusal}"
    else:
        log.append("proposal", {"changes": [change_json(c) for c in rebased.merged], "removed": []})
        names = ", ".join(change.path for change in rebased.merged)
        message = (
            f"not applying, nothing written: {names} changed on disk since the agent read it; the proposal "
            "was re-based onto your text (a three-way merge kept your change and the agent's): run "
            "agent-ls apply again to write it"
        )
    log.append("apply", {"applied": False, "failureReason": message})
    return message
