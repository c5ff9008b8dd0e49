"""review_findings: the model reports a code review's findings, each at lines of a file, for the editor.

Each finding is checked against the file as the agent sees it (pending edits, else the unsaved editor
buffer, else the disk; ``Workspace.read_text``): the path must resolve inside the workspace, not be a
secret file nor denied to read by the permission rules, and name a text file whose lines ``line`` to
``endLine`` (1-based, inclusive, as ``read_file`` numbers them) exist. The result says, per finding,
whether it was accepted and why not, so the model can cite it again: ``Accepted 2 of 3 findings ...`` then
one ``#N path:line: rejected: why`` line per rejected one. At most ``MAX_FINDINGS`` findings and
``MAX_FILES`` files per call (a repeated file counts once), a path at most ``MAX_PATH_CHARS`` characters,
a message at most ``MAX_MESSAGE_CHARS`` characters (line breaks become spaces). The checks read files, so
they run in a worker thread: a call citing hundreds of files never holds up the editor's requests.

The accepted findings, with the files the review covers (those of the accepted findings and ``files``),
go to the user through ``FindingsReported``: the language server shows them as diagnostics (source
``agent-ls review``) and replaces what an earlier review showed for those files; the CLI prints them as
``path:line: severity: message`` lines.

Deferred and not named by ``load_tools`` (``Tool.listed``; ``tools.session_tools``): its schema costs
about 270 estimated tokens, which the first request of every run would pay (DESIGN.md budget: 1,400).
The code-review skill names it in ``allowed-tools``, which loads it when the skill is activated; a call
by name also runs and loads it.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_ls.core.errors import ToolError
from agent_ls.core.events import FindingsReported
from agent_ls.core.review import FindingSeverity, ReviewFinding
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

NAME = "review_findings"
MAX_FINDINGS = 200
MAX_FILES = 200
MAX_PATH_CHARS = 4096
MAX_MESSAGE_CHARS = 1000
DESCRIPTION = (
    "Report your review's findings; the user sees each at its lines in the editor. Lines are 1-indexed as "
    "read_file shows them. Rejected findings are listed with the reason: fix and send them again."
)
BRIEF = "report review findings at file lines"


class Finding(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    path: str = Field(min_length=1, max_length=MAX_PATH_CHARS, description="Relative file path.")
    line: int = Field(ge=1, description="First line, 1-indexed.")
    end_line: int | None = Field(default=None, alias="endLine", ge=1, description="Last line, 1-indexed.")
    severity: FindingSeverity
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, description="What is wrong, one line.")


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    findings: list[Finding] = Field(max_length=MAX_FINDINGS)
    files: list[Annotated[str, Field(max_length=MAX_PATH_CHARS)]] = Field(
        default_factory=list,
        description=f"Files reviewed with no finding (their old findings are cleared); at most {MAX_FILES}.",
    )

    @field_validator("files")
    @classmethod
    def _at_most_max_files(cls, files: list[str]) -> list[str]:
        unique = list(dict.fromkeys(files))  # a repeated path counts once
        if len(unique) > MAX_FILES:
            raise ValueError(
                f"{len(unique)} different files; at most {MAX_FILES} per call: send the rest in another call"
            )
        return unique


async def run(args: Args, ctx: ToolContext) -> ToolOutput:
    accepted, covered, rejected = await asyncio.to_thread(_checked, args, ctx)
    if accepted or covered:
        if ctx.emit is not None:
            ctx.emit(FindingsReported(tuple(accepted), tuple(sorted(covered))))
    total = len(args.findings)
    head = f"Accepted {len(accepted)} of {total} finding{'' if total == 1 else 's'}"
    if not rejected:
        return ToolOutput(f"{head}; the user sees them in the editor.")
    return ToolOutput("\n".join([f"{head}. Fix these and call review_findings again with them:", *rejected]))


def _checked(args: Args, ctx: ToolContext) -> tuple[list[ReviewFinding], set[str], list[str]]:
    """Every finding and file checked (blocking: it reads files): the accepted findings, the files
    covered, and one line per rejection."""
    accepted: list[ReviewFinding] = []
    rejected: list[str] = []
    covered: set[str] = set()
    for number, finding in enumerate(args.findings, start=1):
        checked = check(finding, ctx)
        if isinstance(checked, str):
            where = f"{finding.path}:{finding.line}"
            rejected.append(f"#{number} {where}: rejected: {checked}")
            continue
        accepted.append(checked)
        covered.add(checked.path)
    for path in args.files:
        try:
            covered.add(_readable(path, ctx))
        except ToolError as exc:
            rejected.append(f"files: {path}: rejected: {exc}")
    return accepted, covered, rejected


def check(finding: Finding, ctx: ToolContext) -> ReviewFinding | str:
    """``finding`` accepted (its path workspace-relative, ``end_line`` filled in, the message on one line),
    or why it is rejected, one line for the model."""
    end_line = finding.end_line if finding.end_line is not None else finding.line
    if end_line < finding.line:
        return f"endLine {end_line} is before line {finding.line}"
    try:
        rel = _readable(finding.path, ctx)
        lines = line_count(ctx.workspace.read_text(rel))
    except ToolError as exc:
        return str(exc)
    if end_line > lines:
        one = end_line == finding.line
        cited = f"line {end_line} does" if one else f"lines {finding.line}-{end_line} do"
        has = "is empty" if lines == 0 else f"has {lines} line{'' if lines == 1 else 's'}"
        return f"{rel} {has}, so {cited} not exist; read it again and cite an existing line"
    message = " ".join(finding.message.split())
    return ReviewFinding(rel, finding.line, end_line, finding.severity, message)


def _readable(path: str, ctx: ToolContext) -> str:
    """``path`` resolved in the workspace; raises ``ToolError`` (``PathRefused``) when it is outside, a
    secret, denied to read by a rule, or a directory."""
    rel = ctx.workspace.resolve(path)
    if ctx.read_denied is not None and ctx.read_denied(rel):
        raise ToolError(f"{rel}: reading it is denied by a permission rule")
    if ctx.workspace.is_dir(rel):
        raise ToolError(f"{rel} is a directory; cite a file")
    if not ctx.workspace.exists(rel):
        raise ToolError(f"{rel} does not exist")
    return rel


def line_count(text: str) -> int:
    """How many lines ``read_file`` shows for ``text``: lines end at ``\\n``; a last line without one
    counts; an empty text has none."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


TOOL = Tool(
    name=NAME,
    description=DESCRIPTION,
    args=Args,
    run=run,
    mutates=False,
    permission="session",
    brief=BRIEF,
    listed=False,
)
