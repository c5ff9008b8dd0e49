"""Every MCP server of one workspace, shared by its sessions: trust, lazy start, routing and status.

The host of the seeds' chapter "MCP": one client (``connection.Connection``) per server, created by a
front end (the language server keeps one hub per workspace folder, ``agent-ls run`` one per run). Nothing
starts before a run needs it (``prepare``, at the start of each run) or the user asks for the status.

Trust: a server of the user's ``mcp.json`` starts at the first run. A server of the workspace's
``.mcp.json`` (a cloned repository's file) starts only when the workspace is trusted (``trusted_workspaces``)
or when the user approved that exact entry: the run's approver is asked once (the command line or URL
shown); "Always allow" remembers it in ``<state dir>/mcp-approvals.json`` (keyed by workspace, name and
``ServerConfig.fingerprint``: an entry that changes asks again), "once" or "session" for this hub's life,
"Deny" leaves it stopped for this hub's life. An answer nobody gave (``--yes``, an editor that cannot
prompt) never starts one. ``status`` and ``agent-ls doctor`` never ask.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_ls.core.events import EventSink, McpServerStatus
from agent_ls.core.ports import MCP_SERVER_START, ApprovalRequest, Approver
from agent_ls.mcp_client.config import McpServers, ServerConfig
from agent_ls.mcp_client.connection import CallFailed, Connection, ToolInfo, load_sdk
from agent_ls.mcp_client.naming import Route, full_name, qualified_name
from agent_ls.mcp_client.results import resource_text
from agent_ls.settings import EnvSnapshot

log = logging.getLogger(__name__)

UNTRUSTED_REASON = (
    "defined in this workspace's .mcp.json, and the workspace is not trusted: it starts a process with your "
    "permissions, outside the agent's sandbox"
)


@dataclass(frozen=True)
class HubSettings:
    """``[mcp]`` of agent-ls.toml: seconds to start a server, seconds per call, and the estimated tokens of
    MCP tool schemas above which every MCP tool is deferred (``tools.py``)."""

    startup_timeout_s: float = 30.0
    call_timeout_s: float = 60.0
    defer_over_tokens: int = 2_000


@dataclass(frozen=True)
class McpTool:
    """One tool of a connected server, as the registry gets it: the model-facing ``name``, the name
    rules are matched against (``rule_name``), the route back and the server's listing."""

    name: str
    rule_name: str
    route: Route
    info: ToolInfo


