"""Acceptance checks (the "definition of done", issue 17): what a check's outcome is, and what the model
and the user read about it.

A task may carry commands (``pytest tests/test_price.py``) that decide whether it is done. The harness,
not the model, runs them when the model answers without a tool call (``core.loop``), in the shadow copy
with the proposal applied and under the permission policy (``tools.acceptance``). Then:

1. every check passed (or none could run): the run is ``done``; the ones that could not run are
   reported as not verified, each with why;
2. a check failed and feedback rounds are left (``CHECK_FEEDBACK_ROUNDS``): the failures go back to the
   model as a user message (``feedback_message``) and the run goes on, within its turns and budgets;
3. a check still fails after that: the run is ``stopped`` with ``claims_done_reason``; the model's word
   does not end the task.

The seeds' chapter "Formuler une tâche" gives the shape: goal, context, constraints, definition of done,
and a final list of what could not be verified.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_ls.core.context import wrap_tool_result

CHECK_FEEDBACK_ROUNDS = 1
"""How many times failing checks go back to the model before a claim of done with a check still failing
stops the run (``claims done, checks fail``)."""

TAIL_LINES = 20
TAIL_BYTES = 2048
"""A check's output tail: its last ``TAIL_LINES`` lines, at most ``TAIL_BYTES`` bytes of UTF-8."""

CLAIMS_DONE = "claims done, checks fail"
"""The start of the reason of a run stopped because the model said it was done while a check failed."""

FEEDBACK_HEADING = "The acceptance checks failed, so the task is not done yet:"
"""The first line of ``feedback_message``: the harness wrote it, not the user (a compaction does not keep
it among the user's messages)."""

CHECK_TOOL_NAME = "acceptance_check"
"""The name a check's output is wrapped under in the feedback message (it is data, like a tool result)."""


@dataclass(frozen=True)
class CheckResult:
    """One acceptance check's outcome.

    Attributes:
        command: the shell command, as given.
        passed: it ran and exited 0.
        exit_code: its exit code; None when it was stopped (a timeout) or could not run.
        output_tail: the end of its combined stdout and stderr (``output_tail``), secrets redacted; for
            a check that could not run, why.
        not_run: why it could not run (denied by the policy or the user, nobody to ask); "" when it ran.
    """

    command: str
    passed: bool
    exit_code: int | None
    output_tail: str
    not_run: str = ""

    @property
    def failed(self) -> bool:
        """It ran and did not pass (a non-zero exit or a timeout)."""
        return not self.passed and not self.not_run


def output_tail(output: str, *, max_lines: int = TAIL_LINES, max_bytes: int = TAIL_BYTES) -> str:
    """The last ``max_lines`` lines of ``output``, cut to its last ``max_bytes`` bytes of UTF-8 (at a
    character boundary); trailing blank lines are dropped first."""
    lines = output.rstrip().splitlines()[-max_lines:]
    text = "\n".join(lines)
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[-max_bytes:].decode("utf-8", errors="ignore")


def checks_line(commands: Sequence[str]) -> str:
    """The lines the task message ends with: the checks the harness will run ("" for none)."""
    if not commands:
        return ""
    listed = "\n".join(f"- {' '.join(command.split())}" for command in commands)
    return (
        "Acceptance checks: when you answer, agent-ls runs these in your proposal; "
        f"the task is done only when they pass.\n{listed}"
    )


def feedback_message(failed: Sequence[CheckResult]) -> str:
    """The user message that sends failing checks back to the model: each command, its exit code and its
    output tail (wrapped as data, ``core.context.wrap_tool_result``)."""
    parts = [FEEDBACK_HEADING]
    for result in failed:
        parts.append(f"- {' '.join(result.command.split())}: {_code(result)}")
        parts.append(wrap_tool_result(CHECK_TOOL_NAME, result.output_tail or "(no output)", True))
    parts.append("Fix the cause, then answer again; the checks run again then.")
    return "\n".join(parts)


def claims_done_reason(failed: Sequence[CheckResult]) -> str:
    """``claims done, checks fail: pytest -q (exit code 1); ruff check (timed out)``."""
    named = "; ".join(f"{' '.join(r.command.split())} ({_code(r)})" for r in failed)
    return f"{CLAIMS_DONE}: {named}"


def _code(result: CheckResult) -> str:
    return "timed out" if result.exit_code is None else f"exit code {result.exit_code}"


def not_verified(results: Sequence[CheckResult]) -> tuple[str, ...]:
    """One line per check that could not run: ``rm -rf build: not run: denied by policy (…)``."""
    return tuple(f"{' '.join(r.command.split())}: not run: {r.not_run}" for r in results if r.not_run)


def check_line(result: CheckResult) -> str:
    """``✓ pytest -q (exit code 0)``, ``✗ ruff check (timed out)``, ``– rm -rf build (not run)`` (why is in
    ``not_verified``); the command as given (callers escape it for a terminal)."""
    command = " ".join(result.command.split())
    if result.not_run:
        return f"– {command} (not run)"
    return f"{'✓' if result.passed else '✗'} {command} ({_code(result)})"


def report_text(results: Sequence[CheckResult], unverified: Sequence[str]) -> str:
    """What ``agent-ls run`` prints next to the proposal ("" when the run had no checks): each check with
    ``check_line``, a failure's output tail indented under it, then ``Not verified:`` with a line per check
    not run, or ``Not verified: nothing (every check ran)``."""
    if not results and not unverified:
        return ""
    lines = ["Acceptance checks:"] if results else []
    for result in results:
        lines.append(f"  {check_line(result)}")
        if result.failed and result.output_tail:
            lines.extend(f"      {line}" for line in result.output_tail.splitlines())
    if unverified:
        lines.append("Not verified:")
        lines.extend(f"  - {line}" for line in unverified)
    else:
        lines.append("Not verified: nothing (every check ran)")
    return "\n".join(lines)
