"""Typed events a run emits, in order; the LSP layer and the CLI render them, tests assert them.

A run emits, in this order:
``RunStarted``, then for each turn ``TurnStarted``, ``MessageDelta`` (when the model wrote text),
``UsageReported``, then per tool call ``ToolCallStarted``, ``VerdictGiven`` (only for tools that need a
permission check), ``ToolCallFinished`` and, after a mutating call that changed the proposal,
``ProposalChanged``; finally exactly one ``RunEnded``.

The union ``Event`` is closed: renderers handle every member and use ``assert_never``.
Behaviour follows pi-mono ``packages/agent/src/types.ts`` ``AgentEvent``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from agent_ls.core.messages import Usage

Verdict = Literal["allow", "ask", "deny"]
RunStatus = Literal["done", "stopped", "cancelled", "error"]


@dataclass(frozen=True)
class RunStarted:
    session_id: str
    task: str
    model: str


@dataclass(frozen=True)
class TurnStarted:
    """A model request is about to be sent. ``turn`` is 1-based."""

    turn: int
    max_turns: int


@dataclass(frozen=True)
class MessageDelta:
    """Text the model wrote (a whole message in the slice; streamed deltas later)."""

    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class VerdictGiven:
    """The permission decision for a tool call.

    Attributes:
        verdict: the final verdict after asking the user, if we asked.
        rule: the rule that decided (``"bash: rm *"``), or ``"fallback"`` when none matched.
        approval: the user's reply when the policy said ask (``once``, ``session``, ``deny``), else None.
        subject: what was judged: the command or the path.
    """

    call_id: str
    name: str
    verdict: Verdict
    rule: str
    subject: str
    approval: str | None = None


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool result. ``output`` is exactly the text the model will read."""

    call_id: str
    name: str
    is_error: bool
    output: str


@dataclass(frozen=True)
class UsageReported:
    """Usage of the last model call (``usage``) and of the whole run so far (``total``)."""

    usage: Usage
    total: Usage


@dataclass(frozen=True)
class ProposalChanged:
    """The pending edits changed. ``paths`` are workspace-relative POSIX paths, sorted."""

    paths: tuple[str, ...]


@dataclass(frozen=True)
class RunEnded:
    """The run is over. ``reason`` is one plain line a user can read; ``answer`` is the model's last text."""

    status: RunStatus
    reason: str
    answer: str
    usage: Usage


Event = (
    RunStarted
    | TurnStarted
    | MessageDelta
    | ToolCallStarted
    | VerdictGiven
    | ToolCallFinished
    | UsageReported
    | ProposalChanged
    | RunEnded
)

EventSink = Callable[[Event], None]
"""Receives events in order. Contract: must not raise and must not block (queue work elsewhere)."""
