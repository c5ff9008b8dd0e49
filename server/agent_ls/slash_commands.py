"""The tasks a session answers without running the agent: ``/context`` and ``/compact [focus]``.

``runtime.Session.run`` calls these with itself (``SessionParts`` names what they use of it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from agent_ls.context_report import ContextReport
from agent_ls.core.compaction import Compactor
from agent_ls.core.errors import AgentLsError
from agent_ls.core.events import ContextCompacted, EventSink, RunEnded, RunStarted, UsageReported
from agent_ls.core.messages import Message, Usage
from agent_ls.core.ports import ModelClient
from agent_ls.tools.registry import ToolRegistry

COMPACT_COMMAND = "/compact"
"""The task ``/compact [focus]``: compact the history now (a summary), without running the agent."""

ModelOpener = Callable[[], ModelClient]
"""Builds the model client for a run; raises ``ConfigError`` (or another ``AgentLsError``) with one line."""


class SessionParts(Protocol):
    """What of ``runtime.Session`` these answers use."""

    session_id: str
    history: list[Message]
    registry: ToolRegistry

    def context_report(self, model: ModelClient | None, no_model: str = "") -> ContextReport: ...

    def compactor(self, model: ModelClient) -> Compactor: ...


def open_or_reason(open_model: ModelOpener) -> tuple[ModelClient | None, str]:
    """The model client, or None and the one-line reason it cannot be opened (``ConfigError``'s text)."""
    try:
        return open_model(), ""
    except AgentLsError as exc:
        return None, str(exc)


async def answer_context(
    session: SessionParts, task: str, open_model: ModelOpener, emit: EventSink, before: Usage
) -> RunEnded:
    """``/context``: the report as the answer, without a model call and without touching the history;
    with no usable model, measured as a Chat Completions request (``context_report``)."""
    model, no_model = open_or_reason(open_model)
    try:
        emit(
            RunStarted(
                session_id=session.session_id, task=task, model=model.model_name if model else "(none)"
            )
        )
        report = session.context_report(model, no_model)
    finally:
        if model is not None:
            await model.aclose()
    ended = RunEnded(
        status="done",
        reason="context report (no model call)",
        answer=report.text(),
        usage=Usage(),
        session_usage=before,
    )
    emit(ended)
    return ended


async def answer_compact(
    session: SessionParts, task: str, model: ModelClient, emit: EventSink, before: Usage
) -> RunEnded:
    """``/compact [focus]``: summarize the history now; the answer says how much it freed."""
    emit(RunStarted(session_id=session.session_id, task=task, model=model.model_name))
    focus = task.strip()[len(COMPACT_COMMAND) :].strip()
    used: Usage | None = None
    if len(session.history) < 2:
        reason, status = "nothing to compact: the session has no history yet", "done"
    else:
        try:
            done = await session.compactor(model).compact(
                session.history, list(session.registry.specs()), model, force=True, focus=focus
            )
        except AgentLsError as exc:
            reason, status = f"compaction failed: {exc}", "error"
        else:
            emit(ContextCompacted("manual", done.how, done.tokens_before, done.tokens_after, done.pruned))
            used = done.usage
            if used is not None:
                emit(UsageReported(used, used, before + used, role="compaction"))
            reason, status = f"compacted: ~{done.tokens_before:,} → ~{done.tokens_after:,} tokens", "done"
    ended = RunEnded(
        status="done" if status == "done" else "error",
        reason=reason,
        answer=reason if status == "done" else "",
        usage=used or Usage(),
        session_usage=before + (used or Usage()),
        usage_by_role={"compaction": used} if used is not None else {},
    )
    emit(ended)
    return ended
