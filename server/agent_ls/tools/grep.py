"""grep: the model searches file contents with a regular expression (ripgrep syntax).

Output: ``path:line:column:text`` lines (line and column 1-indexed, the column in characters, of the
match) over the current view of the files, pending edits included; ``no matches`` when there is none.
A line of at most ``MAX_LINE_CHARS`` (500) characters is shown whole; a longer one (a minified bundle)
shows ``WINDOW_CHARS`` characters each side of each match, ``…`` marking the cut ends, so a match at
column 20,000 is visible and read_file's ``column`` reads on from there.

At most ``MAX_LINES`` (200) lines and about ``MAX_CHARS`` (20,000) characters. Files share that budget
in turns (each file's first hit, then each one's second, ...), so one file with many or long matches
cannot hide the others. A last line says how many matches were left out and how to narrow the search.
The hits of a file whose read the permission policy denies (a ``read`` deny rule, ``Read(secret/**)``)
are neither shown nor counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.file_views import SearchHit, SearchResult
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

MAX_LINES = 200
MAX_CHARS = 20_000
MAX_LINE_CHARS = 500
WINDOW_CHARS = 150

DESCRIPTION = (
    "Search file contents with a regular expression (ripgrep syntax), pending edits included. "
    "Returns path:line:column:text lines, at most 200."
)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, description="Regular expression to search for.")
    path: str = Field(default=".", description="Relative file or directory.")
    glob: str | None = Field(default=None, description="Only search files matching this glob, e.g. *.py.")


async def run(args: Args, ctx: ToolContext) -> ToolOutput:
    rel = ctx.workspace.resolve(args.path)
    found = await ctx.workspace.search(
        args.pattern, rel, args.glob, max_line_chars=MAX_LINE_CHARS, window=WINDOW_CHARS
    )
    if ctx.read_denied is not None:
        found = _without_denied(found, ctx.read_denied)
    if not found.counts and not found.unreadable:
        return ToolOutput("no matches")
    chosen = _in_turns(found.hits)
    shown = [_line(hit) for hit in sorted(chosen, key=lambda h: (h.path, h.line, h.column))]
    shown += list(found.unreadable)
    total = sum(found.counts.values())
    if len(chosen) < total:
        files = len(found.counts)
        silent = files - len({hit.path for hit in chosen})
        unshown = f", {silent:,} of the {files:,} files not shown at all" if silent else ""
        shown.append(
            f"(showing {len(chosen):,} of {total:,} matches{unshown}; narrow with path, glob or pattern)"
        )
    return ToolOutput("\n".join(shown))


def _without_denied(found: SearchResult, denied: Callable[[str], bool]) -> SearchResult:
    """``found`` without the files whose read the policy denies: one test per matching file."""
    hidden = {path for path in found.counts if denied(path)}
    if not hidden:
        return found
    return SearchResult(
        tuple(hit for hit in found.hits if hit.path not in hidden),
        {path: count for path, count in found.counts.items() if path not in hidden},
        tuple(note for note in found.unreadable if not any(note.startswith(f"{p}:") for p in hidden)),
    )


def _in_turns(hits: tuple[SearchHit, ...]) -> list[SearchHit]:
    """The hits that fit the budget, taken in turns across files (in path order)."""
    by_path: dict[str, list[SearchHit]] = defaultdict(list)
    for hit in hits:
        by_path[hit.path].append(hit)
    chosen: list[SearchHit] = []
    size = 0
    turn = 0
    while any(turn < len(file_hits) for file_hits in by_path.values()):
        for file_hits in by_path.values():
            if turn >= len(file_hits):
                continue
            cost = len(_line(file_hits[turn])) + 1
            if len(chosen) >= MAX_LINES or (chosen and size + cost > MAX_CHARS):
                return chosen
            chosen.append(file_hits[turn])
            size += cost
        turn += 1
    return chosen


def _line(hit: SearchHit) -> str:
    before = "…" if hit.start_column > 1 else ""
    after = "…" if hit.start_column - 1 + len(hit.text) < hit.line_length else ""
    return f"{hit.path}:{hit.line}:{hit.column}:{before}{hit.text}{after}"


TOOL = Tool(name="grep", description=DESCRIPTION, args=Args, run=run, mutates=False, permission="read")
