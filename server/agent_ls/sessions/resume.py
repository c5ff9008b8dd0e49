"""A session's record and its resumption: ``SessionRecorder`` writes a run's events to the session store;
``restore`` puts a stored session back into a freshly assembled ``Session``.

What is written, per event of ``core.events`` (docs/sessions.md lists every kind):

- a ``/context`` run writes nothing (it only reads the session), nor does a new session's run that
  recorded nothing between its start and its end (``/compact`` with no history, a model that cannot be
  opened): its ``run_start`` is held back (``SessionLog.hold``) and dropped, so no file is created;
- ``RunStarted`` → ``run_start {run, task, model}``; ``RunEnded`` → ``plan {run, plan}`` when a plan run
  ended with its plan (``core.plan.Plan.wire``), then ``run_end {status, reason, answer,
  usage, usageByRole}`` (and ``notVerified``, the checks not run, when there are any) and an ``fsync``;
- ``run_end`` also holds the run's ``mode`` (``default`` or ``plan``);
- every message the history gained since the last event → ``message {message}`` (``records``);
- ``VerdictGiven`` → ``verdict {callId, name, verdict, rule, subject, approval}``, and a new
  "Allow for this session" → ``approval {key}``;
- ``ChecksRan`` → ``checks {round, results}`` (each result ``{command, passed, exitCode, outputTail,
  notRun}``, ``notRun`` null when the check ran);
- ``FindingsReported`` → ``findings {findings, files}`` (each finding ``{path, line, endLine, severity,
  message}``, 1-based; the files the review covers);
- ``UsageReported`` → ``usage {usage, role, model, provider, latencyS, requestBytes, requestSha256}``
  (``role``: ``main``, ``compaction``, or ``subagent`` for a subagent's call, which comes wrapped in
  ``SubagentEvent``; the call's facts, ``records.call_json``, when it was measured);
- ``ToolCallFinished`` → ``tool {callId, name, isError, durationS}`` (seconds since its
  ``ToolCallStarted``, an approval's wait included); ``ProposalChanged`` → ``proposal {changes,
  removed}`` (both texts of each changed file);
- a nested AGENTS.md attached → ``nested {dir, label}``;
- a skill activated → ``skill {name}``;
- ``ContextCompacted`` → ``compaction {reason, how, tokensBefore, tokensAfter, pruned, messages,
  userTexts}``: the whole history after the compaction (it replaces the messages before it on load) and
  the user's messages a later compaction keeps verbatim.

Other engineers' events go through ``SessionLog.append(kind, payload)`` directly.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_ls.core.events import (
    ChecksRan,
    ContextCompacted,
    Event,
    EventSink,
    FindingsReported,
    ProposalChanged,
    RunEnded,
    RunStarted,
    SubagentEvent,
    TodosChanged,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
    VerdictGiven,
)
from agent_ls.core.messages import AssistantMessage, SystemMessage
from agent_ls.runtime import CONTEXT_COMMAND, Session
from agent_ls.sessions.outputs import SessionOutputs
from agent_ls.sessions.records import (
    call_json,
    change_json,
    check_json,
    message_json,
    usage_by_role_json,
    usage_json,
)
from agent_ls.sessions.saved import SavedSession
from agent_ls.sessions.store import SessionLog
from agent_ls.workspace.rebase import disk_text_now


class SessionRecorder:
    """An ``EventSink`` that writes ``session``'s events and new messages to ``log``, then passes each
    event on to ``forward``. Never raises for a write that fails (``SessionLog.append``). The session keeps
    the whole text of its cut tool results beside ``log`` from then on (``sessions.outputs``).

    Args:
        written: how many messages of ``session.history`` the file holds already (a resumed session's).
    """

    def __init__(self, log: SessionLog, session: Session, forward: EventSink, *, runs: int = 0) -> None:
        self.log = log
        self._session = session
        self.forward = forward
        session.keep_outputs(SessionOutputs(log))
        self._written = len(session.history)
        self._runs = runs
        self._quiet = False
        self._approvals = set(session.policy.session_approvals())
        self._skills = {a.name for a in session.activations.active()}
        self._nested = {str(f.real_path) for f in session.nested.loaded()} if session.nested else set()
        self._started: dict[str, float] = {}  # call id -> time.monotonic() of its ToolCallStarted

    def pending_repairs(self, saved: SavedSession) -> None:
        """Write the tool results ``saved``'s repair added (already in the history)."""
        for message in saved.repairs:
            self.log.append("message", {"message": message_json(message), "repaired": True})

    def __call__(self, event: Event) -> None:
        try:
            self._record(event)
        finally:
            self.forward(event)

    def _record(self, event: Event) -> None:
        if isinstance(event, RunStarted) and event.task.strip() == CONTEXT_COMMAND:
            self._quiet = True  # a question about the session, not part of it: nothing is written
        if self._quiet:
            self._quiet = not isinstance(event, RunEnded)
            return
        if isinstance(event, RunStarted):
            self._runs += 1
            start = {"run": self._runs, "task": event.task, "model": event.model}
            if self.log.is_new:  # written with the run's first record: a no-op run leaves no file
                self.log.hold("run_start", start)
            else:
                self.log.append("run_start", start)
        if isinstance(event, ContextCompacted):
            self._compacted(event)
        self._messages()
        if isinstance(event, VerdictGiven):
            self.log.append(
                "verdict",
                {
                    "callId": event.call_id,
                    "name": event.name,
                    "verdict": event.verdict,
                    "rule": event.rule,
                    "subject": event.subject,
                    "approval": event.approval,
                },
            )
        elif isinstance(event, UsageReported):
            self.log.append(
                "usage", {"usage": usage_json(event.usage), "role": event.role, **call_json(event.call)}
            )
        elif isinstance(event, SubagentEvent) and isinstance(event.event, UsageReported):
            usage, call = usage_json(event.event.usage), call_json(event.event.call)
            self.log.append("usage", {"usage": usage, "role": "subagent", **call})
        elif isinstance(event, ToolCallStarted):
            self._started[event.call_id] = time.monotonic()
        elif isinstance(event, ToolCallFinished):
            started = self._started.pop(event.call_id, None)
            took = None if started is None else round(time.monotonic() - started, 4)
            tool = {"callId": event.call_id, "name": event.name, "isError": event.is_error}
            self.log.append("tool", {**tool, "durationS": took})
        elif isinstance(event, ProposalChanged):
            self.proposal_changed(event.paths)
        elif isinstance(event, TodosChanged):
            todos = [
                {"content": i.content, "status": i.status, "activeForm": i.active_form} for i in event.items
            ]
            self.log.append("todos", {"todos": todos})
        elif isinstance(event, FindingsReported):
            findings = [finding.wire() for finding in event.findings]
            self.log.append("findings", {"findings": findings, "files": list(event.files)})
        elif isinstance(event, ChecksRan):
            results = [check_json(result) for result in event.results]
            self.log.append("checks", {"round": event.round, "results": results})
        self._new_approvals_and_skills()
        if isinstance(event, RunEnded) and self.log.drop_held():
            self._runs -= 1  # a new session's run that recorded nothing (/compact with no history)
            return
        if isinstance(event, RunEnded):
            if event.plan is not None:
                self.log.append("plan", {"run": self._runs, "plan": event.plan.wire()})
            self.log.append(
                "run_end",
                {
                    "run": self._runs,
                    "status": event.status,
                    "reason": event.reason,
                    "answer": event.answer,
                    "mode": event.mode,
                    "usage": usage_json(event.usage),
                    "usageByRole": usage_by_role_json(event.usage_by_role),
                    **({"notVerified": list(event.not_verified)} if event.not_verified else {}),
                },
            )
            self.log.close()  # fsync; the next append opens the file again

    def _compacted(self, event: ContextCompacted) -> None:
        """The history was rewritten in place: write it whole, then go on from its end."""
        self.log.append("compaction", compaction_payload(self._session, event))
        self._written = len(self._session.history)

    def _messages(self) -> None:
        history = self._session.history
        for message in history[self._written :]:
            self.log.append("message", {"message": message_json(message)})
        self._written = len(history)

    def proposal_changed(self, paths: tuple[str, ...] | None = None) -> None:
        """Write the pending edits of ``paths`` (every pending file when None); a path no longer pending
        is written as removed."""
        pending = {change.path: change for change in self._session.proposal()}
        wanted = tuple(pending) if paths is None else paths
        changes = [change_json(pending[p]) for p in wanted if p in pending]
        removed = [p for p in wanted if p not in pending]
        self.log.append("proposal", {"changes": changes, "removed": removed})

    def _new_approvals_and_skills(self) -> None:
        for key in self._session.policy.session_approvals():
            if key not in self._approvals:
                self._approvals.add(key)
                self.log.append("approval", {"key": key})
        for activation in self._session.activations.active():
            if activation.name not in self._skills:
                self._skills.add(activation.name)
                self.log.append("skill", {"name": activation.name})
        for file in self._session.nested.loaded() if self._session.nested is not None else ():
            if str(file.real_path) not in self._nested:
                self._nested.add(str(file.real_path))
                folder = os.path.relpath(file.real_path.parent, os.path.realpath(self._session.root))
                self.log.append("nested", {"dir": Path(folder).as_posix(), "label": file.label})


def compaction_payload(session: Session, event: ContextCompacted) -> dict[str, Any]:
    """The ``compaction`` record of ``event``: its figures, ``session``'s whole history after it and the
    user's messages a later compaction keeps verbatim."""
    return {
        "reason": event.reason,
        "how": event.how,
        "tokensBefore": event.tokens_before,
        "tokensAfter": event.tokens_after,
        "pruned": event.pruned,
        "messages": [message_json(m) for m in session.history],
        "userTexts": list(session.compaction.user_texts),
    }


@dataclass
class Restored:
    """What ``restore`` found: ``stale`` files changed since the agent read them (the apply re-bases or
    refuses them), and ``dropped`` ones the store could not keep whole (a redacted key in their text)."""

    stale: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def restore(session: Session, saved: SavedSession) -> Restored:
    """Put ``saved`` into ``session`` (assembled for the same workspace, nothing run yet): the history
    after a fresh system message (the instructions as they are now), the pending proposal with its
    stored bases, the session approvals, the activated skills and the nested AGENTS.md files attached.
    Blocking (reads the proposed files)."""
    found = Restored()
    session.history[:] = [
        session.system_message(),
        *(m for m in saved.messages if not isinstance(m, SystemMessage)),
    ]
    for path, change in sorted(saved.proposal.items()):
        if "[redacted]" in change.new_text and "[redacted]" not in change.base_text:
            found.dropped.append(path)
            continue
        now = disk_text_now(session.root / path, change)
        exists = (session.root / path).exists()
        if (change.is_new and exists) or (not change.is_new and now != change.base_text):
            found.stale.append(path)
        session.overlay.restore(change)
    session.compaction.user_texts[:] = saved.user_texts
    session.pending_plan = saved.plan  # the next default run carries it
    session.todos.replace(tuple(saved.todos))
    # The deferred tools the session had loaded (write_file, todo_write, ...): the ones its history calls.
    called = [call.name for m in session.history if isinstance(m, AssistantMessage) for call in m.tool_calls]
    session.registry.load(called)
    session.policy.restore_session_approvals(saved.approvals)
    for name, args in saved.skills.items():
        try:
            session.activations.activate(name, args)
        except (OSError, KeyError, ValueError):
            continue  # the skill is gone or unreadable: the history still holds what it said
    if session.nested is not None:  # attached already: the history holds them; not attached again
        for folder in saved.nested_dirs:
            if not folder.startswith(".."):
                session.nested.on_touch(folder, is_dir=True)
    return found
