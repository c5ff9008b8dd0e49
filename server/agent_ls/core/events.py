"""Typed events a run emits, in order; the LSP layer and the CLI render them, tests assert them.

A run emits, in this order:
``RunStarted``, then for each turn ``TurnStarted``, ``MessageDelta`` for each piece of text or
reasoning as it streams in (a ``ModelRetrying`` in between when a call failed and is retried; the
partial text before it is void), ``MessageCompleted`` (when the model wrote text or reasoning), then
``RemoteContentDefanged`` when that text held images or HTML that would load something,
``UsageReported``, then per tool call ``ToolCallStarted``, ``VerdictGiven`` (only for tools that need a
permission check), ``ToolCallFinished`` and, after a mutating call that changed the proposal,
``ProposalChanged``; finally exactly one ``RunEnded``. A ``todo_write`` call emits ``TodosChanged``, a
``review_findings`` call ``FindingsReported``, and a ``task`` call the subagent's whole run, each event
wrapped in a ``SubagentEvent``, before its ``ToolCallFinished``. When the task carries acceptance checks,
each answer without a tool call is followed by ``ChecksRan`` (after the ``VerdictGiven`` of each check).

The model's prose in ``MessageDelta``, ``MessageCompleted`` and ``RunEnded.answer`` is defanged
(``core.markdown_defang``): a client may render it as markdown, and nothing in it may load a remote image.
The union ``Event`` is closed: renderers handle every member and use ``assert_never``.
Behaviour follows pi-mono ``packages/agent/src/types.ts`` ``AgentEvent``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from agent_ls.core.checks import CheckResult
from agent_ls.core.messages import NO_USAGE, RequestSent, Usage
from agent_ls.core.plan import Plan, RunMode
from agent_ls.core.review import ReviewFinding
from agent_ls.core.todos import TodoItem

Verdict = Literal["allow", "ask", "deny"]
RunStatus = Literal["done", "stopped", "cancelled", "error"]
ModelRole = Literal["main", "compaction", "subagent"]
"""What a model call was for: the run's own turns, a compaction summary, a ``task`` subagent's turns."""


@dataclass(frozen=True)
class RunStarted:
    """A run began. ``unsandboxed`` is one line saying why shell commands run without a sandbox here
    (and that those running workspace code ask first), or "" when they are sandboxed."""

    session_id: str
    task: str
    model: str
    unsandboxed: str = ""


@dataclass(frozen=True)
class TurnStarted:
    """A model request is about to be sent. ``turn`` is 1-based."""

    turn: int
    max_turns: int


@dataclass(frozen=True)
class MessageDelta:
    """A piece of the model's answer (``kind="text"``) or visible reasoning, as it streams in.

    Non-streaming calls send one delta with the whole text. Deltas are for live display only: they have
    no transcript line; ``MessageCompleted`` does.
    """

    text: str
    kind: Literal["text", "reasoning"] = "text"


@dataclass(frozen=True)
class ModelRetrying:
    """A model call failed with a retryable error and will be sent again after ``wait_s`` seconds.

    Attributes:
        attempt: the 1-based number of the attempt about to be made (2 for the first retry).
        max_attempts: the configured cap.
        wait_s: the wait before it, in seconds (the server's retry-after when it sent one).
        reason: the failure, one line.
        partial: True when deltas of the failed attempt were already emitted; they are void.
    """

    attempt: int
    max_attempts: int
    wait_s: float
    reason: str
    partial: bool = False


@dataclass(frozen=True)
class MessageCompleted:
    """The model's whole message of one turn: ``text`` is the answer, ``reasoning`` its visible reasoning."""

    text: str
    reasoning: str = ""


@dataclass(frozen=True)
class RemoteContentDefanged:
    """The model's last message held markdown images or HTML tags that would load something when rendered;
    the events carry them defanged. ``targets``: the hosts they pointed at (``evil.example``), or what
    they were (``a data: URI``), in order, without repeats."""

    targets: tuple[str, ...]


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
        rule: the label of the rule that decided, with its source (``"bash: rm * (built-in)"``), or a
            ``fallback: …`` label when none matched or the input could not be read.
        approval: the user's reply when the policy said ask (``once``, ``session``, ``always``,
            ``deny``), else None.
        subject: what was judged: the command or the path.
        unasked: with ``approval``, why nobody was actually asked (``headless``, ``--yes``): the reply
            was a default; "" when the user answered.
    """

    call_id: str
    name: str
    verdict: Verdict
    rule: str
    subject: str
    approval: str | None = None
    unasked: str = ""


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool result. ``output`` is the plain text; the model reads it wrapped as data by
    ``core.context.wrap_tool_result``."""

    call_id: str
    name: str
    is_error: bool
    output: str


@dataclass(frozen=True)
class ModelCall:
    """The facts of one model call, for the trajectory (``sessions``, ``agent-ls trace``).

    Attributes:
        model: the model string of the client that answered (``openai/gpt-4.1``, ``replay:s.json``).
        latency_s: seconds from sending the request to the whole reply (``time.monotonic``; a retried
            call's waits and failed attempts included).
        request: the body sent (size and SHA-256), when the client built one.
    """

    model: str
    latency_s: float
    request: RequestSent | None = None


