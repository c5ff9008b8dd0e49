"""Rendering a run's events for an editor.

Each event becomes, in order: a transcript line (``window/logMessage``), an ``agent/event``
notification (structured, for rich clients) and, where it marks progress, a ``$/progress`` report on
the run's work-done token (begin at ``RunStarted``, a report per turn and per tool call, end at
``RunEnded`` with the outcome). ``RunEnded`` also sends ``agent/runEnded``. ``TodosChanged`` sends
``agent/todos`` and a progress report naming the item in progress; a subagent's events (``SubagentEvent``)
go out as its own would, marked with ``subagent``, and its turns and tool calls are progress reports.
``FindingsReported`` publishes the run's findings so far (its calls add up) as diagnostics
(``review_diagnostics``) and sends an ``agent/event`` of kind ``findings`` whose text is the call's
``path:line: severity: message`` lines.

A ``VerdictGiven`` with verdict deny (by a rule or by the user) also sends a ``window/showMessage`` of
type Warning, ``agent-ls blocked: <tool> <subject> (<rule>)``, at most once per distinct subject per run:
a blocked action may be the trace of a prompt injection, and the user must see it without opening the
log (issue 5). Every client shows ``window/showMessage`` (LSP 3.17 needs no capability for it).
A ``RemoteContentDefanged`` sends such a warning too, naming the hosts the model's text tried to load
from (at most once per distinct host list per run): the answer and deltas the client renders carry those
images and tags defanged (``core.markdown_defang``), and the user should know why.

The transcript lines show control and format characters escaped (``core.transcript``); so does the
``blocked`` warning. ``agent/event`` notifications carry the event's fields as they are: they are data
for a client to render, and a client that writes them to a terminal escapes them itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import assert_never

from lsprotocol import types as t

from agent_ls.core.events import (
    ChecksRan,
    ContextCompacted,
    Event,
    FindingsReported,
    InstructionsLoaded,
    McpServerStatus,
    MessageCompleted,
    MessageDelta,
    ModelRetrying,
    ProposalChanged,
    RemoteContentDefanged,
    RunEnded,
    RunStarted,
    SubagentEvent,
    TodosChanged,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageReported,
    VerdictGiven,
)
from agent_ls.core.messages import Usage
from agent_ls.core.review import RunFindings
from agent_ls.core.transcript import line_for, usage_text
from agent_ls.core.visible_text import visible
from agent_ls.lsp import protocol as p
from agent_ls.lsp.review_diagnostics import show_findings
from agent_ls.lsp.state import AgentLanguageServer


def usage_summary(usage: Usage) -> p.UsageSummary:
    """The wire form of a usage figure; ``costUsd`` is null when no price is configured."""
    return p.UsageSummary(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_input_tokens=usage.cached_input_tokens,
        estimated=usage.estimated,
        cost_usd=usage.cost_usd,
    )


BLOCKED_SUBJECT_CHARS = 200


def blocked_message(event: VerdictGiven) -> str:
    """The warning for a denied tool call: ``agent-ls blocked: bash curl https://x (bash: curl *)``.

    The subject is put on one line (runs of blanks and line breaks become one space) and cut at
    ``BLOCKED_SUBJECT_CHARS`` characters with ``…``; a refusal by the user reads
    ``(<rule>, you answered deny)``.
    """
    subject = visible(" ".join(event.subject.split()))
    if len(subject) > BLOCKED_SUBJECT_CHARS:
        subject = subject[: BLOCKED_SUBJECT_CHARS - 1] + "…"
    rule = visible(event.rule, newlines=False)
    why = f"{rule}, you answered {event.approval}" if event.approval else rule
    return f"agent-ls blocked: {visible(event.name, newlines=False)} {subject} ({why})"


def defanged_message(event: RemoteContentDefanged) -> str:
    """The warning for images and embeds defanged in the model's text, naming their hosts."""
    targets = ", ".join(visible(target, newlines=False) for target in event.targets)
    return (
        f"agent-ls: the agent's answer linked images or embeds from {targets}; they were not loaded "
        "and are shown as text (a prompt injection may try to send data out this way)"
    )


