"""Plan mode (issue 17) through a real ``agent-ls serve`` (pytest-lsp) and the scripted model on 127.0.0.1:
the policy refuses a plan run's writes even when the model asks for them, the run ends with its plan,
and "Approve plan" (the next ``agent.run {sessionId}`` in default mode) carries the plan into its first
request and its edit becomes a proposal that applies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import BUGGY, FIXED, command, field, fix_step
from tests.e2e.test_sessions import _ended, _server
from tests.support.model_server import FakeModelServer

PLAN = {
    "summary": "mean() divides by len(values) - 1; divide by len(values).",
    "files": ["stats.py"],
    "steps": ["Change the divisor in stats.mean", "Run the tests"],
    "checks": ["python -m pytest -q"],
    "risks": ["callers that relied on the wrong mean"],
}
PLAN_RULE = "plan mode: edits are refused until the plan is approved"


def _plan_steps() -> list[dict[str, Any]]:
    """The plan run: a write_file, a writing command and a read, then the plan."""
    return [
        {
            "content": "Let me look first.",
            "tool_calls": [
                {"id": "w1", "name": "write_file", "arguments": {"path": "NOTES.md", "content": "x\n"}},
                {"id": "e1", "name": "edit_file", "arguments": fix_step()["tool_calls"][0]["arguments"]},
                {"id": "b1", "name": "bash", "arguments": {"command": "echo x > f.txt"}},
                {"id": "m1", "name": "memory_append", "arguments": {"text": "a note"}},
                {"id": "r1", "name": "read_file", "arguments": {"path": "stats.py"}},
            ],
        },
        {"tool_calls": [{"id": "p1", "name": "submit_plan", "arguments": PLAN}]},
    ]


def _plan(obj: Any) -> dict[str, Any] | None:
    """A plan as received (pygls objects) as a dict, or None."""
    return None if obj is None else {key: field(obj, key) for key in PLAN}


def _tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def _user_texts(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "user"]


async def test_a_plan_run_refuses_writes_and_approving_it_implements_the_plan(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([*_plan_steps(), fix_step("call_fix"), {"content": "Implemented the plan."}])
    state = tmp_path / "state"
    async with _server(state, workspace, model_server) as client:
        result = await command(client, "agent.run", {"task": "Fix mean in stats.py", "mode": "plan"})
        session_id = field(result, "sessionId")
        ended = await _ended(client, session_id, 1)
        assert (field(ended, "status"), field(ended, "reason")) == ("done", "plan submitted for approval")
        assert field(ended, "mode") == "plan"
        assert _plan(field(ended, "plan")) == PLAN
        assert "1. Change the divisor in stats.mean" in field(ended, "answer")
        assert field(field(ended, "proposal"), "files") == []

        verdicts = {
            field(e, "toolName"): (field(e, "verdict"), field(e, "text"))
            for e in client.agent["events"]  # type: ignore[attr-defined]
            if field(e, "kind") == "verdict"
        }
        for name in ("write_file", "edit_file", "bash", "memory_append"):
            assert verdicts[name][0] == "deny", (name, verdicts[name])
            assert PLAN_RULE in verdicts[name][1], (name, verdicts[name])
        assert verdicts["read_file"][0] == "allow" and verdicts["submit_plan"][0] == "allow"
        assert not (workspace / "NOTES.md").exists() and not (workspace / "f.txt").exists()
        assert BUGGY in (workspace / "stats.py").read_text()

        first, second = model_server.requests[:2]
        assert "submit_plan" in _tool_names(first)
        assert not {"edit_file", "write_file", "memory_append"} & set(_tool_names(first))
        assert _user_texts(first)[0].startswith("Plan mode: research the task with read-only tools")
        results = {m["tool_call_id"]: m["content"] for m in second["messages"] if m["role"] == "tool"}
        assert all(PLAN_RULE in results[i] for i in ("w1", "e1", "b1", "m1"))
        assert "def mean" in results["r1"]

    # "Approve plan": the next run of the session, default mode, a server restarted in between.
    async with _server(state, workspace, model_server) as client:
        await command(client, "agent.run", {"task": "Implement the approved plan.", "sessionId": session_id})
        ended = await _ended(client, session_id, 1)
        assert (field(ended, "status"), field(ended, "mode"), field(ended, "plan")) == (
            "done",
            "default",
            None,
        )
        assert field(field(ended, "proposal"), "files") == ["stats.py"]
        implementing = model_server.requests[2]  # the implementation run's first request
        task = next(t for t in _user_texts(implementing) if "The user approved this plan" in t)
        assert task.startswith("The user approved this plan; implement it now")
        assert PLAN["summary"] in task and "1. Change the divisor in stats.mean" in task
        assert task.endswith("Implement the approved plan.")
        assert {"edit_file", "bash"} <= set(_tool_names(implementing))
        assert "submit_plan" not in _tool_names(implementing)

        applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
        assert field(applied, "applied") is True

        history = await command(client, "agent.sessionHistory", {"sessionId": session_id})
        planned, implemented = field(history, "runs")
        assert (field(planned, "mode"), _plan(field(planned, "plan"))) == ("plan", PLAN)
        assert (field(implemented, "mode"), field(implemented, "plan")) == ("default", None)
    assert FIXED in (workspace / "stats.py").read_text()
    stored = next((state / "sessions").glob(f"*/{session_id}.jsonl")).read_text().splitlines()
    records = [json.loads(line) for line in stored]
    (plan_record,) = [r for r in records if r["kind"] == "plan"]
    assert plan_record["plan"] == PLAN and plan_record["run"] == 1
    assert [r.get("mode") for r in records if r["kind"] == "run_end"] == ["plan", "default"]


async def test_a_plan_run_that_answers_without_a_plan_is_stopped(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.append({"content": "I would change the divisor."})
    async with _server(tmp_path / "state", workspace, model_server) as client:
        result = await command(client, "agent.run", {"task": "Fix mean", "mode": "plan"})
        ended = await _ended(client, field(result, "sessionId"), 1)
        assert (field(ended, "status"), field(ended, "mode"), field(ended, "plan")) == (
            "stopped",
            "plan",
            None,
        )
        assert field(ended, "reason").startswith("no plan: the model answered without calling submit_plan")
        assert field(ended, "answer") == "I would change the divisor."
