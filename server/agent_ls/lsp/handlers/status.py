"""``agent.status``: the model and sandbox a run would use now, without a model call
(``agent_ls.readiness``), so that an editor can say in one line what is in use when it starts, and what
to do when no model is configured.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_ls.config import LoadedConfig
from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.lsp.handlers import config_files
from agent_ls.lsp.handlers.commands import root_for
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.readiness import readiness
from agent_ls.settings import EnvSnapshot


async def status(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.status {uri?}``: ``StatusResult`` for the workspace folder of ``uri`` (left out: the first)."""
    params = parse_params(p.StatusParams, arguments)
    config = _config(ls, params.uri)
    found = await asyncio.to_thread(readiness, ls.state.settings, EnvSnapshot.from_environ(), config)
    return p.StatusResult(**asdict(found)).wire()


def uri_path(uri: str | None) -> Path | None:
    """The resolved path of a ``file:`` URI, or None (no URI, another scheme)."""
    fs_path = to_fs_path(uri) if uri else None
    return Path(fs_path).resolve() if fs_path else None


def _config(ls: AgentLanguageServer, uri: str | None) -> LoadedConfig:
    try:
        return config_files.for_root(ls, root_for(ls, uri_path(uri)))
    except JsonRpcInvalidParams:  # no folder open and no file: the settings and the environment only
        return LoadedConfig()
