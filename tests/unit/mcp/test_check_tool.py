"""MCP tool calls in the permission engine (``PermissionPolicy.check_tool``): the ``mcp__<server>`` and
``mcp__<server>__<tool>`` rules, ask by default, annotations that only word the question, plan mode, and
session approvals that hold for one definition of a tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.core.events import Verdict
from agent_ls.policy.engine import PLAN_RULE, SESSION_RULE, PermissionPolicy
from agent_ls.policy.rules import BUILTIN_RULES, FALLBACK_RULE, parse_rule
from agent_ls.workspace.paths import PathPolicy

TOOL = "mcp__time__get_current_time"


def policy(tmp_path: Path, *rules: tuple[Verdict, str], writable: bool = True) -> PermissionPolicy:
    """The built-in rules plus ``rules`` ((verdict, text) from the user config); "Always allow" writes
    into ``written`` when ``writable``."""
    parsed = [parse_rule(text, verdict, "user config") for verdict, text in rules]
    written: list[str] = []
    return PermissionPolicy(
        PathPolicy(tmp_path, home=tmp_path / "home"),
        (*BUILTIN_RULES, *parsed),
        write_rules=written.extend if writable else None,
    )


def test_no_rule_asks_and_offers_an_exact_always_rule(tmp_path: Path) -> None:
    decision = policy(tmp_path).check_tool(TOOL, definition="d1")
    assert (decision.verdict, decision.rule, decision.reason) == (
        "ask",
        FALLBACK_RULE,
        f"no rule matches {TOOL}",
    )
    assert [rule.text for rule in decision.always] == [TOOL]
    assert decision.no_always == ""


def test_a_read_only_hint_is_mentioned_and_allows_nothing(tmp_path: Path) -> None:
    decision = policy(tmp_path).check_tool(TOOL, read_only=True, destructive=False)
    assert decision.verdict == "ask"
    assert decision.reason == f"no rule matches {TOOL}; the server says it only reads (a hint, not checked)"


def test_a_destructive_tool_is_asked_with_a_warning_and_never_gets_always(tmp_path: Path) -> None:
    decision = policy(tmp_path).check_tool("mcp__git__git_reset", destructive=True)
    assert decision.verdict == "ask"
    assert decision.reason == "no rule matches mcp__git__git_reset; the server says it may destroy data"
    assert decision.always == ()
    assert decision.no_always == (
        "the server marks this tool destructive: write an allow rule yourself if you mean it"
    )


def test_a_users_allow_rule_still_allows_a_destructive_tool(tmp_path: Path) -> None:
    decision = policy(tmp_path, ("allow", "mcp__git__git_reset")).check_tool(
        "mcp__git__git_reset", destructive=True
    )
    assert (decision.verdict, decision.rule) == ("allow", "mcp__git__git_reset (user config)")


@pytest.mark.parametrize("rule", ["mcp__time", TOOL])
def test_a_server_or_tool_allow_rule_allows(tmp_path: Path, rule: str) -> None:
    decision = policy(tmp_path, ("allow", rule)).check_tool(TOOL)
    assert (decision.verdict, decision.rule) == ("allow", f"{rule} (user config)")


def test_a_server_rule_does_not_reach_another_server_with_a_longer_name(tmp_path: Path) -> None:
    allowing = policy(tmp_path, ("allow", "mcp__time"))
    assert allowing.check_tool("mcp__timer__start").verdict == "ask"
    assert allowing.check_tool("mcp__time_zone__get").verdict == "ask"


def test_deny_wins_over_allow_whatever_the_order(tmp_path: Path) -> None:
    decision = policy(tmp_path, ("allow", "mcp__time"), ("deny", TOOL)).check_tool(TOOL, read_only=True)
    assert (decision.verdict, decision.rule) == ("deny", f"{TOOL} (user config)")
    server_deny = policy(tmp_path, ("deny", "mcp__time"), ("allow", TOOL)).check_tool(TOOL)
    assert (server_deny.verdict, server_deny.rule) == ("deny", "mcp__time (user config)")


def test_claude_codes_written_form_is_read(tmp_path: Path) -> None:
    assert parse_rule("mcp__github__create_issue", "allow", "x").key == "mcp__github__create_issue"
    assert policy(tmp_path, ("ask", "mcp__time")).check_tool(TOOL).rule == "mcp__time (user config)"


def test_plan_mode_denies_every_mcp_tool_even_an_allowed_one(tmp_path: Path) -> None:
    planning = policy(tmp_path, ("allow", "mcp__time"))
    planning.plan_mode = True
    decision = planning.check_tool(TOOL, read_only=True)
    assert (decision.verdict, decision.rule) == ("deny", PLAN_RULE)
    assert decision.reason == f"{PLAN_RULE} (MCP tools may write)"


def test_a_session_approval_holds_for_the_same_definition_only(tmp_path: Path) -> None:
    session = policy(tmp_path)
    first = session.check_tool(TOOL, definition="def-1")
    session.allow_for_session(first)
    again = session.check_tool(TOOL, definition="def-1")
    assert (again.verdict, again.rule) == ("allow", SESSION_RULE)
    changed = session.check_tool(TOOL, definition="def-2")  # a listChanged changed its schema
    assert (changed.verdict, changed.rule) == ("ask", FALLBACK_RULE)
    other = session.check_tool("mcp__time__convert_time", definition="def-1")
    assert other.verdict == "ask"


def test_always_allow_writes_the_exact_tool_rule(tmp_path: Path) -> None:
    written: list[str] = []
    engine = PermissionPolicy(
        PathPolicy(tmp_path, home=tmp_path / "home"), BUILTIN_RULES, write_rules=written.extend
    )
    decision = engine.check_tool(TOOL, definition="d")
    assert engine.allow_always(decision) is None
    assert written == [TOOL]
    assert engine.check_tool(TOOL, definition="other").verdict == "allow"  # a rule, not a session key


def test_without_a_writable_user_config_there_is_no_always(tmp_path: Path) -> None:
    decision = policy(tmp_path, writable=False).check_tool(TOOL)
    assert decision.always == () and decision.no_always == "the user config cannot be written"


def test_a_tool_rule_names_one_tool_not_the_tools_its_name_starts(tmp_path: Path) -> None:
    """Tool names may hold ``__``: allowing ``create`` must not allow ``create__and_delete``."""
    allowing = policy(tmp_path, ("allow", "mcp__github__create"))
    assert allowing.check_tool("mcp__github__create").verdict == "allow"
    assert allowing.check_tool("mcp__github__create__and_delete").verdict == "ask"
    assert (
        policy(tmp_path, ("allow", "mcp__github")).check_tool("mcp__github__create__and_delete").verdict
        == "allow"
    )
