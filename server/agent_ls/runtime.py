"""Wiring: the one place where adapters are assembled into a session the core can run.

A ``Session`` owns, for one workspace root: the overlay (the proposal), the shadow copy the shell runs
in, the tool registry, and the conversation history. Both front ends use it: ``lsp/`` (one session
per ``agent.run``) and ``cli.py`` (``agent-ls run`` and ``agent-ls demo``'s client side never does).

Order of a run: resolve the model (a ``ConfigError`` ends the run with status ``error``), build the
system prompt and task message, then ``core.loop.run_loop``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

from agent_ls.core.context import Focus, system_prompt, task_message
from agent_ls.core.errors import AgentLsError
from agent_ls.core.events import EventSink, RunEnded, RunStarted
from agent_ls.core.loop import LoopLimits, run_loop
from agent_ls.core.messages import NO_USAGE, Message, SystemMessage, Usage, UserMessage
from agent_ls.core.ports import Approver, ModelClient
from agent_ls.core.proposal import FileChange
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.tools import default_tools
from agent_ls.tools.base import ToolContext
from agent_ls.tools.registry import ToolRegistry
from agent_ls.workspace.overlay import BufferSource, Overlay
from agent_ls.workspace.shadow import ShadowCopy, ShellRunner

log = logging.getLogger(__name__)

ModelOpener = Callable[[], ModelClient]
"""Builds the model client for a run; raises ``ConfigError`` (or another ``AgentLsError``) with one line."""


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


class Session:
    """One conversation in one workspace root, and its proposal.

    Args:
        root: the workspace root (absolute).
        approver: answers "ask" verdicts.
        environ: the environment the shell's allowlisted child environment is built from.
        buffers: the editor's open documents (unsaved text), or None outside an editor.
        limits: the loop's stop conditions.
        tool_timeout_s: the per-tool timeout in seconds (default 60, as in the seed harness).
    """

    def __init__(
        self,
        *,
        root: Path,
        approver: Approver,
        environ: Mapping[str, str],
        buffers: BufferSource | None = None,
        limits: LoopLimits | None = None,
        tool_timeout_s: float = 60.0,
        session_id: str | None = None,
    ) -> None:
        self.session_id = session_id or new_session_id()
        self.root = root.resolve()
        self.limits = limits or LoopLimits()
        self.shadow = ShadowCopy(self.root)
        self.overlay = Overlay(self.root, buffers, shadow=self.shadow, environ=environ)
        runner = ShellRunner(self.shadow, self.overlay, environ)
        self.registry = ToolRegistry(
            default_tools(),
            PermissionPolicy(),
            approver,
            ToolContext(workspace=self.overlay, runner=runner),
            tool_timeout_s=tool_timeout_s,
        )
        self.history: list[Message] = []
        self.last_run: RunEnded | None = None

    async def run(
        self,
        *,
        task: str,
        focus: Focus,
        open_model: ModelOpener,
        emit: EventSink,
        usage_before: Usage = NO_USAGE,
    ) -> RunEnded:
        """Run ``task`` to a stop condition and return the ``RunEnded`` event (also emitted last).

        ``usage_before`` is the usage of the editor session's earlier runs; events report the sum.

        Never raises except for programming errors; a model that cannot be opened ends the run with
        status ``error`` and a one-line reason.
        """
        try:
            model = open_model()
        except Exception as exc:  # every run ends with a RunEnded, whatever broke
            reason = str(exc)
            if not isinstance(exc, AgentLsError):
                log.exception("opening the model failed")
                reason = f"internal error: {type(exc).__name__}: {exc}"
            emit(RunStarted(session_id=self.session_id, task=task, model="(none)"))
            ended = RunEnded(
                status="error", reason=reason, answer="", usage=Usage(), session_usage=usage_before
            )
            emit(ended)
            self.last_run = ended
            return ended
        if not self.history:
            self.history.append(SystemMessage(system_prompt(str(self.root))))
        self.history.append(UserMessage(task_message(task, focus)))
        try:
            ended = await run_loop(
                session_id=self.session_id,
                task=task,
                history=self.history,
                model=model,
                tools=self.registry,
                emit=emit,
                limits=self.limits,
                session_usage=usage_before,
            )
        finally:
            await model.aclose()
        self.last_run = ended
        return ended

    def proposal(self) -> list[FileChange]:
        """The pending edits, sorted by path."""
        return self.overlay.proposal()

    def discard(self) -> None:
        """Drop the pending edits."""
        self.overlay.discard()

    def close(self) -> None:
        """Delete the shadow copy. The proposal object stays readable."""
        self.shadow.close()