class ApprovalStore:
    """The workspace servers the user chose "Always allow" for: ``<state dir>/mcp-approvals.json``,
    ``{"approved": [{"root", "name", "fingerprint"}]}``. Unreadable: nothing approved."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def approved(self, root: Path, server: ServerConfig) -> bool:
        return {"root": str(root), "name": server.name, "fingerprint": server.fingerprint} in self._entries()

    def remember(self, root: Path, server: ServerConfig) -> None:
        """Add the approval (other entries of the same workspace and name are replaced). Raises OSError."""
        kept = [e for e in self._entries() if (e.get("root"), e.get("name")) != (str(root), server.name)]
        kept.append({"root": str(root), "name": server.name, "fingerprint": server.fingerprint})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        temporary.write_text(json.dumps({"approved": kept}, indent=1), encoding="utf-8")
        os.replace(temporary, self.path)

    def _entries(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        entries = data.get("approved") if isinstance(data, dict) else None
        return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


class McpHub:
    """The servers of one workspace (module docstring). Use from one event loop.

    Args:
        root: the workspace root.
        servers: the configured servers (``config.load_servers``).
        env: where ``${VAR}`` values come from.
        trusted: the workspace is in ``trusted_workspaces``.
        approvals: the remembered approvals, or None (nothing remembered: a bare hub in tests).
        settings: ``[mcp]``.
        redact: replaces secrets in what is shown of the servers' stderr and errors.
    """

    def __init__(
        self,
        root: Path,
        servers: McpServers,
        env: EnvSnapshot,
        *,
        trusted: bool = False,
        approvals: ApprovalStore | None = None,
        settings: HubSettings | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.root = root
        self.servers = servers
        self.trusted = trusted
        self.settings = settings or HubSettings()
        self._approvals = approvals
        self.redact = redact or (lambda text: text)
        """Replaces secrets in what is shown (stderr, errors, a status's command lines)."""
        self._allowed: set[str] = set()  # approved for this hub's life
        self._denied: dict[str, str] = {}  # name -> why
        self._told: dict[str, tuple[str, str]] = {}  # what each run was last told, per server
        self.generation = 0
        """Grows when a server's tools change; a session compares it before each model request."""
        self._connections = {
            s.name: Connection(
                s,
                root,
                env,
                self.settings.startup_timeout_s,
                self.settings.call_timeout_s,
                on_change=self._changed,
                redact=self.redact,
            )
            for s in servers.servers
        }
        for server in servers.servers:
            if server.disabled:
                self._connections[server.name].state = "disabled"

    def _changed(self) -> None:
        self.generation += 1

    def __bool__(self) -> bool:
        return bool(self._connections)

    def may_start(self, server: ServerConfig) -> bool | None:
        """True: it may start; False: it may not (disabled, denied); None: the user must be asked first."""
        if server.disabled or server.name in self._denied:
            return False
        if server.scope == "user" or self.trusted or server.name in self._allowed:
            return True
        if self._approvals is not None and self._approvals.approved(self.root, server):
            return True
        return None

    async def prepare(
        self, approver: Approver | None, emit: EventSink | None = None, *, retry_failed: bool = False
    ) -> None:
        """Start what may start (asking ``approver`` about untrusted workspace servers first; None: never
        ask), all at once, each within the start-up timeout; emit ``McpServerStatus`` for each server whose
        state this hub has not reported yet or that changed since. A server that failed to start is not
        tried again (each run would wait for it) unless ``retry_failed`` (a status request); one that
        crashed after starting is. Never raises except ``CancelledError``."""
        may = [self.may_start(server) for server in self.servers.servers]
        if True in may or (None in may and approver is not None):
            await asyncio.to_thread(load_sdk)  # imported once, off the event loop
        starting = []
        for server in self.servers.servers:
            connection = self._connections[server.name]
            allowed = self.may_start(server)
            unanswered = ""
            if allowed is None and approver is not None:
                allowed, unanswered = await self._ask(server, approver)
            if allowed and connection.start_failed and not retry_failed:
                continue
            if allowed:
                connection.reset()
                starting.append(connection.connect())
            elif server.name in self._denied:
                connection.state, connection.detail = "denied", self._denied[server.name]
            elif not server.disabled:
                why = f"nobody could answer ({unanswered}); " if unanswered else ""
                connection.state = "needs approval"
                connection.detail = f"not started: {why}approve it when asked, or trust the workspace"
        if starting:
            await asyncio.gather(*starting)
        if emit is not None:
            for name, connection in self._connections.items():
                now = (connection.state, connection.detail)
                if self._told.get(name) != now and connection.state != "not started":
                    self._told[name] = now
                    emit(McpServerStatus(name, connection.state, connection.detail))

    async def _ask(self, server: ServerConfig, approver: Approver) -> tuple[bool, str]:
        """Whether the user allowed ``server`` to start, and why nobody answered ("" when someone did)."""
        given = server.variables
        gets = f"; it is given the values of {', '.join(given)} from your environment" if given else ""
        request = ApprovalRequest(
            tool_name="mcp",
            subject=f"{server.name}: {server.target}",
            reason=UNTRUSTED_REASON + gets,
            rule="mcp: workspace server, workspace not trusted",
            always=(f"start {server.name!r} in {self.root} until its .mcp.json entry changes",),
            purpose=MCP_SERVER_START,
            always_effect="remembers it",
        )
        approval = await approver.ask(request)
        if approval.unasked:
            return False, approval.unasked  # not an answer: a run with someone to answer asks again
        if approval.reply == "deny":
            self._denied[server.name] = "denied by the user (for as long as this server process runs)"
            return False, ""
        self._allowed.add(server.name)
        if approval.reply == "always" and self._approvals is not None:
            try:
                self._approvals.remember(self.root, server)
            except OSError as exc:
                log.warning("the approval of MCP server %s could not be saved: %s", server.name, exc)
        return True, ""

    def tools(self) -> list[McpTool]:
        """The tools of the connected servers, named for the model (``naming``), in config order."""
        found: list[McpTool] = []
        taken: set[str] = set()
        for server in self.servers.servers:
            connection = self._connections[server.name]
            if connection.state != "connected":
                continue
            seen: set[str] = set()
            for info in connection.listing.tools:
                if info.name in seen:  # a server listing a tool twice (a looping cursor): once
                    continue
                seen.add(info.name)
                name = qualified_name(server.name, info.name, taken)
                if name in taken:  # a hashed name another tool already holds: left out, never a crash
                    log.warning("MCP server %s: tool %r left out (its name is taken)", server.name, info.name)
                    continue
                taken.add(name)
                route = Route(server.name, info.name)
                found.append(McpTool(name, full_name(server.name, info.name), route, info))
        return found

    async def call(self, route: Route, arguments: dict[str, Any]) -> Any:
        """``tools/call`` on the route's server; raises ``CallFailed`` (``connection.Connection.call``)."""
        connection = self._connections.get(route.server)
        if connection is None:
            raise CallFailed(f"no MCP server named {route.server!r} is configured any more")
        return await connection.call(route.tool, arguments)

    async def read_resource(self, spec: str) -> tuple[str, str]:
        """The text of the resource ``spec`` (``<server>:<uri>``, or a URI some connected server lists) and
        its label (``<server>:<uri>``). Raises ``CallFailed`` with a line for the user."""
        server, uri = self._resource_server(spec)
        contents = await self._connections[server].read_resource(uri)
        text = "\n".join(resource_text(item) for item in contents) or "(empty)"
        return f"{server}:{uri}", text

    def _resource_server(self, spec: str) -> tuple[str, str]:
        for name, connection in self._connections.items():  # a URI a server lists wins: "file:///x"
            if any(uri == spec for uri, _, _ in connection.listing.resources):
                return name, spec
        head, _, rest = spec.partition(":")
        if head in self._connections and rest:
            return head, rest
        listed = sorted(
            f"{name}:{uri}" for name, c in self._connections.items() for uri, _, _ in c.listing.resources
        )
        known = f"; resources: {', '.join(listed[:20])}" if listed else "; no connected server lists any"
        raise CallFailed(f"no MCP server offers the resource {spec!r} (write it as <server>:<uri>){known}")

    def connections(self) -> Sequence[Connection]:
        return list(self._connections.values())

    async def aclose(self) -> None:
        """Stop every server. Idempotent; bounded by the SDK's shutdown (a few seconds per server)."""
        await asyncio.gather(*(c.close() for c in self._connections.values()), return_exceptions=True)
