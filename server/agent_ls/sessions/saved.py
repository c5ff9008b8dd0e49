"""A stored session read back: its history (repaired), pending proposal, approvals, skills and summary.

Repair (what a kill leaves, docs/sessions.md "Repair"): an assistant message's tool calls that have no
result get one, ``INTERRUPTED`` with ``is_error`` set, right after the results that exist, so the
history keeps the invariant of ``core.messages`` (every call answered before the next request). A run
with a ``run_start`` and no ``run_end`` has the status ``interrupted``. ``SavedSession.repairs`` holds
the messages the repair added, which the next run writes to the file first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_ls.core.messages import AssistantMessage, Message, ToolResultMessage, Usage, UserMessage
from agent_ls.core.plan import Plan
from agent_ls.core.proposal import FileChange
from agent_ls.core.todos import TodoItem, TodoStatus
from agent_ls.sessions.records import change_from, message_from, usage_from
from agent_ls.sessions.store import StoredFile

INTERRUPTED = "interrupted: agent-ls stopped before this call finished; its effect is unknown, check first"
TITLE_CHARS = 60


def shorten(text: str, limit: int = TITLE_CHARS) -> str:
    """The first line of ``text``, whitespace folded, cut at a word to ``limit`` characters with ``…``."""
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0] or line[: limit - 1]
    return cut + "…"


@dataclass
class SavedSession:
    """What a session file holds, replayed in order.

    Attributes:
        session_id, workspace, created_at: from the header.
        updated_at: the time of the last event (the header's when there is none).
        messages: the history (the system message first when one was written), repaired.
        repairs: the tool results the repair added (not in the file yet).
        proposal: the pending edits by path, as the last proposal events left them.
        approvals: the session-approval keys the user gave ("Allow for this session").
        skills: the skills activated, name to arguments, in order.
        nested_dirs: the folders (workspace-relative) whose nested AGENTS.md was attached, in order.
        runs: how many runs started; status: the last run's (``new`` before any, ``interrupted`` for one
            that never ended); model: the last run's model; usage: the sum of every run's.
        title: the first task, shortened (``shorten``).
        torn: the last line was cut short and ignored; skipped: unreadable lines ignored.
        user_texts: the user's messages the last compaction kept (``core.compaction.CompactionState``).
        todos: the todo list as the model last wrote it (``todo_write``).
        plan: the plan of the last plan run, until a run in default mode ends (it carried the plan); None
            when there is none.
    """

    session_id: str
    workspace: str
    created_at: str
    updated_at: str
    messages: list[Message] = field(default_factory=list)
    repairs: list[Message] = field(default_factory=list)
    proposal: dict[str, FileChange] = field(default_factory=dict)
    approvals: list[str] = field(default_factory=list)
    skills: dict[str, str] = field(default_factory=dict)
    nested_dirs: list[str] = field(default_factory=list)
    runs: int = 0
    status: str = "new"
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    title: str = ""
    torn: bool = False
    skipped: int = 0
    user_texts: list[str] = field(default_factory=list)
    todos: list[TodoItem] = field(default_factory=list)
    plan: Plan | None = None

    def summary(self, *, running: bool = False) -> dict[str, Any]:
        """The ``agent.listSessions`` entry (camelCase), ``status`` ``running`` when ``running``."""
        return {
            "sessionId": self.session_id,
            "title": self.title,
            "workspace": self.workspace,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "runs": self.runs,
            "status": "running" if running else self.status,
            "pendingFiles": sorted(self.proposal),
            "model": self.model,
            "usage": {
                "inputTokens": self.usage.input_tokens,
                "outputTokens": self.usage.output_tokens,
                "cachedInputTokens": self.usage.cached_input_tokens,
                "costUsd": self.usage.cost_usd,
            },
        }


def replay(stored: StoredFile) -> SavedSession:
    """Rebuild the session of ``stored``; lines of unknown kinds, or missing what their kind needs, are
    skipped (counted in ``skipped``)."""
    header = stored.header
    created = str(header.get("createdAt", ""))
    saved = SavedSession(
        session_id=str(header.get("sessionId", "")),
        workspace=str(header.get("workspace", "")),
        created_at=created,
        updated_at=created,
        torn=stored.torn,
        skipped=stored.skipped,
    )
    open_run = False
    for record in stored.records:
        try:
            open_run = apply_record(saved, record, open_run)
        except (KeyError, TypeError, ValueError, AttributeError):
            saved.skipped += 1
            continue
        saved.updated_at = str(record.get("at", saved.updated_at))
    if open_run:
        saved.status = "interrupted"
    saved.repairs = _repair(saved.messages)
    saved.messages.extend(saved.repairs)
    return saved


def apply_record(saved: SavedSession, record: dict[str, Any], open_run: bool) -> bool:
    """Apply one record of a session file to ``saved`` (``replay`` folds them in order); ``open_run`` says
    whether a run has started and not ended, and the new value is returned. Raises ``KeyError``,
    ``TypeError``, ``ValueError`` or ``AttributeError`` for a record that lacks what its kind needs."""
    kind = record["kind"]
    if kind == "message":
        message = message_from(record["message"])
        if isinstance(message, UserMessage) and not saved.title:
            saved.title = shorten(str(record.get("task", message.text)))
        saved.messages.append(message)
    elif kind == "compaction":  # the history was rewritten: the record holds all of it
        saved.messages[:] = [message_from(data) for data in record["messages"]]
        saved.user_texts[:] = [str(text) for text in record.get("userTexts", [])]
    elif kind == "run_start":
        saved.runs += 1
        saved.model = str(record.get("model", saved.model))
        if not saved.title:
            saved.title = shorten(str(record.get("task", "")))
        if open_run:  # a run that never ended: its unanswered calls are repaired before the next one
            saved.messages.extend(_repair(saved.messages))
        return True
    elif kind == "plan":
        saved.plan = Plan.from_wire(record["plan"])
    elif kind == "run_end":
        if record.get("mode", "default") != "plan":
            saved.plan = None  # a default run carried it (or there was none)
        saved.status = str(record["status"])
        saved.usage = saved.usage + usage_from(record.get("usage", {}))
        return False
    elif kind == "proposal":
        for data in record.get("changes", []):
            change = change_from(data)
            saved.proposal[change.path] = change
        for path in record.get("removed", []):
            saved.proposal.pop(str(path), None)
    elif kind == "proposal_cleared":
        saved.proposal.clear()
    elif kind == "approval":
        key = str(record["key"])
        if key not in saved.approvals:
            saved.approvals.append(key)
    elif kind == "nested":
        saved.nested_dirs.append(str(record["dir"]))
    elif kind == "skill":
        saved.skills[str(record["name"])] = str(record.get("args", ""))
    elif kind == "todos":
        saved.todos = [_todo(data) for data in record.get("todos", []) if isinstance(data, dict)]
    return open_run


def _repair(messages: list[Message]) -> list[Message]:
    """Results for the calls of the last assistant message that have none (module docstring)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            answered = {m.call_id for m in messages[index + 1 :] if isinstance(m, ToolResultMessage)}
            return [
                ToolResultMessage(call.call_id, call.name, INTERRUPTED, is_error=True)
                for call in message.tool_calls
                if call.call_id not in answered
            ]
        if isinstance(message, UserMessage):
            return []
    return []


def _todo(data: dict[str, Any]) -> TodoItem:
    """A stored todo item; an unknown status reads as ``pending``."""
    statuses: dict[object, TodoStatus] = {"in_progress": "in_progress", "completed": "completed"}
    return TodoItem(
        str(data.get("content", "")),
        statuses.get(data.get("status"), "pending"),
        str(data.get("activeForm", "")),
    )
