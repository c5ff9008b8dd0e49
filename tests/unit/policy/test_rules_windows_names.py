"""File deny and ask rules match a path as Windows reads it too (issue 11.8): ``secrets./x`` cannot slip
past ``deny: read: secrets/**``, while allow rules still match only what is written."""

from __future__ import annotations

import pytest

from agent_ls.policy.rules import Rule, judge


@pytest.mark.parametrize(
    "subject",
    ["secrets/x", "secrets./x", "secrets /x", "secrets::$INDEX_ALLOCATION/x", "secrets\\x", "SECRETS./x"],
)
def test_deny_and_ask_rules_match_windows_spellings(subject: str) -> None:
    for verdict in ("deny", "ask"):
        rule = Rule("read", "/secrets/**", verdict, "user config")
        assert rule.matches(subject), (verdict, subject)
        assert judge("read", subject, [Rule("read", "**", "allow"), rule]).verdict == verdict


def test_allow_rules_match_only_what_is_written() -> None:
    rule = Rule("edit", "/docs/**", "allow", "user config")
    assert rule.matches("docs/a.md")
    assert not rule.matches("docs./a.md")
    assert not rule.matches("docs\\a.md")


def test_the_edit_rule_for_dot_git_catches_its_spellings() -> None:
    rule = Rule("edit", ".git", "deny")
    for subject in (".git/hooks/x", ".git./hooks/x", ".git::$INDEX_ALLOCATION/hooks/x", "GIT~1/hooks/x"):
        assert rule.matches(subject), subject
    assert not rule.matches(".github/workflows/ci.yml")
