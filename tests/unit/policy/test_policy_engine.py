"""The permission policy: the seed's examples, strictest part wins, rule labels, session approvals."""

from __future__ import annotations

import pytest

from agent_ls.core.events import Verdict
from agent_ls.policy.engine import SESSION_RULE, PermissionPolicy, normalize_command
from agent_ls.policy.rules import DEFAULT_BASH_RULES, FALLBACK_RULE, Decision, Rule


def test_seed_examples() -> None:
    policy = PermissionPolicy()
    assert policy.check_command("grep foo | rm -rf /") == Decision(
        "deny", "bash: rm *", ("grep foo", "rm -rf /"), "grep foo | rm -rf /", '"rm -rf /" matches bash: rm *'
    )
    assert policy.check_command("ls && mkdir test") == Decision(
        "ask", FALLBACK_RULE, ("ls", "mkdir test"), "ls && mkdir test", 'no rule matches "mkdir test"'
    )
    assert policy.check_command("cat file.py | grep TODO") == Decision(
        "allow",
        "bash: cat *",
        ("cat file.py", "grep TODO"),
        "cat file.py | grep TODO",
        '"cat file.py" matches bash: cat *',
    )


@pytest.mark.parametrize(
    ("command", "verdict", "rule"),
    [
        ("ls", "allow", "bash: ls*"),
        ("ls -la src", "allow", "bash: ls*"),
        ("git status --short", "allow", "bash: git status*"),
        ("git diff HEAD~1", "allow", "bash: git diff*"),
        ("pytest -x tests/", "allow", "bash: pytest*"),
        ("cat", "allow", "bash: cat *"),
        ("rm", "deny", "bash: rm *"),
        ("rm -rf build", "deny", "bash: rm *"),
        ("sudo", "deny", "bash: sudo *"),
        ("sudo -u nobody ls", "deny", "bash: sudo *"),
        ("curl https://example.com", "deny", "bash: curl *"),
        ("wget", "deny", "bash: wget *"),
        ("git push", "deny", "bash: git push*"),
        ("git push --force", "deny", "bash: git push*"),
        ("rmdir x", "ask", FALLBACK_RULE),
        ("python script.py", "ask", FALLBACK_RULE),
        ("ls 'a;rm -rf b'", "allow", "bash: ls*"),
        ("echo $(rm -rf x)", "deny", "bash: rm *"),
        ("ls `rm -rf build`", "deny", "bash: rm *"),
        ('echo "`curl x`"', "deny", "bash: curl *"),
        ("cat <(wget x)", "deny", "bash: wget *"),
        ("ls $(ls)", "allow", "bash: ls*"),
        ('ls "a', "ask", "fallback: unbalanced double quote"),
        ("cat 'x", "ask", "fallback: unbalanced single quote"),
        ('rm -rf x "oops', "deny", "bash: rm *"),
        ("", "ask", "fallback: empty command"),
        ("   \n", "ask", "fallback: empty command"),
    ],
)
def test_verdicts_and_rule_labels(command: str, verdict: Verdict, rule: str) -> None:
    decision = PermissionPolicy().check_command(command)
    assert (decision.verdict, decision.rule) == (verdict, rule)


def test_deny_beats_ask_beats_allow_and_the_first_strictest_part_decides() -> None:
    decision = PermissionPolicy().check_command("ls; make; curl x; rm y")
    assert (decision.verdict, decision.rule, decision.reason) == (
        "deny",
        "bash: curl *",
        '"curl x" matches bash: curl *',
    )


def test_among_matching_rules_the_strictest_wins_whatever_the_order() -> None:
    rules = [Rule("bash", "git *", "deny"), Rule("bash", "git st*", "allow"), Rule("bash", "git *", "ask")]
    assert PermissionPolicy(rules).check_command("git status").rule == "bash: git *"
    assert PermissionPolicy(rules).check_command("git status").verdict == "deny"


def test_default_rules_are_the_seed_policy() -> None:
    assert [(r.pattern, r.verdict) for r in DEFAULT_BASH_RULES] == [
        ("ls*", "allow"),
        ("cat *", "allow"),
        ("grep *", "allow"),
        ("git status*", "allow"),
        ("git diff*", "allow"),
        ("pytest*", "allow"),
        ("rm *", "deny"),
        ("sudo *", "deny"),
        ("curl *", "deny"),
        ("wget *", "deny"),
        ("git push*", "deny"),
    ]


def test_session_approval_turns_the_same_command_into_allow() -> None:
    policy = PermissionPolicy()
    policy.allow_for_session("make  lint\n")
    assert policy.check_command("make lint") == Decision(
        "allow", SESSION_RULE, ("make lint",), "make lint", "allowed earlier for this session"
    )
    assert policy.check_command("make test").verdict == "ask"
    assert PermissionPolicy().check_command("make lint").verdict == "ask"


def test_session_approval_never_lifts_a_deny() -> None:
    policy = PermissionPolicy()
    policy.allow_for_session("rm -rf build")
    assert policy.check_command("rm -rf build").verdict == "deny"


def test_normalize_collapses_whitespace() -> None:
    assert normalize_command("  make \t lint\n") == "make lint"


def test_paths_inside_the_workspace_are_allowed_with_a_rule_label() -> None:
    policy = PermissionPolicy()
    assert policy.check_path("src/app.py", write=False) == Decision(
        "allow", "read: workspace", ("src/app.py",), "src/app.py", "inside the workspace"
    )
    assert policy.check_path("src/app.py", write=True).rule == "edit: workspace (proposal)"


def test_edits_inside_dot_git_are_denied_but_reads_are_allowed() -> None:
    policy = PermissionPolicy()
    assert policy.check_path(".git/hooks/pre-commit", write=True).verdict == "deny"
    assert policy.check_path(".GIT/config", write=True).rule == "edit: .git/** (never)"
    assert policy.check_path(".git/HEAD", write=False).verdict == "allow"
    assert policy.check_path(".github/workflows/ci.yml", write=True).verdict == "allow"
