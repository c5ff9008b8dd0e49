"""Sessions across runs and processes: ``agent.listSessions``, ``agent.sessionHistory`` (a stored
session's runs), and the stored session behind a ``sessionId`` that ``agent.run``, ``agent.proposal``,
``agent.applyProposal`` and ``agent.discardProposal`` were given (docs/sessions.md).

A session id this server does not hold is looked for in the session store, in the folder of each open
workspace folder; found, the session is assembled anew for its workspace and the stored history,
proposal, approvals and skills are put back (``sessions.resume.restore``). Its proposal keeps the bases
the agent read: files changed since are reported stale (``window/logMessage``), and the apply re-bases
or refuses them as for any proposal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest

from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.lsp.render import usage_summary
from agent_ls.lsp.state import AgentLanguageServer, SessionEntry
from agent_ls.runtime import Session
from agent_ls.sessions.continuation import summaries
from agent_ls.sessions.history import HistoryItem, HistoryRun, history
from agent_ls.sessions.outputs import SessionOutputs
from agent_ls.sessions.resume import Restored, restore
from agent_ls.sessions.saved import SavedSession, replay
from agent_ls.sessions.store import SessionFormatError, SessionLog, SessionNotFound, SessionStore, check_id


def is_running(entry: SessionEntry | None) -> bool:
    return entry is not None and entry.run_task is not None and not entry.run_task.done()


def refuse_if_running(ls: AgentLanguageServer, session_id: str) -> None:
    """Raise a JSON-RPC InvalidRequest when ``session_id`` has a run going in this server."""
    if is_running(ls.state.sessions.get(session_id)):
        raise JsonRpcInvalidRequest(
            f"session {session_id} is running a task; wait for its agent/runEnded or cancel it (agent.cancel)"
        )


def _find(store: SessionStore, roots: list[Path], session_id: str) -> tuple[Path, SavedSession]:
    """The workspace root and stored session of ``session_id``. Blocking.

    Raises:
        SessionNotFound, SessionFormatError: as ``SessionStore.read``.
    """
    check_id(session_id)
    for root in roots:
        if store.path(root, session_id).is_file():
            return root, replay(store.read(root, session_id))
    raise SessionNotFound(f"no session {session_id} is stored for the open workspace folders")


async def saved_session(ls: AgentLanguageServer, session_id: str) -> tuple[Path, SavedSession]:
    """``_find`` in a worker thread; its errors become JSON-RPC InvalidParams."""
    try:
        return await asyncio.to_thread(_find, ls.state.store, list(ls.state.roots), session_id)
    except (SessionNotFound, SessionFormatError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


def open_log(ls: AgentLanguageServer, session: Session, *, new: bool) -> SessionLog:
    store = ls.state.store
    return (
        store.create(session.root, session.session_id)
        if new
        else store.reopen(session.root, session.session_id)
    )


async def put_back(ls: AgentLanguageServer, session: Session, saved: SavedSession) -> Restored:
    """``restore`` in a worker thread, and a log message naming stale or dropped files."""
    restored = await asyncio.to_thread(restore, session, saved)
    notes = []
    if restored.stale:
        notes.append(
            f"changed since the agent read them (the apply re-bases them): {', '.join(restored.stale)}"
        )
    if restored.dropped:
        notes.append(f"left out (a key was redacted from their text): {', '.join(restored.dropped)}")
    if notes:
        message = f"agent-ls: session {session.session_id}: proposed files " + "; ".join(notes)
        ls.window_log_message(t.LogMessageParams(type=t.MessageType.Warning, message=message))
    return restored


Assemble = Callable[[Path, str], Awaitable[Session]]
"""Assembles a session with the given id for a workspace root (``commands.assemble_for``)."""


async def entry_for(
    ls: AgentLanguageServer, session_id: str | None, assemble: Assemble
) -> SessionEntry | None:
    """The session ``session_id`` (the latest one of this server when None): held here, else loaded from
    the store, assembled with ``assemble`` and registered without a run. None when there is none."""
    if session_id is None:
        return next(reversed(ls.state.sessions.values()), None)
    held = ls.state.sessions.get(session_id)
    if held is not None:
        return held
    try:
        root, saved = await saved_session(ls, session_id)
    except JsonRpcInvalidParams:
        return None
    session = await assemble(root, session_id)
    await put_back(ls, session, saved)
    session.close()  # no run: the shadow copy is not needed; the proposal stays readable
    entry = SessionEntry(session=session, task_text=saved.title, progress_token="")
    entry.log = open_log(ls, session, new=False)
    session.keep_outputs(SessionOutputs(entry.log))  # agent.compact's placeholders name read_output
    ls.state.sessions[session_id] = entry
    return entry


def record(entry: SessionEntry | None, kind: str, payload: dict[str, Any]) -> None:
    """Append one event to the entry's session file (nothing when it has none)."""
    if entry is not None and entry.log is not None:
        entry.log.append(kind, payload)