@dataclass(frozen=True)
class UsageReported:
    """Usage of the last model call (``usage``), of the whole run so far (``total``) and of the session
    so far, earlier runs included (``session``). ``role``: what the call was for (a compaction summary is
    reported by the parent run with ``compaction``; a subagent's own calls come wrapped in
    ``SubagentEvent`` and count as ``subagent``). ``call``: that call's model, latency and request body
    facts (``ModelCall``) for the run's own turns and a subagent's; None for a compaction summary."""

    usage: Usage
    total: Usage
    session: Usage = NO_USAGE
    role: ModelRole = "main"
    call: ModelCall | None = field(default=None, compare=False)
    """Left out of equality: a latency is a measurement, not what happened."""


@dataclass(frozen=True)
class ProposalChanged:
    """The pending edits changed. ``paths`` are workspace-relative POSIX paths, sorted."""

    paths: tuple[str, ...]


@dataclass(frozen=True)
class InstructionsLoaded:
    """Instruction text entered the context: the AGENTS.md chain and skills catalog at the start of a run,
    nested AGENTS.md files next to a tool result, or a skill's body.

    Attributes:
        what: ``chain``, ``nested``, ``skill``, ``reloaded`` (a file changed; the prefix was rebuilt), or
            ``unknown-skill`` (a task started with ``/name`` naming no skill; it runs as written).
        sources: the labels, in order (``AGENTS.md``, ``pkg/AGENTS.md``, ``skill:code-review``).
        detail: one line for the transcript (sizes, truncation, the catalog's skill count).
    """

    what: Literal["chain", "nested", "skill", "reloaded", "unknown-skill"]
    sources: tuple[str, ...]
    detail: str = ""


@dataclass(frozen=True)
class ContextCompacted:
    """The history was compacted before a model request (``core.compaction``).

    Attributes:
        reason: ``auto`` (over the threshold), ``overflow`` (the provider said the request was too long;
            it is retried once) or ``manual`` (``/compact``, ``agent.compact``).
        how: ``pruned`` (old tool results became placeholders) or ``summarized`` (the model summarized it).
        tokens_before / tokens_after: the request's estimated tokens.
        pruned: how many tool results were pruned.
    """

    reason: Literal["auto", "overflow", "manual"]
    how: Literal["pruned", "summarized"]
    tokens_before: int
    tokens_after: int
    pruned: int = 0


@dataclass(frozen=True)
class TodosChanged:
    """The model replaced the session's todo list (``todo_write``); ``items`` is the whole new list, in
    order. Emitted while that call runs, before its ``ToolCallFinished``."""

    items: tuple[TodoItem, ...]


@dataclass(frozen=True)
class FindingsReported:
    """The model reported review findings (``review_findings``). Emitted while that call runs, before its
    ``ToolCallFinished``.

    Attributes:
        findings: the accepted findings, in the order the model gave them (rejected ones are not here).
        files: the workspace-relative POSIX paths this review covers, sorted: every file of a finding and
            every file the model said it reviewed. A front end replaces what it shows for these files.
    """

    findings: tuple[ReviewFinding, ...]
    files: tuple[str, ...]


@dataclass(frozen=True)
class SubagentEvent:
    """An event of a subagent's run (the ``task`` tool), nested under the parent's tool call.

    Attributes:
        call_id: the parent's ``task`` call that runs the subagent.
        description: the task's short description (3-5 words), for display.
        event: the subagent's own event, from its ``RunStarted`` to its ``RunEnded``.
    """

    call_id: str
    description: str
    event: Event


@dataclass(frozen=True)
class ChecksRan:
    """The harness ran the task's acceptance checks after the model answered (``core.checks``).

    Attributes:
        results: one per check, in the order given (those that could not run carry ``not_run``).
        round: 1 for the first time the model said it was done, 2 after the failures went back to it once.
    """

    results: tuple[CheckResult, ...]
    round: int = 1


@dataclass(frozen=True)
class McpServerStatus:
    """An MCP server's state as a run found it (``mcp_client.hub``), once per change.

    Attributes:
        server: its name in the MCP configuration.
        state: ``connected``, ``failed``, ``needs approval``, ``denied`` or ``disabled``.
        detail: one line: ``3 tools, mcp-time 1.2.0`` when connected, else why not.
    """

    server: str
    state: str
    detail: str = ""


@dataclass(frozen=True)
class RunEnded:
    """The run is over. ``reason`` is one plain line a user can read; ``answer`` is the model's last text.

    ``checks`` are the acceptance checks' last results when the run ended on them (``core.checks``), and
    ``not_verified`` one line per check that was not run at the end and why (empty when all ran).
    ``mode`` is the run's (``core.plan.RunMode``); ``plan`` the plan a ``plan`` run ended with (the
    ``submit_plan`` call), None otherwise.
    """

    status: RunStatus
    reason: str
    answer: str
    usage: Usage
    session_usage: Usage = NO_USAGE
    checks: tuple[CheckResult, ...] = ()
    not_verified: tuple[str, ...] = ()
    usage_by_role: Mapping[ModelRole, Usage] = field(default_factory=dict)
    """``usage`` split by what the calls were for (``ModelRole``): only roles that made model calls, in
    the order they first did."""
    mode: RunMode = "default"
    plan: Plan | None = None


Event = (
    RunStarted
    | TurnStarted
    | MessageDelta
    | ModelRetrying
    | MessageCompleted
    | RemoteContentDefanged
    | ToolCallStarted
    | VerdictGiven
    | ToolCallFinished
    | UsageReported
    | ProposalChanged
    | InstructionsLoaded
    | ContextCompacted
    | TodosChanged
    | FindingsReported
    | SubagentEvent
    | ChecksRan
    | McpServerStatus
    | RunEnded
)

EventSink = Callable[[Event], None]
"""Receives events in order. Contract: must not raise and must not block (queue work elsewhere)."""
