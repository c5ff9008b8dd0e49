"""edit_file: the model replaces an exact string in a file; the result becomes part of the proposal.

Rules, each refusal an ``EditFailed`` the model reads (nothing is changed):
- ``old_string`` must occur in the file (pending edits included): exactly once, or any number of times
  with ``replace_all``;
- ``old_string`` and ``new_string`` must differ, and an edit may not empty a non-empty file.
Line endings: in a file that uses CRLF throughout, ``\\n`` in ``old_string`` (when it matches only that
way) and in ``new_string`` is read as ``\\r\\n``, so the file never ends up with mixed line endings.
The user's files are never written: ``Workspace.propose`` records the new text for review.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.errors import EditFailed
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

DESCRIPTION = (
    "Replace exact text in a file. old_string must match exactly, whitespace included, and occur once "
    "(add surrounding lines to make it unique) unless replace_all is true."
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
    old, new = args.old_string, args.new_string
    count = text.count(old)
    crlf_file = "\r\n" in text and text.count("\n") == text.count("\r\n")
    if count == 0 and crlf_file and "\r" not in old and "\n" in old:
        # Models rarely send \r: match the file's CRLF line endings instead.
        old = _crlf(old)
        count = text.count(old)
    if crlf_file and "\r" not in new:
        new = _crlf(new)
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
    new_text = text.replace(old, new) if args.replace_all else text.replace(old, new, 1)
    if not new_text:
        raise EditFailed("this edit would empty the file; use write_file if that is intended.")
    changed = ctx.workspace.propose(rel, new_text)
    replaced = "1 replacement" if count == 1 or not args.replace_all else f"{count} replacements"
    return ToolOutput(
        f"Edited {rel} ({replaced}). The change is a proposal the user reviews.", proposal_changed=changed
    )


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


TOOL = Tool(name="edit_file", description=DESCRIPTION, args=Args, run=run, mutates=True, permission="edit")
