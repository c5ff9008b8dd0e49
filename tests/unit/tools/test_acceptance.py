"""Acceptance checks (issue 17) over a registry wired to fakes: the bash call's permission path (allow, ask,
deny), the runner's result as a check result (exit code, timeout, redacted tail), and the skills' metadata."""

from __future__ import annotations

from agent_ls.core.checks import (
    CheckResult,
    claims_done_reason,
    feedback_message,
    not_verified,
    output_tail,
    report_text,
)
from agent_ls.core.events import ProposalChanged, VerdictGiven
from agent_ls.core.ports import Approval, CommandResult
from agent_ls.sessions.redaction import Redactor
from agent_ls.tools.acceptance import AcceptanceChecks, skill_checks
from tests.unit.tools.harness import make_harness

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"


async def test_each_check_goes_through_the_bash_permission_path_then_the_runner() -> None:
    harness = make_harness(
        replies=[Approval("deny", unasked="headless")],
        results=[
            CommandResult(exit_code=0, output="4 passed"),
            CommandResult(exit_code=None, output="collecting...", timed_out=True),
        ],
    )
    skill = ["make check", "rm -rf build", "pytest -x"]  # a skill's checks: an "ask" is asked
    checks = AcceptanceChecks(harness.registry, ["pytest -q"], lambda: skill)
    results = await checks.run(harness.events.append)

    assert results[0] == CheckResult("pytest -q", passed=True, exit_code=0, output_tail="4 passed")
    ask_refusal = (
        'denied: make check was not run (no rule matches "make check"); nobody could be asked (headless).'
    )
    assert results[1] == CheckResult("make check", False, None, ask_refusal, not_run=ask_refusal)
    assert results[2].not_run.startswith("Blocked by policy (bash: rm * (built-in)): rm -rf build.")
    assert results[3] == CheckResult("pytest -x", False, None, "collecting...\n(timed out)")
    assert [c for c, _ in harness.runner.calls] == ["pytest -q", "pytest -x"]  # refused ones never ran
    verdicts = [(e.call_id, e.verdict) for e in harness.events if isinstance(e, VerdictGiven)]
    assert verdicts == [
        ("agent-ls-check-1", "allow"),
        ("agent-ls-check-2", "deny"),
        ("agent-ls-check-3", "deny"),
        ("agent-ls-check-4", "allow"),
    ]
    assert [r.failed for r in results] == [False, False, False, True]
    assert not_verified(results) == (
        f"make check: not run: {ask_refusal}",
        f"rm -rf build: not run: {results[2].not_run}",
    )


async def test_an_allowed_ask_runs_and_the_tail_is_redacted() -> None:
    harness = make_harness(
        replies=["once"], results=[CommandResult(exit_code=2, output=f"token {KEY}\nFAILED")]
    )
    checks = AcceptanceChecks(harness.registry, [], lambda: ["make check"], redact=Redactor().text)
    (result,) = await checks.run(harness.events.append)
    assert result == CheckResult("make check", False, 2, "token [redacted]\nFAILED")
    assert not any(isinstance(e, ProposalChanged) for e in harness.events)


async def test_the_users_own_check_counts_as_approved_for_an_ask_never_for_a_deny() -> None:
    harness = make_harness(replies=[Approval("deny", unasked="headless")], results=[CommandResult(0, "ok")])
    given = ["make check", "rm -rf build"]
    checks = AcceptanceChecks(harness.registry, given, lambda: ["make lint", "make check"])
    results = await checks.run(harness.events.append)
    assert [c for c, _ in harness.runner.calls] == ["make check"]  # nobody asked for the user's own
    assert results[1].not_run.startswith("Blocked by policy (bash: rm * (built-in))")
    assert "nobody could be asked" in results[2].not_run  # the skill's check went through the ask
    (request,) = harness.approver.requests
    assert (request.subject, request.purpose) == ("make lint", "acceptance check")
    verdicts = [(e.verdict, e.rule) for e in harness.events if isinstance(e, VerdictGiven)]
    assert verdicts[0] == ("allow", "check: the user's own acceptance check")


def test_skill_checks_and_the_commands_without_repeats() -> None:
    metadata = {"checks": "pytest -q\n\n  ruff check .  \n", "version": "1"}
    assert skill_checks(metadata) == ["pytest -q", "ruff check ."]
    assert skill_checks({}) == []
    harness = make_harness()
    checks = AcceptanceChecks(harness.registry, ["pytest -q", " "], lambda: skill_checks(metadata))
    assert checks.commands() == ("pytest -q", "ruff check .")


def test_output_tail_keeps_the_last_lines_and_bytes() -> None:
    text = "".join(f"line {n}\n" for n in range(1, 101)) + "\n\n"
    assert output_tail(text) == "\n".join(f"line {n}" for n in range(81, 101))
    wide = "é" * 3000  # 6,000 bytes on one line
    tail = output_tail(wide)
    assert tail == "é" * 1024 and len(tail.encode()) == 2048


def test_the_texts_the_model_and_the_user_read() -> None:
    failed = CheckResult("pytest  -q", False, 1, "1 failed")
    stopped = CheckResult("ruff check", False, None, "(timed out)")
    denied = CheckResult("rm -rf build", False, None, "Blocked", not_run="Blocked")
    assert claims_done_reason([failed, stopped]) == (
        "claims done, checks fail: pytest -q (exit code 1); ruff check (timed out)"
    )
    assert feedback_message([failed]) == (
        "The acceptance checks failed, so the task is not done yet:\n"
        "- pytest -q: exit code 1\n"
        '<tool_result tool="acceptance_check" trust="data" status="error">\n1 failed\n</tool_result>\n'
        "Fix the cause, then answer again; the checks run again then."
    )
    assert report_text([failed, denied], not_verified([failed, denied])) == (
        "Acceptance checks:\n"
        "  ✗ pytest -q (exit code 1)\n"
        "      1 failed\n"
        "  – rm -rf build (not run)\n"
        "Not verified:\n"
        "  - rm -rf build: not run: Blocked"
    )
    assert report_text([], ()) == ""


async def test_a_check_that_changes_files_changes_the_proposal_like_a_bash_call() -> None:
    changed = CommandResult(exit_code=0, output="reformatted", changed_paths=("a.py",))
    harness = make_harness(replies=["once"], results=[changed])
    (result,) = await AcceptanceChecks(harness.registry, ["ruff format ."]).run(harness.events.append)
    assert result.passed
    assert [e for e in harness.events if isinstance(e, ProposalChanged)] == [ProposalChanged(paths=())]
