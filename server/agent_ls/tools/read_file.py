"""read_file: the model reads a text file as numbered lines, including the session's pending edits.

Output: one line per file line, ``cat -n`` style (the 1-indexed line number right-aligned in 6
columns, a tab, the line without its line ending). At most ``limit`` lines (default 2000) and about
``MAX_CHARS`` characters per call; a footer then says how many lines remain and which ``offset`` to
use next. Lines longer than ``MAX_LINE_CHARS`` characters are cut with ``[line truncated: N chars]``.
An empty file reads ``(empty file)``; a directory is an error that points to list_files.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.errors import ToolError
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_CHARS = 28_000
"""Output budget in characters, below the registry's 30,000 so a page is never cut in the middle."""

DESCRIPTION = (
    "Read a text file, including your pending edits. Returns numbered lines (from 1), at most 2000 "
    "per call; page with offset and limit."
)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Relative file path.")
    offset: int = Field(default=1, ge=1, description="First line to read, 1-indexed.")
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, description="Maximum number of lines to read.")


async def run(args: Args, ctx: ToolContext) -> ToolOutput:
    rel = ctx.workspace.resolve(args.path)
    if ctx.workspace.is_dir(rel):
        name = "the workspace root" if rel == "." else rel
        raise ToolError(f"{name} is a directory; use list_files to see what it contains.")
    text = ctx.workspace.read_text(rel)
    if not text:
        return ToolOutput("(empty file)")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if args.offset > len(lines):
        raise ToolError(
            f"offset {args.offset} is past the end of {rel}, which has {_count(len(lines), 'line')}."
        )
    shown: list[str] = []
    size = 0
    end = min(len(lines), args.offset - 1 + args.limit)
    for number in range(args.offset, end + 1):
        line = lines[number - 1].removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]} [line truncated: {len(line):,} chars]"
        numbered = f"{number:>6}\t{line}"
        if shown and size + len(numbered) + 1 > MAX_CHARS:
            break
        shown.append(numbered)
        size += len(numbered) + 1
    last = args.offset + len(shown) - 1
    if last < len(lines):
        remaining = len(lines) - last
        shown.append(f"… {_count(remaining, 'more line')}; call again with offset={last + 1}")
    return ToolOutput("\n".join(shown))


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


TOOL = Tool(name="read_file", description=DESCRIPTION, args=Args, run=run, mutates=False, permission="read")
