"""The session's todo list: what the model plans to do, as it last wrote it with ``todo_write``.

The list is state of the session (``runtime.Session.todos``), not of a run: a follow-up run sees it, the
end-of-request reminder and a compaction put ``TodoList.render`` back before the model, and the editor and
the CLI show it from the ``TodosChanged`` event. Each ``todo_write`` replaces the whole list. Shape follows
Claude Code ``TodoWrite`` (``content``, ``status``, ``activeForm``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TodoStatus = Literal["pending", "in_progress", "completed"]

STATUS_MARKS: dict[TodoStatus, str] = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


@dataclass(frozen=True)
class TodoItem:
    """One step of the plan.

    Attributes:
        content: the step, imperative (``Run the tests``).
        status: ``pending``, ``in_progress`` or ``completed``.
        active_form: the same step in the present continuous (``Running the tests``), shown while it is
            in progress.
    """

    content: str
    status: TodoStatus
    active_form: str


class TodoList:
    """The current todo list of one session; ``items`` in the model's order (empty at first)."""

    def __init__(self) -> None:
        self.items: tuple[TodoItem, ...] = ()

    def replace(self, items: tuple[TodoItem, ...]) -> None:
        """Replace the whole list (``todo_write``)."""
        self.items = items

    def current(self) -> TodoItem | None:
        """The first item in progress, or None."""
        return next((item for item in self.items if item.status == "in_progress"), None)

    def counts(self) -> str:
        """``1 of 3 done, 1 in progress``; "" for an empty list."""
        if not self.items:
            return ""
        done = sum(item.status == "completed" for item in self.items)
        running = sum(item.status == "in_progress" for item in self.items)
        text = f"{done} of {len(self.items)} done"
        return f"{text}, {running} in progress" if running else text

    def render(self) -> str:
        """The list as the model reads it again (reminder, compaction): one line per item,
        ``[x] done``, ``[>] in progress``, ``[ ] pending``, in order; "" for an empty list."""
        return "\n".join(f"{STATUS_MARKS[item.status]} {item.content}" for item in self.items)
