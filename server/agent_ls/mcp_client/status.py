"""What ``agent.mcpStatus`` and ``agent-ls doctor`` report of each MCP server, and the text doctor prints.

``check`` starts the servers that may start without asking anyone (user servers, a trusted workspace's,
approved ones; ``hub.McpHub.prepare`` without an approver; those that failed to start are tried again)
and reports every configured server: its state (``connected``, ``failed``, ``needs approval``,
``denied``, ``disabled``), one line of detail, the server's name and version and protocol revision, its
tools (model-facing name, own name, annotations, estimated schema tokens), whether they are deferred, its
resources and prompts, and the tail of its stderr.
"""

from __future__ import annotations

from typing import Any

from agent_ls.mcp_client.hub import McpHub
from agent_ls.mcp_client.tools import schema_tokens, sent_description, sent_schema, tool_set


async def check(hub: McpHub) -> list[dict[str, Any]]:
    """Start what may start without a question, then ``report`` (module docstring)."""
    await hub.prepare(None, retry_failed=True)
    return report(hub)


def report(hub: McpHub) -> list[dict[str, Any]]:
    """One JSON object per configured server, in configuration order (module docstring)."""
    tools = tool_set(hub)
    deferred = {tool.name for tool in tools.deferred}
    named = {(t.route.server, t.route.tool): t.name for t in hub.tools()}
    servers = []
    for connection in hub.connections():
        server = connection.config
        listed: list[dict[str, Any]] = []
        for info in connection.listing.tools if connection.state == "connected" else ():
            name = named.get((server.name, info.name), info.name)
            listed.append(
                {
                    "name": name,
                    "original": info.name,
                    "readOnly": info.read_only,
                    "destructive": info.destructive,
                    "schemaTokens": schema_tokens(
                        name,
                        sent_description(info.description, info.name, server.name),
                        sent_schema(info.input_schema),
                    ),
                }
            )
        connected = connection.state == "connected"
        identity = {"name": connection.server_name, "version": connection.server_version}
        resources = connection.listing.resources
        servers.append(
            {
                "name": server.name,
                "scope": server.scope,
                "transport": server.transport,
                "target": hub.redact(server.target),
                "source": str(server.source) if server.source else None,
                "state": connection.state,
                "detail": connection.detail,
                "serverInfo": identity if connected else None,
                "protocolVersion": connection.protocol_version or None,
                "tools": listed,
                "schemaTokens": sum(tool["schemaTokens"] for tool in listed),
                "deferred": bool(listed) and all(tool["name"] in deferred for tool in listed),
                "resources": [{"uri": uri, "name": name, "mimeType": mime} for uri, name, mime in resources],
                "prompts": [{"name": name, "description": text} for name, text in connection.listing.prompts],
                "stderrTail": connection.stderr_tail(),
            }
        )
    return servers


def text_lines(servers: list[dict[str, Any]], problems: tuple[str, ...] = ()) -> list[str]:
    """The ``MCP servers`` section of ``agent-ls doctor``: a line per server, then one per tool."""
    lines = [f"  problem: {problem}" for problem in problems]
    for server in servers:
        head = f"  {server['name']} ({server['scope']}, {server['transport']}): {server['state']}"
        lines.append(head + (f": {server['detail']}" if server["detail"] else ""))
        lines.append(f"    {server['target']}")
        if server["state"] == "failed" and server["stderrTail"]:
            tail = server["stderrTail"].splitlines()[-5:]
            lines += [f"    stderr: {line}" for line in tail]
        if server["tools"]:
            how = "deferred (names only)" if server["deferred"] else "sent with every request"
            cost = f"~{server['schemaTokens']:,} schema tokens"
            lines.append(f"    {len(server['tools'])} tools, {cost}, {how}:")
            for tool in server["tools"]:
                marks = (("read-only", tool["readOnly"]), ("destructive", tool["destructive"]))
                hints = [hint for hint, on in marks if on]
                shown = f" [{', '.join(hints)}]" if hints else ""
                lines.append(f"      {tool['name']}{shown} ~{tool['schemaTokens']:,} tokens")
        for resource in server["resources"][:20]:
            lines.append(f"    resource {resource['uri']} {resource['name']}")
        for prompt in server["prompts"][:20]:
            lines.append(f"    prompt {prompt['name']}: {prompt['description']}")
    return lines
