"""The running session: one conversation in one workspace root, and its proposal.

A ``Session`` holds the parts ``assembly.assemble_session`` built for it (the one place a session is
assembled; every front end calls it): the permission policy, the overlay (the proposal), the shadow
copy the shell runs in, the tool registry, the AGENTS.md chain and skills, and the model opener. It
owns the conversation history and runs tasks on it.

Order of a run: open the model (a ``ConfigError`` ends the run with status ``error``), build the
system prompt and task message, then ``core.loop.run_loop``. A run's mode (``core.plan.RunMode``) is
applied by ``tools.plan_mode.ModeRun``: a plan run gets read-only tools and the policy in plan mode and
ends with a plan; the next default run of the session carries that plan in its task message.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agent_ls.config import LoadedConfig
from agent_ls.context_report import REMINDER, ContextReport, KnownText, known_texts, measure
from agent_ls.core.checks import checks_line
from agent_ls.core.compaction import DEFAULT_THRESHOLD, CompactionState, Compactor
from agent_ls.core.context import Focus, system_prompt, task_message
from agent_ls.core.errors import AgentLsError
from agent_ls.core.events import (
    Event,
    EventSink,
    InstructionsLoaded,
    RunEnded,
    RunStarted,
)
from agent_ls.core.loop import LoopLimits, run_loop
from agent_ls.core.messages import (
    NO_USAGE,
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from agent_ls.core.plan import Plan, RunMode
from agent_ls.core.ports import ModelClient
from agent_ls.core.proposal import FileChange
from agent_ls.core.reminder import ReminderFacts, reminder_text
from agent_ls.core.todos import TodoList
from agent_ls.instructions.activation import SkillActivations, find_skill, near_names, parse_slash
from agent_ls.instructions.agent_context import DEFAULT_CONTEXT_WINDOW, AgentContext, NestedAttacher
from agent_ls.instructions.agents_md import render_chain, render_nested
from agent_ls.instructions.catalog import render_catalog
from agent_ls.models.recording import ModelExchange, RecordingModel, recording
from agent_ls.models.request_body import ObservedModel, chat_encoder, context_window_of, encoder_of
from agent_ls.models.window import token_estimator, window_of
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.slash_commands import COMPACT_COMMAND, answer_compact, answer_context
from agent_ls.slash_commands import ModelOpener as ModelOpener  # re-exported: front ends name them here
from agent_ls.slash_commands import open_or_reason as open_or_reason
from agent_ls.tools import read_output
from agent_ls.tools.acceptance import AcceptanceChecks, activated_skill_checks
from agent_ls.tools.base import OutputKeeper, ToolContext
from agent_ls.tools.memory import MemoryNotes
from agent_ls.tools.plan_mode import ModeRun
from agent_ls.tools.registry import ToolRegistry
from agent_ls.tools.session_tools import deferred_tools, origin_of
from agent_ls.tools.skill import skill_tool
from agent_ls.tools.task import Subagents, task_tool
from agent_ls.workspace.overlay import Overlay
from agent_ls.workspace.sandbox import unsandboxed_reason
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import ShellRunner

if TYPE_CHECKING:  # imported at run time only by an editor's session (start-up of agent-ls run)
    from agent_ls.core.problems import ProblemSource
    from agent_ls.mcp_client.tools import SessionMcp  # only with MCP servers configured (the SDK is heavy)

log = logging.getLogger(__name__)

CONTEXT_COMMAND = "/context"
"""The task that answers with ``Session.context_report`` as text, without a model call."""


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


def _message_text(message: Message) -> str:
    """What of ``message`` may name a tool: its text, a tool result's content, the names of its calls."""
    if isinstance(message, ToolResultMessage):
        return message.content
    if isinstance(message, AssistantMessage):
        return " ".join([message.text, *(call.name for call in message.tool_calls)])
    return message.text


def _chain_labels(context: AgentContext) -> tuple[str, ...]:
    return tuple(f.label for f in context.chain.files) if context.chain is not None else ()


