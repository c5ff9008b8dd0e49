"""bash: the model runs a shell command in the session's shadow copy of the workspace.

The shadow copy holds the workspace with the pending proposal applied, so tests see the agent's
edits while the user's files stay untouched. Text files the command creates or changes there (a
formatter's output) are brought into the proposal, which then changes (``ProposalChanged``); other
changes and deletions are undone (see ``workspace/shell_runner.py``).
Output: ``exit code N`` then the combined stdout and stderr (``(no output)`` when empty), as capped
by the runner. A command still running after ``ToolContext.command_timeout_s`` seconds is stopped and
the reply says so (an error result, with the output so far). A non-zero exit is a normal result. When the
output was cut, its whole text goes to the registry (``ToolOutput.full_text``), which keeps it for
``read_output``.
The permission policy judges the command before it runs.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.tools.base import Tool, ToolContext, ToolOutput

DESCRIPTION = (
    "Run a shell command (tests, a formatter) in a sandboxed copy of the workspace that has your proposed "
    "edits. Text files it creates or changes join them (the output lists which); deletions are not kept. "
    "No network. Returns the exit code and output. Risky commands need the user's approval; some are blocked."
)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="The shell command to run.")


async def run(args: Args, ctx: ToolContext) -> ToolOutput:
    result = await ctx.runner.run(args.command, ctx.command_timeout_s)
    output = result.output or "(no output)"
    if result.timed_out:
        return ToolOutput(
            f"timed out after {ctx.command_timeout_s:g} s; the command was stopped. Output so far:\n{output}",
            is_error=True,
            full_text=result.full_output,
        )
    return ToolOutput(
        f"exit code {result.exit_code}\n{output}",
        proposal_changed=bool(result.changed_paths),
        full_text=result.full_output,
    )


# own_timeout: the command is stopped after ctx.command_timeout_s; the shadow copy made before it
# (seconds on a large repository, the first time) must not count against it (issue 14).
TOOL = Tool(
    name="bash",
    description=DESCRIPTION,
    args=Args,
    run=run,
    mutates=True,
    permission="bash",
    own_timeout=True,
)
