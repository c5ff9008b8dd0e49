"""Custom agent-ls messages on the wire: ``agent.*`` commands and ``agent/*`` notifications.

Commands (``workspace/executeCommand``) take one camelCase object in ``arguments`` (no argument, in any
of the ways clients say it, is an empty object: ``lsp/command_args.py``) and return an object. Mirrored
by ``clients/vscode/src/protocol.ts``. This is a contract: later issues add fields and
messages, never rename them.

| command | argument | returns |
|---|---|---|
| ``agent.run`` | ``RunParams`` | ``RunResult`` at once; the run continues in the background |
| ``agent.cancel`` | ``SessionParams`` | ``CancelResult`` |
| ``agent.proposal`` | ``SessionParams`` | ``ProposalResult`` |
| ``agent.applyProposal`` | ``ProposalFilesParams`` | ``ApplyProposalResult`` |
| ``agent.discardProposal`` | ``ProposalFilesParams`` | ``DiscardProposalResult`` |
| ``agent.runSkill`` | ``RunSkillParams`` | ``RunResult``, as ``agent.run`` |
| ``agent.listSkills`` | ``ListSkillsParams`` | ``ListSkillsResult`` |
| ``agent.instructions`` | ``InstructionsParams`` | ``InstructionsResult`` |
| ``agent.listSessions`` | ``ListSessionsParams`` | ``ListSessionsResult`` |
| ``agent.sessionHistory`` | ``SessionHistoryParams`` | ``SessionHistoryResult`` |
| ``agent.traceHtml`` | ``SessionHistoryParams`` | ``TraceHtmlResult`` |
| ``agent.clearFindings`` | ``ClearFindingsParams`` | ``ClearFindingsResult`` |
| ``agent.status`` | ``StatusParams`` | ``StatusResult`` |
| ``agent.mcpStatus`` | ``McpStatusParams`` | ``McpStatusResult`` |

Client to server, ``agent/didChangeProblems`` (``DidChangeProblemsParams``): the editor's problems; server
to client, the request ``agent/problemsOfText`` (``ProblemsOfTextParams`` → ``ProblemsOfTextResult``).

Notifications (server to client): ``agent/event`` (``AgentEventNotification``; a subagent's events carry
``subagent``), ``agent/runEnded`` (``RunEndedNotification``) and ``agent/todos`` (``TodosNotification``, the
whole todo list each time the model writes it).

Review findings (the ``review_findings`` tool) are LSP diagnostics with source ``REVIEW_SOURCE`` whose
``data`` is a ``FindingData``; the ``agent/event`` of kind ``findings`` carries them as
``path:line: severity: message`` lines.
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
CMD_RUN_SKILL = "agent.runSkill"
CMD_INSTRUCTIONS = "agent.instructions"
CMD_CONTEXT = "agent.context"
CMD_LIST_SESSIONS = "agent.listSessions"
CMD_SESSION_HISTORY = "agent.sessionHistory"
CMD_TRACE_HTML = "agent.traceHtml"
CMD_COMPACT = "agent.compact"
CMD_CLEAR_FINDINGS = "agent.clearFindings"
CMD_STATUS = "agent.status"
CMD_MCP_STATUS = "agent.mcpStatus"

AGENT_EVENT = "agent/event"
AGENT_RUN_ENDED = "agent/runEnded"
AGENT_TODOS = "agent/todos"
AGENT_DID_CHANGE_PROBLEMS = "agent/didChangeProblems"
"""Client to server: the editor's problems of some files (``DidChangeProblemsParams``)."""
AGENT_PROBLEMS_OF_TEXT = "agent/problemsOfText"
"""Server to client request: the problems of texts not on disk (``ProblemsOfTextParams`` →
``ProblemsOfTextResult``), only to a client whose ``initializationOptions`` say ``problemsOfText: true``."""

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
    "compacted",
    "findings",
]

REVIEW_SOURCE = "agent-ls review"
"""The ``source`` of the diagnostics that carry review findings."""


