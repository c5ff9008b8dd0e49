"""The language server: construction and the single table of what it answers.

Handlers live in ``lsp/handlers/<area>.py`` as plain functions whose first parameter is ``ls``;
this module only routes. Document sync (didOpen/didChange/didClose) is pygls's built-in, which keeps
``ls.workspace`` current with the unsaved text the agent reads.
"""

from __future__ import annotations

from lsprotocol import types as t

from agent_ls.lsp import protocol
from agent_ls.lsp.handlers import commands, config_files, lifecycle
from agent_ls.lsp.state import AgentLanguageServer


def build_server() -> AgentLanguageServer:
    """A new server with every handler registered. The table below is all the server answers."""
    server = AgentLanguageServer()
    server.feature(t.INITIALIZE)(lifecycle.initialize)
    server.feature(t.INITIALIZED)(config_files.initialized)
    server.feature(t.TEXT_DOCUMENT_DID_SAVE)(config_files.did_save)
    server.feature(t.WORKSPACE_DID_CHANGE_CONFIGURATION)(lifecycle.did_change_configuration)
    server.feature(t.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(lifecycle.did_change_workspace_folders)
    server.feature(t.SHUTDOWN)(lifecycle.shutdown)
    server.command(protocol.CMD_RUN)(commands.run)
    server.command(protocol.CMD_CANCEL)(commands.cancel)
    server.command(protocol.CMD_PROPOSAL)(commands.proposal)
    server.command(protocol.CMD_APPLY_PROPOSAL)(commands.apply_proposal)
    server.command(protocol.CMD_DISCARD_PROPOSAL)(commands.discard_proposal)
    server.command(protocol.CMD_LIST_SKILLS)(commands.list_skills)
    server.command(protocol.CMD_RUN_SKILL)(commands.run_skill)
    server.command(protocol.CMD_INSTRUCTIONS)(commands.instructions)
    return server


def serve_stdio() -> None:
    """Run the server on stdin/stdout until the client exits."""
    build_server().start_io()
