"""read_file: the model reads a text file as numbered lines, including the session's pending edits.

Output: one line per file line, ``cat -n`` style (the 1-indexed line number right-aligned in 6
columns, a tab, the line without its line ending: a CRLF shows as a line break like LF). At most
``limit`` lines (default 2000) and about ``MAX_CHARS`` characters per call; a footer then says how many
lines remain and which ``offset`` to use next. A line longer than ``MAX_LINE_CHARS`` characters shows
its first ``MAX_LINE_CHARS`` and ends with ``[line truncated: N chars; more with offset=L, column=C]``;
``column`` (1-indexed, in characters, for the first line of the page) reads on inside it, and such a
piece ends with ``[columns A-B of N...]``. A file not in UTF-8 says its encoding in a last line. An
empty file reads ``(empty file)``; a directory is an error that points to list_files.

Memory stays bounded whatever the file's size: a file too large to read whole is streamed
(``Workspace.read_page``), so ``limit: 1`` on a 2 GiB file reads one chunk.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.errors import ToolError
from agent_ls.core.file_views import PageLine, PageRequest
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_CHARS = 28_000
"""Output budget in characters, below the registry's 30,000 so a page is never cut in the middle."""

DESCRIPTION = "Read a text file, including your pending edits, as numbered lines; at most 2000 per call."


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Relative file path.")
    offset: int = Field(default=1, ge=1, description="First line to read, 1-indexed.")
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, description="Maximum number of lines to read.")
    column: int = Field(default=1, ge=1, description="First character of the first line, 1-indexed.")


async def run(args: Args, ctx: ToolContext) -> ToolOutput:
    rel = ctx.workspace.resolve(args.path)
    if ctx.workspace.is_dir(rel):
        name = "the workspace root" if rel == "." else rel
        raise ToolError(f"{name} is a directory; use list_files to see what it contains.")
    request = PageRequest(
        line=args.offset,
        column=args.column,
        max_lines=args.limit,
        max_line_chars=MAX_LINE_CHARS,
        max_chars=MAX_CHARS,
        line_overhead_chars=8,
    )
    page = ctx.workspace.read_page(rel, request)
    if not page.lines:
        return ToolOutput("(empty file)")
    shown = [f"{line.number:>6}\t{line.text}{_tag(line)}" for line in page.lines]
    last = page.lines[-1].number
    if page.total_lines is None:
        shown.append(f"… the file goes on (too large to count its lines); call again with offset={last + 1}")
    elif last < page.total_lines:
        remaining = page.total_lines - last
        shown.append(f"… {_count(remaining, 'more line')}; call again with offset={last + 1}")
    if page.encoding:
        shown.append(f"[file encoding: {page.encoding}; edits keep it]")
    return ToolOutput("\n".join(shown))


def _tag(line: PageLine) -> str:
    """What follows a line that is not shown whole: its length and where to read on."""
    end = line.column - 1 + len(line.text)
    more = line.length is None or end < line.length
    if line.column == 1 and not more:
        return ""
    total = f"{line.length:,}" if line.length is not None else "more than"
    on = f"; more with offset={line.number}, column={end + 1}" if more else ""
    if line.column == 1:
        length = f"{line.length:,} chars" if line.length is not None else f"over {end:,} chars"
        return f" [line truncated: {length}{on}]"
    of = f"of {total}" if line.length is not None else "of a longer line"
    return f" [columns {line.column:,}-{end:,} {of}{on}]"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


TOOL = Tool(name="read_file", description=DESCRIPTION, args=Args, run=run, mutates=False, permission="read")
