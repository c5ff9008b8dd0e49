"""The MCP servers' tools as registry tools, and what their schemas cost.

Each ``hub.McpTool`` becomes a ``tools.base.Tool`` with permission ``mcp``: the model sees its
``mcp__<server>__<tool>`` name, the server's description and ``inputSchema`` (``Tool.schema``); the
registry validates the arguments against that schema (jsonschema, which the SDK also uses), judges the
call by the ``mcp__`` rules (``ExternalTool``), then ``run`` sends it to the server. The tool bounds its own
time (the server's call timeout, ``own_timeout``).

Schemas cost tokens in every request (the seeds: 126 MCP tools would have taken 62,500 tokens; Claude
Code sends their names and loads a schema on demand). ``schema_tokens`` measures each tool as the bytes of
its name, description and schema over 4 (the estimate the context report uses); when the MCP tools
together cost more than ``defer_over_tokens``, every one of them is deferred: ``load_tools`` names them
and a call or a ``load_tools`` sends the schema from then on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent_ls.core.context import wrap_tool_result
from agent_ls.core.errors import ToolError
from agent_ls.core.events import EventSink
from agent_ls.core.ports import Approver
from agent_ls.mcp_client.connection import CallFailed
from agent_ls.mcp_client.hub import McpHub, McpTool
from agent_ls.mcp_client.results import result_text
from agent_ls.tools.base import ExternalTool, Tool, ToolContext, ToolOutput

BYTES_PER_TOKEN = 4
BRIEF_CHARS = 60
MAX_RESOURCE_CHARS = 30_000
"""Characters of a resource attached to a task (``agent.run`` ``resource``), as a tool output's cap."""
MAX_DESCRIPTION = 2_000
"""Characters of a server's tool description sent to the model (a server may send pages)."""


class AnyArguments(BaseModel):
    """The arguments of an MCP tool: any JSON object (``ExternalTool.check`` validates its input schema)."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True)
class McpToolSet:
    """The MCP tools of a session at one hub generation: ``sent`` with every request, or ``deferred``
    (named by ``load_tools``), and what their schemas cost in estimated tokens."""

    sent: tuple[Tool[Any], ...] = ()
    deferred: tuple[Tool[Any], ...] = ()
    schema_tokens: int = 0


def schema_tokens(name: str, description: str, schema: dict[str, Any]) -> int:
    """Estimated tokens of one tool in a request: the bytes of its name, description and schema over 4."""
    body = json.dumps({"name": name, "description": description, "parameters": schema}, ensure_ascii=False)
    return len(body.encode()) // BYTES_PER_TOKEN


def tool_set(hub: McpHub) -> McpToolSet:
    """The hub's connected tools as registry tools, deferred together over ``defer_over_tokens``."""
    built = [_tool(hub, found) for found in hub.tools()]
    cost = sum(schema_tokens(t.name, t.description, t.schema or {}) for t in built)
    if cost > hub.settings.defer_over_tokens:
        return McpToolSet((), tuple(built), cost)
    return McpToolSet(tuple(built), (), cost)


def _tool(hub: McpHub, found: McpTool) -> Tool[Any]:
    info = found.info
    description = sent_description(info.description, found.route.tool, found.route.server)
    schema = sent_schema(info.input_schema)
    route = found.route

    async def run(args: AnyArguments, ctx: ToolContext) -> ToolOutput:
        try:
            result = await hub.call(route, dict(args.model_extra or {}))
        except CallFailed as exc:
            raise ToolError(str(exc)) from None
        return ToolOutput(result_text(result), is_error=bool(result.is_error))

    return Tool(
        name=found.name,
        description=description,
        args=AnyArguments,
        run=run,
        mutates=False,
        permission="mcp",
        own_timeout=True,
        brief=_brief(description),
        schema=schema,
        external=ExternalTool(
            rule_name=found.rule_name,
            definition=hashlib.sha256(info.definition.encode()).hexdigest()[:12],
            read_only=info.read_only,
            destructive=info.destructive,
            check=_checker(schema),
        ),
    )


def sent_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An MCP tool's ``inputSchema`` as the model is sent it: an object schema (anything else becomes
    ``{"type": "object"}``) without its ``title`` and ``$schema`` (tokens in every request)."""
    found = schema if schema.get("type") == "object" else {"type": "object"}
    return {key: value for key, value in found.items() if key not in ("title", "$schema")}


def sent_description(info_description: str, route_tool: str, server: str) -> str:
    """An MCP tool's description as the model is sent it: the server's, stripped and cut to
    ``MAX_DESCRIPTION`` characters, or ``<tool> (MCP server <server>)`` when it has none."""
    description = info_description.strip() or f"{route_tool} (MCP server {server})"
    return description if len(description) <= MAX_DESCRIPTION else description[: MAX_DESCRIPTION - 1] + "…"


def _brief(description: str) -> str:
    """The first sentence of ``description``, at most ``BRIEF_CHARS`` characters (for ``load_tools``)."""
    first = description.split("\n", 1)[0].split(". ", 1)[0].strip().rstrip(".")
    return first if len(first) <= BRIEF_CHARS else first[: BRIEF_CHARS - 1] + "…"


def _checker(schema: dict[str, Any]) -> Any:
    """A function returning the first problems of arguments against ``schema``, or None when the schema
    itself is not valid JSON Schema (the server then judges the arguments)."""
    from jsonschema import SchemaError  # type: ignore[import-untyped]  # no stubs in the dev extra
    from jsonschema.validators import validator_for  # type: ignore[import-untyped]

    try:
        cls = validator_for(schema)
        cls.check_schema(schema)
        validator = cls(schema)
    except (SchemaError, TypeError, ValueError):
        return None

    def check(arguments: dict[str, Any]) -> str | None:
        errors = sorted(validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.path])[:5]
        if not errors:
            return None
        return "; ".join(f"{'.'.join(str(p) for p in e.path) or '(arguments)'}: {e.message}" for e in errors)

    return check


class SessionMcp:
    """A session's view of its workspace's MCP hub: the tool set at the hub's generation, rebuilt when
    a server's tools changed (``listChanged``, a reconnect); the registry is given it by the session."""

    def __init__(self, hub: McpHub, approver: Approver | None, *, owned: bool = False) -> None:
        self.hub = hub
        self.approver = approver
        self.owned = owned
        """The session built the hub itself (``agent-ls run``): it stops the servers when it ends."""
        self._generation = -1
        self._set = McpToolSet()

    def changed(self) -> bool:
        """True when the hub's tools moved since ``tools`` last built them."""
        return self._generation != self.hub.generation

    def tools(self) -> McpToolSet:
        if self.changed():
            self._generation = self.hub.generation
            self._set = tool_set(self.hub)
        return self._set

    async def prepare(self, emit: EventSink) -> None:
        """Start the hub's servers for a run (``McpHub.prepare``, asking ``approver`` about untrusted
        workspace servers); the next ``tools`` lists theirs."""
        await self.hub.prepare(self.approver, emit)
        self._generation = -1  # connected servers bring tools the set does not have yet

    async def resources_text(self, specs: Sequence[str]) -> str:
        """The resources ``specs`` as data blocks for the task message; raises ``CallFailed``."""
        blocks = []
        for spec in specs:
            label, text = await self.hub.read_resource(spec)
            if len(text) > MAX_RESOURCE_CHARS:
                text = text[:MAX_RESOURCE_CHARS] + f"\n[... cut at {MAX_RESOURCE_CHARS:,} characters]"
            blocks.append(wrap_tool_result(f"resource {label}", text, False))
        return "\n\n".join(blocks)
