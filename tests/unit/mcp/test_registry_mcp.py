"""An MCP tool in the tool registry: its arguments are checked against the server's ``inputSchema`` before
the permission question, the question shows the arguments, the ``mcp__`` rules decide, and an "Allow for
this session" holds for one definition of the tool. Tools are built directly (no server): their ``run``
records the arguments the server would have been sent."""

from __future__ import annotations

from typing import Any

from agent_ls.core.events import Verdict, VerdictGiven
from agent_ls.mcp_client.tools import AnyArguments, _checker
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.policy.rules import BUILTIN_RULES, parse_rule
from agent_ls.tools.base import ExternalTool, Tool, ToolContext, ToolOutput
from agent_ls.workspace.paths import PathPolicy
from tests.unit.tools.fakes import ROOT
from tests.unit.tools.harness import make_harness

NAME = "mcp__time__get_current_time"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"timezone": {"type": "string", "description": "IANA name"}},
    "required": ["timezone"],
}


def mcp_tool(
    sent: list[dict[str, Any]],
    *,
    definition: str = "def-1",
    read_only: bool | None = True,
    destructive: bool | None = False,
) -> Tool[AnyArguments]:
    async def run(args: AnyArguments, ctx: ToolContext) -> ToolOutput:
        sent.append(dict(args.model_extra or {}))
        return ToolOutput('{"datetime": "2026-12-01T07:00:00+00:00"}')

    return Tool(
        name=NAME,
        description="Get the current time in a time zone",
        args=AnyArguments,
        run=run,
        mutates=False,
        permission="mcp",
        own_timeout=True,
        schema=SCHEMA,
        external=ExternalTool(
            rule_name=NAME,
            definition=definition,
            read_only=read_only,
            destructive=destructive,
            check=_checker(SCHEMA),
        ),
    )


def rules_policy(*rules: tuple[Verdict, str]) -> PermissionPolicy:
    """The built-in rules plus ``rules`` ((verdict, text) from the user config)."""
    parsed = [parse_rule(text, verdict, "user config") for verdict, text in rules]
    return PermissionPolicy(PathPolicy(ROOT), (*BUILTIN_RULES, *parsed), write_rules=lambda _: None)


async def test_arguments_that_do_not_match_the_schema_are_refused_before_any_question() -> None:
    sent: list[dict[str, Any]] = []
    harness = make_harness(tools=[mcp_tool(sent)], replies=["once"])
    result = await harness.call(NAME, {"timezone": 3})
    assert result.is_error
    assert result.content == (
        f"Error: invalid arguments for {NAME}: timezone: 3 is not of type 'string'\n"
        f"Expected: {NAME}(timezone: string). Fix these fields and call {NAME} again."
    )
    missing = await harness.call(NAME, {}, call_id="c2")
    assert missing.content.startswith(
        f"Error: invalid arguments for {NAME}: (arguments): 'timezone' is a required"
    )
    assert harness.approver.requests == [] and sent == []
    assert not [e for e in harness.events if isinstance(e, VerdictGiven)]


async def test_the_question_shows_the_arguments_and_the_hint_and_the_call_runs_once_allowed() -> None:
    sent: list[dict[str, Any]] = []
    harness = make_harness(tools=[mcp_tool(sent)], replies=["once"], policy=rules_policy())
    result = await harness.call(NAME, {"timezone": "Europe/Paris"})
    assert (result.is_error, result.content) == (False, '{"datetime": "2026-12-01T07:00:00+00:00"}')
    assert sent == [{"timezone": "Europe/Paris"}]
    [request] = harness.approver.requests
    assert (request.tool_name, request.subject) == (NAME, f'{NAME} {{"timezone":"Europe/Paris"}}')
    assert request.reason == f"no rule matches {NAME}; the server says it only reads (a hint, not checked)"
    assert request.always == (NAME,)


async def test_long_arguments_are_cut_in_the_question() -> None:
    sent: list[dict[str, Any]] = []
    harness = make_harness(tools=[mcp_tool(sent)], replies=["once"])
    await harness.call(NAME, {"timezone": "x" * 2000})
    [request] = harness.approver.requests
    shown = request.subject.removeprefix(f"{NAME} ")
    assert len(shown) == 500 and shown.endswith("…")
    assert sent == [{"timezone": "x" * 2000}]  # the server still gets the whole arguments


async def test_a_deny_rule_blocks_the_call_with_the_rule_named() -> None:
    sent: list[dict[str, Any]] = []
    harness = make_harness(tools=[mcp_tool(sent)], policy=rules_policy(("deny", "mcp__time")))
    result = await harness.call(NAME, {"timezone": "UTC"})
    assert result.is_error
    assert result.content.startswith(
        f'Blocked by policy (mcp__time (user config)): {NAME} {{"timezone":"UTC"}}. '
    )
    assert harness.approver.requests == [] and sent == []


async def test_an_allow_rule_runs_it_without_a_question() -> None:
    sent: list[dict[str, Any]] = []
    harness = make_harness(tools=[mcp_tool(sent)], policy=rules_policy(("allow", "mcp__time")))
    assert not (await harness.call(NAME, {"timezone": "UTC"})).is_error
    assert harness.approver.requests == [] and sent == [{"timezone": "UTC"}]
    [verdict] = [e for e in harness.events if isinstance(e, VerdictGiven)]
    assert (verdict.verdict, verdict.rule) == ("allow", "mcp__time (user config)")


async def test_a_destructive_tool_is_not_offered_always() -> None:
    harness = make_harness(
        tools=[mcp_tool([], read_only=None, destructive=True)], replies=["once"], policy=rules_policy()
    )
    await harness.call(NAME, {"timezone": "UTC"})
    [request] = harness.approver.requests
    assert request.always == ()
    assert (
        request.no_always
        == "the server marks this tool destructive: write an allow rule yourself if you mean it"
    )


async def test_a_session_approval_does_not_carry_over_to_a_changed_definition() -> None:
    """A listChanged that changes a tool's definition gives the session a new ``Tool``: asked again."""
    policy = rules_policy()
    sent: list[dict[str, Any]] = []
    before = make_harness(tools=[mcp_tool(sent, definition="def-1")], replies=["session"], policy=policy)
    await before.call(NAME, {"timezone": "UTC"})
    await before.call(NAME, {"timezone": "UTC"}, call_id="c2")
    assert len(before.approver.requests) == 1 and len(sent) == 2  # the second call was not asked

    after = make_harness(tools=[mcp_tool(sent, definition="def-2")], replies=["deny"], policy=policy)
    result = await after.call(NAME, {"timezone": "UTC"})
    assert len(after.approver.requests) == 1  # asked again
    assert result.is_error and result.content.startswith(f"denied by user: {NAME} ")
    assert len(sent) == 2


def test_a_schema_that_is_not_json_schema_leaves_the_arguments_to_the_server() -> None:
    assert _checker({"type": "object", "properties": {"x": {"type": 12}}}) is None
    check = _checker(SCHEMA)
    assert check is not None and check({"timezone": "UTC"}) is None
