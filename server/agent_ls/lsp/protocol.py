"""Custom agent-ls messages on the wire: ``agent.*`` commands and ``agent/*`` notifications.

Commands (``workspace/executeCommand``) take exactly one camelCase object in ``arguments`` and return an
object. Mirrored by ``clients/vscode/src/protocol.ts``. This is a contract: later issues add fields and
messages, never rename them.

| command | argument | returns |
|---|---|---|
| ``agent.run`` | ``RunParams`` | ``RunResult`` at once; the run continues in the background |
| ``agent.cancel`` | ``SessionParams`` | ``CancelResult`` |
| ``agent.proposal`` | ``SessionParams`` | ``ProposalResult`` |
| ``agent.applyProposal`` | ``SessionParams`` | ``ApplyProposalResult`` |
| ``agent.discardProposal`` | ``SessionParams`` | ``DiscardProposalResult`` |
| ``agent.listSkills`` | ``{}`` | ``ListSkillsResult`` |

Notifications (server to client): ``agent/event`` (``AgentEventNotification``) and ``agent/runEnded``
(``RunEndedNotification``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

CMD_RUN = "agent.run"
CMD_CANCEL = "agent.cancel"
CMD_PROPOSAL = "agent.proposal"
CMD_APPLY_PROPOSAL = "agent.applyProposal"
CMD_DISCARD_PROPOSAL = "agent.discardProposal"
CMD_LIST_SKILLS = "agent.listSkills"

AGENT_EVENT = "agent/event"
AGENT_RUN_ENDED = "agent/runEnded"

EventKind = Literal[
    "runStarted",
    "turnStarted",
    "textDelta",
    "reasoningDelta",
    "retrying",
    "toolCall",
    "verdict",
    "toolResult",
    "usage",
    "proposalChanged",
]


ApprovalAnswer = Literal["once", "session", "always", "deny"]
APPROVAL_ANSWERS: dict[str, ApprovalAnswer] = {a: a for a in ("once", "session", "always", "deny")}


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")


class _Lenient(_Wire):
    """Params from clients: unknown fields are ignored so newer clients keep working."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class WirePosition(_Lenient):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class WireRange(_Lenient):
    start: WirePosition
    end: WirePosition


class RunParams(_Lenient):
    task: str = Field(min_length=1)
    uri: str | None = None
    range: WireRange | None = None
    model: str | None = None


class RunResult(_Wire):
    session_id: str
    progress_token: str


class SessionParams(_Lenient):
    """``sessionId`` may be left out: it then means the latest session. Some clients (Helix, Zed,
    Sublime LSP) drop command results and custom notifications, so they never learn the id."""

    session_id: str | None = Field(default=None, min_length=1)


class CancelResult(_Wire):
    cancelled: bool


class ProposalFile(_Wire):
    uri: str
    path: str
    is_new: bool
    base_version: int | None
    diff: str
    added: int
    removed: int
    original_text: str
    proposed_text: str


class ProposalResult(_Wire):
    files: list[ProposalFile]


class ApplyProposalResult(_Wire):
    applied: bool
    failure_reason: str | None = None


class DiscardProposalResult(_Wire):
    discarded: bool


class ListSkillsResult(_Wire):
    skills: list[dict[str, Any]] = Field(default_factory=list)


class UsageSummary(_Wire):
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int
    estimated: bool
    cost_usd: float | None = None


class AgentEventNotification(_Wire):
    session_id: str
    kind: EventKind
    text: str | None = None
    tool_name: str | None = None
    verdict: Literal["allow", "ask", "deny"] | None = None
    model: str | None = None
    """On ``runStarted``: the model string the run resolved (wherever it came from)."""
    usage: UsageSummary | None = None
    """On ``usage``: the run's total so far."""
    call_usage: UsageSummary | None = None
    """On ``usage``: the last model call's usage."""
    session_usage: UsageSummary | None = None
    """On ``usage``: the session's total so far, earlier runs included."""
    partial: bool | None = None
    """On ``retrying``: True when the text streamed so far in this turn is void (clear it)."""
    approval: ApprovalAnswer | None = None
    """On ``verdict``: the user's answer when the policy asked, else null (the rule decided alone)."""


class ProposalSummary(_Wire):
    files: list[str]
    added: int
    removed: int


class RunEndedNotification(_Wire):
    session_id: str
    status: Literal["done", "stopped", "cancelled", "error"]
    reason: str
    answer: str
    usage: UsageSummary
    session_usage: UsageSummary
    proposal: ProposalSummary
