"""The deferred tools of a session: ``write_file``, ``todo_write``, the memory tools, ``read_output`` and
``task``.

They are not sent with every request; ``load_tools`` lists them by name and the registry sends a tool's
schema once it is loaded or called (``ToolRegistry.set_extra_tools``). Measured on the first request of
the benchmark task (``benchmarks/bench_slice.py``, bytes / 4; docs/context.md has the table): sent whole,
todo_write, memory and task add about 560 estimated tokens to every request; the ``load_tools`` entry
that names them costs about 90. ``write_file`` (98) is deferred too: without it the first request stays
under the 1,400-token budget, and it is needed only to create a file (edit_file changes existing ones),
so a session that creates none never pays for it; one that does pays one ``load_tools`` turn.
``review_findings`` (about 270) is not even named by ``load_tools``: a skill naming it in ``allowed-tools``
(code-review) loads it when activated.
``read_output`` (present when the session keeps outputs) adds about 10 to the ``load_tools`` entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agent_ls.core.messages import AssistantMessage, Message, UserMessage
from agent_ls.core.todos import TodoList
from agent_ls.tools import review_findings, write_file
from agent_ls.tools.base import OutputKeeper, Tool
from agent_ls.tools.memory import MemoryNotes, memory_tools
from agent_ls.tools.read_output import read_output_tool
from agent_ls.tools.todo_write import todo_tool


def deferred_tools(
    todos: TodoList,
    memory: MemoryNotes | None,
    origin: Callable[[], str],
    extra: Sequence[Tool[Any]] = (),
    outputs: OutputKeeper | None = None,
    outputs_named: bool = False,
) -> list[Tool[Any]]:
    """The session's deferred tools in the order ``load_tools`` lists them: ``write_file``, ``todo_write``,
    the memory tools (when ``memory`` is given), ``read_output`` (when ``outputs`` is given; named by
    ``load_tools`` only with ``outputs_named``), then ``extra`` (``task``)."""
    tools = [write_file.TOOL, todo_tool(todos)]
    if memory is not None:
        tools.extend(memory_tools(memory, origin))
    if outputs is not None:
        tools.append(read_output_tool(outputs, listed=outputs_named))
    return [*tools, *extra, review_findings.TOOL]  # last: load_tools does not name it


def origin_of(session_id: str, history: Sequence[Message]) -> str:
    """``session 3f2a9c0d1e4b turn 3``: the turn is the number of model replies since the last user
    message (1-based; 0 before the first reply)."""
    turn = 0
    for message in reversed(history):
        if isinstance(message, UserMessage):
            break
        turn += isinstance(message, AssistantMessage)
    return f"session {session_id} turn {turn}"
