"""problems: the model reads the editor's problems (its language servers' diagnostics).

Present only in a session whose front end has an editor that forwards them (``agent/didChangeProblems``,
docs/modes.md "The editor's problems"); deferred, named by ``load_tools`` (``fix-diagnostics`` loads it).

- ``path`` a file: its problems, one ``path:line:col severity source: message`` line each (line and
  column 1-based, the column in characters), as the editor last reported them. For a file the session's
  proposal changes, the editor is asked for the problems of the proposed text and of the text the edit
  was based on (``core.problems.check_edits``: both checked the same way) and the result says which are
  ``new since your edit`` (matched by message, not line). An editor that cannot check a text off disk (or
  whose language servers did not report on it) gets the problems of the file on disk, and the result says
  they are from before the edit.
- ``path`` a folder (``.``, the default: the workspace): the files with problems under it, in path order,
  one ``path: 2 errors, 1 warning`` line each, at most ``MAX_FILES`` (100) files, then the totals.

Files whose read the permission policy denies, and secret files the workspace refuses, are left out of
the summary (as ``grep`` does).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.errors import PathRefused
from agent_ls.core.problems import (
    FileProblems,
    ProblemSource,
    check_edits,
    new_since,
    problem_line,
    severity_counts,
)
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

NAME = "problems"
BRIEF = "the editor's diagnostics"
MAX_FILES = 100

DESCRIPTION = (
    "The editor's problems (diagnostics of its language servers). For a file: path:line:col severity "
    "source: message lines; for a file you edited, the problems of your proposed text and which are new. "
    "For a folder: the files with problems and their counts."
)

NOT_FORWARDED = (
    "The editor has not sent any problems (it does not forward its diagnostics); "
    "run the project's checker with bash instead."
)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str = Field(default=".", description="Relative file or folder.")


def problems_tool(source: ProblemSource) -> Tool[Any]:
    """The ``problems`` tool reading ``source`` (the editor's problems for the session's root)."""

    async def run(args: Args, ctx: ToolContext) -> ToolOutput:
        rel = ctx.workspace.resolve(args.path)
        if not source.forwarded:
            return ToolOutput(NOT_FORWARDED)
        if rel == "." or ctx.workspace.is_dir(rel):
            return ToolOutput(_summary(source, rel, ctx))
        edited = {change.path: (change.base_text, change.new_text) for change in ctx.workspace.proposal()}
        on_disk = source.of_file(rel)
        if rel not in edited:
            return ToolOutput(_listing(on_disk, f"no problems reported for {rel}"))
        checked = await check_edits(source, {rel: edited[rel]})
        if checked is None or rel not in checked:  # no editor that checks texts, or none checked this one
            note = (
                f"(the problems of {rel} on disk, before your proposed edit: "
                "the editor could not check your proposed text)"
            )
            return ToolOutput(note + "\n" + _listing(on_disk, "none"))
        before, after = checked[rel]
        new = new_since(before.problems, after.problems)
        gone = len(before.problems) - (len(after.problems) - len(new))
        lines = [f"Problems of your proposed {rel} (checked by the editor):", _listing(after, "none")]
        lines.append(f"new since your edit: {len(new)}" + (":" if new else ""))
        lines.extend(problem_line(rel, problem) for problem in new)
        lines.append(f"gone since your edit: {gone}")
        return ToolOutput("\n".join(lines))

    return Tool(
        name=NAME,
        description=DESCRIPTION,
        args=Args,
        run=run,
        mutates=False,
        permission="read",
        brief=BRIEF,
    )


def _listing(found: FileProblems, empty: str) -> str:
    lines = [problem_line(found.path, problem) for problem in found.problems]
    if found.left_out:
        lines.append(f"(and {found.left_out} more the editor reported, not kept)")
    return "\n".join(lines) or empty


def _readable(ctx: ToolContext, path: str) -> bool:
    """False for a path the workspace refuses (a secret file): not even named in the summary."""
    try:
        ctx.workspace.resolve(path)
    except PathRefused:
        return False
    return True


def _summary(source: ProblemSource, rel: str, ctx: ToolContext) -> str:
    prefix = "" if rel == "." else rel.rstrip("/") + "/"
    files = [
        found
        for found in source.all_files()
        if found.path.startswith(prefix)
        and found.problems
        and not (ctx.read_denied is not None and ctx.read_denied(found.path))
        and _readable(ctx, found.path)
    ]
    if not files:
        return "no problems reported" + (f" under {rel}" if prefix else "")
    edited = {change.path for change in ctx.workspace.proposal()}
    lines = []
    for found in files[:MAX_FILES]:
        mark = " (you edited it: give its path for your proposal's problems)" if found.path in edited else ""
        lines.append(f"{found.path}: {severity_counts(found.problems)}{mark}")
    if len(files) > MAX_FILES:
        lines.append(f"(and {len(files) - MAX_FILES} more files; give a folder to narrow)")
    every = [problem for found in files for problem in found.problems]
    lines.append(f"{len(files)} file{'' if len(files) == 1 else 's'}: {severity_counts(every)}")
    return "\n".join(lines)
