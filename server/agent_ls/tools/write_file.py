"""write_file: the model creates a file or replaces its whole content; the result becomes a proposal.

The reply says whether the file was created or overwritten and that the change is a proposal the
user reviews (``Workspace.propose``; the user's files are never written). An existing file must not
have changed since the agent last read it ("read it again"); it keeps its encoding (and byte order
mark), and when ``content`` has no ``\\r``, each line keeps the ending of the line it replaces
(``line_endings.restore_endings``), so the proposal's diff shows only real changes, in CRLF, LF and
mixed files alike.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.errors import ToolError
from agent_ls.tools.base import Tool, ToolContext, ToolOutput
from agent_ls.workspace.line_endings import restore_endings

DESCRIPTION = "Create a file or replace its whole content; prefer edit_file for existing files."


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str = Field(description="Relative file path.")
    content: str = Field(description="The complete new content of the file.")


async def run(args: Args, ctx: ToolContext) -> ToolOutput:
    rel = ctx.workspace.resolve(args.path)
    if ctx.workspace.is_dir(rel):
        raise ToolError(f"{rel} is a directory; give a file path.")
    existed = ctx.workspace.exists(rel)
    content, current = args.content, None
    if existed:
        current = ctx.workspace.read_text(rel)
        if "\r" not in content:  # else the model chose its line endings itself
            content = restore_endings(current, content)
    changed = ctx.workspace.propose(rel, content, based_on=current)
    verb = "Overwrote" if existed else "Created"
    return ToolOutput(f"{verb} {rel}. The change is a proposal the user reviews.", proposal_changed=changed)


TOOL = Tool(
    name="write_file",
    description=DESCRIPTION,
    args=Args,
    run=run,
    mutates=True,
    permission="edit",
    brief="create a file",  # deferred: tools.session_tools
)
