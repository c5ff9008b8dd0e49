"""The ``agent.*`` commands (``workspace/executeCommand``).

Each takes one camelCase object, read by ``lsp/command_args.py`` (which also accepts the ways clients
say "no argument"), and returns an object (``lsp/protocol.py``). ``agent.run``
returns at once and runs in a background task: pygls does not stop a command coroutine when its
request is cancelled, so cancel goes through ``agent.cancel`` or ``window/workDoneProgress/cancel``
on the run's token.
Applying a proposal is in ``apply.py``, discarding it in ``proposal_files.py``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest

from agent_ls.assembly import assemble_session, mcp_hub_for
from agent_ls.config import LoadedConfig
from agent_ls.core.context import Focus
from agent_ls.core.events import RunEnded
from agent_ls.core.proposal import FileChange
from agent_ls.instructions.activation import find_skill
from agent_ls.instructions.agent_context import AgentContext, load_agent_context
from agent_ls.lsp import protocol as p
from agent_ls.lsp.approver import LspApprover
from agent_ls.lsp.buffers import EditorBuffers
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.editor_problems import WorkspaceProblems, focus_problems
from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.lsp.handlers import config_files, sessions, telemetry
from agent_ls.lsp.render import LspEventRenderer, usage_summary
from agent_ls.lsp.state import AgentLanguageServer, SessionEntry
from agent_ls.runtime import CONTEXT_COMMAND, Session
from agent_ls.sessions.resume import SessionRecorder
from agent_ls.sessions.run_lock import RunLock, SessionBusy
from agent_ls.settings import EnvSnapshot, process_environ
from agent_ls.workspace.diffs import line_counts, unified_diff

log = logging.getLogger(__name__)


def session_entry(ls: AgentLanguageServer, session_id: str | None) -> SessionEntry | None:
    """The session ``session_id``, or the latest one when it is None."""
    if session_id is None:
        return next(reversed(ls.state.sessions.values()), None)
    return ls.state.sessions.get(session_id)


def _file_path(uri: str | None) -> Path | None:
    if not uri:
        return None
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs else None


def root_for(ls: AgentLanguageServer, file_path: Path | None) -> Path:
    """The workspace folder holding ``file_path`` (the deepest), else the first folder, else the file's
    own folder. Raises ``JsonRpcInvalidParams`` with no folder and no file."""
    roots = sorted(ls.state.roots, key=lambda r: len(r.parts), reverse=True)
    root = next((r for r in roots if file_path and file_path.is_relative_to(r)), None)
    if root is not None:
        return root
    if ls.state.roots:
        return ls.state.roots[0]
    if file_path is not None:
        return file_path.parent
    raise JsonRpcInvalidParams("no workspace folder is open and no uri was given")


def _diagnostic_lines(diagnostics: list[p.WireDiagnostic] | None) -> tuple[str, ...]:
    """``line 3: error: message [source code]`` (1-based lines), for the task message."""
    names = {1: "error", 2: "warning", 3: "information", 4: "hint"}
    lines = []
    for d in diagnostics or []:
        origin = " ".join(str(x) for x in (d.source, d.code) if x not in (None, ""))
        severity = names.get(d.severity or 0, "problem")
        message = " ".join(d.message.split())
        lines.append(
            f"line {d.range.start.line + 1}: {severity}: {message}" + (f" [{origin}]" if origin else "")
        )
    return tuple(lines)


def _root_and_focus(ls: AgentLanguageServer, params: p.RunParams) -> tuple[Path, Focus]:
    file_path = _file_path(params.uri)
    root = root_for(ls, file_path)
    if file_path is None or not file_path.is_relative_to(root):
        return root, Focus()
    path = file_path.relative_to(root).as_posix()
    focus = Focus(path=path, diagnostics=_diagnostic_lines(params.diagnostics))
    if params.diagnostics:  # "Fix this problem": the file's other problems come with the picked one
        focus = replace(focus, other_problems=tuple(focus_problems(ls, root, path, params.diagnostics)))
    if params.range is not None and params.uri:
        document = ls.workspace.get_text_document(params.uri)
        start, end = params.range.start, params.range.end
        selected = ""
        if (start.line, start.character) != (end.line, end.character):
            try:  # a file not open in the editor is read from disk, which may fail
                selected = document.source[
                    document.offset_at_position(_pos(start)) : document.offset_at_position(_pos(end))
                ]
            except (OSError, UnicodeDecodeError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                message = f"range: cannot read the selection from {file_path}: {why}"
                raise JsonRpcInvalidParams(message) from None
        # A selection ending at column 0 does not include that line (as editors show it).
        last = end.line if end.character == 0 and end.line > start.line else end.line + 1
        focus = replace(focus, start_line=start.line + 1, end_line=last, selected_text=selected)
    return root, focus


def _pos(position: p.WirePosition) -> t.Position:
    return t.Position(line=position.line, character=position.character)


def proposal_summary(changes: list[FileChange], session: Session | None = None) -> p.ProposalSummary:
    counts = [line_counts(c) for c in changes]
    return p.ProposalSummary(
        files=[c.path for c in changes],
        added=sum(a for a, _ in counts),
        removed=sum(r for _, r in counts),
        governed_by=session.governed_by(changes) if session is not None else {},
    )


async def run(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    return await _start(ls, parse_params(p.RunParams, arguments))


async def run_skill(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.runSkill``: ``agent.run`` with the task ``/<skill> <args>`` (explicit invocation)."""
    params = parse_params(p.RunSkillParams, arguments)
    task = f"/{params.skill} {params.args or ''}".strip()
    run_params = p.RunParams(
        task=task,
        uri=params.uri,
        range=params.range,
        model=params.model,
        diagnostics=params.diagnostics,
        session_id=params.session_id,
        mode=params.mode,
        checks=params.checks,
    )
    return await _start(ls, run_params, skill=params.skill)


