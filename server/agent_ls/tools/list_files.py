"""list_files: the model lists the files under a directory, recursively, including pending new files.

Output: one workspace-relative POSIX path per line, sorted, at most ``LIMIT`` (100, as in the seed
harness). When there are more, a last line says how many and how to narrow the listing:
``(first 100 of 2,340 entries; narrow with path or pattern)``. .gitignore'd and hidden entries are
left out unless ``pattern`` names them (the workspace's rules), and so are the files whose read the
permission policy denies (``read`` deny rules), as grep leaves out their hits.
"""

from __future__ import annotations

import asyncio
import sys

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.errors import ToolError
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

LIMIT = 100

DESCRIPTION = (
    "List files under a directory, recursively, one path per line (at most 100). "
    "Skips .gitignore'd and hidden files unless pattern names them."
)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(default=".", description="Relative directory.")
    pattern: str | None = Field(default=None, description="Glob on the relative path, e.g. **/*.py.")


async def run(args: Args, ctx: ToolContext) -> ToolOutput:
    rel = ctx.workspace.resolve(args.path)
    if ctx.workspace.exists(rel) and not ctx.workspace.is_dir(rel):
        raise ToolError(f"{rel} is a file, not a directory; use read_file to read it.")
    # In a worker thread: on a large repository the listing takes a while, and the editor must not wait.
    denied = ctx.read_denied
    if denied is None:
        paths, total = await asyncio.to_thread(ctx.workspace.list_files, rel, args.pattern, LIMIT)
    else:  # every path, to leave out those whose read is denied before counting (the listing is whole)
        every, _ = await asyncio.to_thread(ctx.workspace.list_files, rel, args.pattern, sys.maxsize)
        kept = [path for path in every if not denied(path)]
        paths, total = kept[:LIMIT], len(kept)
    if not paths:
        return ToolOutput("no files match" if args.pattern else "no files")
    lines = list(paths)
    if total > len(paths):
        lines.append(f"(first {len(paths):,} of {total:,} entries; narrow with path or pattern)")
    return ToolOutput("\n".join(lines))


TOOL = Tool(name="list_files", description=DESCRIPTION, args=Args, run=run, mutates=False, permission="read")
