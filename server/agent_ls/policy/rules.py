"""Permission rules and decisions: glob rules over the parts of a shell command.

A ``Rule`` is a glob (``fnmatch.fnmatchcase``, ``*`` matches anything, spaces included) matched against
one whole part of a command. Among the rules matching a part, the strictest verdict wins
(deny > ask > allow); a part no rule matches is "ask". The default rules are the seed harness's
(``coding_harness/permissions.py``): read-only commands allowed, destructive or networked ones denied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from agent_ls.core.events import Verdict

STRICTNESS: dict[Verdict, int] = {"allow": 0, "ask": 1, "deny": 2}
"""Order of verdicts; the highest wins when several apply."""

FALLBACK_RULE = "fallback: no rule matches"


@dataclass(frozen=True)
class Rule:
    """A glob rule for one kind of subject.

    Attributes:
        key: what the rule applies to (``bash``).
        pattern: a glob matched against a whole command part (``rm *``).
        verdict: what a match means.
    """

    key: str
    pattern: str
    verdict: Verdict

    @property
    def label(self) -> str:
        """How events and messages name the rule: ``bash: rm *``."""
        return f"{self.key}: {self.pattern}"

    def matches(self, part: str) -> bool:
        """True when the glob matches ``part``, or ``part`` plus a space.

        The second form makes ``rm *`` catch a bare ``rm`` and ``sudo *`` a bare ``sudo``.
        """
        return fnmatchcase(part, self.pattern) or fnmatchcase(part + " ", self.pattern)


def _bash(pattern: str, verdict: Verdict) -> Rule:
    return Rule("bash", pattern, verdict)


DEFAULT_BASH_RULES: tuple[Rule, ...] = (
    _bash("ls*", "allow"),
    _bash("cat *", "allow"),
    _bash("grep *", "allow"),
    _bash("git status*", "allow"),
    _bash("git diff*", "allow"),
    _bash("pytest*", "allow"),
    _bash("rm *", "deny"),
    _bash("sudo *", "deny"),
    _bash("curl *", "deny"),
    _bash("wget *", "deny"),
    _bash("git push*", "deny"),
)
"""The seed policy, exactly. Everything else is "ask" (``FALLBACK_RULE``).

Known hazard (corpus sh86): ``ls*`` has no space, so it also allows ``lsof`` and ``lsblk``.
"""


@dataclass(frozen=True)
class Judgement:
    """The verdict for one part of a command, the label of the deciding rule and a one-line reason."""

    verdict: Verdict
    rule: str
    reason: str


def judge_part(part: str, rules: Sequence[Rule]) -> Judgement:
    """Judge one command part: the strictest matching rule, else ask under ``FALLBACK_RULE``."""
    matching = [rule for rule in rules if rule.matches(part)]
    if not matching:
        return Judgement("ask", FALLBACK_RULE, f'no rule matches "{part}"')
    rule = max(matching, key=lambda r: STRICTNESS[r.verdict])
    return Judgement(rule.verdict, rule.label, f'"{part}" matches {rule.label}')


def strictest(judgements: Iterable[Judgement]) -> Judgement:
    """The first of the strictest judgements. Raises ValueError when there is none."""
    return max(judgements, key=lambda j: STRICTNESS[j.verdict])


@dataclass(frozen=True)
class Decision:
    """The policy's answer for one tool call.

    Attributes:
        verdict: allow, ask or deny.
        rule: the deciding rule's label (``bash: rm *``, ``fallback: no rule matches``, ``read: workspace``).
        parts: what was judged, in order: a command's parts (top-level parts first, then the commands
            found inside ``$(...)``, backticks and process substitutions), or the one path.
        subject: the command or the workspace-relative path, as given.
        reason: one line for the user when we ask (``no rule matches "make build"``).
    """

    verdict: Verdict
    rule: str
    parts: tuple[str, ...]
    subject: str
    reason: str = ""