def _summaries(
    store: SessionStore, roots: list[Path], uri: str | None, running: set[str]
) -> list[dict[str, Any]]:
    """``continuation.summaries`` of ``roots`` (only the deepest holding ``uri`` when given). Blocking."""
    if uri:
        fs = to_fs_path(uri)
        path = Path(fs).resolve() if fs else None
        holding = [r for r in roots if path is not None and path.is_relative_to(r)]
        roots = [max(holding, key=lambda r: len(r.parts))] if holding else []
    return summaries(store, roots, running)


async def list_sessions(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.listSessions {uri?}``: the stored sessions of the folder holding ``uri`` (else of every open
    folder), newest first (``ListSessionsResult``)."""
    params = parse_params(p.ListSessionsParams, arguments)
    roots = list(ls.state.roots)
    running = {sid for sid, entry in ls.state.sessions.items() if is_running(entry)}
    sessions = await asyncio.to_thread(_summaries, ls.state.store, roots, params.uri, running)
    return p.ListSessionsResult(sessions=sessions).wire()


def _history(
    store: SessionStore, roots: list[Path], session_id: str
) -> tuple[list[HistoryRun], SavedSession]:
    """The runs and the replayed session of ``session_id``, from its file. Blocking.

    Raises:
        SessionNotFound, SessionFormatError: as ``SessionStore.read``.
    """
    check_id(session_id)
    for root in roots:
        if store.path(root, session_id).is_file():
            stored = store.read(root, session_id)
            return history(stored.records), replay(stored)
    raise SessionNotFound(f"no session {session_id} is stored for the open workspace folders")


def _item_wire(item: HistoryItem) -> p.HistoryItemWire:
    if item.kind == "text":
        return p.HistoryItemWire(kind="text", text=item.text)
    verdict = item.verdict if item.verdict in ("allow", "ask", "deny") else None
    return p.HistoryItemWire(
        kind="tool",
        tool_name=item.tool_name,
        arguments=item.arguments,
        verdict=verdict,  # type: ignore[arg-type]  # narrowed to the Literal by the check above
        rule=item.rule,
        approval=p.APPROVAL_ANSWERS.get(item.approval or ""),
        result=item.result,
        is_error=item.is_error,
    )


async def session_history(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.sessionHistory {sessionId}``: the stored session's runs, oldest first, and its todo list
    (``SessionHistoryResult``), so an editor resuming it shows what was said. InvalidParams when no open
    folder stores it."""
    params = parse_params(p.SessionHistoryParams, arguments)
    try:
        runs, saved = await asyncio.to_thread(
            _history, ls.state.store, list(ls.state.roots), params.session_id
        )
    except (SessionNotFound, SessionFormatError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    wire_runs = [
        p.HistoryRunWire(
            task=run.task,
            items=[_item_wire(item) for item in run.items],
            status=run.status,
            reason=run.reason,
            usage=usage_summary(run.usage) if run.usage is not None else None,
            mode="plan" if run.mode == "plan" else "default",
            plan=p.PlanWire.model_validate(run.plan.wire()) if run.plan is not None else None,
            usage_by_role={role: usage_summary(usage) for role, usage in run.usage_by_role.items()},
            checks=[
                p.CheckWire(
                    command=c.command, passed=c.passed, exit_code=c.exit_code, output_tail=c.output_tail
                )
                for c in run.checks
            ],
            not_verified=run.not_verified,
        )
        for run in runs
    ]
    todos = [p.TodoWire(content=t.content, status=t.status, active_form=t.active_form) for t in saved.todos]
    return p.SessionHistoryResult(session_id=params.session_id, runs=wire_runs, todos=todos).wire()
