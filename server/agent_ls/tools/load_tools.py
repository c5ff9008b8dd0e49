"""load_tools: the model makes deferred tools callable (their schemas are sent from then on).

Tools most requests do not need (``write_file``, ``todo_write``, the memory tools, ``task``) are not sent
with every request: the first request stays small (DESIGN.md budget: 1,400 estimated tokens). This tool's
description names each with a few words (``Tool.brief``); once loaded, a tool's full schema joins the
request's tools for the rest of the session (the registry's ``load``). A deferred tool called by name
before it was loaded still runs, and is loaded by that call. ``names`` is a plain list of strings, not an
enum: the enum would repeat every name (about 20 tokens in every request); an unknown name is an error
listing the right ones. A tool with ``Tool.listed`` False is named neither in the description nor in the
errors (a skill loads it). Behaviour follows Claude Code's deferred tools and ``ToolSearch`` (names listed,
schema on first use).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent_ls.core.errors import ToolError
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

NAME = "load_tools"


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    names: list[str]  # no minItems in the schema (every request carries it); an empty list is refused


def load_tools_tool(
    deferred: Sequence[Tool[Any]], load: Callable[[Sequence[str]], Sequence[str]]
) -> Tool[Any]:
    """The ``load_tools`` tool for the ``deferred`` tools not loaded yet (non-empty); ``load`` makes the
    named ones callable and returns those newly loaded."""
    if not deferred:
        raise ValueError("load_tools needs at least one deferred tool")
    names = [tool.name for tool in deferred]
    shown = ", ".join(tool.name for tool in deferred if tool.listed)  # a skill loads the others

    async def run(args: Args, ctx: ToolContext) -> ToolOutput:
        if not args.names:
            raise ToolError(f"name the tools to load, from: {shown}")
        unknown = [name for name in args.names if name not in names]
        if unknown:
            raise ToolError(f"no tool to load named {', '.join(map(repr, unknown))}; choose from: {shown}")
        loaded = load(args.names)
        return ToolOutput(f"Loaded {', '.join(loaded)}; call them now." if loaded else "Already loaded.")

    listed = [_summary(tool) for tool in deferred if tool.listed]
    description = "Load more tools: " + ", ".join(listed) + "." if listed else "Load more tools by name."
    return Tool(name=NAME, description=description, args=Args, run=run, mutates=False, permission="session")


def _summary(tool: Tool[Any]) -> str:
    """``todo_write (a task list the user sees)``: the name and its ``brief``."""
    return f"{tool.name} ({tool.brief})" if tool.brief else tool.name
