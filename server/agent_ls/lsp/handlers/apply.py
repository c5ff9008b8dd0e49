"""``agent.applyProposal``: hand the proposal to the editor as one ``workspace/applyEdit``.

Applying (``agent.applyProposal``), in order:
1. refuse with a plain reason when the client cannot take the edit (no applyEdit, a new file without
   resource operations) or when a file changed since the agent read it: the proposal is then re-based
   onto the current text by a three-way merge for the user to review and apply again, or, when the
   user's change and the agent's overlap, kept as it was (never guessed);
2. without change-annotation support, ask "Apply N files (+a −d)?" first;
3. send ONE ``workspace/applyEdit`` (a plain ``changes`` map for clients without documentChanges).
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
from agent_ls.lsp.handlers import sessions
from agent_ls.lsp.handlers.commands import assemble_for, proposal_summary
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.workspace.apply import disk_stale_reason
from agent_ls.workspace.overlay import OpenBuffer
from agent_ls.workspace.rebase import MergeConflict, disk_text_now, rebase_change


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
        return [], merged, (
            f"{names} changed since the agent read it: the proposal was re-based onto the current text "
            "(a three-way merge kept your change and the agent's); review it and apply again"
        )
    return to_send, [], None


async def apply_proposal(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    params = parse_params(p.SessionParams, arguments)
    result = await _apply(ls, params)
    outcome = "applied" if result["applied"] else f"not applied: {result['failureReason']}"
    entry = ls.state.sessions.get(params.session_id) if params.session_id else None
    sessions.record(entry, "apply", {"applied": result["applied"], "failureReason": result["failureReason"]})
    ls.window_log_message(t.LogMessageParams(type=t.MessageType.Info, message=f"■ apply: {outcome}"))
    return result


async def _apply(ls: AgentLanguageServer, params: p.SessionParams) -> dict[str, Any]:
    entry = await sessions.entry_for(ls, params.session_id, functools.partial(assemble_for, ls))
    if entry is None:
        return _refusal(f"no session {params.session_id}" if params.session_id else "no agent run yet")
    if entry.run_task is not None and not entry.run_task.done():
        return _refusal("the run is still going; wait for it to end or cancel it first")
    session, flags = entry.session, ls.state.flags
    changes = session.proposal()
    if not changes:
        return _refusal("there is no proposed change to apply")
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
        session.rebase(merged)
    if stale is not None:
        return _refusal(stale)
    try:
        edit = await asyncio.to_thread(
            build_workspace_edit,
            changes,
            root=session.root,
            encoding=ls.workspace.position_encoding or t.PositionEncodingKind.Utf16,
            change_annotations=flags.change_annotations,
            resource_create=flags.resource_create,
            label=entry.task_text[:60],
            # Without documentChanges the edit is an unversioned `changes` map; the stale check above
            # is then the only guard, which is why it runs for every file first.
            document_changes=flags.document_changes,
        )
    except EditNotSupported as exc:
        return _refusal(str(exc))
    if not flags.change_annotations and flags.show_message_request:
        summary = proposal_summary(changes)  # the edit's diffs, cached: no second diff
        reply = await ls.window_show_message_request_async(
            t.ShowMessageRequestParams(
                type=t.MessageType.Info,
                message=f"Apply {len(changes)} file(s) (+{summary.added} −{summary.removed})?",
                actions=[t.MessageActionItem(title="Apply"), t.MessageActionItem(title="Discard")],
            )
        )
        if reply is None or reply.title != "Apply":
            if reply is not None and reply.title == "Discard":
                session.discard()
                sessions.record(entry, "proposal_cleared", {"why": "discarded"})
                return _refusal("discarded by the user")
            return _refusal("not applied: the prompt was dismissed; the proposal is kept")
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
    session.discard()
    sessions.record(entry, "proposal_cleared", {"why": "applied"})
    return p.ApplyProposalResult(applied=True, failure_reason=None).wire()