class LspEventRenderer:
    """An ``EventSink`` for one run. ``progress`` is False when the client has no work-done progress."""

    def __init__(
        self,
        ls: AgentLanguageServer,
        session_id: str,
        token: str,
        *,
        progress: bool,
        run_ended: Callable[[RunEnded], Awaitable[p.RunEndedNotification]],
    ) -> None:
        self._ls = ls
        self._session_id = session_id
        self._token = token
        self.progress = progress
        self._run_ended = run_ended
        self._ending: asyncio.Task[None] | None = None
        """Builds and sends agent/runEnded (its proposal summary diffs every file, off the event loop)."""
        self._total: Usage | None = None
        self._warned: set[str] = set()
        """Subjects already shown in a "blocked" warning during this run."""
        self._defanged: set[tuple[str, ...]] = set()
        """Target lists already shown in a "not loaded" warning during this run."""
        self._findings = RunFindings()
        """The review findings of this run so far (``review_findings`` may be called more than once)."""

    def __call__(self, event: Event) -> None:
        line = line_for(event)
        if line is not None:
            self._ls.window_log_message(t.LogMessageParams(type=t.MessageType.Info, message=line))
        if isinstance(event, VerdictGiven) and event.verdict == "deny":
            self._warn_blocked(event)
        if isinstance(event, RemoteContentDefanged) and event.targets not in self._defanged:
            self._defanged.add(event.targets)
            self._ls.window_show_message(
                t.ShowMessageParams(type=t.MessageType.Warning, message=defanged_message(event))
            )
        if isinstance(event, InstructionsLoaded) and event.what == "unknown-skill":
            message = f"agent-ls: {event.detail}"  # a mistyped /skill must not pass unnoticed
            self._ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=message))
        if isinstance(event, FindingsReported):
            self._findings.add(event.findings, event.files)  # a run's calls add up
            entry = self._ls.state.sessions.get(self._session_id)
            if entry is not None:
                reported = FindingsReported(
                    tuple(self._findings.findings), tuple(sorted(self._findings.files))
                )
                show_findings(self._ls, self._session_id, entry.session.root, reported)
        notification = self._notification(event)
        if notification is not None:
            self._ls.protocol.notify(p.AGENT_EVENT, notification.wire())
        self._progress(event, line or "")
        if isinstance(event, RunEnded):
            self._ending = asyncio.get_running_loop().create_task(self._notify_run_ended(event))

    async def _notify_run_ended(self, event: RunEnded) -> None:
        self._ls.protocol.notify(p.AGENT_RUN_ENDED, (await self._run_ended(event)).wire())

    async def run_ended_sent(self) -> None:
        """Wait until agent/runEnded is sent (at once when the run emitted no RunEnded)."""
        if self._ending is not None:
            await self._ending

    def _warn_blocked(self, event: VerdictGiven) -> None:
        subject = " ".join(event.subject.split())
        if subject in self._warned:
            return
        self._warned.add(subject)
        self._ls.window_show_message(
            t.ShowMessageParams(type=t.MessageType.Warning, message=blocked_message(event))
        )

    def _notification(self, event: Event) -> p.AgentEventNotification | None:
        sid = self._session_id
        match event:
            case RunStarted(task=task, model=model, unsandboxed=unsandboxed):
                return p.AgentEventNotification(
                    session_id=sid, kind="runStarted", text=task, model=model, unsandboxed=unsandboxed or None
                )
            case TurnStarted(turn=turn):
                return p.AgentEventNotification(session_id=sid, kind="turnStarted", text=str(turn))
            case MessageDelta(text=text, kind=kind):
                wire_kind: p.EventKind = "textDelta" if kind == "text" else "reasoningDelta"
                return p.AgentEventNotification(session_id=sid, kind=wire_kind, text=text)
            case ModelRetrying(partial=partial):
                return p.AgentEventNotification(
                    session_id=sid, kind="retrying", text=line_for(event), partial=partial
                )
            case MessageCompleted():
                return None  # the deltas carried the text; the transcript line is the log message
            case ToolCallStarted(name=name, arguments=arguments):
                return p.AgentEventNotification(
                    session_id=sid, kind="toolCall", tool_name=name, text=arguments
                )
            case VerdictGiven(name=name, verdict=verdict, rule=rule, approval=approval):
                return p.AgentEventNotification(
                    session_id=sid,
                    kind="verdict",
                    tool_name=name,
                    verdict=verdict,
                    text=rule,
                    approval=p.APPROVAL_ANSWERS.get(approval or ""),
                )
            case ToolCallFinished(name=name, output=output):
                return p.AgentEventNotification(
                    session_id=sid, kind="toolResult", tool_name=name, text=output
                )
            case UsageReported(usage=usage, total=total, session=session):
                return p.AgentEventNotification(
                    session_id=sid,
                    kind="usage",
                    text=usage_text(total),
                    usage=usage_summary(total),
                    call_usage=usage_summary(usage),
                    session_usage=usage_summary(session),
                )
            case ProposalChanged(paths=paths):
                return p.AgentEventNotification(session_id=sid, kind="proposalChanged", text="\n".join(paths))
            case TodosChanged(items=items):
                todos = [
                    p.TodoWire(content=item.content, status=item.status, active_form=item.active_form)
                    for item in items
                ]
                todos_notification = p.TodosNotification(session_id=sid, todos=todos)
                self._ls.protocol.notify(p.AGENT_TODOS, todos_notification.wire())
                return None  # its own notification, agent/todos
            case SubagentEvent(call_id=call_id, description=description, event=inner):
                nested = self._notification(inner)
                marker = p.SubagentMarker(call_id=call_id, description=description)
                return nested.model_copy(update={"subagent": marker}) if nested is not None else None
            case ContextCompacted():
                return p.AgentEventNotification(session_id=sid, kind="compacted", text=line_for(event))
            case FindingsReported(findings=findings):
                lines = "\n".join(str(finding) for finding in findings)
                return p.AgentEventNotification(session_id=sid, kind="findings", text=lines)
            case InstructionsLoaded() | RemoteContentDefanged() | RunEnded() | ChecksRan():
                return None  # the transcript line (window/logMessage), the warning or agent/runEnded say it
            case McpServerStatus():
                return None  # the transcript line (window/logMessage), the warning or agent/runEnded say it
            case _:
                assert_never(event)

    def _progress(self, event: Event, line: str) -> None:
        if not self.progress:
            return
        progress = self._ls.work_done_progress
        match event:
            case RunStarted(task=task):
                title = "Agent: " + (task if len(task) <= 60 else task[:59] + "…")
                progress.begin(self._token, t.WorkDoneProgressBegin(title=title, cancellable=True))
            case TurnStarted() | ToolCallStarted() | ModelRetrying():
                message = line.strip("—→ ")
                if isinstance(event, TurnStarted) and self._total is not None:
                    message += f" · {usage_text(self._total)}"
                progress.report(self._token, t.WorkDoneProgressReport(message=message))
            case TodosChanged(items=items):
                done = sum(item.status == "completed" for item in items)
                now = next((item.active_form for item in items if item.status == "in_progress"), "")
                message = f"todo {done}/{len(items)} done" + (f": {now}" if now else "")
                progress.report(self._token, t.WorkDoneProgressReport(message=message))
            case SubagentEvent(event=TurnStarted() | ToolCallStarted()):
                progress.report(self._token, t.WorkDoneProgressReport(message=" ".join(line.split())))
            case UsageReported(total=total):
                self._total = total
            case RunEnded(status=status, reason=reason, usage=usage):
                spent = f" · {usage_text(usage)}" if usage.input_tokens or usage.output_tokens else ""
                progress.end(self._token, t.WorkDoneProgressEnd(message=f"{status}: {reason}{spent}"))
            case _:
                pass