async def _start(ls: AgentLanguageServer, params: p.RunParams, skill: str | None = None) -> dict[str, Any]:
    root, focus = _root_and_focus(ls, params)
    saved = None
    if params.session_id is not None:  # a follow-up: a session of this server or a stored one
        sessions.refuse_if_running(ls, params.session_id)
        saved_root, saved = await sessions.saved_session(ls, params.session_id)
        if saved_root != root:  # the session's own workspace folder
            root, focus = saved_root, Focus()
    file_path = _file_path(params.uri)
    if file_path is not None and focus.path is None:  # never silently: the run cannot see that file
        message = f"agent-ls: {file_path} is outside the workspace folder {root}; the run works without it"
        ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=message))
    settings = ls.state.settings
    config = config_files.for_root(ls, root)
    env = EnvSnapshot.from_environ()
    disabled = settings.mcp.disabled
    mcp_hub = mcp_hub_for(root, config, env, process_environ(), ls.state.mcp_hubs, disabled)  # starts nothing
    session = await asyncio.to_thread(
        functools.partial(
            assemble_session,
            root=root,
            approver=LspApprover(ls),
            environ=process_environ(),
            config=config,
            env=env,
            focus=root / focus.path if focus.path else None,
            model=params.model,
            editor=settings,
            buffers=EditorBuffers(ls.workspace),
            context_generation=lambda: ls.state.instructions_generation,
            secret_index=ls.state.secret_indexes.get(root, config),
            session_id=params.session_id,
            problems=WorkspaceProblems(ls, root),
            mcp_hub=mcp_hub,
        )
    )
    if saved is not None:
        await sessions.put_back(ls, session, saved)
        if sessions.is_running(ls.state.sessions.get(session.session_id)):  # a second run came meanwhile
            session.close()
            sessions.refuse_if_running(ls, session.session_id)
    if skill is not None and find_skill(session.context.skills, skill) is None:
        session.close()
        names = ", ".join(s.name for s in session.context.skills.skills) or "none"
        raise JsonRpcInvalidParams(f"no skill named {skill!r} in this workspace; skills: {names}")
    if params.max_tokens or params.max_cost_usd:  # this run's budgets, over the settings' and the config's
        session.limits = replace(
            session.limits,
            max_tokens=params.max_tokens or session.limits.max_tokens,
            max_cost_usd=params.max_cost_usd or session.limits.max_cost_usd,
        )
    if settings.trace != "off":  # agentLs.trace: each request in the editor's log, the key redacted
        session.show_request = functools.partial(_log_request, ls)
    lock = RunLock(ls.state.store.path(session.root, session.session_id))
    try:  # a run of this session in another process (``agent-ls run --continue``) goes first
        if params.task.strip() != CONTEXT_COMMAND:  # /context only reads
            lock.acquire()
    except SessionBusy as exc:
        session.close()
        raise JsonRpcInvalidRequest(str(exc)) from None
    token = f"agent-ls/{session.session_id}/{uuid.uuid4().hex[:8]}"
    entry = SessionEntry(session=session, task_text=params.task, progress_token=token, run_lock=lock)
    entry.log = sessions.open_log(ls, session, new=saved is None)
    recorder = SessionRecorder(entry.log, session, lambda event: None, runs=saved.runs if saved else 0)
    if saved is not None:
        recorder.pending_repairs(saved)
    ls.state.sessions[session.session_id] = entry
    entry.run_task = asyncio.get_running_loop().create_task(_drive(ls, entry, params, focus, recorder))
    return p.RunResult(session_id=session.session_id, progress_token=token).wire()


