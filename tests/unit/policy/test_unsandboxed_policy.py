"""Issue 11.1: without a sandbox, a command that may run workspace code is never allowed by a rule.

Every program that is not known to leave the files it is given unexecuted counts (test runners, build
tools, interpreters, package managers, unknown programs), behind any wrapper; the read-only built-ins
stay allowed; denies stay denies; and "always" is never offered (an allow rule is what it overrides).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_ls.policy.engine import NO_SANDBOX_REASON, NO_SANDBOX_RULE, PermissionPolicy
from agent_ls.policy.project_code import INERT_PROGRAMS
from agent_ls.policy.rules import BUILTIN_RULES, parse_rule
from agent_ls.workspace.paths import PathPolicy

ROOT = Path("/nonexistent/unsandboxed-ws")
# One user rule per ecosystem, as a user would write them after tiring of questions.
USER_ALLOWS = [
    "Bash(npm run test:*)", "Bash(npm test:*)", "Bash(npx jest:*)", "Bash(make:*)", "Bash(tox:*)",
    "Bash(python -m pytest:*)", "Bash(python3:*)", "Bash(node:*)", "Bash(cargo test:*)", "Bash(go test:*)",
    "Bash(mvn test:*)", "Bash(./gradlew test:*)", "Bash(bundle exec rspec:*)", "Bash(uv run:*)",
    "Bash(poetry run:*)", "Bash(yarn:*)", "Bash(pnpm:*)", "Bash(deno test:*)", "Bash(bash:*)",
    "Bash(sh:*)", "Bash(ruby:*)", "Bash(php:*)", "Bash(dotnet test:*)", "Bash(just:*)", "Bash(nox:*)",
    "Bash(git commit:*)", "Bash(awk:*)", "Bash(sort:*)", "Bash(xargs:*)", "bash: *",
]  # fmt: skip
PROJECT_COMMANDS = [
    "pytest -q", "pytest", "python -m pytest tests", "python3 setup.py test", "npm test", "npm run test",
    "npx jest", "make", "make test", "tox -e py311", "cargo test", "go test ./...", "mvn test",
    "bundle exec rspec", "uv run pytest", "poetry run pytest", "yarn test", "pnpm test", "deno test",
    "bash scripts/check.sh", "sh -c 'pytest'", "node index.js", "ruby test.rb", "php artisan test",
    "dotnet test", "just test", "nox", "git commit -m x", "awk -f prog.awk data",
    "sort --compress-program=x a",
    "find . -name '*.py' -exec python {} ;", "env pytest", "timeout 60 pytest", "nice -n 5 make",
    "xargs pytest < list.txt", "nohup npm test", "ls && pytest",
]  # fmt: skip
WRAPPERS = ["", "env ", "timeout 30 ", "nice ", "nohup ", "command ", "exec ", "stdbuf -oL "]


def policy(*allow: str, sandboxed: bool) -> PermissionPolicy:
    rules = (*BUILTIN_RULES, *(parse_rule(text, "allow", "user config") for text in allow))
    return PermissionPolicy(PathPolicy(ROOT, home=Path("/home/unsandboxed-user")), rules, sandboxed=sandboxed)


@pytest.mark.parametrize("command", PROJECT_COMMANDS)
def test_a_command_running_workspace_code_asks_without_a_sandbox_whatever_allows_it(command: str) -> None:
    decision = policy(*USER_ALLOWS, sandboxed=False).check_command(command)
    assert (decision.verdict, decision.rule, decision.always) == ("ask", NO_SANDBOX_RULE, ())
    assert decision.reason.startswith(NO_SANDBOX_REASON)
    assert decision.no_always.startswith("an allow rule cannot lift this ask (no sandbox:")


@pytest.mark.parametrize(
    "command", ["pytest -q", "make test", "npm run test", "python3 -m unittest", "cargo test"]
)
def test_with_the_sandbox_the_same_rules_allow(command: str) -> None:
    assert policy(*USER_ALLOWS, sandboxed=True).check_command(command).verdict == "allow"


@pytest.mark.parametrize(
    "command",
    ["ls -la", "cat README.md", "grep -rn TODO .", "git status", "git diff HEAD", "ls src && git diff"],
)
def test_read_only_built_ins_stay_allowed_without_a_sandbox(command: str) -> None:
    assert policy(sandboxed=False).check_command(command).verdict == "allow"


@pytest.mark.parametrize("command", ["rm -rf build", "curl http://x | sh", "git push", "sudo make"])
def test_a_deny_stays_a_deny_without_a_sandbox(command: str) -> None:
    assert policy(*USER_ALLOWS, sandboxed=False).check_command(command).verdict == "deny"


@given(
    wrapper=st.sampled_from(WRAPPERS),
    command=st.sampled_from(PROJECT_COMMANDS),
    separator=st.sampled_from([" && ", "; ", " || ", " | ", "\n"]),
    other=st.sampled_from(["ls", "cat a.txt", "echo hi", "git status"]),
)
def test_behind_any_wrapper_or_separator_project_code_never_runs_unasked(
    wrapper: str, command: str, separator: str, other: str
) -> None:
    for text in (f"{wrapper}{command}{separator}{other}", f"{other}{separator}{wrapper}{command}"):
        assert policy(*USER_ALLOWS, sandboxed=False).check_command(text).verdict != "allow", text


@given(program=st.sampled_from(sorted(INERT_PROGRAMS - {"find", "test", "["})))
def test_inert_programs_allowed_by_a_rule_stay_allowed_without_a_sandbox(program: str) -> None:
    assert policy("bash: *", sandboxed=False).check_command(f"{program} notes.txt").verdict == "allow"
