"""Plan mode in the permission engine (issue 17): edits and writing commands are refused by the policy,
whatever the user's rules or approvals say; read-only commands and reads still run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.policy.engine import PLAN_RULE, PermissionPolicy
from agent_ls.policy.rules import BUILTIN_RULES, parse_rule
from agent_ls.workspace.paths import PathPolicy


def plan_policy(root: Path, *allow: str) -> PermissionPolicy:
    """The built-in rules plus the user's allow rules ``allow``, in plan mode."""
    rules = [parse_rule(text, "allow", "user config") for text in allow]
    policy = PermissionPolicy(PathPolicy(root, home=root.parent / "home"), (*BUILTIN_RULES, *rules))
    policy.plan_mode = True
    return policy


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hi')\n")
    return ws


@pytest.mark.parametrize(
    "command",
    [
        "echo x > f",  # a redirect into a file
        "cat src/app.py > copy.py",  # an allowed command, a redirect into a file
        "ls >> listing.txt",
        "rm -rf src",
        "pytest -q",  # allowed by the built-in rules in a default run: runs code, writes files
        "touch new.py",
        "sed -i s/hi/ho/ src/app.py",
        "git diff --output=patch.diff",
        "make build",  # the user allows it below: plan mode still refuses it
        "ls && touch x",
    ],
)
def test_a_command_that_is_not_read_only_is_denied(root: Path, command: str) -> None:
    decision = plan_policy(root, "bash: make *", "bash: touch *").check_command(command)
    assert (decision.verdict, decision.rule) == ("deny", PLAN_RULE)
    assert decision.reason.startswith("plan mode: edits are refused until the plan is approved")


@pytest.mark.parametrize(
    "command", ["ls -la", "cat src/app.py", "grep -rn hi src", "git status", "git diff", "ls | grep app"]
)
def test_read_only_commands_run(root: Path, command: str) -> None:
    assert plan_policy(root).check_command(command).verdict == "allow"


def test_an_edit_is_denied_even_when_the_user_allows_edits(root: Path) -> None:
    policy = plan_policy(root, "edit: src/**")
    decision = policy.check_path("src/app.py", write=True)
    assert (decision.verdict, decision.rule) == ("deny", PLAN_RULE)
    assert policy.check_path("src/app.py", write=False).verdict == "allow"


def test_an_approval_for_the_session_does_not_lift_the_refusal(root: Path) -> None:
    policy = plan_policy(root)
    policy.plan_mode = False
    asked = policy.check_command("echo x > f")
    assert asked.verdict == "ask"
    policy.allow_for_session(asked)
    assert policy.check_command("echo x > f").verdict == "allow"
    policy.plan_mode = True
    assert policy.check_command("echo x > f").verdict == "deny"


def test_mcp_tools_are_denied(root: Path) -> None:
    policy = plan_policy(root, "mcp__git")
    assert policy.check_tool("mcp__git__commit").verdict == "deny"


def test_leaving_plan_mode_restores_the_verdicts(root: Path) -> None:
    policy = plan_policy(root)
    policy.plan_mode = False
    assert policy.check_command("pytest -q").verdict == "allow"
    assert policy.check_path("src/app.py", write=True).verdict == "allow"


def test_a_refused_read_only_looking_command_keeps_the_policys_own_reason(root: Path) -> None:
    absolute = plan_policy(root).check_command(f"ls {root}")
    assert (absolute.verdict, absolute.rule) == ("deny", PLAN_RULE)
    assert "only read-only commands run" in absolute.reason
    assert "an absolute path into the real workspace" in absolute.reason