def _chain_detail(context: AgentContext) -> str:
    """``2,031 of 32,768 bytes; 1 truncated; 1 skipped: <why>; 4 skills in the catalog``."""
    parts = []
    if context.chain is not None:
        parts.append(f"{context.chain.total_bytes:,} of {context.chain.budget_bytes:,} bytes")
        cut = sum(1 for f in context.chain.files if f.truncated)
        if cut:
            parts.append(f"{cut} truncated")
        skipped = [n for n in context.chain.notices if n.severity != "information"]
        if skipped:  # visible in the run's log, not only in `agent-ls instructions`
            parts.append(f"{len(skipped)} skipped: {skipped[0].message}")
    invocable = context.skills.model_invocable()
    count = len(invocable)
    parts.append(f"{count} skill{'' if count == 1 else 's'} in the catalog")
    if count and len(render_catalog(invocable, sys.maxsize)) > context.catalog_budget:
        parts.append(f"descriptions shortened to fit {context.catalog_budget:,} characters")
    return "; ".join(parts)


@dataclass(eq=False)
class Session:
    """One conversation in one workspace root, and its proposal. Built by ``assembly.assemble_session``
    (the parts below); nothing else builds them.

    Attributes:
        session_id: 12 hex digits.
        root: the workspace root (resolved).
        config: the config files of ``root``.
        context: the AGENTS.md chain and skills loaded for the run's focus (replaced on reload).
        policy: the permission policy (its ``paths`` is the one path policy of the session).
        shadow: the shadow copy commands and searches run in.
        overlay: the proposal and the editor's unsaved texts, over the disk.
        runner: the shell runner (commands in ``shadow``, their changes proposed to ``overlay``).
        nested: the nested AGENTS.md files attached at first touch, or None.
        registry: the tools, behind the permission policy and the approver.
        activations: the skills activated in this session (explicitly or by the ``skill`` tool).
        limits: the loop's stop conditions.
        open_model: builds the model client at the start of each run; raises ``ConfigError``.
        reload_context: loads the context again (same focus) when ``context_generation`` moved.
        context_generation: moves when an instruction or skill file changes; read before each turn.
        compact_threshold: the fraction of the usable window that starts a compaction (default 0.8).
        open_summarizer: opens the compaction role's model (``[models] compaction``) for summaries, or None
            (the run's).
        open_subagent_model: opens the subagent role's model (``[models] subagent``) at a run's first
            ``task`` call, or None (the run's).
        show_request: gets each request before it is sent, as text (``models.request_body.describe_request``,
            the API key redacted): ``agent-ls run --debug``, the editor's ``agentLs.trace``; None: not shown.
        record_exchange: gets each model call of every role, request and response
            (``models.recording``): ``agent-ls run --record``; None: not recorded.
        memory: the workspace's notes file (the memory tools), or None: no memory tools.
        redact: replaces secrets in what the harness reads back itself (acceptance checks' output tails).
        problems: the editor's problems (the ``problems`` tool), or None: no editor forwards them.
        subagents: runs the ``task`` tool's subagents (given each run's model), or None: no ``task`` tool.
        mcp: the workspace's MCP servers (``mcp_client``): started at each run's start, their tools given to
            the registry and refreshed before each model request; None: no MCP server is configured.
        todos: the todo list the model keeps with ``todo_write`` (``core.todos``): what the reminder and a
            compaction put back, and the editor shows.
        history: the conversation so far (system message first).
        last_run: the ``RunEnded`` of the last run, or None.
        pending_plan: the plan of the last plan run that no default run has carried yet, or None.
        compaction: what compactions keep across runs (the user's messages); see ``core.compaction``.
        outputs: where the whole text of cut tool results is kept (``keep_outputs``), or None.
    """

    session_id: str
    root: Path
    config: LoadedConfig
    context: AgentContext
    policy: PermissionPolicy
    shadow: ShadowCopy
    overlay: Overlay
    runner: ShellRunner
    nested: NestedAttacher | None
    registry: ToolRegistry
    activations: SkillActivations
    limits: LoopLimits
    open_model: ModelOpener
    reload_context: Callable[[], AgentContext] | None = None
    context_generation: Callable[[], int] | None = None
    compact_threshold: float = DEFAULT_THRESHOLD
    open_summarizer: ModelOpener | None = None
    open_subagent_model: ModelOpener | None = None
    show_request: Callable[[str], None] | None = None
    record_exchange: Callable[[ModelExchange], None] | None = None
    memory: MemoryNotes | None = None
    redact: Callable[[str], str] | None = None
    subagents: Subagents | None = None
    problems: ProblemSource | None = None
    mcp: SessionMcp | None = None
    todos: TodoList = field(default_factory=TodoList, init=False)
    history: list[Message] = field(default_factory=list, init=False)
    last_run: RunEnded | None = field(default=None, init=False)
    pending_plan: Plan | None = field(default=None, init=False)
    compaction: CompactionState = field(default_factory=CompactionState, init=False)
    outputs: OutputKeeper | None = field(default=None, init=False)
    _outputs_named: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self._seen_generation = self.context_generation() if self.context_generation is not None else 0
        if self.subagents is not None:
            self.subagents.instructions = self._chain_text
        self._set_skill_tool()

    def _set_skill_tool(self) -> None:
        names = [skill.name for skill in self.context.skills.model_invocable()]
        problems = []
        if self.problems is not None:  # an editor's session: agent-ls run never imports it (start-up)
            from agent_ls.tools.problems import problems_tool

            problems = [problems_tool(self.problems)]
        mcp = self.mcp.tools() if self.mcp is not None else None
        self.registry.set_extra_tools(
            [*([skill_tool(self.activations, names)] if names else []), *(mcp.sent if mcp else ())],
            deferred_tools(
                self.todos,
                self.memory,
                lambda: origin_of(self.session_id, self.history),
                [
                    *([task_tool(self.subagents)] if self.subagents is not None else []),
                    *problems,
                    *(mcp.deferred if mcp else ()),
                ],
                outputs=self.outputs,
                outputs_named=self._outputs_named,
            ),
        )

    def keep_outputs(self, keeper: OutputKeeper) -> None:
        """Keep the whole text of cut tool results in ``keeper`` (the session store's, opened after
        assembly): the registry keeps them and says so, the deferred ``read_output`` reads them, and
        compaction's placeholders name it. A resumed history that names ``read_output`` (a kept note, a
        placeholder) has it named by ``load_tools`` again; one that called it has it loaded."""
        self.outputs = keeper
        self.registry.keep_outputs(keeper)
        self._set_skill_tool()
        if any(read_output.NAME in _message_text(m) for m in self.history[1:]):
            self._name_read_output()
        called = (c.name for m in self.history if isinstance(m, AssistantMessage) for c in m.tool_calls)
        if read_output.NAME in called:
            self.registry.load([read_output.NAME])

    def _name_read_output(self) -> None:
        """Have ``load_tools`` name ``read_output`` from the next request on (a compaction placeholder
        names it): about 16 estimated tokens, where its whole schema (about 140) would undo part of what
        the pruning saved in a small window."""
        if not self._outputs_named:
            self._outputs_named = True
            self._set_skill_tool()

    def _chain_text(self) -> str:
        """The AGENTS.md chain as the model reads it ("" for none): what a subagent is given."""
        return render_chain(self.context.chain) if self.context.chain is not None else ""

    def system_message(self) -> SystemMessage:
        """The stable prefix: the system prompt, the AGENTS.md chain and the skills catalog. Rebuilt
        from the same context it is byte-identical (what a compaction relies on)."""
        prefix = self.context.prefix()
        return SystemMessage(system_prompt(str(self.root)) + (f"\n\n{prefix}" if prefix else ""))

    def _refresh_context(self, history: list[Message], emit: EventSink) -> None:
        """At a turn boundary: when an instruction or skill file changed, reload and rebuild the prefix."""
        if self.context_generation is None or self.reload_context is None:
            return
        generation = self.context_generation()
        if generation == self._seen_generation:
            return
        self._seen_generation = generation
        try:
            context = self.reload_context()
        except Exception:  # a reload must never break the run: keep the context we have
            log.exception("reloading the instructions failed")
            return
        changed = context.prefix() != self.context.prefix()
        self.context = context
        self.activations.skills = context.skills
        self._set_skill_tool()
        nested = context.nested_instructions(self.nested.spent if self.nested is not None else 0)
        if self.nested is not None and nested is not None:
            self.nested.replace(nested)  # a changed nested file comes again at the next touch
        self.policy.paths.allow_reading(context.readable_dirs())  # folders of skills added since
        if not changed:
            return
        if history and isinstance(history[0], SystemMessage):
            history[0] = self.system_message()
        emit(InstructionsLoaded("reloaded", _chain_labels(context), "an instruction or skill file changed"))

    def _user_message(self, task: str, focus: Focus, emit: EventSink) -> UserMessage:
        """The task message; ``/skill-name args`` puts that skill's instructions first."""
        text = task_message(task, focus)
        slash = parse_slash(task)
        if slash is None:
            return UserMessage(text)
        skill = find_skill(self.context.skills, slash[0])
        if skill is None:
            near = near_names(self.context.skills, slash[0])
            hint = f"did you mean {', '.join(near)}? " if near else ""
            detail = f"no skill named {slash[0]!r}; {hint}the task runs as written"
            emit(InstructionsLoaded("unknown-skill", (), detail))
            return UserMessage(text)
        name, args = skill.name, slash[1]
        try:
            activation = self.activations.activate(name, args)
        except OSError as exc:
            log.warning("skill %s cannot be read: %s", name, exc)
            return UserMessage(text)
        if activation is None:  # already active in this session
            return UserMessage(text)
        emit(InstructionsLoaded("skill", (f"skill:{name}",), "invoked explicitly"))
        return UserMessage(f"{activation.text}\n\n{text}")

    async def run(
        self,
        *,
        task: str,
        focus: Focus,
        emit: EventSink,
        usage_before: Usage = NO_USAGE,
        open_model: ModelOpener | None = None,
        mode: RunMode = "default",
        checks: Sequence[str] = (),
        resources: Sequence[str] = (),
    ) -> RunEnded:
        """Run ``task`` to a stop condition and return the ``RunEnded`` event (also emitted last).

        ``mode`` ``plan``: read-only tools, edits refused by the policy, the run ends with a plan
        (``tools.plan_mode``); ``default`` after a plan run: the task message carries the approved plan.

        ``checks`` are acceptance commands (``core.checks``), joined by those of the skills activated; the
        task message names them, and a default run runs them when the model says it is done.

        ``resources`` are MCP resources to attach to the task (``<server>:<uri>`` or a URI a server lists):
        read with resources/read and added to the task message as data; one that cannot be read ends the
        run with status ``error``. The MCP servers are started first (``mcp``).

        ``usage_before`` is the usage of the editor session's earlier runs; events report the sum.
        ``open_model`` replaces the session's own model opener for this run (a client the caller
        opened already, a scripted model in tests).

        Never raises except for programming errors; a model that cannot be opened ends the run with
        status ``error`` and a one-line reason.
        """
        if task.strip() == CONTEXT_COMMAND:  # measured even with no model configured
            ended = await answer_context(self, task, open_model or self.open_model, emit, usage_before)
            self.last_run = ended
            return ended
        try:
            model = (open_model or self.open_model)()
        except Exception as exc:  # every run ends with a RunEnded, whatever broke
            reason = str(exc)
            if not isinstance(exc, AgentLsError):
                log.exception("opening the model failed")
                reason = f"internal error: {type(exc).__name__}: {exc}"
            emit(RunStarted(session_id=self.session_id, task=task, model="(none)"))
            ended = RunEnded(
                status="error", reason=reason, answer="", usage=Usage(), session_usage=usage_before, mode=mode
            )
            emit(ended)
            self.last_run = ended
            return ended
        if self.record_exchange is not None:  # a /compact's summary call is recorded too
            model = RecordingModel(model, self.record_exchange)
        if task.split(maxsplit=1)[:1] == [COMPACT_COMMAND]:
            try:
                ended = await answer_compact(self, task, model, emit, usage_before)
            finally:
                await model.aclose()
            self.last_run = ended
            return ended
        if self.show_request is not None:
            model = ObservedModel(model, self.show_request)
        # What entered the context is announced after RunStarted, before the first model call.
        loaded: list[Event] = []
        if not self.history:
            self.history.append(self.system_message())
            loaded.append(
                InstructionsLoaded("chain", _chain_labels(self.context), _chain_detail(self.context))
            )
        attached, failed = await self._prepare_mcp(resources, loaded.append)
        if failed:
            await model.aclose()
            emit(RunStarted(session_id=self.session_id, task=task, model=model.model_name))
            ended = RunEnded(
                status="error", reason=failed, answer="", usage=Usage(), session_usage=usage_before, mode=mode
            )
            emit(ended)
            self.last_run = ended
            return ended
        moded = ModeRun(
            mode, self.pending_plan, self.registry, self.policy, ToolContext(self.overlay, self.runner)
        )
        asked = self._user_message(task, focus, loaded.append)
        verifier = AcceptanceChecks(
            self.registry, checks, lambda: activated_skill_checks(self.activations), self.redact
        )
        if mode == "default" and (line := checks_line(verifier.commands())):
            asked = UserMessage(f"{asked.text}\n\n{line}")
        if attached:
            asked = UserMessage(f"{asked.text}\n\n{attached}")
        self.history.append(UserMessage(moded.task_text(asked.text)))
        self.pending_plan = moded.pending

        def before_turn(history: list[Message]) -> None:
            for event in loaded:
                emit(event)
            loaded.clear()
            self._refresh_context(history, emit)
            if self.mcp is not None and self.mcp.changed():  # a listChanged: the next request has them
                self._set_skill_tool()

        unsandboxed = await asyncio.to_thread(unsandboxed_reason, self.config.permissions.sandbox_enabled)
        self.policy.sandboxed = not unsandboxed
        if self.subagents is not None:
            self.subagents.model = model  # the run's model, for its subagents
            self.subagents.open_own = self._observed(self.open_subagent_model)
        try:
            with moded:
                ended = await run_loop(
                    session_id=self.session_id,
                    task=task,
                    history=self.history,
                    model=model,
                    tools=moded.tools,
                    emit=moded.sink(emit),
                    ended_by=moded.ended_by,
                    limits=self.limits,
                    session_usage=usage_before,
                    before_turn=before_turn,
                    unsandboxed=unsandboxed,
                    left_out=self.runner.take_left_out,
                    compactor=self.compactor(model),
                    reminder=self._reminder,
                    verifier=verifier if mode == "default" else None,
                    after_answer=self._problem_recheck() if mode == "default" else None,
                )
            ended = moded.ended or ended
            self.pending_plan = moded.pending
        finally:
            if self.subagents is not None:
                await self.subagents.end_run()
            await model.aclose()
        self.last_run = ended
        return ended

    async def _prepare_mcp(self, resources: Sequence[str], emit: EventSink) -> tuple[str, str]:
        """Start the MCP servers for this run and read ``resources``: (their data blocks for the task
        message, "" or why one could not be read)."""
        if self.mcp is None:
            return "", "resource: no MCP server is configured" if resources else ""
        from agent_ls.mcp_client.connection import CallFailed

        await self.mcp.prepare(emit)
        self._set_skill_tool()
        try:
            text = await self.mcp.resources_text(resources)
        except CallFailed as exc:
            return "", f"resource: {exc}"
        return (self.redact(text) if self.redact is not None else text), ""

    def _problem_recheck(self) -> Callable[[], Awaitable[str | None]] | None:
        """The editor's new problems in the edited files, when the model answers (an editor's session)."""
        if self.problems is None:
            return None
        from agent_ls.core.problems import AnswerRecheck  # agent-ls run never imports it (start-up)

        return AnswerRecheck(self.problems, self.overlay.proposal).after_answer

    def _observed(self, opener: ModelOpener | None) -> ModelOpener | None:
        """``opener`` whose client is recorded and shows each request like the run's own model."""
        opener = recording(opener, self.record_exchange)
        show = self.show_request
        if opener is None or show is None:
            return opener
        inner = opener
        return lambda: ObservedModel(inner(), show)

    def context_report(self, model: ModelClient | None, no_model: str = "") -> ContextReport:
        """The parts of the next request ``model`` would be sent: the history so far (the system message
        alone before the first run) with the current tools (``context_report.measure``). Sends nothing.
        With no model (``no_model`` says why), the body is measured as a Chat Completions request in the
        default window."""
        messages = list(self.history) or [self.system_message()]  # a snapshot: a run may append
        note = self._reminder(1, Usage())  # what a follow-up's first request would end with
        known = known_texts(
            self.context, self.nested.loaded() if self.nested is not None else (), self.activations.active()
        )
        if note:
            messages.append(UserMessage(note))
            known.append(KnownText(REMINDER, note))
        window = context_window_of(model) if model is not None else None
        report = measure(
            encoder_of(model) if model is not None else chat_encoder(""),
            messages,
            list(self.registry.specs()),
            known,
            context_window=window or DEFAULT_CONTEXT_WINDOW,
            window_known=window is not None,
        )
        report = replace(report, no_model=no_model) if model is None else report
        if self.memory is None:
            return report
        return replace(report, memory_path=str(self.memory.path), memory_bytes=self.memory.size())

    def _reminder(self, turn: int, used: Usage) -> str:
        """The status note at the end of the request of ``turn`` (``core.reminder``; "" for none)."""
        facts = ReminderFacts(
            turn=turn,
            max_turns=self.limits.max_turns,
            used=used,
            max_tokens=self.limits.max_tokens,
            max_cost_usd=self.limits.max_cost_usd,
            pending_files=[change.path for change in self.overlay.proposal()],
            todos=self.todos.render(),
        )
        return reminder_text(facts)

    def compactor(self, model: ModelClient) -> Compactor:
        """The ``Compactor`` of a run with ``model``: its window (automatic only when configured), the
        ``agent.context`` estimator, and what this session puts back after a summary."""
        window, reserve = window_of(model)
        return Compactor(
            context_window=window or DEFAULT_CONTEXT_WINDOW,
            max_output_tokens=reserve,
            estimate=token_estimator(model),
            system_message=self.system_message,
            pinned=self.pinned_instructions,
            proposal=lambda: [change.path for change in self.overlay.proposal()],
            state=self.compaction,
            threshold=self.compact_threshold,
            summarizer=self._observed(self.open_summarizer),
            auto=window is not None,
            refetch=self._name_read_output if self.outputs is not None else None,
        )

    def proposal(self) -> list[FileChange]:
        """The pending edits, sorted by path."""
        return self.overlay.proposal()

    def pinned_instructions(self) -> list[str]:
        """What a compaction must put back after its summary, in order: the nested AGENTS.md blocks
        attached so far, then every activated skill (deduplicated). The stable prefix is rebuilt with
        ``system_message``."""
        nested = [render_nested(f) for f in self.nested.loaded()] if self.nested is not None else []
        return [*nested, *(activation.text for activation in self.activations.active())]

    def governed_by(self, changes: Sequence[FileChange]) -> dict[str, list[str]]:
        """Per proposed file, the AGENTS.md files (labels, root first) that govern it; files governed
        by none are left out."""
        found = {change.path: self.context.governing(change.path) for change in changes}
        return {path: labels for path, labels in found.items() if labels}

    def rebase(self, changes: Sequence[FileChange]) -> None:
        """Replace pending edits with their re-based forms (``workspace.rebase.rebase_change``)."""
        for change in changes:
            self.overlay.rebase(change)

    def discard(self) -> None:
        """Drop the pending edits."""
        self.overlay.discard()

    async def close_mcp(self) -> None:
        """Stop the MCP servers this session started itself (``agent-ls run``'s; an editor's are shared by
        its sessions and stopped at shutdown)."""
        if self.mcp is not None and self.mcp.owned:
            await asyncio.shield(self.mcp.hub.aclose())

    def close(self) -> None:
        """Delete the shadow copy and the overlay view. The proposal object stays readable."""
        self.shadow.close()
        self.runner.close()
