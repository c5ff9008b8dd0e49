"""sessions.history: a stored session's runs, as agent.sessionHistory sends them to an editor."""

from __future__ import annotations

from typing import Any

from agent_ls.core.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage, UserMessage
from agent_ls.sessions.history import TEXT_CHARS, HistoryItem, HistoryRun, history
from agent_ls.sessions.records import message_json


def message(m: Any) -> dict[str, Any]:
    return {"kind": "message", "message": message_json(m)}


USAGE = {"inputTokens": 900, "outputTokens": 100, "cachedInputTokens": 0, "estimated": False, "costUsd": None}


def test_runs_hold_the_task_the_text_and_tool_calls_with_verdicts_and_results_in_order() -> None:
    records: list[dict[str, Any]] = [
        {"kind": "approval", "key": "before any run"},
        {"kind": "run_start", "run": 1, "task": "Fix mean()", "model": "m"},
        message(UserMessage("Fix mean()\n\n<editor context>")),
        message(AssistantMessage("Let me read it.", (ToolCall("c1", "read_file", '{"path": "stats.py"}'),))),
        {
            "kind": "verdict",
            "callId": "c1",
            "name": "read_file",
            "verdict": "allow",
            "rule": "read: **",
            "approval": None,
        },
        message(ToolResultMessage("c1", "read_file", "1: def mean(values):")),
        message(AssistantMessage("", (ToolCall("c2", "bash", '{"command": "rm -rf /"}'),))),
        {
            "kind": "verdict",
            "callId": "c2",
            "name": "bash",
            "verdict": "ask",
            "rule": None,
            "approval": "deny",
        },
        message(ToolResultMessage("c2", "bash", "denied by user", is_error=True)),
        {"kind": "compaction", "messages": [], "userTexts": []},
        message(AssistantMessage("Fixed mean().")),
        {
            "kind": "run_end",
            "run": 1,
            "status": "done",
            "reason": "the model answered",
            "answer": "Fixed mean().",
            "usage": USAGE,
        },
        {"kind": "run_start", "run": 2, "task": "And a test?", "model": "m"},
    ]
    assert history(records) == [
        HistoryRun(
            task="Fix mean()",
            items=[
                HistoryItem(kind="text", text="Let me read it."),
                HistoryItem(
                    kind="tool",
                    call_id="c1",
                    tool_name="read_file",
                    arguments='{"path": "stats.py"}',
                    verdict="allow",
                    rule="read: **",
                    result="1: def mean(values):",
                ),
                HistoryItem(
                    kind="tool",
                    call_id="c2",
                    tool_name="bash",
                    arguments='{"command": "rm -rf /"}',
                    verdict="ask",
                    approval="deny",
                    result="denied by user",
                    is_error=True,
                ),
                HistoryItem(kind="text", text="Fixed mean()."),
            ],
            status="done",
            reason="the model answered",
            usage=Usage(input_tokens=900, output_tokens=100),
            # A run_end written before roles were recorded: all of its usage was the main model's.
            usage_by_role={"main": Usage(input_tokens=900, output_tokens=100)},
        ),
        HistoryRun(task="And a test?"),
    ]


def test_an_answer_never_streamed_as_a_message_comes_from_run_end_and_long_texts_are_clipped() -> None:
    long = "x" * (TEXT_CHARS + 50)
    records: list[dict[str, Any]] = [
        {"kind": "run_start", "task": "t"},
        message(AssistantMessage("", (ToolCall("c1", "grep", long),))),
        message(ToolResultMessage("c1", "grep", long)),
        {"kind": "verdict", "callId": "c1"},  # malformed: skipped
        {"kind": "run_end", "status": "stopped", "reason": "max turns", "answer": "Partial."},
    ]
    [run] = history(records)
    tool, text = run.items
    assert len(tool.arguments) == TEXT_CHARS and tool.arguments.endswith("…")
    assert tool.result is not None and len(tool.result) == TEXT_CHARS
    assert tool.verdict is None
    assert text == HistoryItem(kind="text", text="Partial.")
    assert (run.status, run.reason) == ("stopped", "max turns")


def test_a_run_shows_the_checks_it_ended_on_and_what_was_not_verified() -> None:
    failing = {
        "command": "pytest -q",
        "passed": False,
        "exitCode": 1,
        "outputTail": "1 failed",
        "notRun": None,
    }
    passing = {**failing, "passed": True, "exitCode": 0, "outputTail": ""}
    denied = {
        "command": "rm -rf b",
        "passed": False,
        "exitCode": None,
        "outputTail": "Blocked",
        "notRun": "Blocked",
    }
    records: list[dict[str, Any]] = [
        {"kind": "run_start", "run": 1, "task": "Fix", "model": "m"},
        message(AssistantMessage("Done.")),
        {"kind": "checks", "round": 1, "results": [failing, denied]},
        message(AssistantMessage("Fixed now.")),  # the model went on: round 1 no longer describes the end
        {"kind": "checks", "round": 2, "results": [passing, denied]},
        {
            "kind": "run_end",
            "run": 1,
            "status": "done",
            "reason": "r",
            "answer": "",
            "usage": USAGE,
            "notVerified": ["rm -rf b: not run: Blocked"],
        },
        {"kind": "run_start", "run": 2, "task": "More", "model": "m"},
        message(AssistantMessage("Done.")),
        {"kind": "checks", "round": 1, "results": [failing]},
        message(AssistantMessage("", (ToolCall("c1", "read_file", "{}"),))),
        {"kind": "run_end", "run": 2, "status": "stopped", "reason": "r", "answer": "", "usage": USAGE},
    ]
    first, second = history(records)
    assert [(c.command, c.passed, c.not_run) for c in first.checks] == [
        ("pytest -q", True, ""),
        ("rm -rf b", False, "Blocked"),
    ]
    assert first.not_verified == ["rm -rf b: not run: Blocked"]
    assert (second.checks, second.not_verified) == ([], [])
