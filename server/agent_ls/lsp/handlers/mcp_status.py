"""``agent.mcpStatus``: the MCP servers of a workspace folder (docs/mcp.md), connected where they may be
without a question (user servers, a trusted workspace's, approved ones; never a prompt)."""

from __future__ import annotations

from typing import Any

from agent_ls.assembly import mcp_hub_for
from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.handlers import config_files
from agent_ls.lsp.handlers.commands import root_for
from agent_ls.lsp.handlers.status import uri_path
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.settings import EnvSnapshot, process_environ


async def mcp_status(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.mcpStatus {uri?}``: ``McpStatusResult`` for the folder of ``uri`` (left out: the first)."""
    params = parse_params(p.McpStatusParams, arguments)
    root = root_for(ls, uri_path(params.uri))
    config = config_files.for_root(ls, root)
    env, disabled = EnvSnapshot.from_environ(), ls.state.settings.mcp.disabled
    hub = mcp_hub_for(root, config, env, process_environ(), ls.state.mcp_hubs, disabled)
    if hub is None:
        from agent_ls.mcp_client.config import load_servers  # no server: the files' problems only

        user_dir = config.user_file.parent if config.user_file is not None else None
        problems = load_servers(root, user_dir).problems
        return p.McpStatusResult(servers=[], problems=list(problems)).wire()
    from agent_ls.mcp_client.status import check  # the SDK: only with servers configured

    servers = await check(hub)
    return p.McpStatusResult(servers=servers, problems=list(hub.servers.problems)).wire()
