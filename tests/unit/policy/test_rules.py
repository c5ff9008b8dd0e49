"""Rules: both written forms, matching, precedence (deny > ask > allow whatever the order), the defaults."""

from __future__ import annotations

import itertools

import pytest

from agent_ls.core.events import Verdict
from agent_ls.policy.rules import (
    BUILTIN_RULES,
    DEFAULT_BASH_RULES,
    FALLBACK_RULE,
    Judgement,
    Rule,
    RuleSyntaxError,
    exact_bash_pattern,
    exact_path_pattern,
    judge,
    parse_rule,
    parse_rules,
    strictest,
)


@pytest.mark.parametrize(
    ("text", "key", "pattern"),
    [
        ("bash: git status*", "bash", "git status*"),
        ("bash:make *", "bash", "make *"),
        ("  Bash: ls  ", "bash", "ls"),
        ("read: docs/**", "read", "docs/**"),
        ("edit: src/**", "edit", "src/**"),
        ("write: build/", "edit", "build/"),
        ("Bash(npm run test:*)", "bash", "npm run test *"),
        ("Bash(git diff)", "bash", "git diff"),
        ("Bash(npm * --save)", "bash", "npm * --save"),
        ("Bash", "bash", "*"),
        ("Read(./.env)", "read", "/.env"),
        ("Read(docs/**)", "read", "docs/**"),
        ("Read", "read", "**"),
        ("Edit(src/**)", "edit", "src/**"),
        ("Write(*.md)", "edit", "*.md"),
        ("MultiEdit(/build)", "edit", "/build"),
        ("mcp__github__create_issue", "mcp__github__create_issue", "*"),
        ("mcp__github", "mcp__github", "*"),
    ],
)
def test_both_written_forms(text: str, key: str, pattern: str) -> None:
    assert parse_rule(text, "allow", "user config") == Rule(key, pattern, "allow", "user config")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("make *", "is not a rule"),
        ("WebFetch(domain:example.com)", "is not a rule"),
        ("Bash()", "empty pattern"),
        ("bash:", "empty pattern"),
        ("Read(~/.ssh/**)", "outside the workspace"),
        ("Read(//etc/passwd)", "outside the workspace"),
        ("read: !.env.example", "cannot negate"),
    ],
)
def test_bad_rules_say_how_to_write_them(text: str, message: str) -> None:
    with pytest.raises(RuleSyntaxError, match=message):
        parse_rule(text, "deny", "user config")


def test_parse_rules_reports_the_bad_strings_and_keeps_the_rest() -> None:
    rules, problems = parse_rules([("allow", ["bash: make *", "nonsense"]), ("deny", ["Bash(curl *)"])], "x")
    assert rules == [Rule("bash", "make *", "allow", "x"), Rule("bash", "curl *", "deny", "x")]
    assert len(problems) == 1 and "'nonsense' is not a rule" in problems[0]


def test_labels_carry_the_source() -> None:
    assert Rule("bash", "curl *", "deny", "workspace agent-ls.toml").label == (
        "bash: curl * (workspace agent-ls.toml)"
    )
    assert Rule("mcp__srv__tool", "*", "ask", "user config").label == "mcp__srv__tool (user config)"
    assert Rule("read", "docs/**", "allow").text == "read: docs/**"


@pytest.mark.parametrize(
    ("pattern", "subject", "matches"),
    [
        ("rm *", "rm", True),  # a bare command matches "cmd *"
        ("rm *", "rm -rf /", True),
        ("rm *", "rmdir x", False),
        ("ls*", "lsof", False),  # corpus sh86's hazard: an allow glob glued to a word takes it whole
        ("npm run test *", "npm run test", True),  # Bash(npm run test:*): a prefix on a word boundary
        ("npm run test *", "npm run test:unit", False),
        ("npm run test *", "npm run testx", False),
        ("git push*", "git push --force", True),
        ("cat *", "cat a/b/c", True),  # * spans "/" and spaces
    ],
)
def test_bash_globs(pattern: str, subject: str, matches: bool) -> None:
    assert Rule("bash", pattern, "allow").matches(subject) is matches


@pytest.mark.parametrize(
    ("pattern", "subject", "matches"),
    [
        ("/.env", ".env", True),  # Read(./.env): the root's only
        ("/.env", "sub/.env", False),
        (".env", "sub/.env", True),  # no slash: any directory
        ("docs/**", "docs/a/b.md", True),
        ("docs/**", "src/docs/a.md", False),  # a middle slash anchors
        ("*.key", "a/b/c.key", True),
        ("secrets/", "a/secrets/x", True),
        ("**", "anything/at/all", True),
        ("**", ".", True),
    ],
)
def test_file_patterns_are_gitignore_style(pattern: str, subject: str, matches: bool) -> None:
    assert Rule("read", pattern, "allow").matches(subject) is matches


