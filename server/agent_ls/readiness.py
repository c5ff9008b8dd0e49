"""What a run would use now, found without a model call: the model (or why none can run) and the sandbox.

The same resolution as a run (``models.resolution.resolve_model`` over the editor settings, the
environment and the config, and ``models.roles.resolve_role`` for the other roles' models) and the same
sandbox check (``workspace.sandbox.unsandboxed_reason``) as ``agent-ls doctor``, without doctor's network
probe or trial command, so a front end can say at once what is in use (the language server's
``agent.status``, shown by the VS Code extension at its first start in a workspace).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent_ls.config import LoadedConfig
from agent_ls.core.errors import ConfigError
from agent_ls.models.resolution import NO_MODEL, resolve_model
from agent_ls.models.roles import OTHER_ROLES, resolve_role
from agent_ls.settings import EditorSettings, EnvSnapshot
from agent_ls.workspace.sandbox import sandbox_status, unsandboxed_reason

ModelState = Literal["ready", "noModel", "noApiKey", "invalid"]


@dataclass(frozen=True)
class Readiness:
    """The model and sandbox a run would use.

    Attributes:
        model: the model string (``ollama/qwen2.5-coder:7b``), or None when none resolves.
        base_url: its API root, or None (no model, or a replay script).
        model_state: ``ready``; ``noModel`` (none configured); ``noApiKey`` (the provider needs a key and
            none is set); ``invalid`` (the model or its config is wrong, or a role's model cannot be used:
            ``model`` is then the main model).
        model_detail: for any state but ``ready``, what to do (else ``""``).
        sandboxed: whether shell commands run in bubblewrap.
        sandbox: one line: the bubblewrap in use, or why commands run unsandboxed.
    """

    model: str | None
    base_url: str | None
    model_state: ModelState
    model_detail: str
    sandboxed: bool
    sandbox: str


def readiness(editor: EditorSettings, env: EnvSnapshot, config: LoadedConfig) -> Readiness:
    """The model a run would use and whether it can start, and the sandbox commands would run in.

    Never raises for a configuration problem: it is the ``invalid`` state. Blocks the first time (the
    sandbox is probed once per process): call it from a worker thread on an event loop.
    """
    unsandboxed = unsandboxed_reason(config.permissions.sandbox_enabled)
    sandbox = unsandboxed or f"{sandbox_status().detail}: no network, only the shadow copy writable"
    sandboxed = not unsandboxed
    try:
        choice = resolve_model(None, editor, env, config)
    except ConfigError as exc:
        state: ModelState = "noModel" if str(exc) == NO_MODEL else "invalid"
        return Readiness(None, None, state, str(exc), sandboxed, sandbox)
    if choice.key_required and choice.api_key is None:
        detail = f"{choice.model_string} needs an API key: set {choice.key_env} or AGENT_LS_API_KEY"
        return Readiness(choice.model_string, choice.base_url, "noApiKey", detail, sandboxed, sandbox)
    for role in OTHER_ROLES:  # a run checks the roles' models before its first call too
        try:
            resolve_role(role, choice, editor, env, config)
        except ConfigError as exc:
            return Readiness(choice.model_string, choice.base_url, "invalid", str(exc), sandboxed, sandbox)
    return Readiness(choice.model_string, choice.base_url, "ready", "", sandboxed, sandbox)
