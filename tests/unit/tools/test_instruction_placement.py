"""Trusted instructions next to tool results: nested AGENTS.md on first touch and skill bodies, always
outside the data-marked ``<tool_result>`` element, with an ``InstructionsLoaded`` event."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agent_ls.core.context import wrap_tool_result
from agent_ls.core.events import InstructionsLoaded, VerdictGiven
from agent_ls.core.messages import ToolCall
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.tools import default_tools
from agent_ls.tools.base import Tool, ToolContext, ToolOutput
from agent_ls.tools.registry import SKILL_RULE, ToolRegistry
from agent_ls.workspace.paths import PathPolicy
from tests.unit.tools.fakes import ROOT, FakeRunner, FakeWorkspace, ScriptedApprover


class Attacher:
    """An ``InstructionAttacher`` that attaches ``pkg/AGENTS.md`` once, for anything under ``pkg/``."""

    def __init__(self) -> None:
        self.touched: list[tuple[str, bool]] = []
        self.done = False

    def on_touch(self, rel: str, *, is_dir: bool) -> tuple[str, tuple[str, ...]]:
        self.touched.append((rel, is_dir))
        if self.done or not rel.startswith("pkg"):
            return "", ()
        self.done = True
        return (
            '<instructions source="pkg/AGENTS.md">\nInstructions from: pkg/AGENTS.md\nbe pure\n'
            "</instructions>",
            ("pkg/AGENTS.md",),
        )


class NameArgs(BaseModel):
    name: str


async def _skill_run(args: NameArgs, ctx: ToolContext) -> ToolOutput:
    block = f'<instructions source="skill:{args.name}">\nbody of {args.name}\n</instructions>'
    return ToolOutput("Loaded.", instructions=block, instruction_sources=(f"skill:{args.name}",))


SKILL = Tool(name="skill", description="d", args=NameArgs, run=_skill_run, mutates=False, permission="skill")


def _registry(attacher: Attacher | None, tools: list[Tool[Any]] | None = None) -> ToolRegistry:
    workspace = FakeWorkspace({"pkg/a.py": "x = 1\n", "top.py": "y = 2\n"})
    ctx = ToolContext(workspace=workspace, runner=FakeRunner(()), instructions=attacher)
    return ToolRegistry(
        tools or default_tools(), PermissionPolicy(PathPolicy(ROOT)), ScriptedApprover(()), ctx
    )


async def test_a_nested_file_follows_the_first_result_inside_its_folder_once() -> None:
    attacher = Attacher()
    registry = _registry(attacher)
    events: list[Any] = []
    first = await registry.execute(ToolCall("1", "read_file", '{"path": "pkg/a.py"}'), events.append)
    second = await registry.execute(ToolCall("2", "read_file", '{"path": "pkg/a.py"}'), events.append)

    head, _, tail = first.content.partition("</tool_result>")
    assert "Instructions from" not in head
    assert tail.strip().startswith('<instructions source="pkg/AGENTS.md">')
    assert "Instructions from" not in second.content
    assert [e.sources for e in events if isinstance(e, InstructionsLoaded)] == [("pkg/AGENTS.md",)]
    assert attacher.touched == [("pkg/a.py", False), ("pkg/a.py", False)]


async def test_listing_a_folder_touches_it_as_a_directory_and_errors_touch_nothing() -> None:
    attacher = Attacher()
    registry = _registry(attacher)
    await registry.execute(ToolCall("1", "list_files", '{"path": "pkg"}'), lambda e: None)
    await registry.execute(ToolCall("2", "read_file", '{"path": "missing.py"}'), lambda e: None)
    await registry.execute(ToolCall("3", "bash", '{"command": "ls pkg"}'), lambda e: None)
    assert attacher.touched == [("pkg", True)]


async def test_a_result_without_instructions_is_only_the_data_element() -> None:
    registry = _registry(Attacher())
    result = await registry.execute(ToolCall("1", "read_file", '{"path": "top.py"}'), lambda e: None)
    assert result.content.startswith("<tool_result") and result.content.endswith("</tool_result>")


async def test_a_skill_body_is_trusted_text_after_the_note_and_is_always_allowed() -> None:
    registry = _registry(None, [SKILL])
    events: list[Any] = []
    result = await registry.execute(ToolCall("1", "skill", '{"name": "code-review"}'), events.append)
    assert result.content == (
        wrap_tool_result("skill", "Loaded.", False)
        + '\n\n<instructions source="skill:code-review">\nbody of code-review\n</instructions>'
    )
    verdicts = [e for e in events if isinstance(e, VerdictGiven)]
    assert [(v.verdict, v.rule) for v in verdicts] == [("allow", SKILL_RULE)]
    assert [e.what for e in events if isinstance(e, InstructionsLoaded)] == ["skill"]


def test_extra_tools_come_after_the_base_ones_and_can_be_replaced() -> None:
    registry = _registry(None)
    base = [s.name for s in registry.specs()]
    registry.set_extra_tools([SKILL])
    assert [s.name for s in registry.specs()] == [*base, "skill"]
    registry.set_extra_tools([])
    assert [s.name for s in registry.specs()] == base