def test_deny_and_ask_rules_also_match_case_folded_subjects_but_allow_rules_do_not() -> None:
    assert Rule("bash", "rm *", "deny").matches("RM -rf x")
    assert Rule("bash", "rm *", "ask").matches("Rm x")
    assert not Rule("bash", "rm *", "allow").matches("RM -rf x")
    assert Rule("edit", ".git", "deny").matches(".GIT/hooks/pre-commit")
    assert not Rule("edit", "docs/**", "allow").matches("DOCS/a.md")


def test_mcp_rules_match_a_tool_or_a_whole_server() -> None:
    assert Rule("mcp__github", "*", "deny").matches("mcp__github__create_issue")
    assert Rule("mcp__github__create_issue", "*", "deny").matches("mcp__github__create_issue")
    assert not Rule("mcp__github", "*", "deny").matches("mcp__githubby__x")
    assert not Rule("mcp__github__create", "*", "deny").matches("mcp__github__create_issue")


def test_exact_patterns_match_only_their_subject() -> None:
    command = "make [x] *?"
    rule = Rule("bash", exact_bash_pattern(command), "allow")
    assert rule.matches(command)
    assert not rule.matches("make x ab")
    assert not rule.matches(command + " more")
    path = "a/b[1]*.py"
    file_rule = Rule("edit", exact_path_pattern(path), "allow")
    assert file_rule.matches(path)
    assert not file_rule.matches("a/b1x.py")
    assert not file_rule.matches("c/" + path)


RULES = [
    Rule("bash", "git *", "allow", "user config"),
    Rule("bash", "git push*", "ask", "editor settings"),
    Rule("bash", "git push --force*", "deny", "workspace agent-ls.toml"),
    Rule("bash", "git status*", "allow", "built-in"),
]


@pytest.mark.parametrize("order", list(itertools.permutations(RULES)))
def test_deny_beats_ask_beats_allow_in_any_order(order: tuple[Rule, ...]) -> None:
    """Every permutation of the same rules gives the same verdicts (no "last match wins")."""
    verdicts = {
        command: judge("bash", command, order).verdict
        for command in ("git log", "git push origin", "git push --force", "git status", "make")
    }
    assert verdicts == {
        "git log": "allow",
        "git push origin": "ask",
        "git push --force": "deny",
        "git status": "allow",
        "make": "ask",
    }
    assert (
        judge("bash", "git push --force", order).rule == "bash: git push --force* (workspace agent-ls.toml)"
    )


def test_no_match_is_the_liftable_fallback_ask() -> None:
    assert judge("bash", "make", RULES) == Judgement("ask", FALLBACK_RULE, 'no rule matches "make"', True)
    assert judge("bash", "git push", RULES).liftable is False


def test_strictest_prefers_an_unliftable_ask() -> None:
    fallback = Judgement("ask", FALLBACK_RULE, "", liftable=True)
    rule = Judgement("ask", "bash: x (user config)", "")
    assert strictest([fallback, rule]) == rule
    assert strictest([Judgement("allow", "a", ""), fallback, Judgement("deny", "d", "")]).rule == "d"


def test_default_bash_rules_are_exactly_the_seed_policy() -> None:
    verdicts: dict[Verdict, list[str]] = {"allow": [], "deny": []}
    for rule in DEFAULT_BASH_RULES:
        verdicts[rule.verdict].append(rule.pattern)
    assert verdicts == {
        "allow": ["ls*", "cat *", "grep *", "git status*", "git diff*", "pytest*"],
        "deny": ["rm *", "sudo *", "curl *", "wget *", "git push*"],
    }
    assert {r.source for r in BUILTIN_RULES} == {"built-in"}


def test_default_file_rules_allow_the_workspace_but_never_edits_of_dot_git() -> None:
    assert judge("read", "src/app.py", BUILTIN_RULES).verdict == "allow"
    assert judge("edit", "src/app.py", BUILTIN_RULES).rule == "edit: ** (built-in)"
    assert judge("read", ".git/HEAD", BUILTIN_RULES).verdict == "allow"
    for path in (".git", ".git/hooks/pre-commit", ".GIT/config", "vendor/lib/.git/config"):
        assert judge("edit", path, BUILTIN_RULES).rule == "edit: .git (built-in)", path
    assert judge("edit", ".github/workflows/ci.yml", BUILTIN_RULES).verdict == "allow"
