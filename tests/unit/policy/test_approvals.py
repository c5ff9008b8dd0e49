"""Approvals: once, session, always (written to the user config) and deny with feedback, end to end
through the registry; the terminal and LSP prompts' texts and answers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tomlkit.exceptions import ParseError

from agent_ls.assembly import build_policy
from agent_ls.config import load_config
from agent_ls.core.events import VerdictGiven
from agent_ls.core.ports import Approval, ApprovalRequest
from agent_ls.headless import parse_answer, terminal_prompt
from agent_ls.lsp.approver import prompt_text
from agent_ls.policy.approvals import append_allow_rules
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.policy.rules import BUILTIN_RULES, Rule
from agent_ls.settings import EnvSnapshot
from agent_ls.workspace.paths import PathPolicy
from tests.unit.tools.fakes import ROOT
from tests.unit.tools.harness import make_harness

COMMENTED = """\
# my agent-ls config
model = "openai/gpt-4.1"  # the default

[permissions]
# reviewed 2026-01
deny = ["Bash(curl *)"]
"""


def test_always_appends_to_the_users_file_and_keeps_its_comments(tmp_path: Path) -> None:
    user_file = tmp_path / "agent-ls.toml"
    user_file.write_text(COMMENTED)
    os.chmod(user_file, 0o640)
    append_allow_rules(user_file, ["bash: make lint"])
    append_allow_rules(user_file, ["bash: make lint", "bash: make test"])
    assert user_file.read_text() == COMMENTED.replace(
        'deny = ["Bash(curl *)"]\n',
        'deny = ["Bash(curl *)"]\nallow = ["bash: make lint", "bash: make test"]\n',
    )
    assert user_file.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["agent-ls.toml"]  # no temporary file left


def test_always_creates_the_file_and_its_directory(tmp_path: Path) -> None:
    user_file = tmp_path / "new" / "agent-ls.toml"
    append_allow_rules(user_file, ["read: /docs/a\\[1].md"])
    assert user_file.read_text() == '[permissions]\nallow = ["read: /docs/a\\\\[1].md"]\n'
    loaded = load_config(EnvSnapshot({"AGENT_LS_CONFIG_DIR": str(user_file.parent)}), None)
    assert loaded.permissions.rules == (Rule("read", "/docs/a\\[1].md", "allow", "user config"),)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("model = [", ParseError),
        ("permissions = 1\n", ValueError),
        ("[permissions]\nallow = 1\n", ValueError),
    ],
)
def test_a_file_that_cannot_take_the_rule_is_left_alone(tmp_path: Path, text: str, error: type) -> None:
    user_file = tmp_path / "agent-ls.toml"
    user_file.write_text(text)
    with pytest.raises(error):
        append_allow_rules(user_file, ["bash: make"])
    assert user_file.read_text() == text


def _policy(user_file: Path, *rules: Rule) -> PermissionPolicy:
    return PermissionPolicy(
        PathPolicy(ROOT), (*BUILTIN_RULES, *rules), write_rules=lambda r: append_allow_rules(user_file, r)
    )


async def test_always_through_the_registry_writes_the_rule_and_stops_asking(tmp_path: Path) -> None:
    user_file = tmp_path / "config" / "agent-ls.toml"
    h = make_harness(replies=["always"], policy=_policy(user_file))
    first = await h.call("bash", {"command": "make lint && make test"}, call_id="c1")
    second = await h.call("bash", {"command": "make test"}, call_id="c2")
    assert (first.is_error, second.is_error) == (False, False)
    assert h.approver.requests == [
        ApprovalRequest(
            "bash",
            "make lint && make test",
            'no rule matches "make lint"',
            rule="fallback: no rule matches",
            always=("bash: make lint", "bash: make test"),
        )
    ]
    assert [e for e in h.events if isinstance(e, VerdictGiven)] == [
        VerdictGiven("c1", "bash", "allow", "fallback: no rule matches", "make lint && make test", "always"),
        VerdictGiven("c2", "bash", "allow", "bash: make test (user config)", "make test"),
    ]
    assert user_file.read_text() == '[permissions]\nallow = ["bash: make lint", "bash: make test"]\n'
    config = load_config(EnvSnapshot({"AGENT_LS_CONFIG_DIR": str(user_file.parent)}), None)
    fresh = build_policy(tmp_path, config, sandboxed=True)
    assert fresh.check_command("make lint").verdict == "allow"


async def test_an_explicit_ask_rule_is_not_offered_always_and_the_prompt_says_why(tmp_path: Path) -> None:
    user_file = tmp_path / "agent-ls.toml"
    rule = Rule("bash", "make deploy*", "ask", "workspace agent-ls.toml")
    h = make_harness(replies=["always"], policy=_policy(user_file, rule))
    result = await h.call("bash", {"command": "make deploy"})
    (request,) = h.approver.requests
    assert (request.always, request.no_always) == (
        (),
        "an explicit rule asks (bash: make deploy* (workspace agent-ls.toml)), and 'always' never lifts an "
        "ask or deny rule",
    )
    # A stray "always" from an approver that broke its contract counts as once: nothing is written.
    assert not result.is_error and not user_file.exists()
    assert [e.approval for e in h.events if isinstance(e, VerdictGiven)] == ["once"]


async def test_a_session_approval_keeps_word_boundaries() -> None:
    """Finding 8: approving a quoted word for the session lifted the same text split into words."""
    h = make_harness(replies=["session", "deny", "session", "deny"])
    await h.call("bash", {"command": 'find . -name "*.tmp -delete"'}, call_id="f1")
    again = await h.call("bash", {"command": 'find . -name "*.tmp -delete"'}, call_id="f2")
    split = await h.call("bash", {"command": "find . -name *.tmp -delete"}, call_id="f3")
    await h.call("bash", {"command": 'echo "hi >notes.txt"'}, call_id="e1")
    redirect = await h.call("bash", {"command": "echo hi >notes.txt"}, call_id="e2")
    assert [r.subject for r in h.approver.requests] == [
        'find . -name "*.tmp -delete"',
        "find . -name *.tmp -delete",
        'echo "hi >notes.txt"',
        "echo hi >notes.txt",
    ]
    assert not again.is_error
    assert split.content == "denied by user: find . -name *.tmp -delete was not run."
    assert redirect.content == "denied by user: echo hi >notes.txt was not run."
    assert [command for command, _ in h.runner.calls] == ['find . -name "*.tmp -delete"'] * 2 + [
        'echo "hi >notes.txt"'
    ]


async def test_always_writes_a_rule_for_the_quoted_argv(tmp_path: Path) -> None:
    user_file = tmp_path / "agent-ls.toml"
    h = make_harness(replies=["always", "deny"], policy=_policy(user_file))
    await h.call("bash", {"command": 'find . -name "*.tmp -delete"'}, call_id="c1")
    split = await h.call("bash", {"command": "find . -name *.tmp -delete"}, call_id="c2")
    assert h.approver.requests[0].always == ("bash: find . -name '[*].tmp -delete'",)
    assert user_file.read_text() == """[permissions]\nallow = ["bash: find . -name '[*].tmp -delete'"]\n"""
    assert split.content == "denied by user: find . -name *.tmp -delete was not run."
    config = load_config(EnvSnapshot({"AGENT_LS_CONFIG_DIR": str(user_file.parent)}), None)
    fresh = build_policy(tmp_path, config, sandboxed=True)
    assert fresh.check_command("find . -name '*.tmp -delete'").verdict == "allow"
    assert fresh.check_command("find . -name *.tmp -delete").verdict == "ask"


async def test_deny_feedback_reaches_the_model() -> None:
    h = make_harness(
        replies=[Approval("deny", feedback="  use make test instead \n"), Approval("deny", "  ")]
    )
    said = await h.call("bash", {"command": "make lint"}, call_id="c1")
    blank = await h.call("bash", {"command": "make lint"}, call_id="c2")
    assert said.content == "denied by user: make lint was not run. The user said: use make test instead"
    assert blank.content == "denied by user: make lint was not run."
    assert h.runner.calls == []


async def test_session_approval_of_an_edit_is_per_path_and_kind() -> None:
    rule = Rule("edit", "docs/**", "ask", "user config")
    h = make_harness(
        replies=["session", "deny"], policy=PermissionPolicy(PathPolicy(ROOT), (*BUILTIN_RULES, rule))
    )
    await h.call("write_file", {"path": "docs/a.md", "content": "a\n"}, call_id="w1")
    await h.call("write_file", {"path": "docs/a.md", "content": "b\n"}, call_id="w2")
    denied = await h.call("write_file", {"path": "docs/b.md", "content": "c\n"}, call_id="w3")
    assert [r.subject for r in h.approver.requests] == ["docs/a.md", "docs/b.md"]
    assert denied.content == "denied by user: docs/b.md was not run."
    assert h.workspace.pending == {"docs/a.md": "b\n"}


REQUEST = ApprovalRequest("bash", "make lint", 'no rule matches "make lint"', always=("bash: make lint",))
EXPLICIT = ApprovalRequest(
    "bash", "git push -f", "asked", no_always="an explicit rule asks (bash: git push*)"
)


@pytest.mark.parametrize(
    ("answer", "request_", "approval"),
    [
        ("y", REQUEST, Approval("once")),
        ("yes", REQUEST, Approval("once")),
        ("o", REQUEST, Approval("once")),
        ("s", REQUEST, Approval("session")),
        ("a", REQUEST, Approval("always")),
        ("A", EXPLICIT, Approval("once")),  # always not offered: the user still meant to allow
        ("n", REQUEST, Approval("deny")),
        ("", REQUEST, Approval("deny")),
        ("n use make test instead", REQUEST, Approval("deny", "use make test instead")),
        ("no, not now", REQUEST, Approval("deny", "not now")),
        ("please run the linter first", REQUEST, None),  # not an answer: asked again (issue 12.16)
        ("maybe", REQUEST, None),
        ("?!", REQUEST, None),
    ],
)
def test_terminal_answers(answer: str, request_: ApprovalRequest, approval: Approval | None) -> None:
    assert parse_answer(answer, request_) == approval


def test_terminal_and_lsp_prompts_say_what_always_does_or_why_it_is_not_offered() -> None:
    assert terminal_prompt(REQUEST) == (
        "agent-ls wants to run bash: make lint\n"
        '  (no rule matches "make lint")\n'
        "  [a]lways adds to your user config: bash: make lint"
    )
    assert terminal_prompt(EXPLICIT).endswith("(no [a]lways: an explicit rule asks (bash: git push*))")
    assert prompt_text(REQUEST) == (
        'agent-ls wants to run bash: make lint\n(no rule matches "make lint")\n'
        '"Always allow" adds to your user config: bash: make lint'
    )
    assert prompt_text(EXPLICIT).endswith('No "Always allow": an explicit rule asks (bash: git push*).')


def test_the_question_for_an_acceptance_check_says_so() -> None:
    check = ApprovalRequest(
        "bash", "python3 app.py", 'no rule matches "python3 app.py"', purpose="acceptance check"
    )
    assert terminal_prompt(check).startswith(
        "agent-ls wants to run an acceptance check (bash): python3 app.py"
    )
    assert prompt_text(check).startswith("agent-ls wants to run an acceptance check (bash): python3 app.py")