def _log_request(ls: AgentLanguageServer, text: str) -> None:
    ls.window_log_message(t.LogMessageParams(type=t.MessageType.Log, message=f"agent-ls request: {text}"))


async def _drive(
    ls: AgentLanguageServer, entry: SessionEntry, params: p.RunParams, focus: Focus, recorder: SessionRecorder
) -> None:
    session, token = entry.session, entry.progress_token
    renderer = LspEventRenderer(
        ls,
        session.session_id,
        token,
        progress=False,
        run_ended=lambda ended: _run_ended(session, ended),
    )
    recorder.forward = telemetry.traced(ls, renderer)  # written to the session file, then rendered
    if ls.state.flags.work_done_progress:
        try:
            await ls.work_done_progress.create_async(token)
            renderer.progress = True
            task = asyncio.current_task()
            loop = asyncio.get_running_loop()
            if task is not None:
                ls.work_done_progress.tokens[token].add_done_callback(
                    lambda fut: loop.call_soon_threadsafe(task.cancel) if fut.cancelled() else None
                )
        except Exception as exc:  # a client that refuses the token still gets the log and agent/* messages
            log.warning("window/workDoneProgress/create failed: %s", exc)
    try:
        await session.run(
            task=params.task,
            focus=focus,
            emit=recorder,
            usage_before=ls.state.usage,
            mode=params.mode,
            checks=params.checks,
            resources=[params.resource] if isinstance(params.resource, str) else params.resource or [],
        )
        if session.last_run is not None:  # summed, not copied: runs may overlap
            ls.state.usage = ls.state.usage + session.last_run.usage
    finally:
        ls.work_done_progress.tokens.pop(token, None)
        try:
            await renderer.run_ended_sent()  # its summary reads the proposal before the session closes
        finally:
            session.close()
            if entry.run_lock is not None:
                entry.run_lock.release()


async def _run_ended(session: Session, ended: RunEnded) -> p.RunEndedNotification:
    # Diffing every file of a large proposal takes a while: a worker thread does it, the editor's
    # hovers and code actions are answered meanwhile.
    summary = await asyncio.to_thread(proposal_summary, session.proposal(), session)
    return p.RunEndedNotification(
        session_id=session.session_id,
        status=ended.status,
        reason=ended.reason,
        answer=ended.answer,
        usage=usage_summary(ended.usage),
        session_usage=usage_summary(ended.session_usage),
        proposal=summary,
        mode=ended.mode,
        plan=p.PlanWire.model_validate(ended.plan.wire()) if ended.plan is not None else None,
        checks=[
            p.CheckWire(command=c.command, passed=c.passed, exit_code=c.exit_code, output_tail=c.output_tail)
            for c in ended.checks
        ],
        not_verified=list(ended.not_verified),
        usage_by_role={role: usage_summary(usage) for role, usage in ended.usage_by_role.items()},
    )


