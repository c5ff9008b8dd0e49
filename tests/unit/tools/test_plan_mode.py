"""Plan mode's tools and run (issue 17), with fakes of the ports: what a plan run offers, what it refuses
itself, submit_plan's schema and validation, ModeRun's task text and RunEnded, the plan in the session
file read back (resume and history), and the approved plan surviving a compaction."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from agent_ls.assembly import assemble_session
from agent_ls.core.compaction import Compactor
from agent_ls.core.events import Event, RunEnded, ToolCallFinished, VerdictGiven
from agent_ls.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from agent_ls.core.plan import PLAN_MODE_NOTE, Plan
from agent_ls.core.ports import DENIED, Approval, ApprovalRequest, CommandResult
from agent_ls.policy.engine import PLAN_RULE, PermissionPolicy
from agent_ls.sessions.history import history
from agent_ls.sessions.saved import replay
from agent_ls.sessions.store import StoredFile
from agent_ls.tools import submit_plan
from agent_ls.tools.base import ToolContext
from agent_ls.tools.plan_mode import NO_PLAN, PLAN_SUBMITTED, ModeRun, PlanModeTools
from agent_ls.workspace.paths import PathPolicy
from tests.unit.core.test_compaction import SummaryModel, estimate

SNAPSHOT = Path(__file__).parent / "snapshots" / "submit_plan_spec.json"
PLAN = Plan("Fix mean.", ("stats.py",), ("Change the divisor",), ("pytest -q",), ("callers",))
ARGS = json.dumps(PLAN.wire())


class Tools:
    """The session registry as the loop sees it: every default and deferred tool's name, and the calls."""

    NAMES = ("read_file", "list_files", "grep", "edit_file", "bash", "skill", "load_tools", "write_file")
    NAMES += ("todo_write", "memory_read", "memory_append", "memory_rewrite", "task", "review_findings")

    def __init__(self) -> None:
        self.calls: list[str] = []

    def specs(self) -> Sequence[ToolSpec]:
        return [ToolSpec(name, name, {"type": "object"}) for name in self.NAMES]

    async def execute(self, call: ToolCall, emit: object) -> ToolResultMessage:
        self.calls.append(call.name)
        return ToolResultMessage(call.call_id, call.name, "ran")


class NobodyAsked:
    async def ask(self, request: ApprovalRequest) -> Approval:
        return DENIED


class NoRunner:
    async def run(self, command: str, timeout_s: float) -> CommandResult:
        raise AssertionError("no command runs")


def _planned(tmp_path: Path) -> tuple[PlanModeTools, Tools, PermissionPolicy]:
    tools = Tools()
    policy = PermissionPolicy(PathPolicy(tmp_path))
    ctx = ToolContext(workspace=None, runner=NoRunner())  # type: ignore[arg-type]  # submit_plan reads neither
    return PlanModeTools(tools, policy, ctx), tools, policy


def test_submit_plans_schema_matches_the_snapshot() -> None:
    spec = asdict(submit_plan.submit_plan_tool(lambda plan: None).spec())
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert spec == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_a_plan_run_offers_the_read_only_tools_and_submit_plan(tmp_path: Path) -> None:
    planned, _, _ = _planned(tmp_path)
    assert [spec.name for spec in planned.specs()] == [
        "read_file",
        "list_files",
        "grep",
        "bash",
        "skill",
        "load_tools",
        "todo_write",
        "memory_read",
        "task",
        "submit_plan",
    ]


async def test_memory_writes_are_refused_and_the_rest_goes_to_the_registry(tmp_path: Path) -> None:
    planned, tools, _ = _planned(tmp_path)
    events: list[Event] = []
    refused = await planned.execute(ToolCall("m1", "memory_append", '{"text": "x"}'), events.append)
    assert refused.is_error and PLAN_RULE in refused.content
    assert [e for e in events if isinstance(e, VerdictGiven)] == [
        VerdictGiven("m1", "memory_append", "deny", PLAN_RULE, "memory_append")
    ]
    await planned.execute(ToolCall("w1", "write_file", "{}"), events.append)  # the policy judges it there
    assert tools.calls == ["write_file"]
    assert planned.ended() is None


async def test_submit_plan_validates_its_arguments_and_ends_the_run(tmp_path: Path) -> None:
    planned, _, _ = _planned(tmp_path)
    events: list[Event] = []
    bad = await planned.execute(ToolCall("p0", "submit_plan", '{"summary": "x"}'), events.append)
    assert bad.is_error and "steps" in bad.content and planned.plan is None and planned.ended() is None
    good = await planned.execute(ToolCall("p1", "submit_plan", ARGS), events.append)
    assert not good.is_error and submit_plan.SUBMITTED in good.content
    assert planned.plan == PLAN and planned.ended() == PLAN_SUBMITTED
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.call_id, e.is_error) for e in finished] == [("p0", True), ("p1", False)]


async def test_mode_run_puts_the_policy_in_plan_mode_and_completes_run_ended(tmp_path: Path) -> None:
    tools = Tools()
    policy = PermissionPolicy(PathPolicy(tmp_path))
    moded = ModeRun("plan", None, tools, policy, ToolContext(workspace=None, runner=NoRunner()))  # type: ignore[arg-type]
    assert moded.task_text("Fix mean") == f"{PLAN_MODE_NOTE}\n\nFix mean"
    with moded:
        assert policy.plan_mode
        await moded.tools.execute(ToolCall("p1", "submit_plan", ARGS), lambda event: None)
    assert not policy.plan_mode
    seen: list[Event] = []
    moded.sink(seen.append)(RunEnded("done", PLAN_SUBMITTED, "", Usage()))
    (ended,) = seen
    assert (ended.mode, ended.plan, ended.answer.splitlines()[0]) == ("plan", PLAN, "Fix mean.")
    assert moded.ended == ended and moded.pending == PLAN


