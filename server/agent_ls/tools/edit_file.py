"""edit_file: the model replaces an exact string in a file; the result becomes part of the proposal.

Rules, each refusal an ``EditFailed`` the model reads (nothing is changed):
- ``old_string`` must occur in the file as read_file shows it (pending edits included; every CRLF seen
  as a line feed): exactly once, or any number of times with ``replace_all``;
- ``old_string`` and ``new_string`` must differ, and an edit may not empty a non-empty file;
- the file must not have changed since the agent last read it ("read it again"), and the file's
  encoding must be able to write ``new_string``.
Line endings (``workspace.line_endings``): the bytes outside the replaced text are kept exactly; each
line feed of ``new_string`` takes the ending that stood there (CRLF in a CRLF region of a mixed file).
The user's files are never written: ``Workspace.propose`` records the new text for review.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.errors import EditFailed
from agent_ls.tools.base import Tool, ToolContext, ToolOutput
from agent_ls.workspace.line_endings import replace_in_view

DESCRIPTION = (
    "Replace exact text in a file. old_string must match exactly, whitespace included, and be unique "
    "(add surrounding lines) unless replace_all is true."
)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Relative file path.")
    old_string: str = Field(min_length=1, description="Exact text to replace.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


async def run(args: Args, ctx: ToolContext) -> ToolOutput:
    rel = ctx.workspace.resolve(args.path)
    if args.old_string == args.new_string:
        raise EditFailed("old_string and new_string are identical; there is nothing to change.")
    text = ctx.workspace.read_text(rel)
    replaced = replace_in_view(text, args.old_string, args.new_string, replace_all=args.replace_all)
    count = replaced.count
    if count == 0:
        raise EditFailed(
            f"old_string not found in {rel}; read the file again and copy the exact text, "
            "including whitespace."
        )
    if count > 1 and not args.replace_all:
        raise EditFailed(
            f"old_string occurs {count} times in {rel}; add surrounding lines to make it unique, "
            "or set replace_all to true to replace every occurrence."
        )
    if not replaced.text:
        raise EditFailed("this edit would empty the file; use write_file if that is intended.")
    changed = ctx.workspace.propose(rel, replaced.text, based_on=text)
    done = "1 replacement" if count == 1 or not args.replace_all else f"{count} replacements"
    return ToolOutput(
        f"Edited {rel} ({done}). The change is a proposal the user reviews.", proposal_changed=changed
    )


TOOL = Tool(name="edit_file", description=DESCRIPTION, args=Args, run=run, mutates=True, permission="edit")
