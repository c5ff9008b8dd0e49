"""submit_plan: the model ends a plan run with its structured plan (``core.plan.Plan``).

Offered only in plan mode (``tools.plan_mode``). The call's validated arguments become the run's plan:
the session stores it, ``RunEnded.plan`` carries it, and the run ends after this turn's calls (the
model's answer is the plan). The model reads one line back. Sizes are bounded (the plan is stored, shown,
and carried into the next run's task): a summary of at most ``MAX_SUMMARY_CHARS`` characters, at most
``MAX_FILES`` files and ``MAX_ITEMS`` steps, checks and risks, each at most ``MAX_ITEM_CHARS``.
Named after what the call does for the user, who then approves or revises the plan: Claude Code's
equivalent, ``ExitPlanMode``, names a mode change that here is the user's to make (the next run of the
session in default mode implements the plan).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from agent_ls.core.plan import Plan
from agent_ls.tools.base import Tool, ToolContext, ToolOutput

NAME = "submit_plan"
DESCRIPTION = (
    "End the research with your plan for the user to approve. Call once, when you know enough; the run "
    "ends here and nothing is edited until the user approves."
)
MAX_SUMMARY_CHARS = 4000
MAX_FILES = 200
MAX_ITEMS = 50
MAX_ITEM_CHARS = 1000
Item = Annotated[str, Field(max_length=MAX_ITEM_CHARS)]
SUBMITTED = "Plan submitted. The run ends here; the user reviews the plan, then approves or revises it."


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    summary: str = Field(
        min_length=1,
        max_length=MAX_SUMMARY_CHARS,
        description="What the change does and why, in a few sentences.",
    )
    files: list[Item] = Field(
        max_length=MAX_FILES, description="The workspace-relative paths you will create or change."
    )
    steps: list[Item] = Field(min_length=1, max_length=MAX_ITEMS, description="The steps, in order.")
    checks: list[Item] = Field(
        max_length=MAX_ITEMS, description="Commands that verify the result, e.g. pytest tests/test_x.py."
    )
    risks: list[Item] = Field(
        max_length=MAX_ITEMS, description="What could go wrong or needs the user's attention."
    )


def submit_plan_tool(on_plan: Callable[[Plan], None]) -> Tool[Any]:
    """The ``submit_plan`` tool; each valid call passes its ``Plan`` to ``on_plan`` (the run keeps the
    last one)."""

    async def run(args: Args, ctx: ToolContext) -> ToolOutput:
        on_plan(
            Plan(
                args.summary.strip(),
                tuple(args.files),
                tuple(args.steps),
                tuple(args.checks),
                tuple(args.risks),
            )
        )
        return ToolOutput(SUBMITTED)

    return Tool(name=NAME, description=DESCRIPTION, args=Args, run=run, mutates=False, permission="session")
