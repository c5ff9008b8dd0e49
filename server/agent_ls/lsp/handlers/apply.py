"""``agent.applyProposal``: the proposal, or the files named, to the editor as one ``workspace/applyEdit``.

Applying (``agent.applyProposal {sessionId?, files?}``), in order:
1. take the files named (every file by default; ``proposal_files.select``, a URI not in the proposal is an
   InvalidParams error); the others stay pending;
2. refuse with a plain reason when the client cannot take the edit (no applyEdit, a new file without
   resource operations) or when a file changed since the agent read it: the proposal is then re-based
   onto the current text by a three-way merge for the user to review and apply again, or, when the
   user's change and the agent's overlap, kept as it was (never guessed);
3. without change-annotation support, ask first (``apply_questions``: one question for one file, one per
   file for more);
4. send ONE ``workspace/applyEdit`` (a plain ``changes`` map for clients without documentChanges);
5. once applied, reconcile: with change annotations the user may have unticked changes in a preview, so
   each file's new text tells which changes landed (``workspace.reconcile``); those leave the proposal,
   the others stay pending, re-based on the new text. The result says "applied 3 of 5 changes in 2 files;
   2 changes kept".
The proposal is kept unless the client applied it.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import replace
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from agent_ls.core.proposal import FileChange
from agent_ls.lsp import protocol as p
from agent_ls.lsp.buffers import EditorBuffers
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.convert import EditNotSupported, build_workspace_edit
from agent_ls.lsp.handlers import proposal_files, sessions
from agent_ls.lsp.handlers.apply_questions import Answers, ask_before_apply
from agent_ls.lsp.handlers.commands import assemble_for
from agent_ls.lsp.state import AgentLanguageServer, SessionEntry
from agent_ls.policy.apply_check import edit_refusal
from agent_ls.workspace.apply import disk_stale_reason, refused_edits
from agent_ls.workspace.overlay import OpenBuffer
from agent_ls.workspace.rebase import MergeConflict, disk_text_now, rebase_change
from agent_ls.workspace.reconcile import Reconciled, reconcile
from agent_ls.workspace.text_edits import line_hunks

DID_CHANGE_WAIT_S = 1.0
"""How long an apply through a preview waits for the editor's didChange of the documents it edited."""


def _refusal(reason: str) -> dict[str, Any]:
    return p.ApplyProposalResult(applied=False, failure_reason=reason).wire()


def _rebase_or_refuse(
    buffers: dict[str, OpenBuffer | None], root: Path, changes: list[FileChange]
) -> tuple[list[FileChange], list[FileChange], str | None]:
    """The changes to send, versioned against the editor's buffers; or why they cannot be sent now.

    A buffer whose version moved on but whose text is still what the agent read (typed, then undone;
    saved) is not stale: the edit is rebased on its current version. A file whose text changed since the
    agent read it (typed in the editor, saved from elsewhere) is re-based by a three-way merge
    (``workspace.rebase``): the merged changes come back second, for the session to keep, and the apply
    is refused so that the user reviews the merged proposal before applying it. A merge that conflicts,
    a new file that now exists, and a file that can no longer be read are refused with the proposal
    kept as it was. Blocking (disk reads, merges): run in a worker thread.

    Args:
        buffers: each change's open editor buffer (None: not open), read on the event loop (pygls'
            documents are not for threads).
        root: the workspace folder.
        changes: the proposal.

    Returns:
        (the changes to send, the re-based changes to keep, the reason not to send now or None).
    """
    again = "; the proposal is kept as it was: run the task again, or discard it"
    to_send: list[FileChange] = []
    merged: list[FileChange] = []
    for change in changes:
        path = root / change.path
        buffer = buffers.get(change.path)
        if buffer is not None and change.is_new:
            return [], [], f"{change.path} was created in the editor after the agent proposed it" + again
        current: str | None
        if buffer is not None:
            current, version, where = buffer.text, buffer.version, "in the editor"
        else:
            if (reason := disk_stale_reason(root, change)) is None:
                to_send.append(change)
                continue
            current, version, where = disk_text_now(path, change), None, "on disk"
            if current is None or change.is_new:
                return [], [], reason + again
        if current == change.base_text:
            to_send.append(replace(change, base_version=version))
            continue
        try:
            merged.append(rebase_change(change, current, version))
        except MergeConflict as conflict:
            return [], [], f"{change.path} changed {where} since the agent read it, and {conflict}" + again
    if merged:
        names = ", ".join(change.path for change in merged)
        return (
            [],
            merged,
            (
                f"{names} changed since the agent read it: the proposal was re-based onto the current text "
                "(a three-way merge kept your change and the agent's); review it and apply again"
            ),
        )
    return to_send, [], None


