"""grep: the model searches file contents with a regular expression (ripgrep syntax).

Output: ``path:line:text`` lines (line numbers 1-indexed) over the current view of the files,
pending edits included; ``no matches`` when there is none. At most ``MAX_LINES`` (200) lines and
about ``MAX_CHARS`` (20,000) characters; each line is cut at ``MAX_LINE_CHARS`` (500). A last line
says when matches were left out and how to narrow the search.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.tools.base import Tool, ToolContext, ToolOutput

MAX_LINES = 200
MAX_CHARS = 20_000
MAX_LINE_CHARS = 500

DESCRIPTION = (
    "Search file contents with a regular expression (ripgrep syntax), pending edits included. "
    "Returns path:line:text lines, at most 200."
)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, description="Regular expression to search for.")
    path: str = Field(default=".", description="Relative file or directory.")
    glob: str | None = Field(default=None, description="Only search files matching this glob, e.g. *.py.")


async def run(args: Args, ctx: ToolContext) -> ToolOutput:
    rel = ctx.workspace.resolve(args.path)
    found = (await ctx.workspace.search(args.pattern, rel, args.glob)).splitlines()
    if not found:
        return ToolOutput("no matches")
    shown: list[str] = []
    size = 0
    for line in found[:MAX_LINES]:
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]} [line truncated: {len(line):,} chars]"
        if shown and size + len(line) + 1 > MAX_CHARS:
            break
        shown.append(line)
        size += len(line) + 1
    if len(shown) < len(found):
        shown.append(
            f"(first {len(shown):,} of {len(found):,} matching lines; narrow with path, glob or pattern)"
        )
    return ToolOutput("\n".join(shown))


TOOL = Tool(name="grep", description=DESCRIPTION, args=Args, run=run, mutates=False, permission="read")