def test_a_plan_run_without_a_plan_is_stopped(tmp_path: Path) -> None:
    policy = PermissionPolicy(PathPolicy(tmp_path))
    moded = ModeRun("plan", PLAN, Tools(), policy, ToolContext(workspace=None, runner=NoRunner()))  # type: ignore[arg-type]
    ended = moded.finish(RunEnded("done", "the model answered", "I would...", Usage()))
    assert (ended.status, ended.reason, ended.plan) == ("stopped", NO_PLAN, None)
    assert moded.pending == PLAN  # the plan being revised stays the one a default run would carry


def test_the_default_run_after_a_plan_carries_it_once(tmp_path: Path) -> None:
    policy = PermissionPolicy(PathPolicy(tmp_path))
    moded = ModeRun("default", PLAN, Tools(), policy, ToolContext(workspace=None, runner=NoRunner()))  # type: ignore[arg-type]
    text = moded.task_text("go")
    assert text.startswith("The user approved this plan; implement it now")
    assert "1. Change the divisor" in text and "- `pytest -q`" in text and text.endswith("\n\ngo")
    assert moded.pending is None and moded.task_text("more") == "more"
    assert moded.finish(RunEnded("done", "r", "a", Usage())).mode == "default"


def _stored(*records: dict[str, object]) -> StoredFile:
    header = {"kind": "session", "format": 1, "sessionId": "s1", "workspace": "/w", "createdAt": "t"}
    return StoredFile(header=header, records=list(records), torn=False, skipped=0)


def test_the_session_file_gives_back_the_pending_plan_and_each_runs_plan() -> None:
    plan_run = [
        {"kind": "run_start", "run": 1, "task": "Fix mean"},
        {"kind": "plan", "run": 1, "plan": PLAN.wire()},
        {
            "kind": "run_end",
            "run": 1,
            "status": "done",
            "reason": PLAN_SUBMITTED,
            "answer": "",
            "mode": "plan",
        },
    ]
    assert replay(_stored(*plan_run)).plan == PLAN
    implemented = [
        *plan_run,
        {"kind": "run_start", "run": 2, "task": "go"},
        {"kind": "run_end", "run": 2, "status": "done", "reason": "r", "answer": "done", "mode": "default"},
    ]
    assert replay(_stored(*implemented)).plan is None
    first, second = history(implemented)
    assert (first.mode, first.plan, second.mode, second.plan) == ("plan", PLAN, "default", None)


async def test_the_approved_plan_survives_a_compaction() -> None:
    carried = ModeRun("default", PLAN, Tools(), PermissionPolicy(PathPolicy(Path("/"))), None)  # type: ignore[arg-type]
    conversation: list[Message] = [
        SystemMessage("system prompt"),
        UserMessage(f"{PLAN_MODE_NOTE}\n\nFix mean"),
        AssistantMessage(tool_calls=(ToolCall("p1", "submit_plan", ARGS),)),
        ToolResultMessage("p1", "submit_plan", submit_plan.SUBMITTED),
        UserMessage(carried.task_text("go")),
        AssistantMessage(tool_calls=(ToolCall("r1", "read_file", '{"path": "stats.py"}'),)),
        ToolResultMessage("r1", "read_file", "x" * 4_000),
    ]
    compactor = Compactor(
        context_window=100_000,
        max_output_tokens=0,
        estimate=estimate,
        system_message=lambda: SystemMessage("system prompt"),
        pinned=lambda: [],
        proposal=lambda: [],
    )
    await compactor.compact(conversation, [], SummaryModel(), force=True)
    kept = "\n".join(m.text for m in conversation if isinstance(m, UserMessage))
    assert "The user approved this plan" in kept and "1. Change the divisor" in kept


async def test_a_commands_changes_stay_out_of_the_proposal_in_a_plan_run(tmp_path: Path) -> None:
    """The shell runner asks the policy before a command's change enters the proposal: in plan mode no
    change does, even one from a command the policy would not have let run (here run directly)."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    session = assemble_session(root=root, approver=NobodyAsked(), environ={})
    try:
        session.policy.plan_mode = True
        refused = await session.runner.run("echo two > a.txt && echo new > b.txt", timeout_s=30)
        assert refused.changed_paths == () and session.proposal() == []
        session.policy.plan_mode = False
        brought = await session.runner.run("echo three > a.txt", timeout_s=30)
        assert brought.changed_paths == ("a.txt",)
        assert [change.path for change in session.proposal()] == ["a.txt"]
    finally:
        session.close()
    assert (root / "a.txt").read_text() == "one\n"


async def test_load_tools_says_a_tool_is_not_available_in_plan_mode(tmp_path: Path) -> None:
    planned, tools, _ = _planned(tmp_path)
    events: list[Event] = []
    result = await planned.execute(ToolCall("l1", "load_tools", '{"names": ["write_file"]}'), events.append)
    assert result.is_error and "write_file not available in plan mode" in result.content
    assert "call them now" not in result.content
    await planned.execute(ToolCall("l2", "load_tools", '{"names": ["todo_write"]}'), events.append)
    assert tools.calls == ["load_tools"]  # an offered tool loads as before
