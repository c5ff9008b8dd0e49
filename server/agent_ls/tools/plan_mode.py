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

``ModeRun`` is one run's mode as the session applies it: the task text (plan mode's note, or the
approved plan for the default run that follows a plan run), the policy in plan mode for the run's
length, the tools, and the ``RunEnded`` with its ``mode`` and ``plan``. A plan run whose model answers
without calling ``submit_plan`` ends ``stopped`` with ``NO_PLAN`` (rather than asking again: the user
reads the answer and decides, and a second request would cost a turn the model already declined).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from types import TracebackType

from agent_ls.core.context import wrap_tool_result
from agent_ls.core.events import Event, EventSink, RunEnded, ToolCallFinished, ToolCallStarted, VerdictGiven
from agent_ls.core.markdown_defang import defang_markdown
from agent_ls.core.messages import ToolCall, ToolResultMessage, ToolSpec
from agent_ls.core.plan import PLAN_MODE_NOTE, Plan, RunMode, approved_plan_text
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

NO_PLAN = (
    "no plan: the model answered without calling submit_plan; run the plan again, or continue the "
    "session in default mode to act on its answer"
)
"""``RunEnded.reason`` of a plan run whose model answered in text only (status ``stopped``)."""


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
        unavailable = _not_offered(call) if call.name == "load_tools" else []
        if unavailable:
            return _not_in_plan_mode(call, unavailable, emit)
        return await self._tools.execute(call, emit)


def _not_offered(call: ToolCall) -> list[str]:
    """The names a ``load_tools`` call asks for that a plan run does not offer (``write_file``); [] when its
    arguments are not a ``{"names": [...]}`` object (the registry then says what is wrong)."""
    try:
        names = json.loads(call.arguments or "{}").get("names")
    except (ValueError, AttributeError, RecursionError):
        return []
    if not isinstance(names, list):
        return []
    return [name for name in names if isinstance(name, str) and name not in OFFERED]


def _not_in_plan_mode(call: ToolCall, names: list[str], emit: EventSink) -> ToolResultMessage:
    """``load_tools`` naming a tool a plan run does not offer: say so, rather than "Loaded ...; call them
    now." for a tool whose every call would be refused (issue 17 trial, finding 10)."""
    call_id, name = well_formed(call.call_id), well_formed(call.name)
    emit(ToolCallStarted(call_id=call_id, name=name, arguments=well_formed(call.arguments)))
    emit(VerdictGiven(call_id, name, "allow", PLAN_RULE, name))
    shown = ", ".join(well_formed(n) for n in names)
    text = (
        f"Not loaded: {shown} not available in plan mode (a plan run has read-only tools; edits come after "
        "the plan is approved). Research with the tools you have and submit your plan with submit_plan."
    )
    emit(ToolCallFinished(call_id=call_id, name=name, is_error=True, output=text))
    return ToolResultMessage(
        call_id=call_id, name=name, content=wrap_tool_result(name, text, True), is_error=True
    )


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


class ModeRun:
    """One run's mode, applied by ``runtime.Session.run`` (module docstring).

    Args:
        mode: the run's mode.
        pending: the session's plan not implemented yet (the last plan run's), or None.
        tools: the session's registry.
        policy: the session's policy, in plan mode while the ``with`` block of a plan run lasts.
        ctx: the session's overlay and runner, for ``submit_plan``'s registry.

    Attributes:
        tools: the loop's ``ToolExecutor``: ``PlanModeTools`` in plan mode, else ``tools`` as given.
        pending: the session's plan not implemented yet after this run: the plan a plan run submitted
            (else the one before), None once a default run has carried it.
        ended: the run's ``RunEnded`` as emitted (``sink``), or None before it.
    """

    def __init__(
        self,
        mode: RunMode,
        pending: Plan | None,
        tools: ToolExecutor,
        policy: PermissionPolicy,
        ctx: ToolContext,
    ) -> None:
        self.mode: RunMode = mode
        self.pending = pending
        self._policy = policy
        self._planner = PlanModeTools(tools, policy, ctx) if mode == "plan" else None
        self.tools: ToolExecutor = self._planner or tools
        self.ended: RunEnded | None = None

    def task_text(self, text: str) -> str:
        """The task message's text: plan mode's note first in a plan run; the approved plan first in the
        default run that follows one (which then no longer has a pending plan)."""
        if self.mode == "plan":
            return f"{PLAN_MODE_NOTE}\n\n{text}"
        if self.pending is None:
            return text
        approved, self.pending = self.pending, None
        return f"{approved_plan_text(approved)}\n\n{text}"

    def ended_by(self) -> str | None:
        """The loop's ``ended_by``: ``PLAN_SUBMITTED`` once a plan run's plan is in."""
        return self._planner.ended() if self._planner is not None else None

    def sink(self, emit: EventSink) -> EventSink:
        """``emit`` with the run's own ``RunEnded`` completed by ``finish`` (a subagent's, wrapped in a
        ``SubagentEvent``, passes as it is)."""

        def forward(event: Event) -> None:
            if isinstance(event, RunEnded):
                event = self.finish(event)
            emit(event)

        return forward

    def finish(self, ended: RunEnded) -> RunEnded:
        """``ended`` with the run's ``mode``; for a plan run, its plan (defanged, like the answer, which
        becomes the plan's markdown) or, when it answered without one, status ``stopped`` and ``NO_PLAN``."""
        ended = replace(ended, mode=self.mode)
        if self._planner is not None:
            plan = self._planner.plan
            if plan is not None:
                plan = _defanged(plan)
                self.pending = plan
                ended = replace(ended, plan=plan, answer=plan.markdown())
            elif ended.status == "done":
                ended = replace(ended, status="stopped", reason=NO_PLAN)
        self.ended = ended
        return ended

    def __enter__(self) -> ModeRun:
        self._policy.plan_mode = self.mode == "plan"
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._policy.plan_mode = False


def _defanged(plan: Plan) -> Plan:
    """``plan`` with its prose defanged (``core.markdown_defang``), since a client renders it as markdown;
    file paths and check commands are kept exactly (they are shown as code)."""

    def clean(items: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(defang_markdown(item).text for item in items)

    return Plan(
        defang_markdown(plan.summary).text, plan.files, clean(plan.steps), plan.checks, clean(plan.risks)
    )
