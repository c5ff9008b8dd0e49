"""A registry wired to fakes, with the events it emitted, for calling tools the way the loop does."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_ls.core.events import Event
from agent_ls.core.messages import ToolCall, ToolResultMessage
from agent_ls.core.ports import ApprovalReply, CommandResult
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.tools import default_tools
from agent_ls.tools.base import Tool, ToolContext
from agent_ls.tools.registry import ToolRegistry
from tests.unit.tools.fakes import FakeRunner, FakeWorkspace, ScriptedApprover


@dataclass
class Harness:
    workspace: FakeWorkspace
    runner: FakeRunner
    approver: ScriptedApprover
    policy: PermissionPolicy
    registry: ToolRegistry
    events: list[Event] = field(default_factory=list)

    async def call(
        self, name: str, arguments: str | dict[str, Any] = "", call_id: str = "c1"
    ) -> ToolResultMessage:
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return await self.registry.execute(ToolCall(call_id, name, raw), self.events.append)

    async def text(self, name: str, arguments: dict[str, Any]) -> str:
        """The content of a call that must succeed."""
        result = await self.call(name, arguments)
        assert not result.is_error, result.content
        return result.content


def make_harness(
    files: dict[str, str] | None = None,
    *,
    tools: Sequence[Tool[Any]] | None = None,
    replies: Iterable[ApprovalReply] = (),
    results: Iterable[CommandResult] = (),
    tool_timeout_s: float = 60.0,
    max_output_chars: int = 30_000,
) -> Harness:
    workspace = FakeWorkspace(files)
    runner = FakeRunner(results)
    approver = ScriptedApprover(replies)
    policy = PermissionPolicy()
    registry = ToolRegistry(
        default_tools() if tools is None else tools,
        policy,
        approver,
        ToolContext(workspace=workspace, runner=runner),
        tool_timeout_s=tool_timeout_s,
        max_output_chars=max_output_chars,
    )
    return Harness(workspace, runner, approver, policy, registry)
