"""Applying a prompt's proposal over ACP: asked, checked for staleness, then written through the editor.

The agent's edits are a proposal (DESIGN.md); over ACP the user's act of applying is an answer to a
``session/request_permission`` asked when a prompt's run ends ``done`` with pending edits: "Apply the
changes to N files?", options ``apply`` (``allow_once``) and ``keep`` (``reject_once``). The question's
tool call (kind ``edit``) carries every file's ``diff`` content. Then, in order:

1. the edit rules judge every file again (``policy.apply_check``); one refused file refuses the apply;
2. every file is read again, through ``fs/read_text_file`` when the client offers it (the editor's
   unsaved text), else from disk, and must still be the text the agent read (``FileChange.base_text``;
   a new file must still not exist): else nothing is written, and a file the user changed is re-based
   onto their text by a three-way merge (``workspace.rebase``), kept as the proposal for the next
   prompt's apply, as a stale LSP apply is (``lsp/handlers/apply.py``); a merge that conflicts refuses;
3. each file is written with ``fs/write_text_file`` when the client offers it (so the editor's review UI
   tracks the change: Zed's needs it), else on disk all or nothing (``workspace.apply.apply_proposal``,
   which re-bases a file changed on disk like ``agent-ls run --apply``); when a client write fails, the
   files written before it leave the proposal (recorded), and the rest stays pending for the next Apply;
4. the session file records ``apply {applied, failureReason}`` and ``proposal_cleared`` on success, as
   ``agent-ls run --apply`` does; the proposal is then dropped from the session.

ACP v1's ``fs/write_text_file`` does not say whether the user kept the change in the editor; the apply
counts as done once the client answered each write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from acp import helpers, schema
from acp.interfaces import Client

from agent_ls.acp.update_stream import UpdateStream
from agent_ls.core.markdown_defang import defang_markdown
from agent_ls.core.proposal import FileChange
from agent_ls.policy.apply_check import edit_refusal
from agent_ls.runtime import Session
from agent_ls.sessions.pending import record_rebase
from agent_ls.sessions.records import change_json
from agent_ls.sessions.store import SessionLog
from agent_ls.workspace.apply import apply_proposal, disk_stale_reason, rebase_on_disk, refused_edits
from agent_ls.workspace.diffs import line_counts
from agent_ls.workspace.rebase import MergeConflict, rebase_change

log = logging.getLogger(__name__)

APPLY = "apply"
KEEP = "keep"


@dataclass(frozen=True)
class ClientFs:
    """What the client offers (``clientCapabilities.fs``)."""

    read: bool = False
    write: bool = False


def apply_question(session: Session, changes: list[FileChange], call_id: str) -> schema.ToolCallUpdate:
    """The tool call the apply question is about: its title and every file's diff."""
    counts = [line_counts(change) for change in changes]
    added, removed = sum(a for a, _ in counts), sum(r for _, r in counts)
    files = "1 file" if len(changes) == 1 else f"{len(changes)} files"
    return schema.ToolCallUpdate(
        tool_call_id=call_id,
        title=f"Apply the changes to {files} (+{added} −{removed} lines)?",
        kind="edit",
        status="pending",
        content=[
            helpers.tool_diff_content(
                str(session.root / c.path), c.new_text, None if c.is_new else c.base_text
            )
            for c in changes
        ],
        locations=[schema.ToolCallLocation(path=str(session.root / c.path)) for c in changes],
    )


APPLY_OPTIONS = [
    schema.PermissionOption(option_id=APPLY, name="Apply", kind="allow_once"),
    schema.PermissionOption(option_id=KEEP, name="Keep as a proposal", kind="reject_once"),
]


async def offer_apply(
    client: Client,
    stream: UpdateStream,
    session: Session,
    fs: ClientFs,
    log_file: SessionLog,
    written: Callable[[FileChange], None],
    call_id: str,
) -> str:
    """Ask, check and write (module docstring). Returns one line for the user. The question's tool call is
    announced first (``tool_call``, as a client correlates a question with a call it knows) and ends
    ``completed`` (applied, or kept) or ``failed`` (refused). ``written`` is told each file written through
    the client. Never raises except ``CancelledError``."""
    changes = session.proposal()
    if not changes:
        return ""
    question = apply_question(session, changes, call_id)
    stream.send(
        helpers.start_tool_call(
            call_id,
            question.title or "Apply",
            kind="edit",
            status="pending",
            content=question.content,
            locations=question.locations,
        )
    )
    await stream.drain()
    ok, message = await _ask_and_apply(client, stream.session_id, session, fs, log_file, written, question)
    message = defang_markdown(message).text  # it names the model's file paths and the editor's errors
    content = [helpers.tool_content(helpers.text_block(message))]
    stream.send(helpers.update_tool_call(call_id, status="completed" if ok else "failed", content=content))
    return message


async def _ask_and_apply(
    client: Client,
    session_id: str,
    session: Session,
    fs: ClientFs,
    log_file: SessionLog,
    written: Callable[[FileChange], None],
    question: schema.ToolCallUpdate,
) -> tuple[bool, str]:
    """(False when an accepted apply was refused or failed, the line for the user)."""
    changes = session.proposal()
    try:
        answer = await client.request_permission(
            session_id=session_id, tool_call=question, options=APPLY_OPTIONS
        )
    except Exception as exc:
        log.warning("session/request_permission for the apply failed: %s", exc)
        return True, "Not applied (the editor did not answer); the proposal stays pending."
    outcome = answer.outcome
    if not isinstance(outcome, schema.AllowedOutcome) or outcome.option_id != APPLY:
        return True, "Not applied; the proposal stays pending (the next prompt can change it)."
    return await _apply(client, session_id, session, fs, log_file, written, changes)


