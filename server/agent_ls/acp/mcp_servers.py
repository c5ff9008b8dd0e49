"""The ``mcpServers`` of ACP ``session/new`` / ``session/load`` as the session's MCP servers.

The editor's servers are the user's own (configured in the editor, like their ``mcp.json``): they become
servers of scope ``user`` of the session's hub (``assembly.mcp_hub_for`` ``given``), which start without a
question, in place of configured servers of the same name. Stdio servers (``command``, ``args``, ``env``)
and streamable HTTP servers (``type: http``, ``url``, ``headers``; ``mcpCapabilities.http``) are taken;
SSE and ACP-transported servers are not (we do not declare them) and are left out with a log line.
A name is made to fit the tool names (``[A-Za-z0-9_.-]``, at most 40 characters, no ``__``).
Source: ACP v1 schema ``McpServer`` (``McpServerStdio``, ``McpServerHttp``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from acp import schema

from agent_ls.mcp_client.config import ServerConfig

log = logging.getLogger(__name__)

_NOT_A_NAME_CHARACTER = re.compile(r"[^A-Za-z0-9_.-]")
MAX_NAME_CHARS = 40


def server_name(name: str) -> str:
    """``name`` as an MCP server name of ours: other characters become ``-``, ``__`` becomes ``_``."""
    cleaned = _NOT_A_NAME_CHARACTER.sub("-", name.strip())
    while "__" in cleaned:
        cleaned = cleaned.replace("__", "_")
    return cleaned[:MAX_NAME_CHARS] or "server"


def server_configs(servers: Sequence[Any]) -> list[ServerConfig]:
    """The servers to give the session's hub (module docstring), in the editor's order."""
    configs: list[ServerConfig] = []
    for server in servers:
        if isinstance(server, schema.McpServerStdio):
            configs.append(
                ServerConfig(
                    name=server_name(server.name),
                    scope="user",
                    transport="stdio",
                    command=server.command,
                    args=tuple(server.args),
                    env={variable.name: variable.value for variable in server.env},
                )
            )
        elif isinstance(server, schema.HttpMcpServer):
            configs.append(
                ServerConfig(
                    name=server_name(server.name),
                    scope="user",
                    transport="http",
                    url=server.url,
                    headers={header.name: header.value for header in server.headers},
                )
            )
        else:
            log.warning("MCP server %r left out: only stdio and http servers are supported", server.name)
    return configs
