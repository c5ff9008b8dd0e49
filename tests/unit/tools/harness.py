"""A registry wired to fakes, with the events it emitted, for calling tools the way the loop does."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agent_ls.core.context import wrap_tool_result
from agent_ls.core.events import Event, ToolCallFinished
from agent_ls.core.messages import ToolCall, ToolResultMessage
from agent_ls.core.ports import Approval, ApprovalReply, CommandResult
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.tools import default_tools
from agent_ls.tools.base import Tool, ToolContext
from agent_ls.tools.registry import ToolRegistry
from agent_ls.workspace.paths import PathPolicy
from tests.unit.tools.fakes import ROOT, FakeRunner, FakeWorkspace, ScriptedApprover


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
        """The call's result with ``content`` as the tool produced it (the plain text of its
        ``ToolCallFinished``), after checking that the model reads exactly that text wrapped as data."""
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        message = await self.registry.execute(ToolCall(call_id, name, raw), self.events.append)
        finished = [e for e in self.events if isinstance(e, ToolCallFinished) and e.call_id == call_id][-1]
        assert message.content == wrap_tool_result(message.name, finished.output, message.is_error)
        return replace(message, content=finished.output)

    async def text(self, name: str, arguments: dict[str, Any]) -> str:
        """The content of a call that must succeed."""
        result = await self.call(name, arguments)
        assert not result.is_error, result.content
        return result.content


def make_harness(
    files: dict[str, str] | None = None,
    *,
    tools: Sequence[Tool[Any]] | None = None,
    replies: Iterable[ApprovalReply | Approval] = (),
    results: Iterable[CommandResult] = (),
    tool_timeout_s: float = 60.0,
    max_output_chars: int = 30_000,
    policy: PermissionPolicy | None = None,
) -> Harness:
    workspace = FakeWorkspace(files)
    runner = FakeRunner(results)
    approver = ScriptedApprover(replies)
    policy = policy or PermissionPolicy(PathPolicy(ROOT))
    registry = ToolRegistry(
        default_tools() if tools is None else tools,
        policy,
        approver,
        ToolContext(workspace=workspace, runner=runner),
        tool_timeout_s=tool_timeout_s,
        max_output_chars=max_output_chars,
    )
    return Harness(workspace, runner, approver, policy, registry)
