"""The language server: construction and the single table of what it answers.

Handlers live in ``lsp/handlers/<area>.py`` as plain functions whose first parameter is ``ls``;
this module only routes. Commands are wrapped by ``command_args.answering`` (errors name the command,
never carry a traceback). Document sync (didOpen/didChange/didClose) is pygls's built-in, which keeps
``ls.workspace`` current with the unsaved text the agent reads. pygls takes one handler per message: where
two areas listen to the same one, a function below calls both, in the order written.
"""

from __future__ import annotations

from lsprotocol import types as t

from agent_ls.lsp import editor_problems, protocol, stdio
from agent_ls.lsp.command_args import answering
from agent_ls.lsp.handlers import (
    agent_files,
    agent_hover,
    apply,
    code_actions,
    commands,
    compaction,
    config_files,
    context,
    findings,
    lifecycle,
    mcp_status,
    proposal_files,
    sessions,
    status,
    telemetry,
    trace_page,
)
from agent_ls.lsp.state import AgentLanguageServer


def build_server() -> AgentLanguageServer:
    """A new server with every handler registered. The table below is all the server answers."""
    server = AgentLanguageServer()
    server.feature(t.INITIALIZE)(_initialize)
    server.feature(t.INITIALIZED)(_initialized)
    server.feature(t.TEXT_DOCUMENT_DID_OPEN)(agent_files.did_open)
    server.feature(t.TEXT_DOCUMENT_DID_SAVE)(_did_save)
    server.feature(t.TEXT_DOCUMENT_CODE_ACTION, code_actions.OPTIONS)(code_actions.code_action)
    server.feature(t.TEXT_DOCUMENT_HOVER)(agent_hover.hover)
    server.feature(t.WORKSPACE_DID_CHANGE_CONFIGURATION)(lifecycle.did_change_configuration)
    server.feature(t.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(_did_change_workspace_folders)
    server.feature(t.WORKSPACE_DID_CHANGE_WATCHED_FILES)(agent_files.did_change_watched_files)
    server.feature(t.SHUTDOWN)(_shutdown)
    server.feature(protocol.AGENT_DID_CHANGE_PROBLEMS)(editor_problems.did_change_problems)
    for name, handler in (
        (protocol.CMD_RUN, commands.run),
        (protocol.CMD_CANCEL, commands.cancel),
        (protocol.CMD_PROPOSAL, commands.proposal),
        (protocol.CMD_APPLY_PROPOSAL, apply.apply_proposal),
        (protocol.CMD_DISCARD_PROPOSAL, proposal_files.discard_proposal),
        (protocol.CMD_LIST_SKILLS, commands.list_skills),
        (protocol.CMD_RUN_SKILL, commands.run_skill),
        (protocol.CMD_INSTRUCTIONS, commands.instructions),
        (protocol.CMD_CONTEXT, context.context),
        (protocol.CMD_LIST_SESSIONS, sessions.list_sessions),
        (protocol.CMD_SESSION_HISTORY, sessions.session_history),
        (protocol.CMD_TRACE_HTML, trace_page.trace_page),
        (protocol.CMD_COMPACT, compaction.compact),
        (protocol.CMD_CLEAR_FINDINGS, findings.clear_findings),
        (protocol.CMD_STATUS, status.status),
        (protocol.CMD_MCP_STATUS, mcp_status.mcp_status),
    ):
        server.command(name)(answering(name, handler))
    return server


def _initialize(ls: AgentLanguageServer, params: t.InitializeParams) -> None:
    lifecycle.initialize(ls, params)
    editor_problems.initialize(ls, params)


async def _initialized(ls: AgentLanguageServer, params: t.InitializedParams) -> None:
    for root, config in config_files.initialized(ls, params):
        ls.state.secret_indexes.get(root, config)  # built in the background while the user types a task
        ls.state.mcp_hubs.warm(root, config.user_file)  # the MCP SDK imported meanwhile, if needed
    await agent_files.initialized(ls, params)


def _did_save(ls: AgentLanguageServer, params: t.DidSaveTextDocumentParams) -> None:
    config_files.did_save(ls, params)
    agent_files.did_save(ls, params)


def _did_change_workspace_folders(ls: AgentLanguageServer, params: t.DidChangeWorkspaceFoldersParams) -> None:
    lifecycle.did_change_workspace_folders(ls, params)
    agent_files.did_change_workspace_folders(ls, params)


async def _shutdown(ls: AgentLanguageServer, params: None) -> None:
    lifecycle.shutdown(ls, params)
    ls.state.secret_indexes.close()
    await ls.state.mcp_hubs.aclose()  # every MCP server stopped (the SDK's bounded shutdown)
    await agent_files.shutdown(ls)
    await telemetry.shutdown(ls)  # the queued spans are sent (AGENT_LS_OTEL, docs/telemetry.md)


def serve_stdio() -> None:
    """Run the server on stdin/stdout until the client exits (``lsp/stdio.py``: frames read leniently)."""
    stdio.serve(build_server())
