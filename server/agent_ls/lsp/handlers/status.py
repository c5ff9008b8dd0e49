"""``agent.status``: the model and sandbox a run would use now, without a model call, so that an editor can
say in one line what is in use when it starts, and what to do when no model is configured.

The same resolution as a run (``models.resolution.resolve_model`` over the editor settings, the
environment and the workspace folder's config) and as ``agent-ls doctor``'s model and sandbox checks,
without doctor's network probe or trial command: it answers at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from agent_ls.config import LoadedConfig
from agent_ls.core.errors import ConfigError
from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.handlers import config_files
from agent_ls.lsp.handlers.commands import root_for
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.models.resolution import NO_MODEL, resolve_model
from agent_ls.settings import EditorSettings, EnvSnapshot
from agent_ls.workspace.sandbox import sandbox_status, unsandboxed_reason


async def status(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.status {uri?}``: ``StatusResult`` for the workspace folder of ``uri`` (left out: the first)."""
    params = parse_params(p.StatusParams, arguments)
    config = _config(ls, params.uri)
    result = await asyncio.to_thread(readiness, ls.state.settings, EnvSnapshot.from_environ(), config)
    return result.wire()


def _config(ls: AgentLanguageServer, uri: str | None) -> LoadedConfig:
    fs_path = to_fs_path(uri) if uri else None
    try:
        return config_files.for_root(ls, root_for(ls, Path(fs_path).resolve() if fs_path else None))
    except JsonRpcInvalidParams:  # no folder open and no file: the settings and the environment only
        return LoadedConfig()


def readiness(editor: EditorSettings, env: EnvSnapshot, config: LoadedConfig) -> p.StatusResult:
    """The model a run would use and whether it can start, and the sandbox commands would run in.

    Blocks the first time (the sandbox is probed once per process): call it from a worker thread.
    """
    unsandboxed = unsandboxed_reason(config.permissions.sandbox_enabled)
    sandbox = unsandboxed or f"{sandbox_status().detail}: no network, only the shadow copy writable"
    sandboxed = not unsandboxed
    try:
        choice = resolve_model(None, editor, env, config)
    except ConfigError as exc:
        state: p.ModelState = "noModel" if str(exc) == NO_MODEL else "invalid"
        return p.StatusResult(
            model=None,
            base_url=None,
            model_state=state,
            model_detail=str(exc),
            sandboxed=sandboxed,
            sandbox=sandbox,
        )
    if choice.key_required and choice.api_key is None:
        state, detail = (
            "noApiKey",
            f"{choice.model_string} needs an API key: set {choice.key_env} or AGENT_LS_API_KEY",
        )
    else:
        state, detail = "ready", ""
    return p.StatusResult(
        model=choice.model_string,
        base_url=choice.base_url,
        model_state=state,
        model_detail=detail,
        sandboxed=sandboxed,
        sandbox=sandbox,
    )
