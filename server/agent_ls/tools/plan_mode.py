"""The tools of a plan run: the session's read-only tools and ``submit_plan``, over the same registry.

``PlanModeTools`` is the ``ToolExecutor`` a plan run's loop gets (``runtime.Session.run`` with
``mode="plan"``). What the model is offered (``specs``): the session's tools named in ``OFFERED`` (reading,
searching, the shell for read-only commands, skills, the todo list, ``load_tools``, kept outputs,
reading memory, research subagents) and ``submit_plan``. What it may call:

- ``submit_plan``: validated and run by a registry of its own (the usual events, an "allow" verdict);
  the plan is kept in ``plan`` and ``ended`` then ends the run after this turn's calls;
- a tool that writes outside the proposal and outside the policy's reach (``REFUSED``: the memory
  notes): refused here, with a "deny" verdict under ``policy.engine.PLAN_RULE``;
- anything else goes to the session's registry, whose permission policy is in plan mode
  (``PermissionPolicy.plan_mode``): ``write_file``/``edit_file`` and any command that is not read-only are
  denied there, so nothing reaches the proposal. A ``task`` subagent's tools are read-only (``tools.task``)
  and share that policy.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_ls.core.context import wrap_tool_result
from agent_ls.core.events import EventSink, ToolCallFinished, ToolCallStarted, VerdictGiven
from agent_ls.core.messages import ToolCall, ToolResultMessage, ToolSpec
from agent_ls.core.plan import Plan
from agent_ls.core.ports import DENIED, Approval, ApprovalRequest, ToolExecutor
from agent_ls.core.untrusted_json import well_formed
from agent_ls.policy.engine import PLAN_RULE, PermissionPolicy
from agent_ls.tools import submit_plan
from agent_ls.tools.base import ToolContext
from agent_ls.tools.registry import ToolRegistry

OFFERED = frozenset(
    {
        "read_file",
        "list_files",
        "grep",
        "bash",
        "skill",
        "load_tools",
        "todo_write",
        "read_output",
        "memory_read",
        "task",
    }
)
"""The session's tools a plan run offers (their schemas are sent); ``submit_plan`` comes last."""

REFUSED = frozenset({"memory_append", "memory_rewrite"})
"""Session tools a plan run refuses itself: they write the workspace's notes, which no policy check sees."""

PLAN_SUBMITTED = "plan submitted for approval"
"""``RunEnded.reason`` of a plan run that ended with its plan."""


class _NobodyAsked:
    """The approver of ``submit_plan``'s registry: its one tool is never asked for (``session``)."""

    async def ask(self, request: ApprovalRequest) -> Approval:
        return DENIED


class PlanModeTools:
    """The ``ToolExecutor`` of one plan run (module docstring).

    Args:
        tools: the session's registry, its policy in plan mode for the run.
        policy: that policy (``submit_plan``'s registry reports its verdict under it).
        ctx: what ``submit_plan``'s registry gives its tool (the session's overlay and runner).

    Attributes:
        plan: the last plan the model submitted, or None.
    """

    def __init__(self, tools: ToolExecutor, policy: PermissionPolicy, ctx: ToolContext) -> None:
        self._tools = tools
        self.plan: Plan | None = None
        self._planner = ToolRegistry([submit_plan.submit_plan_tool(self._keep)], policy, _NobodyAsked(), ctx)

    def _keep(self, plan: Plan) -> None:
        self.plan = plan

    def specs(self) -> Sequence[ToolSpec]:
        """The offered tools in the registry's order, then ``submit_plan``."""
        offered = [spec for spec in self._tools.specs() if spec.name in OFFERED]
        return [*offered, *self._planner.specs()]

    def ended(self) -> str | None:
        """``PLAN_SUBMITTED`` once a plan was submitted (the loop then ends the run), else None."""
        return PLAN_SUBMITTED if self.plan is not None else None

    async def execute(self, call: ToolCall, emit: EventSink) -> ToolResultMessage:
        """Run or refuse one call (module docstring); never raises except ``CancelledError``."""
        if call.name == submit_plan.NAME:
            return await self._planner.execute(call, emit)
        if call.name in REFUSED:
            return _refuse(call, emit)
        return await self._tools.execute(call, emit)


def _refuse(call: ToolCall, emit: EventSink) -> ToolResultMessage:
    """The deny the registry would give, for a tool the policy does not see."""
    call_id, name = well_formed(call.call_id), well_formed(call.name)
    emit(ToolCallStarted(call_id=call_id, name=name, arguments=well_formed(call.arguments)))
    emit(VerdictGiven(call_id, name, "deny", PLAN_RULE, name))
    text = f"Blocked by policy ({PLAN_RULE}): {name}. Do not retry it; submit your plan with submit_plan."
    emit(ToolCallFinished(call_id=call_id, name=name, is_error=True, output=text))
    return ToolResultMessage(
        call_id=call_id, name=name, content=wrap_tool_result(name, text, True), is_error=True
    )