async def _apply(
    client: Client,
    session_id: str,
    session: Session,
    fs: ClientFs,
    log_file: SessionLog,
    written: Callable[[FileChange], None],
    changes: list[FileChange],
) -> tuple[bool, str]:
    judge = edit_refusal(session.policy)
    if (refused := refused_edits(changes, judge)) is not None:
        return _refused(log_file, f"not applying, nothing written: {refused}")
    if not fs.write:
        return _apply_on_disk(session, changes, judge, log_file)
    if fs.read:
        texts = [await _client_text(client, session_id, str(session.root / c.path)) for c in changes]
        if rebased := _rebase_on_editor(session, changes, texts, log_file):
            return False, rebased
    else:
        stale = [reason for change in changes if (reason := disk_stale_reason(session.root, change))]
        if stale:
            return _refused(log_file, f"not applying, nothing written: {'; '.join(stale)}")
    for done, change in enumerate(changes):
        try:
            await client.write_text_file(
                session_id=session_id, path=str(session.root / change.path), content=change.new_text
            )
        except Exception as exc:
            return _partly_written(session, log_file, changes[:done], changes[done:], f"{exc}")
        written(change)
    return _applied(session, log_file, len(changes))


def _rebase_on_editor(
    session: Session, changes: list[FileChange], texts: list[str | None], log_file: SessionLog
) -> str | None:
    """When files changed in the editor since the agent read them (``texts``: the editor's now): the
    session's proposal re-based onto them by a three-way merge (``workspace.rebase``), recorded, as
    ``agent.applyProposal`` does with a stale buffer; returns why nothing was written. A merge that
    conflicts, a new file that now exists or a file the editor cannot read refuses. None: none changed."""
    merged: list[FileChange] = []
    for change, current in zip(changes, texts, strict=True):
        if change.is_new:
            if current:
                return _refused(log_file, f"not applying, nothing written: {change.path} now exists")[1]
            continue
        if current is None:
            return _refused(log_file, f"not applying, nothing written: cannot read {change.path}")[1]
        if current == change.base_text:
            continue
        try:
            merged.append(rebase_change(change, current, None))
        except MergeConflict as conflict:
            reason = f"{change.path} changed since the agent read it, and {conflict}"
            return _refused(log_file, f"not applying, nothing written: {reason}")[1]
    if not merged:
        return None
    session.rebase(merged)
    log_file.append("proposal", {"changes": [change_json(c) for c in merged], "removed": []})
    names = ", ".join(change.path for change in merged)
    message = (
        f"not applying, nothing written: {names} changed since the agent read it; the proposal was re-based "
        "onto your text (a three-way merge kept your change and the agent's): Apply at the next prompt "
        "writes it"
    )
    log_file.append("apply", {"applied": False, "failureReason": message})
    return message


async def _client_text(client: Client, session_id: str, path: str) -> str | None:
    try:
        return (await client.read_text_file(session_id=session_id, path=path)).content
    except Exception:  # no such file (the client's error answer), or an editor that cannot read it
        return None


def _apply_on_disk(
    session: Session, changes: list[FileChange], judge: Callable[[str], str | None], log_file: SessionLog
) -> tuple[bool, str]:
    """The disk apply of ``agent-ls run --apply`` (``headless._run_locked``). A file changed on disk is
    re-based (recorded by ``record_rebase``) and the session's proposal takes the re-based text, so the next
    apply writes it."""
    if rebased := record_rebase(log_file, session.root, changes):
        session.rebase(rebase_on_disk(session.root, changes).merged)
        return False, rebased
    outcome = apply_proposal(session.root, changes, edit_refusal=judge)
    log_file.append("apply", {"applied": outcome.applied, "failureReason": outcome.message or None})
    if not outcome.applied:
        return False, outcome.message
    return _applied(session, log_file, len(changes), recorded=True)


def _applied(
    session: Session, log_file: SessionLog, files: int, *, recorded: bool = False
) -> tuple[bool, str]:
    if not recorded:
        log_file.append("apply", {"applied": True, "failureReason": None})
    log_file.append("proposal_cleared", {"why": "applied"})
    session.discard()
    return True, f"Applied the changes to {files} file{'' if files == 1 else 's'}."


def _partly_written(
    session: Session, log_file: SessionLog, written: list[FileChange], rest: list[FileChange], error: str
) -> tuple[bool, str]:
    """A client write failed after ``written`` were written: those leave the proposal (recorded as
    ``proposal {changes: [], removed, why: applied}``, as ``agent-ls apply`` of part of a proposal), so
    the next Apply writes only ``rest``."""
    failed = f"writing {rest[0].path} failed ({error})"
    if not written:
        return _refused(log_file, f"not applying, nothing written: {failed}")
    paths = [change.path for change in written]
    message = f"{failed}; written: {', '.join(paths)}; still pending: {', '.join(c.path for c in rest)}"
    log_file.append("apply", {"applied": False, "failureReason": message})
    log_file.append("proposal", {"changes": [], "removed": paths, "why": "applied"})
    session.overlay.drop(paths)
    return False, f"{message} (Apply at the next prompt writes them)."


def _refused(log_file: SessionLog, message: str) -> tuple[bool, str]:
    log_file.append("apply", {"applied": False, "failureReason": message})
    return False, f"{message}; the proposal stays pending."