async def apply_proposal(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    params = parse_params(p.ProposalFilesParams, arguments)
    result = await _apply(ls, params)
    outcome = "applied" if result["applied"] else f"not applied: {result['failureReason']}"
    if result["applied"] and result["keptFiles"]:
        outcome = f"applied in part: {result['message']}"
    entry = ls.state.sessions.get(params.session_id) if params.session_id else None
    payload = {"applied": result["applied"], "failureReason": result["failureReason"]}
    if result["applied"]:
        payload["message"] = result["message"]
    sessions.record(entry, "apply", payload)
    ls.window_log_message(t.LogMessageParams(type=t.MessageType.Info, message=f"■ apply: {outcome}"))
    return result


async def _apply(ls: AgentLanguageServer, params: p.ProposalFilesParams) -> dict[str, Any]:
    entry = await sessions.entry_for(ls, params.session_id, functools.partial(assemble_for, ls))
    if entry is None:
        return _refusal(f"no session {params.session_id}" if params.session_id else "no agent run yet")
    if entry.run_task is not None and not entry.run_task.done():
        return _refusal("the run is still going; wait for it to end or cancel it first")
    session, flags = entry.session, ls.state.flags
    changes = proposal_files.select(session.root, session.proposal(), params.files)
    if not changes:
        return _refusal("there is no proposed change to apply")
    if (refused := refused_edits(changes, edit_refusal(session.policy))) is not None:
        return _refusal(refused)  # a stored proposal is judged again (policy.apply_check)
    if not flags.apply_edit:
        return _refusal(
            "the editor does not support workspace/applyEdit; "
            "use `agent-ls run --apply` or a client that does"
        )
    editor = EditorBuffers(ls.workspace)
    buffers = {change.path: editor.get(session.root / change.path) for change in changes}
    # The re-base (disk reads, merges) and the edit (a diff per file) run in a worker thread: the
    # editor's hovers and code actions are answered meanwhile.
    changes, merged, stale = await asyncio.to_thread(_rebase_or_refuse, buffers, session.root, changes)
    if merged:
        proposal_files.keep_rebased(entry, merged)
    if stale is not None:
        return _refusal(stale)
    build = functools.partial(
        build_workspace_edit,
        root=session.root,
        encoding=ls.workspace.position_encoding or t.PositionEncodingKind.Utf16,
        change_annotations=flags.change_annotations,
        resource_create=flags.resource_create,
        label=entry.task_text[:60],
        # Without documentChanges the edit is an unversioned `changes` map; the stale check above
        # is then the only guard, which is why it runs for every file first.
        document_changes=flags.document_changes,
    )
    try:
        edit = await asyncio.to_thread(build, changes)
        if not flags.change_annotations and flags.show_message_request:
            answers = await ask_before_apply(ls, changes)
            proposal_files.forget(entry, [change.path for change in answers.discard], "discarded")
            if not answers.apply:
                return _refusal(_unanswered(answers, session.proposal()))
            if len(answers.apply) < len(changes):
                changes = answers.apply
                edit = await asyncio.to_thread(build, changes)
    except EditNotSupported as exc:
        return _refusal(str(exc))
    try:
        result = await ls.workspace_apply_edit_async(
            t.ApplyWorkspaceEditParams(edit=edit, label=f"agent-ls: {entry.task_text[:60]}")
        )
    except JsonRpcException as exc:  # eglot answers a declined edit with an error, not applied=false
        return _refusal(f"the editor declined the edit ({exc.message}); the proposal is kept")
    if not result.applied:
        # VS Code's Refactor Preview answers applied=false without a reason when nothing was ticked.
        reason = result.failure_reason or (
            "the editor did not apply the edit (in a preview, tick the changes before Apply)"
        )
        return _refusal(f"{reason}; the proposal is kept")
    # Annotations go only with documentChanges (lsp/convert.py): only then can a preview untick changes.
    preview = flags.change_annotations and flags.document_changes
    if preview:
        sent = {change.path for change in changes}
        versions = {path: b.version for path, b in buffers.items() if b is not None and path in sent}
        await _buffers_changed(ls, session.root, versions)
    return await _reconciled(ls, entry, changes, preview=preview)


async def _buffers_changed(ls: AgentLanguageServer, root: Path, versions: dict[str, int]) -> None:
    """Wait until each open document the edit went to (``versions``: workspace-relative path to the
    version it had before) has a newer version, at most ``DID_CHANGE_WAIT_S`` seconds.

    VS Code may answer ``workspace/applyEdit`` before its ``didChange`` for the applied text reaches the
    server (observed in about one apply in three in the code-server e2e); reconciling then would find
    the old text and keep every change pending. A document whose changes were all unticked keeps its
    version: the wait then ends at the bound, and the reconcile finds that nothing of it landed.
    """
    editor = EditorBuffers(ls.workspace)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DID_CHANGE_WAIT_S
    while loop.time() < deadline:
        if all(
            (buffer := editor.get(root / path)) is None or buffer.version != version
            for path, version in versions.items()
        ):
            return
        await asyncio.sleep(0.01)


def _unanswered(answers: Answers, pending: list[FileChange]) -> str:
    """Why nothing was applied after the ask-before-apply questions."""
    if answers.cancelled:
        return "not applied: the prompt was dismissed; the proposal is kept"
    still = f"; {_count(len(pending), 'file')} still pending" if pending else ""
    if answers.discard:
        return "discarded by the user" + still
    return "not applied: every file was skipped" + still


async def _reconciled(
    ls: AgentLanguageServer, entry: SessionEntry, sent: list[FileChange], *, preview: bool
) -> dict[str, Any]:
    """The session after the editor applied ``sent``: what landed leaves the proposal, the rest stays.

    Only an edit that went with change annotations (``needsConfirmation``) may have been applied in part:
    the user can untick changes in the editor's preview. Each file is then reconciled with its document's
    new text (``workspace.reconcile``): the open buffer, as the editor's didChange left it
    (``_buffers_changed`` waited for it), else the disk. Without annotations the editor applies all or
    nothing.
    """
    session = entry.session
    if preview:
        editor = EditorBuffers(ls.workspace)
        buffers = {change.path: editor.get(session.root / change.path) for change in sent}
        results = await asyncio.to_thread(_reconcile_all, session.root, sent, buffers)
    else:
        results = []
        for change in sent:
            total = len(line_hunks("" if change.is_new else change.base_text, change.new_text))
            results.append(Reconciled(change.path, total, total, None))
    proposal_files.forget(entry, [r.path for r in results if r.remaining is None], "applied")
    kept = [r.remaining for r in results if r.remaining is not None and r.conflict is None]
    proposal_files.keep_rebased(entry, kept)
    pending = session.proposal()
    applied = sum(r.landed for r in results)
    total = sum(r.total for r in results)
    files = sum(1 for r in results if r.landed)
    message = f"applied {applied} of {_count(total, 'change')} in {_count(files, 'file')}"
    if applied < total:
        message += f"; {_count(total - applied, 'change')} kept"
    others = len({c.path for c in pending} - {r.path for r in results})
    if others:
        message += f"; {_count(others, 'other file')} still pending"
    for r in results:
        if r.conflict is not None:
            message += f"; {r.conflict}: kept as proposed"
    return p.ApplyProposalResult(
        applied=True,
        message=message,
        changes_applied=applied,
        changes_kept=total - applied,
        kept_files=proposal_files.uris(session.root, pending),
    ).wire()


def _reconcile_all(
    root: Path, sent: list[FileChange], buffers: dict[str, OpenBuffer | None]
) -> list[Reconciled]:
    """``reconcile`` of each file with its buffer's text, else the disk's. Blocking (disk reads)."""
    results = []
    for change in sent:
        buffer = buffers.get(change.path)
        if buffer is not None:
            results.append(reconcile(change, buffer.text, buffer.version))
        else:
            results.append(reconcile(change, disk_text_now(root / change.path, change), None))
    return results


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
