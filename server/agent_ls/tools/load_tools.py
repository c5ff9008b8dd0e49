"""load_tools: the model makes deferred tools callable (their schemas are sent from then on).

Tools most tasks never need (``todo_write``, the memory tools, ``task``) are not sent with every request:
the first request stays small (DESIGN.md budget: 1,400 estimated tokens). Their names are the enum of this
tool's ``names`` and its description says what each is for; once loaded, a tool's full schema joins the
request's tools for the rest of the session (the registry's ``load``). A deferred tool called by name
before it was loaded still runs, and is loaded by that call. Behaviour follows Claude Code's deferred tools
and ``ToolSearch`` (names listed, schema on first use).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from agent_ls.tools.base import Tool, ToolContext, ToolOutput

NAME = "load_tools"


def load_tools_tool(
    deferred: Sequence[Tool[Any]], load: Callable[[Sequence[str]], Sequence[str]]
) -> Tool[Any]:
    """The ``load_tools`` tool for the ``deferred`` tools not loaded yet (non-empty); ``load`` makes the
    named ones callable and returns those newly loaded."""
    if not deferred:
        raise ValueError("load_tools needs at least one deferred tool")
    names = tuple(tool.name for tool in deferred)
    choice: Any = Literal.__getitem__(names)
    args: type[BaseModel] = create_model(
        "Args",
        __config__=ConfigDict(extra="forbid"),
        names=(list[choice], Field(min_length=1)),
    )

    async def run(arguments: BaseModel, ctx: ToolContext) -> ToolOutput:
        asked = [str(name) for name in getattr(arguments, "names")]  # noqa: B009 (a dynamic model)
        loaded = load(asked)
        return ToolOutput(f"Loaded {', '.join(loaded)}; call them now." if loaded else "Already loaded.")

    description = "Make more tools callable: " + "; ".join(_summary(tool) for tool in deferred) + "."
    return Tool(name=NAME, description=description, args=args, run=run, mutates=False, permission="session")


def _summary(tool: Tool[Any]) -> str:
    """``todo_write (a task list the user sees)``: the name and its ``brief``."""
    return f"{tool.name} ({tool.brief})" if tool.brief else tool.name
