"""The task tool: a subagent with its own context, read-only tools and budget; only its report returns.

The parent and the subagent share one scripted model (as they share the run's model client); the
subagent's tools are a real ``ToolRegistry`` over the fake workspace (harness.py).
"""

from __future__ import annotations

import asyncio
import json

from agent_ls.core.events import (
    Event,
    RunEnded,
    RunStarted,
    SubagentEvent,
    ToolCallFinished,
    ToolCallStarted,
)
from agent_ls.core.loop import LoopLimits, run_loop
from agent_ls.core.messages import AssistantMessage, Message, SystemMessage, ToolCall, Usage, UserMessage
from agent_ls.tools import read_only_tools
from agent_ls.tools.task import SUBAGENT_PROMPT, Subagents, task_tool
from tests.unit.core.test_loop import ScriptedModel
from tests.unit.tools.harness import make_harness

SECRET_LINE = "ROUTE_TABLE = {'/pay': handle_payment}  # only the subagent reads this"


def _call(call_id: str, name: str, arguments: dict[str, str]) -> AssistantMessage:
    return AssistantMessage(tool_calls=(ToolCall(call_id, name, json.dumps(arguments)),))


def _task(prompt: str = "Find where /pay is routed") -> AssistantMessage:
    return _call("t1", "task", {"description": "find the route", "prompt": prompt})


def _subagents(model: ScriptedModel, *, max_tokens: int = 100_000) -> Subagents:
    """The run's subagents over a workspace holding SECRET_LINE, their jobs sent to ``model``."""
    child = make_harness({"app/routes.py": SECRET_LINE + "\n"}, tools=read_only_tools())
    subagents = Subagents("s1", "/ws", child.registry, lambda: "", max_tokens=max_tokens)
    subagents.model = model
    return subagents


async def _parent(
    model: ScriptedModel,
    *,
    max_tokens: int = 100_000,
    subagents: Subagents | None = None,
    task: str = "Fix the payment route",
) -> tuple[RunEnded, list[Event], list[Message]]:
    """A parent run of ``task`` with the task tool (``subagents``, else ones sent to ``model``)."""
    subagents = subagents or _subagents(model, max_tokens=max_tokens)
    parent = make_harness(tools=[task_tool(subagents)])
    events: list[Event] = []
    history: list[Message] = [SystemMessage("parent prompt"), UserMessage(task)]
    ended = await run_loop(
        session_id="s1",
        task=task,
        history=history,
        model=model,
        tools=parent.registry,
        emit=events.append,
        limits=LoopLimits(),
    )
    return ended, events, history


async def test_only_the_report_reaches_the_parent() -> None:
    model = ScriptedModel(
        [
            _task(),
            _call("r1", "read_file", {"path": "app/routes.py"}),
            AssistantMessage(text="/pay is routed in app/routes.py:1 to handle_payment."),
            AssistantMessage(text="Found it."),
        ]
    )
    ended, events, history = await _parent(model)
    assert ended.status == "done" and ended.answer == "Found it."
    assert ended.usage == Usage(input_tokens=40, output_tokens=8)  # the parent's 2 calls and the child's 2

    parent_first, child_first, child_second, parent_second = model.seen
    assert child_first == [
        SystemMessage(SUBAGENT_PROMPT.format(root="/ws")),
        UserMessage("Find where /pay is routed"),
    ]
    assert SECRET_LINE in child_second[-1].content  # type: ignore[union-attr]
    assert not any(SECRET_LINE in str(message) for message in parent_second)
    report = parent_second[-1]
    assert report.content == (  # type: ignore[union-attr]
        '<tool_result tool="task" trust="data">\n'
        "/pay is routed in app/routes.py:1 to handle_payment.\n</tool_result>"
    )
    assert history[:2] == parent_first and history[3] == report and len(history) == 5

    nested = [e for e in events if isinstance(e, SubagentEvent)]
    assert {(e.call_id, e.description) for e in nested} == {("t1", "find the route")}
    inner = [e.event for e in nested]
    assert isinstance(inner[0], RunStarted) and inner[0].session_id == "s1/t1"
    assert isinstance(inner[-1], RunEnded) and inner[-1].status == "done"
    assert [e.name for e in inner if isinstance(e, ToolCallStarted)] == ["read_file"]
    # The subagent's whole run sits between the task call's start and its result.
    started = next(i for i, e in enumerate(events) if isinstance(e, ToolCallStarted) and e.name == "task")
    finished = next(i for i, e in enumerate(events) if isinstance(e, ToolCallFinished) and e.name == "task")
    assert all(started < events.index(e) < finished for e in nested)


