"""initialize, configuration, workspace folders and shutdown."""

from __future__ import annotations

import logging
from pathlib import Path

from lsprotocol import types as t

from agent_ls.lsp.capabilities import ClientFlags
from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.settings import EditorSettings

log = logging.getLogger(__name__)


def _path_of(uri: str) -> Path | None:
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs else None


def _apply_settings(ls: AgentLanguageServer, raw: object) -> None:
    settings, problems = EditorSettings.from_client(raw, base=ls.state.settings)
    ls.state.settings = settings
    for problem in problems:
        ls.window_log_message(t.LogMessageParams(type=t.MessageType.Warning, message=f"agent-ls: {problem}"))


def initialize(ls: AgentLanguageServer, params: t.InitializeParams) -> None:
    ls.state.flags = ClientFlags.from_capabilities(params.capabilities)
    roots = [p for f in params.workspace_folders or [] if (p := _path_of(f.uri))]
    if not roots and params.root_uri and (p := _path_of(params.root_uri)):
        roots = [p]
    if not roots and params.root_path:
        roots = [Path(params.root_path).resolve()]
    ls.state.roots = roots
    settings, problems = EditorSettings.from_client(params.initialization_options)
    ls.state.settings = settings
    if problems:
        log.warning("invalid settings: %s", "; ".join(problems))


def did_change_configuration(ls: AgentLanguageServer, params: t.DidChangeConfigurationParams) -> None:
    _apply_settings(ls, params.settings)


def did_change_workspace_folders(ls: AgentLanguageServer, params: t.DidChangeWorkspaceFoldersParams) -> None:
    removed = {p for f in params.event.removed if (p := _path_of(f.uri))}
    roots = [r for r in ls.state.roots if r not in removed]
    roots += [p for f in params.event.added if (p := _path_of(f.uri)) and p not in roots]
    ls.state.roots = roots


def shutdown(ls: AgentLanguageServer, params: None) -> None:
    for entry in ls.state.sessions.values():
        if entry.run_task and not entry.run_task.done():
            entry.run_task.cancel()
        entry.session.close()
