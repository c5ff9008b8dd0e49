"""A task's acceptance checks, run by the harness when the model says it is done (``core.checks``).

``AcceptanceChecks`` implements the core ``Verifier`` port. The checks are the run's own (``agent-ls run
--check``, ``agent.run {checks}``) followed by those of every skill activated in the session (a SKILL.md
``metadata`` entry ``checks``: one command per line, ``skill_checks``), without repeats. Each one, in order,
goes through ``ToolRegistry.run_command``: the permission policy judges it as a ``bash`` call; "ask" asks
the run's approver for a skill's check (it comes from the repository; nobody to ask is a deny) and is
allowed for the run's own (the user typed it), "deny" refuses both; then it runs in the session's shadow
copy with the proposal written in, with the ``bash`` tool's timeout. A check that may not run is reported
as not run with the refusal; a timeout is a failure; the output tail (``core.checks.output_tail``) has
secrets redacted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from agent_ls.core.checks import CheckResult, output_tail
from agent_ls.core.events import EventSink
from agent_ls.core.ports import CommandResult
from agent_ls.instructions.activation import SkillActivations
from agent_ls.tools.registry import RETRY_ADVICE, ToolRegistry

log = logging.getLogger(__name__)

CHECKS_METADATA_KEY = "checks"
"""The SKILL.md ``metadata`` key that holds a skill's acceptance checks, one command per line (the Agent
Skills specification makes ``metadata`` a map of strings to strings)."""

CALL_ID_PREFIX = "agent-ls-check-"
"""The ``call_id`` of a check's ``VerdictGiven`` (``agent-ls-check-1``): no model call has it."""


def skill_checks(metadata: Mapping[str, str]) -> list[str]:
    """The commands of a skill's ``metadata`` ``checks`` entry: one per non-blank line, stripped, in order."""
    return [line.strip() for line in metadata.get(CHECKS_METADATA_KEY, "").splitlines() if line.strip()]


def activated_skill_checks(activations: SkillActivations) -> list[str]:
    """The checks of every skill activated in the session, in activation order (a skill a reload removed
    is left out)."""
    found = (activations.skills.get(activation.name) for activation in activations.active())
    return [command for skill in found if skill is not None for command in skill_checks(skill.metadata)]


class AcceptanceChecks:
    """The acceptance checks of one run (the core ``Verifier`` port; module docstring).

    Args:
        registry: the session's tools: its ``run_command`` judges and runs each check.
        given: the run's own checks, in order.
        skill_commands: returns the checks of the skills activated so far (read at each use, so a skill the
            model activates during the run adds its own).
        redact: replaces secrets in a check's output tail (``sessions.redaction``); identity when None.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        given: Sequence[str],
        skill_commands: Callable[[], Sequence[str]] = tuple,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self._registry = registry
        self._given = tuple(command for command in given if command.strip())
        self._skill_commands = skill_commands
        self._redact = redact or (lambda text: text)

    def commands(self) -> Sequence[str]:
        """The run's checks, then the activated skills' ones, without repeats."""
        return tuple(dict.fromkeys((*self._given, *self._skill_commands())))

    async def run(self, emit: EventSink) -> tuple[CheckResult, ...]:
        """Run every check in order (``Verifier.run``)."""
        results = []
        for index, command in enumerate(self.commands(), start=1):
            try:
                outcome = await self._registry.run_command(
                    command, f"{CALL_ID_PREFIX}{index}", emit, approved_by_user=command in self._given
                )
            except Exception as exc:  # a broken runner must not end the run: the check is not verified
                log.exception("acceptance check %r failed to run", command)
                outcome = f"it could not be started: {type(exc).__name__}: {exc}"
            results.append(self._result(command, outcome))
        return tuple(results)

    def _result(self, command: str, outcome: CommandResult | str) -> CheckResult:
        if isinstance(outcome, str):
            # The refusal the model would read, without the advice meant for it.
            reason = " ".join(self._redact(outcome.removesuffix(RETRY_ADVICE)).split())
            return CheckResult(command, passed=False, exit_code=None, output_tail=reason, not_run=reason)
        # Redacted whole, then cut: a key across the tail's first line would lose its recognisable start.
        tail = output_tail(self._redact(outcome.output))  # its end is the output's end (head + tail cap)
        if outcome.timed_out:
            return CheckResult(
                command, passed=False, exit_code=None, output_tail=f"{tail}\n(timed out)".strip()
            )
        return CheckResult(command, outcome.exit_code == 0, outcome.exit_code, tail)