async def cancel(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    params = parse_params(p.SessionParams, arguments)
    entry = session_entry(ls, params.session_id)
    running = entry is not None and entry.run_task is not None and not entry.run_task.done()
    if running and entry is not None and entry.run_task is not None:
        entry.run_task.cancel()
    return p.CancelResult(cancelled=running).wire()


async def proposal(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    params = parse_params(p.SessionParams, arguments)
    entry = await sessions.entry_for(ls, params.session_id, functools.partial(assemble_for, ls))
    if entry is None:
        return p.ProposalResult(files=[]).wire()
    # The proposal is read here, on the event loop; its diffs are computed in a worker thread, so the
    # editor's hovers and code actions are answered while a large proposal is diffed.
    files = await asyncio.to_thread(_proposal_files, entry.session, entry.session.proposal())
    return p.ProposalResult(files=files).wire()


def _proposal_files(session: Session, changes: list[FileChange]) -> list[p.ProposalFile]:
    """Each change with its unified diff and counts (one cached diff per change). Blocking."""
    files: list[p.ProposalFile] = []
    for change in changes:
        added, removed = line_counts(change)
        files.append(
            p.ProposalFile(
                uri=(session.root / change.path).as_uri(),
                path=change.path,
                is_new=change.is_new,
                base_version=change.base_version,
                diff=unified_diff(change),
                added=added,
                removed=removed,
                original_text=change.base_text,
                proposed_text=change.new_text,
                instructions=session.context.governing(change.path),
            )
        )
    return files


async def assemble_for(ls: AgentLanguageServer, root: Path, session_id: str) -> Session:
    """A session ``session_id`` of ``root`` with no focus and the editor's model, for a stored session
    shown or applied without a run (``sessions.entry_for``)."""
    config = config_files.for_root(ls, root)
    return await asyncio.to_thread(
        functools.partial(
            assemble_session,
            root=root,
            approver=LspApprover(ls),
            environ=process_environ(),
            config=config,
            env=EnvSnapshot.from_environ(),
            editor=ls.state.settings,
            buffers=EditorBuffers(ls.workspace),
            context_generation=lambda: ls.state.instructions_generation,
            secret_index=ls.state.secret_indexes.get(root, config),
            session_id=session_id,
            own_mcp=False,  # shown or applied, never run: no MCP server
        )
    )


def _load_context(root: Path, focus: Path | None, config: LoadedConfig) -> AgentContext:
    """The chain and skills of ``root`` for the absolute path ``focus`` (None: the root). Blocking."""
    return load_agent_context(workspace_root=root, focus=focus, config=config, env=EnvSnapshot.from_environ())


async def _context_for(ls: AgentLanguageServer, uri: str | None) -> AgentContext:
    """The chain and skills for the file ``uri`` (or the first workspace folder), read in a thread. A file
    outside every folder gets the folder's chain, with a notice saying so."""
    file_path = _file_path(uri)
    root = root_for(ls, file_path)
    config = config_files.for_root(ls, root)
    return await asyncio.to_thread(_load_context, root, file_path, config)


async def list_skills(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.listSkills``: every skill found for the file, with source, path and diagnostics."""
    params = parse_params(p.ListSkillsParams, arguments)
    skills = (await _context_for(ls, params.uri)).skills
    return p.ListSkillsResult(
        skills=[s.wire() for s in skills.skills], skipped=[d.wire() for d in skills.skipped]
    ).wire()


async def instructions(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.instructions``: the AGENTS.md chain that applies to the file (order, bytes, truncation,
    imports)."""
    params = parse_params(p.InstructionsParams, arguments)
    chain = (await _context_for(ls, params.uri)).chain
    return chain.wire() if chain is not None else {}
