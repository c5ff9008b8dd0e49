"""Plan mode's shapes: the run mode, the plan a plan run ends with, and what the model reads of it.

A run in ``plan`` mode researches with read-only tools and ends when the model calls ``submit_plan``
(``tools.submit_plan``): its arguments become a ``Plan``, carried by ``RunEnded.plan`` and stored in the
session. The next run of the session in ``default`` mode implements it: its task message starts with
``approved_plan_text`` (``runtime``), so the plan reaches the model even after a compaction or a resume
from disk. Behaviour follows Claude Code's plan mode (its ``ExitPlanMode`` tool ends the research and asks
the user to approve the plan) and the seed course ("Formuler une tâche": research without writing, a plan
the user approves, then the implementation).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agent_ls.core.context import neutralize_tags

RunMode = Literal["default", "plan"]
"""``default``: every tool, edits become the proposal; ``plan``: read-only tools, edits refused by the
permission policy, the run ends with a ``Plan``."""

PLAN_MODE_NOTE = (
    "Plan mode: research the task with read-only tools (reading, searching, read-only commands); edits, "
    "writes and other commands are refused until the user approves a plan. When you know enough, call "
    "submit_plan once with the summary, the files to touch, the steps, the checks to run and the risks; "
    "the run ends there and the user reviews the plan."
)
"""What the task message of a plan run starts with (the user message, never the cached system prefix)."""


@dataclass(frozen=True)
class Plan:
    """The structured plan a plan run ends with (the ``submit_plan`` call's arguments).

    Attributes:
        summary: what the change does and why, a few sentences.
        files: the workspace-relative paths the implementation will touch, in the model's order.
        steps: the steps, in order.
        checks: commands that verify the result (``pytest tests/test_price.py``), in order.
        risks: what could go wrong or needs the user's attention, in order.
    """

    summary: str
    files: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    risks: tuple[str, ...] = ()

    def wire(self) -> dict[str, Any]:
        """``{summary, files, steps, checks, risks}`` (lists of strings): the wire and the session file."""
        return {
            "summary": self.summary,
            "files": list(self.files),
            "steps": list(self.steps),
            "checks": list(self.checks),
            "risks": list(self.risks),
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Plan:
        """The plan of a ``wire()`` object; raises ``KeyError``/``TypeError`` when ``summary`` is missing
        or a list is not one (a session line the loader then skips)."""

        def strings(key: str) -> tuple[str, ...]:
            value = data.get(key, [])
            if not isinstance(value, list):
                raise TypeError(f"plan {key} is not a list")
            return tuple(str(item) for item in value)

        return cls(
            str(data["summary"]),
            strings("files"),
            strings("steps"),
            strings("checks"),
            strings("risks"),
        )

    def markdown(self) -> str:
        """The plan as markdown: the summary, then a ``Files``, ``Steps`` (numbered), ``Checks`` and
        ``Risks`` section each when not empty. What a client without plan support shows as the answer."""
        parts = [self.summary.strip()]
        if self.files:
            parts.append("Files:\n" + "\n".join(f"- `{path}`" for path in self.files))
        if self.steps:
            parts.append("Steps:\n" + "\n".join(f"{n}. {step}" for n, step in enumerate(self.steps, 1)))
        if self.checks:
            parts.append("Checks:\n" + "\n".join(f"- `{check}`" for check in self.checks))
        if self.risks:
            parts.append("Risks:\n" + "\n".join(f"- {risk}" for risk in self.risks))
        return "\n\n".join(parts)


def approved_plan_text(plan: Plan) -> str:
    """What the task message of the run implementing ``plan`` starts with: the plan (our block tags in it
    made inert, since the model wrote it) and that the user approved it."""
    return (
        "The user approved this plan; implement it now (edits are allowed again):\n\n"
        f"{neutralize_tags(plan.markdown())}"
    )
