"""Wiring: the one place where adapters are assembled into a session the core can run.

A ``Session`` owns, for one workspace root: the overlay (the proposal), the shadow copy the shell runs
in, the tool registry, and the conversation history. Both front ends use it: ``lsp/`` (one session
per ``agent.run``) and ``cli.py`` (``agent-ls run`` and ``agent-ls demo``'s client side never does).

The permission policy is built here too (``build_policy``), from the built-in rules, the config files
(``config.load_config``) and the editor settings' rules, in that order; ``agent-ls policy check``
builds it the same way.

Order of a run: resolve the model (a ``ConfigError`` ends the run with status ``error``), build the
system prompt and task message, then ``core.loop.run_loop``.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from agent_ls.config import LoadedConfig
from agent_ls.core.context import Focus, system_prompt, task_message
from agent_ls.core.errors import AgentLsError
from agent_ls.core.events import EventSink, RunEnded, RunStarted
from agent_ls.core.loop import LoopLimits, run_loop
from agent_ls.core.messages import NO_USAGE, Message, SystemMessage, Usage, UserMessage
from agent_ls.core.ports import Approver, ModelClient
from agent_ls.core.proposal import FileChange
from agent_ls.policy.approvals import append_allow_rules
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.policy.rules import BUILTIN_RULES, Rule
from agent_ls.tools import default_tools
from agent_ls.tools.base import ToolContext
from agent_ls.tools.registry import ToolRegistry
from agent_ls.workspace.overlay import BufferSource, Overlay
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.shadow import ShadowCopy, ShellRunner

log = logging.getLogger(__name__)

ModelOpener = Callable[[], ModelClient]
"""Builds the model client for a run; raises ``ConfigError`` (or another ``AgentLsError``) with one line."""


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


def build_policy(root: Path, config: LoadedConfig, editor_rules: Sequence[Rule] = ()) -> PermissionPolicy:
    """The permission policy for a workspace: rules from every source, and the configured secrets.

    Args:
        root: the workspace root.
        config: the loaded config files (``LoadedConfig()`` for none: built-in rules only, and no
            "Always allow", since there is no user config file to write).
        editor_rules: the rules of the editor settings (``agentLs.permissions.allow/ask/deny``).
    """
    permissions = config.permissions
    # agent-ls's own config directory is secret, unless the user opened it as the workspace.
    config_dir = config.user_file.parent if config.user_file is not None else None
    if config_dir is not None and root.resolve().is_relative_to(config_dir.resolve()):
        config_dir = None
    paths = PathPolicy(
        root,
        secret_patterns=permissions.secret_files,  # added to the built-in list, which always applies
        not_secret=permissions.not_secret_files,
        config_dir=config_dir,
    )
    write = functools.partial(append_allow_rules, config.user_file) if config.user_file is not None else None
    return PermissionPolicy(
        paths,
        (*BUILTIN_RULES, *permissions.rules, *editor_rules),
        shell_mode=permissions.shell_mode,
        write_rules=write,
    )


class Session:
    """One conversation in one workspace root, and its proposal.

    Args:
        root: the workspace root (absolute).
        approver: answers "ask" verdicts.
        environ: the environment the shell's allowlisted child environment is built from.
        buffers: the editor's open documents (unsaved text), or None outside an editor.
        limits: the loop's stop conditions.
        tool_timeout_s: the per-tool timeout in seconds (default 60, as in the seed harness).
        config: the config files of this workspace (``config.load_config``); None: built-in defaults.
            Its ``[shell]`` mode and ``[sandbox]`` switch go to the shell runner, its secret patterns to
            the path policy, its provider key variables to the list the child environment never gets.
        editor_rules: permission rules from the editor settings, the last source.
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
        config: LoadedConfig | None = None,
        editor_rules: Sequence[Rule] = (),
    ) -> None:
        self.session_id = session_id or new_session_id()
        self.root = root.resolve()
        self.limits = limits or LoopLimits()
        self.config = config = config or LoadedConfig()
        self.policy = build_policy(self.root, config, editor_rules)
        paths = self.policy.paths  # one path policy for the tools, the shell's paths and the shadow copy
        sandbox: Literal["detect"] | None = "detect" if config.permissions.sandbox_enabled else None
        self.shadow = ShadowCopy(self.root, paths=paths)
        self.overlay = Overlay(
            self.root, buffers, shadow=self.shadow, environ=environ, sandbox=sandbox, paths=paths
        )
        runner = ShellRunner(
            self.shadow,
            self.overlay,
            environ,
            sandbox=sandbox,
            mode=config.permissions.shell_mode,
            key_names=[p.api_key_env for p in config.providers.values() if p.api_key_env],
        )
        self.registry = ToolRegistry(
            default_tools(),
            self.policy,
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
