"""A stored session's runs as an editor shows them: each run's task, its answer text and tool calls in
order (with the policy's verdict and the result), and how it ended. ``agent.sessionHistory`` sends this,
so an editor that resumes a session (the VS Code Agent view's picker) shows what was said before.

Read from the session file's records in order (docs/sessions.md): ``run_start`` opens a run;
``message`` records add the assistant's text and tool calls and the tool results (the user's messages
are the tasks, already in ``run_start``, plus the editor context, which is not shown); ``verdict``
records fill in the verdicts; a ``plan`` record gives a plan run's plan; the last ``checks`` record the
acceptance checks' results (dropped when a later message of the model shows it went on); ``run_end``
gives the status, the reason, the usage, the mode and what was not verified. A ``compaction`` record
rewrites the model's history, not what happened: it is skipped. Records before the first run,
of unknown kinds or malformed, are skipped. Tool arguments and results are clipped to
``TEXT_CHARS`` characters (the session file has them whole).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from agent_ls.core.checks import CheckResult
from agent_ls.core.messages import AssistantMessage, ToolResultMessage, Usage
from agent_ls.core.plan import Plan
from agent_ls.sessions.records import check_from, message_from, usage_by_role_from, usage_from

TEXT_CHARS = 2000


def clip(text: str, limit: int = TEXT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the last one ``…`` when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class HistoryItem:
    """Answer text (``kind`` ``text``: ``text``) or a tool call (``kind`` ``tool``: the rest)."""

    kind: str
    text: str = ""
    call_id: str = ""
    tool_name: str = ""
    arguments: str = ""
    verdict: str | None = None
    rule: str | None = None
    approval: str | None = None
    result: str | None = None
    is_error: bool = False


@dataclass
class HistoryRun:
    """One run: ``status`` is ``interrupted`` until its ``run_end``; ``usage`` None until then; ``mode``
    ``default`` until its ``run_end`` says otherwise; ``plan`` the plan a plan run ended with, or None."""

    task: str
    items: list[HistoryItem] = field(default_factory=list)
    mode: str = "default"
    plan: Plan | None = None
    status: str = "interrupted"
    reason: str = ""
    usage: Usage | None = None
    usage_by_role: dict[str, Usage] = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)
    """The acceptance checks' results the run ended on (``RunEnded.checks``): the last ``checks`` record,
    unless the model went on after it."""
    not_verified: list[str] = field(default_factory=list)


def _with_call(run: HistoryRun, call_id: str, **changes: Any) -> None:
    for index in range(len(run.items) - 1, -1, -1):
        item = run.items[index]
        if item.kind == "tool" and item.call_id == call_id:
            run.items[index] = replace(item, **changes)
            return


def _add(run: HistoryRun, record: dict[str, Any]) -> None:
    kind = record["kind"]
    if kind == "message":
        message = message_from(record["message"])
        if isinstance(message, AssistantMessage):
            run.checks = []  # the model went on after a round of checks: they no longer describe the end
            if message.text.strip():
                run.items.append(HistoryItem(kind="text", text=message.text))
            for call in message.tool_calls:
                item = HistoryItem(
                    kind="tool", call_id=call.call_id, tool_name=call.name, arguments=clip(call.arguments)
                )
                run.items.append(item)
        elif isinstance(message, ToolResultMessage):
            _with_call(run, message.call_id, result=clip(message.content), is_error=message.is_error)
    elif kind == "verdict":
        approval = record.get("approval")
        _with_call(
            run,
            str(record["callId"]),
            verdict=str(record["verdict"]),
            rule=str(record["rule"]) if record.get("rule") else None,
            approval=str(approval) if approval else None,
        )
    elif kind == "plan":
        run.plan = Plan.from_wire(record["plan"])
    elif kind == "checks":
        run.checks = [check_from(result) for result in record["results"]]
    elif kind == "run_end":
        run.mode = str(record.get("mode", "default"))
        run.status = str(record["status"])
        run.reason = str(record.get("reason", ""))
        run.usage = usage_from(record.get("usage", {}))
        run.usage_by_role = usage_by_role_from(record)
        run.not_verified = [str(line) for line in record.get("notVerified", [])]
        answer = str(record.get("answer", ""))
        if answer.strip() and not any(item.kind == "text" for item in run.items):
            run.items.append(HistoryItem(kind="text", text=answer))


def history(records: list[dict[str, Any]]) -> list[HistoryRun]:
    """The runs of a session file's ``records`` (header excluded), oldest first. Never raises."""
    runs: list[HistoryRun] = []
    for record in records:
        try:
            if record.get("kind") == "run_start":
                runs.append(HistoryRun(task=str(record.get("task", ""))))
            elif runs:
                _add(runs[-1], record)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return runs
