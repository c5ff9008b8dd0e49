"""A run's events as ``session/update`` notifications, sent in order (ACP v1 ``SessionUpdate``).

| event | update |
|---|---|
| ``MessageDelta`` text / reasoning | ``agent_message_chunk`` / ``agent_thought_chunk`` |
| ``ToolCallStarted`` | ``tool_call`` (``in_progress``: title, kind, ``rawInput``, locations) |
| ``ToolCallFinished`` | ``tool_call_update`` (``completed`` / ``failed``, the output as text content; an
  ``edit_file`` / ``write_file`` call also the file's whole proposed change as ``diff`` content) |
| ``TodosChanged`` | ``plan`` |
| ``UsageReported`` (the run's own calls) | ``usage_update`` (the last request's tokens, the window,
  the session's cost) |
| ``ModelRetrying`` | ``agent_thought_chunk`` saying so |
| ``RemoteContentDefanged``, ``ChecksRan``, ``FindingsReported``, ``McpServerStatus`` not connected |
  ``agent_message_chunk``: the line the LSP transcript shows (``core.transcript.line_for``) |
| ``McpServerStatus`` connected, ``ContextCompacted``, ``InstructionsLoaded`` | ``agent_thought_chunk``:
  that line |
| ``RunEnded`` | an answer not streamed (``/context``, ``/compact``), a plan run's plan, and the reason
  of a run not done, as ``agent_message_chunk``; a plan's steps also as ``plan`` entries (``pending``) |

The event sink must not block (``core.events.EventSink``): updates are queued on the session's
``UpdateStream`` (``update_stream.py``), which sends them in order.
"""

from __future__ import annotations

import logging

from acp import helpers, schema

from agent_ls.acp.approver import AcpApprover
from agent_ls.acp.mapping import parsed_arguments, plan_entries, tool_call_end, tool_call_start
from agent_ls.acp.update_stream import UpdateStream
from agent_ls.core.errors import AgentLsError
from agent_ls.core.events import (
    ChecksRan,
    ContextCompacted,
    Event,
    FindingsReported,
    InstructionsLoaded,
    McpServerStatus,
    MessageDelta,
    ModelRetrying,
    RemoteContentDefanged,
    RunEnded,
    TodosChanged,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
)
from agent_ls.core.markdown_defang import defang_markdown
from agent_ls.core.transcript import line_for
from agent_ls.runtime import Session

log = logging.getLogger(__name__)

EDIT_TOOLS = ("edit_file", "write_file")
NOTES = (RemoteContentDefanged, ChecksRan, FindingsReported)
"""Events the user must see, as a message; ``McpServerStatus`` too unless connected."""
ASIDES = (ContextCompacted, InstructionsLoaded, McpServerStatus)
"""Events shown as a thought (what the LSP transcript shows as a status line)."""
PLAN_NEXT = "Implement it: switch to the Default mode and say go; revise it: a new prompt in Plan mode."


class EventUpdates:
    """The ``EventSink`` of a prompt's run (module docstring). ``window`` is the model's context window in
    tokens (for ``usage_update.size``)."""

    def __init__(self, stream: UpdateStream, session: Session, approver: AcpApprover, window: int) -> None:
        self._stream = stream
        self._session = session
        self._approver = approver
        self.window = window
        self._calls: dict[str, str] = {}  # call id -> arguments
        self._streamed = False  # the answer came as deltas (a /context or /compact answer does not)

    def __call__(self, event: Event) -> None:
        try:
            self._render(event)
        except Exception:  # the sink must not raise (core.events.EventSink)
            log.exception("rendering %s for ACP failed", type(event).__name__)

    def _render(self, event: Event) -> None:
        send = self._stream.send
        if isinstance(event, MessageDelta):
            if event.kind == "reasoning":
                send(helpers.update_agent_thought_text(event.text))
            else:
                self._streamed = True
                send(helpers.update_agent_message_text(event.text))
        elif isinstance(event, ToolCallStarted):
            self._approver.call_id = event.call_id
            self._calls[event.call_id] = event.arguments
            send(tool_call_start(self._session.root, event.call_id, event.name, event.arguments))
        elif isinstance(event, ToolCallFinished):
            self._approver.call_id = ""
            diff = self._diff(event) if event.name in EDIT_TOOLS and not event.is_error else None
            send(tool_call_end(event.call_id, event.is_error, event.output, diff))
        elif isinstance(event, TodosChanged):
            send(helpers.update_plan(plan_entries(event.items)))
        elif isinstance(event, UsageReported) and event.role == "main":
            cost = event.session.cost_usd
            send(
                schema.UsageUpdate(
                    session_update="usage_update",
                    used=event.usage.input_tokens + event.usage.output_tokens,
                    size=self.window,
                    cost=schema.Cost(amount=cost, currency="USD") if cost is not None else None,
                )
            )
        elif isinstance(event, ModelRetrying):
            send(
                helpers.update_agent_thought_text(_defanged(f"\n(retrying the model call: {event.reason})\n"))
            )
        elif isinstance(event, (*NOTES, *ASIDES)):
            self._note(event)
        elif isinstance(event, RunEnded):
            if event.answer and not self._streamed:  # an answer with no model call (/context, /compact)
                send(helpers.update_agent_message_text(event.answer))
            if event.plan is not None:  # a plan run's plan, for the user to approve (docs/modes.md)
                send(
                    helpers.update_agent_message_text(
                        _defanged(f"\n\n{event.plan.markdown()}\n\n{PLAN_NEXT}")
                    )
                )
                steps = [
                    helpers.plan_entry(_defanged(step), priority="medium", status="pending")
                    for step in event.plan.steps
                ]
                send(helpers.update_plan(steps))
            if event.status != "done" and event.reason:
                send(
                    helpers.update_agent_message_text(
                        _defanged(f"\n\nagent-ls: run {event.status}: {event.reason}")
                    )
                )

    def _note(self, event: Event) -> None:
        """A status event as the LSP transcript's line, defanged (a server's error text is not ours)."""
        line = line_for(event)
        if not line:
            return
        text = f"\n\nagent-ls: {_defanged(line.strip())}\n\n"
        failed_server = isinstance(event, McpServerStatus) and event.state != "connected"
        if isinstance(event, NOTES) or failed_server:
            self._stream.send(helpers.update_agent_message_text(text))
        else:
            self._stream.send(helpers.update_agent_thought_text(text))

    def _diff(self, event: ToolCallFinished) -> tuple[str, str | None, str] | None:
        """(absolute path, the text the agent read or None for a new file, the proposed text) of the file
        an edit call changed, from the session's proposal."""
        path = parsed_arguments(self._calls.get(event.call_id, "")).get("path")
        if not isinstance(path, str):
            return None
        try:
            rel = self._session.overlay.resolve(path)
        except AgentLsError:
            return None
        change = next((c for c in self._session.proposal() if c.path == rel), None)
        if change is None:
            return None
        return str(self._session.root / rel), None if change.is_new else change.base_text, change.new_text


def _defanged(text: str) -> str:
    """``text`` (a plan, an error's reason, a server's status: not all of it ours) with its images and
    loading HTML made inert (``core.markdown_defang``): the client renders messages as Markdown."""
    return defang_markdown(text).text
