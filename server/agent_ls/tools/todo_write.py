"""todo_write: the model replaces the session's todo list (``core.todos.TodoList``) with a new whole list.

The result is one line (``Todo list saved: 1 of 3 done, 1 in progress.``); the list itself goes to the
user through ``TodosChanged`` (the editor's ``agent/todos`` and progress, the CLI's transcript) and back to
the model in the end-of-request reminder (so in every request: its size is bounded). At most ``MAX_ITEMS``
items of at most ``MAX_ITEM_CHARS`` characters each, and one ``in_progress``; an empty list clears it.
Schema follows Claude Code ``TodoWrite``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_ls.core.events import TodosChanged
from agent_ls.core.todos import TodoItem, TodoList, TodoStatus
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

NAME = "todo_write"
MAX_ITEMS = 50
MAX_ITEM_CHARS = 500
DESCRIPTION = (
    "Replace your todo list (shown to the user) with this whole list. Use it for tasks of 3 or more "
    "steps; keep exactly one item in_progress while working and mark items completed as soon as done."
)
BRIEF = "a task list the user sees"


class Todo(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    content: str = Field(
        min_length=1, max_length=MAX_ITEM_CHARS, description="The step, imperative: Run the tests."
    )
    status: TodoStatus
    active_form: str = Field(
        alias="activeForm",
        min_length=1,
        max_length=MAX_ITEM_CHARS,
        description="The step while in progress: Running the tests.",
    )


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    todos: list[Todo] = Field(max_length=MAX_ITEMS, description="The whole list, in order.")

    @field_validator("todos")
    @classmethod
    def _one_in_progress(cls, todos: list[Todo]) -> list[Todo]:
        running = [todo.content for todo in todos if todo.status == "in_progress"]
        if len(running) > 1:
            raise ValueError(
                f"{len(running)} items are in_progress; keep one in_progress, the others pending"
            )
        return todos


def todo_tool(todos: TodoList) -> Tool[Any]:
    """The ``todo_write`` tool writing to ``todos`` (the session's list)."""

    async def run(args: Args, ctx: ToolContext) -> ToolOutput:
        items = tuple(TodoItem(todo.content, todo.status, todo.active_form) for todo in args.todos)
        todos.replace(items)
        if ctx.emit is not None:
            ctx.emit(TodosChanged(items))
        return ToolOutput(f"Todo list saved: {todos.counts()}." if items else "Todo list cleared.")

    return Tool(
        name=NAME,
        description=DESCRIPTION,
        args=Args,
        run=run,
        mutates=False,
        permission="session",
        brief=BRIEF,
    )