ApprovalAnswer = Literal["once", "session", "always", "deny"]
APPROVAL_ANSWERS: dict[str, ApprovalAnswer] = {a: a for a in ("once", "session", "always", "deny")}


class _Wire(BaseModel):
    # Each model is built at its first use, not at import: initialize needs none (start-up time).
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True
    )

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")


class _Lenient(_Wire):
    """Params from clients: unknown fields are ignored so newer clients keep working."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", defer_build=True
    )


class WirePosition(_Lenient):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class WireRange(_Lenient):
    start: WirePosition
    end: WirePosition


class WireDiagnostic(_Lenient):
    """An LSP ``Diagnostic`` the client passes with a task (the file's problems, for fix-diagnostics)."""

    range: WireRange
    message: str
    severity: int | None = None
    source: str | None = None
    code: int | str | None = None


class FileDiagnostics(_Lenient):
    """One file's problems: ``uri`` a ``file:`` URI, ``diagnostics`` all of its current ones (empty: none)."""

    uri: str
    diagnostics: list[WireDiagnostic]


class DidChangeProblemsParams(_Lenient):
    """``agent/didChangeProblems``: each listed file's problems replace the ones sent before (docs/modes.md,
    "The editor's problems"); files not listed keep theirs."""

    files: list[FileDiagnostics]


class TextOfFile(_Wire):
    """A file's proposed text: ``uri`` the file it would replace (its language decides the checker)."""

    uri: str
    text: str


class ProblemsOfTextParams(_Wire):
    """``agent/problemsOfText``: the texts to check, as the editor's language servers would see them."""

    files: list[TextOfFile]


class ProblemsOfTextResult(_Lenient):
    """The problems of each text, under the ``uri`` it was sent with; a file left out was not checked."""

    files: list[FileDiagnostics]


RunModeWire = Literal["default", "plan"]


class PlanWire(_Wire):
    """The plan a plan run ended with (``core.plan.Plan``): ``files`` workspace-relative, ``steps`` in
    order, ``checks`` commands that verify the result, ``risks``."""

    summary: str
    files: list[str]
    steps: list[str]
    checks: list[str]
    risks: list[str]


class CheckWire(_Wire):
    """An acceptance check's result: ``passed`` when it ran and exited 0; ``exitCode`` null when it was
    stopped (a timeout) or could not run (then ``outputTail`` says why, and ``notVerified`` lists it);
    ``outputTail`` its last lines (about 20, at most 2 KB), secrets redacted."""

    command: str
    passed: bool
    exit_code: int | None
    output_tail: str


class RunParams(_Lenient):
    """A task starting with ``/<skill> args`` runs that skill explicitly (its body is injected up front)."""

    task: str = Field(min_length=1)
    uri: str | None = None
    range: WireRange | None = None
    model: str | None = None
    diagnostics: list[WireDiagnostic] | None = None
    session_id: str | None = Field(default=None, min_length=1)
    """Continue this session (in memory or stored, docs/sessions.md); left out, a new one starts."""
    max_tokens: int | None = Field(default=None, ge=1)
    """This run's token budget (input plus output tokens of its model calls); over ``agentLs.maxTokens``."""
    max_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """This run's cost budget in US dollars; over ``agentLs.maxCostUsd``."""
    mode: RunModeWire = "default"
    """``plan``: read-only tools, edits refused by the policy, the run ends with a ``plan`` (docs/modes.md);
    ``default`` after a plan run of the same session implements that plan ("Approve plan")."""
    checks: list[str] = Field(default_factory=list)
    """Acceptance checks: shell commands the server runs in the shadow copy when the model says it is done
    (docs/modes.md, "Definition of done")."""
    resource: str | list[str] | None = None
    """MCP resources to attach to the task (docs/mcp.md): ``<server>:<uri>``, or a URI a connected server
    lists; read with resources/read and given to the model as data. One that cannot be read ends the run."""


class RunSkillParams(_Lenient):
    """``agent.runSkill``: run ``skill`` explicitly on the file ``uri``; the task is ``/<skill> <args>``."""

    skill: str = Field(min_length=1)
    uri: str | None = None
    range: WireRange | None = None
    args: str | None = None
    model: str | None = None
    diagnostics: list[WireDiagnostic] | None = None
    session_id: str | None = Field(default=None, min_length=1)
    mode: RunModeWire = "default"
    """As ``RunParams.mode``."""
    checks: list[str] = Field(default_factory=list)
    """As ``RunParams.checks``; the skill's own (its ``metadata`` ``checks``) join them."""


class ListSessionsParams(_Lenient):
    """``agent.listSessions``: the stored sessions of the workspace folder holding ``uri`` (left out: of
    every open folder), newest first."""

    uri: str | None = None


class ListSessionsResult(_Wire):
    """Each entry: ``{sessionId, title, workspace, createdAt, updatedAt, runs, status, pendingFiles,
    model, usage}`` (``sessions.saved.SavedSession.summary``)."""

    sessions: list[dict[str, Any]]


class SessionHistoryParams(_Lenient):
    """``agent.sessionHistory``: a stored session of an open workspace folder (``agent.listSessions``)."""

    session_id: str = Field(min_length=1)


class HistoryItemWire(_Wire):
    """Answer text (``kind`` ``text``) or a tool call (``kind`` ``tool``: its name, its arguments as the model
    sent them, the verdict, the rule that decided, the user's answer when asked, and the result; texts
    clipped to 2,000 characters)."""

    kind: Literal["text", "tool"]
    text: str | None = None
    tool_name: str | None = None
    arguments: str | None = None
    verdict: Literal["allow", "ask", "deny"] | None = None
    rule: str | None = None
    approval: Literal["once", "session", "always", "deny"] | None = None
    result: str | None = None
    is_error: bool = False


class HistoryRunWire(_Wire):
    """One run: the task, the answer and tool calls in order, the status (``interrupted`` for a run that
    never ended), why it stopped, and its usage (null before its end)."""

    task: str
    items: list[HistoryItemWire]
    mode: RunModeWire = "default"
    plan: PlanWire | None = None
    """The plan a plan run ended with (shown again by an editor that resumes the session); else null."""
    status: str
    reason: str
    usage: UsageSummary | None = None
    usage_by_role: dict[str, UsageSummary] = Field(default_factory=dict)
    """The run's usage by role (``RunEndedNotification.usageByRole``); a run stored before roles were
    recorded has all of it under ``main``; empty before its end."""
    checks: list[CheckWire] = Field(default_factory=list)
    """As ``RunEndedNotification.checks`` (from the session file's ``checks`` records)."""
    not_verified: list[str] = Field(default_factory=list)
    """As ``RunEndedNotification.notVerified``."""


class SessionHistoryResult(_Wire):
    """``agent.sessionHistory``: the session's runs, oldest first (``sessions.history``), and its todos."""

    session_id: str
    runs: list[HistoryRunWire]
    todos: list[TodoWire]


class TraceHtmlResult(_Wire):
    """``agent.traceHtml``: the stored session's trajectory as one inert HTML page (``trace html``)."""

    session_id: str
    html: str


class ListSkillsParams(_Lenient):
    """``uri``: the file whose folders' ``.agents/skills`` count; left out, the workspace root."""

    uri: str | None = None


class InstructionsParams(_Lenient):
    """``uri``: the file whose AGENTS.md chain is wanted; left out, the workspace root's."""

    uri: str | None = None


class RunResult(_Wire):
    session_id: str
    progress_token: str


class CompactParams(_Lenient):
    """``agent.compact``: ``sessionId`` left out means the latest session; ``focus`` is what the summary
    should keep in particular (as ``/compact focus``)."""

    session_id: str | None = Field(default=None, min_length=1)
    focus: str | None = None


class CompactResult(_Wire):
    """``agent.compact``: ``how`` (``pruned`` or ``summarized``), the request's estimated tokens before
    and after, and how many tool results were pruned."""

    how: str
    tokens_before: int
    tokens_after: int
    pruned: int


class SessionParams(_Lenient):
    """``sessionId`` may be left out: it then means the latest session. Some clients (Helix, Zed,
    Sublime LSP) drop command results and custom notifications, so they never learn the id."""

    session_id: str | None = Field(default=None, min_length=1)


class ProposalFilesParams(_Lenient):
    """``agent.applyProposal`` and ``agent.discardProposal``: ``sessionId`` as ``SessionParams``; ``files``
    (file URIs, as ``ProposalFile.uri``) limits the command to those files of the proposal, the others stay
    pending. Left out (or null), every file. A URI not in the proposal is an InvalidParams error."""

    session_id: str | None = Field(default=None, min_length=1)
    files: list[str] | None = None


class ContextPartWire(_Wire):
    name: str
    tokens: int


class MemoryFileWire(_Wire):
    """The workspace's memory notes file: not in the request until the model calls ``memory_read``."""

    path: str
    bytes: int


class ContextResult(_Wire):
    """``agent.context``: the next request of the session, measured (``context_report.ContextReport``);
    tokens are estimated as bytes / 4 of the exact body."""

    context_window: int
    used: int
    free: int
    parts: list[ContextPartWire]
    memory: MemoryFileWire | None = None
    """The memory notes of the workspace (the memory tools); null when the session has none."""
    no_model: str | None = None
    """Why no model could be opened (none configured, a bad model string): the body was then measured as
    a Chat Completions request in the default window; null when the session's model measured it."""


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
    instructions: list[str] = Field(default_factory=list)
    """The AGENTS.md files (labels, root first) that govern this file."""


class ProposalResult(_Wire):
    files: list[ProposalFile]


class ApplyProposalResult(_Wire):
    """``applied``: the editor applied the edit (all or part of it); ``failureReason`` says why not. When it
    did, ``message`` says what landed (``applied 3 of 5 changes in 2 files; 2 changes kept``): a change is a
    line-diff hunk (one ``TextEdit``); the changes the user unticked in a preview, and the files not asked
    for or skipped, stay pending, listed by URI in ``keptFiles``."""

    applied: bool
    failure_reason: str | None = None
    message: str | None = None
    changes_applied: int = 0
    changes_kept: int = 0
    kept_files: list[str] = Field(default_factory=list)


class DiscardProposalResult(_Wire):
    """``discarded``: some file was dropped; ``keptFiles``: the URIs still pending (the files not named)."""

    discarded: bool
    kept_files: list[str] = Field(default_factory=list)


class ListSkillsResult(_Wire):
    """``skills``: ``instructions.skills.Skill.wire()`` objects (name, description, source, path, baseDir,
    modelInvocable, allowedTools, argumentHint, diagnostics); ``skipped``: SKILL.md files not loaded, each a
    diagnostic saying why."""

    skills: list[dict[str, Any]] = Field(default_factory=list)
    skipped: list[dict[str, Any]] = Field(default_factory=list)


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
    unsandboxed: str | None = None
    """On ``runStarted``: why shell commands run without a sandbox (those running workspace code then ask
    first); null when they are sandboxed."""
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
    subagent: SubagentMarker | None = None
    """On an event of a subagent's run (the ``task`` tool): which one; null for the session's own run."""


class SubagentMarker(_Wire):
    """Which subagent an ``agent/event`` comes from: the parent's ``task`` call and its description."""

    call_id: str
    description: str


class TodoWire(_Wire):
    content: str
    status: Literal["pending", "in_progress", "completed"]
    active_form: str


class TodosNotification(_Wire):
    """``agent/todos``: the session's whole todo list, in order, each time ``todo_write`` replaces it."""

    session_id: str
    todos: list[TodoWire]


class ProposalSummary(_Wire):
    files: list[str]
    added: int
    removed: int
    governed_by: dict[str, list[str]] = Field(default_factory=dict)
    """Per proposed file, the AGENTS.md files (labels, root first) that govern it."""


class RunEndedNotification(_Wire):
    session_id: str
    status: Literal["done", "stopped", "cancelled", "error"]
    reason: str
    answer: str
    usage: UsageSummary
    session_usage: UsageSummary
    proposal: ProposalSummary
    mode: RunModeWire = "default"
    plan: PlanWire | None = None
    """Only for a plan run that ended with its plan (``submit_plan``); ``answer`` is then the plan as
    markdown. A following ``agent.run {sessionId}`` in default mode implements it."""
    checks: list[CheckWire] = Field(default_factory=list)
    """The acceptance checks' results the run ended on, in order; empty when it had none."""
    not_verified: list[str] = Field(default_factory=list)
    """One line per check that was not run at the end, and why; empty when every check ran."""
    usage_by_role: dict[str, UsageSummary] = Field(default_factory=dict)
    """``usage`` by what the calls were for: ``main`` (the run's turns), ``compaction`` (summaries),
    ``subagent`` (the ``task`` tool's runs); only roles that made model calls."""


class ReviewFindingWire(_Lenient):
    """A review finding (``core.review.ReviewFinding``): ``path`` workspace-relative POSIX, ``line`` and
    ``endLine`` 1-based and inclusive."""

    path: str
    line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    severity: Literal["error", "warning", "info", "hint"]
    message: str


class FindingData(_Lenient):
    """The ``data`` of a review-finding diagnostic: the session that reported it (``agent.run {sessionId}``
    continues it) and the finding."""

    session_id: str
    finding: ReviewFindingWire


class ClearFindingsParams(_Lenient):
    """``agent.clearFindings``: clear the review findings of ``sessionId`` (left out: of every session) on
    ``uris`` (left out: on every file)."""

    session_id: str | None = None
    uris: list[str] | None = None


class ClearFindingsResult(_Wire):
    """``cleared``: how many finding diagnostics were removed."""

    cleared: int


ModelState = Literal["ready", "noModel", "noApiKey", "invalid"]
"""``ready``: a run can start; ``noModel``: none is configured; ``noApiKey``: the provider needs a key and
none is set; ``invalid``: the model or its config is wrong (``modelDetail`` says how)."""


class StatusParams(_Lenient):
    """``agent.status``: ``uri`` picks the folder whose agent-ls.toml counts; left out, the first folder."""

    uri: str | None = None


class StatusResult(_Wire):
    """What a run would use now, found without a model call (``agent-ls doctor`` checks the same at length).

    The model string and its API root (None when there is no model, and the root for a replay script);
    ``modelDetail`` is the fix for any state but ``ready`` (else empty). ``sandbox`` is one line: the
    bubblewrap in use, or why commands run unsandboxed.
    """

    model: str | None
    base_url: str | None
    model_state: ModelState
    model_detail: str
    sandboxed: bool
    sandbox: str


class McpStatusParams(_Lenient):
    """``agent.mcpStatus``: ``uri`` picks the workspace folder (left out: the first)."""

    uri: str | None = None


class McpStatusResult(_Wire):
    """Every MCP server of the folder (docs/mcp.md), after starting those that may start without a question.

    ``servers``: one object each (``mcp_client.status.report``): ``name``, ``scope`` (``user`` |
    ``workspace``), ``transport`` (``stdio`` | ``http``), ``target`` (command line or URL), ``source``,
    ``state`` (``connected`` | ``failed`` | ``needs approval`` | ``denied`` | ``disabled`` | ``not started``),
    ``detail``, ``serverInfo`` ({``name``, ``version``} or null), ``protocolVersion``, ``tools`` ([{``name``,
    ``original``, ``readOnly``, ``destructive``, ``schemaTokens``}]), ``schemaTokens``, ``deferred``,
    ``resources`` ([{``uri``, ``name``, ``mimeType``}]), ``prompts`` ([{``name``, ``description``}]),
    ``stderrTail``. ``problems``: lines about the configuration files (a file that is not JSON, an entry
    left out).
    """

    servers: list[dict[str, Any]]
    problems: list[str]