async def test_a_subagent_has_no_edit_or_shell_tool() -> None:
    model = ScriptedModel(
        [
            _task("Delete the route"),
            _call("w1", "write_file", {"path": "app/routes.py", "content": ""}),
            AssistantMessage(text="I cannot write files."),
            AssistantMessage(text="ok"),
        ]
    )
    await _parent(model)
    refused = model.seen[2][-1].content  # type: ignore[union-attr]
    assert "no tool named 'write_file'. Available tools: grep, list_files, read_file." in refused


async def test_the_token_budget_stops_the_subagent_with_its_reason() -> None:
    model = ScriptedModel(  # each call reports 12 tokens (test_loop.U)
        [
            _task(),
            _call("r1", "read_file", {"path": "app/routes.py"}),
            AssistantMessage(text="ok"),
        ]
    )
    ended, _, history = await _parent(model, max_tokens=12)
    assert ended.status == "done"
    result = history[3]
    assert "The subagent stopped (error: the subagent's token budget is spent (12 of 12 tokens))" in (
        result.content  # type: ignore[union-attr]
    )
    assert result.is_error  # type: ignore[union-attr]


async def test_cancelling_the_parent_cancels_the_subagent() -> None:
    model = ScriptedModel([_task(), "hang"])
    run = asyncio.create_task(_parent(model))
    while len(model.seen) < 2:  # noqa: ASYNC110 (the subagent's model call is in flight)
        await asyncio.sleep(0.01)
    run.cancel()
    ended, events, history = await run
    assert ended.status == "cancelled"
    child_end = [e.event for e in events if isinstance(e, SubagentEvent) and isinstance(e.event, RunEnded)]
    assert [e.status for e in child_end] == ["cancelled"]
    assert len(model.seen) == 2  # nothing more was asked of the model
    assert history[-1].content.startswith("interrupted")  # type: ignore[union-attr]


class _OwnModel(ScriptedModel):
    """The subagent role's model: counts how often it is closed."""

    closed = 0

    @property
    def model_name(self) -> str:
        return "fake/subagent-model"

    async def aclose(self) -> None:
        self.closed += 1


async def test_the_subagent_roles_model_is_opened_at_the_first_job_and_closed_with_the_run() -> None:
    """Issue 17: with ``[models] subagent`` the jobs go to that model, opened once for the run's jobs;
    the run's usage is split by role."""
    parent_model = ScriptedModel(
        [_task("first job"), _task("second job"), AssistantMessage(text="Both done.")]
    )
    own = _OwnModel([AssistantMessage(text="report 1"), AssistantMessage(text="report 2")])
    opened: list[str] = []

    def open_own() -> ScriptedModel:
        opened.append("subagent")
        return own

    subagents = _subagents(parent_model)
    subagents.open_own = open_own
    ended, _, _ = await _parent(parent_model, subagents=subagents, task="Two jobs")

    assert ended.status == "done" and ended.answer == "Both done."
    assert opened == ["subagent"] and len(own.seen) == 2 and len(parent_model.seen) == 3
    assert ended.usage_by_role == {
        "main": Usage(input_tokens=30, output_tokens=6),
        "subagent": Usage(input_tokens=20, output_tokens=4),
    }
    assert own.closed == 0
    await subagents.end_run()
    assert own.closed == 1 and (subagents.model, subagents.open_own) == (None, None)
