"""read_output: the model reads again the whole output of an earlier tool call, one page of lines at a time.

What the model sees: ``[lines 201–400 of 5,400 of the output of call c7]``, then the lines as they were
(not numbered: the exact text), at most ``limit`` of them (default 200) and about ``MAX_CHARS``
characters; a line longer than ``MAX_LINE_CHARS`` shows its first ``MAX_LINE_CHARS`` characters and ends
with ``[line truncated: N chars]``. When lines remain, a last line says which ``offset`` reads on.

The text comes from the session's ``OutputKeeper`` (``sessions/outputs.py``): the whole output of a result
the model read cut (a command's head and tail, the registry's central cut), or else the result the model
read, so a result a compaction pruned can be read again, also after the session was resumed. Secrets are
redacted in it. An unknown call id or an offset past the end is an error the model can fix. The registry
ends a cut result with ``kept_note``, which names this tool, the call and the line to read on from.

The tool is present only when the session keeps outputs, and deferred without being named by ``load_tools``
(``Tool.listed``): naming it there cost 16 estimated tokens in every first request, which took the benchmark
task over its 1,400 (``benchmarks/bench_slice.py``: 1,415). When the registry keeps an output (the result's
note names it), it is loaded: its schema (about 140 tokens) is sent from the next request on. When a
compaction writes a placeholder that names it, or a resumed history mentions it, ``load_tools`` names it
(its schema would undo part of what the pruning saved: with a 4,000-token window no compaction was enough
by pruning alone). Called by name at any time, it runs and is loaded by the call.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.errors import ToolError
from agent_ls.tools.base import OutputKeeper, Tool, ToolContext, ToolOutput

NAME = "read_output"
DEFAULT_LIMIT = 200
MAX_LINE_CHARS = 2000
MAX_CHARS = 28_000
"""Output budget in characters, below the registry's 30,000 (as read_file's), so a page is never cut."""

DESCRIPTION = "Read the whole output of an earlier tool call that was cut or pruned, by its call_id."
BRIEF = "the whole output of a cut or pruned tool result"

# omission_note's first line number: "[... 25,000 characters omitted: lines 201–5,200 of 5,400 ...]"
_OMITTED_FROM = re.compile(r"\[\.\.\. [\d,]+ characters? omitted: lines? ([\d,]+)")


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    call_id: str = Field(min_length=1, description="The id of the tool call whose output to read.")
    offset: int = Field(default=1, ge=1, description="First line to read, 1-indexed.")
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, description="Maximum number of lines to read.")


def kept_note(call_id: str, whole: str, shown: str) -> str:
    """The line that ends a cut result once ``whole`` is kept:
    ``[the whole output (5,400 lines) is kept: read_output {"call_id": "c7", "offset": 201} reads on from
    line 201]``; the offset is the first line the first omission note of ``shown`` names (1 without one)."""
    found = _OMITTED_FROM.search(shown)
    offset = int(found.group(1).replace(",", "")) if found else 1
    args = json.dumps({"call_id": call_id, "offset": offset}, ensure_ascii=False)
    lines = _count(len(_lines(whole)), "line")
    return f"[the whole output ({lines}) is kept: {NAME} {args} reads on from line {offset:,}]"


def read_output_tool(keeper: OutputKeeper, *, listed: bool = False) -> Tool[Any]:
    """The ``read_output`` tool reading from ``keeper`` (the session's kept outputs); ``listed``: named by
    ``load_tools`` (module docstring)."""

    async def run(args: Args, ctx: ToolContext) -> ToolOutput:
        text = await asyncio.to_thread(keeper.read, args.call_id)
        if text is None:
            raise ToolError(
                f"no output of a call {args.call_id!r} in this session; use the call_id of an earlier "
                "tool call exactly as given (in a truncation note or a pruned result)"
            )
        lines = _lines(text)
        if args.offset > max(1, len(lines)):
            raise ToolError(
                f"offset {args.offset:,} is past the end: the output of call {args.call_id} has "
                f"{_count(len(lines), 'line')}"
            )
        return ToolOutput(_page(lines, args.call_id, args.offset, args.limit))

    return Tool(
        name=NAME,
        description=DESCRIPTION,
        args=Args,
        run=run,
        mutates=False,
        permission="session",
        brief=BRIEF,
        listed=listed,
    )


def _page(lines: list[str], call_id: str, offset: int, limit: int) -> str:
    if not lines:
        return f"[the output of call {call_id} is empty]"
    shown: list[str] = []
    used = 0
    for line in lines[offset - 1 : offset - 1 + limit]:
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]} [line truncated: {len(line):,} chars]"
        if shown and used + len(line) + 1 > MAX_CHARS:
            break
        shown.append(line)
        used += len(line) + 1
    last = offset + len(shown) - 1
    span = f"line {offset:,}" if last == offset else f"lines {offset:,}–{last:,}"
    parts = [f"[{span} of {len(lines):,} of the output of call {call_id}]", *shown]
    if last < len(lines):
        parts.append(f"… {_count(len(lines) - last, 'more line')}; call again with offset={last + 1}")
    return "\n".join(parts)


def _lines(text: str) -> list[str]:
    """The lines of ``text`` without their endings; a last line without a newline counts too."""
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
