"""Assembling a session: the one place where a front end's settings become a ``runtime.Session``.

Every front end calls ``assemble_session`` (``agent-ls run`` in ``headless.py``, ``agent.run`` in
``lsp/handlers/commands.py``, and the ACP front end to come); none builds a part itself. From the
settings it builds, in order (docs/architecture.md draws the path):

1. the path policy (``config.path_policy_for``: built-in and configured secrets, the user config
   directory): the one of the session, used by the instruction loaders, the tools, the shell's paths
   and the shadow copy;
2. the AGENTS.md chain and skills of the focus (``instructions.agent_context.load_agent_context``),
   unless given; the folders of skills outside the workspace become readable (never writable);
3. the permission policy on that path policy: built-in rules, then the config files', then the
   editor's;
4. the shadow copy, the overlay view (``layered_copy``: used instead of the copy where overlay
   views work, with the workspace's ``SecretIndex``: the front end's, shared by its sessions, built
   when the workspace opened, or one of the session's own, started here, while the model thinks),
   the overlay over them (pending edits and unsaved buffers) and the shell runner that runs commands
   in them and proposes their changes back to the overlay;
5. the tool registry, behind the permission policy and the approver, and the workspace's memory notes
   (``tools.memory``: in the user state dir, next to the session store; secrets redacted), and the
   subagents' own registry of read-only tools behind the same policy and approver (``tools.task``);
6. the model openers (``models.resolution``: the model is resolved and its client built at the start of
   each run, so a bad model ends that run with a clear reason instead of failing the request; the models
   of the compaction and subagent roles, ``models.roles``, are resolved then too, and their clients built
   only when a summary or a subagent first needs one).

``agent-ls policy check`` builds the same permission policy with ``build_policy``.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agent_ls.config import LoadedConfig, path_policy_for
from agent_ls.core.compaction import DEFAULT_THRESHOLD
from agent_ls.core.errors import ConfigError
from agent_ls.core.events import ModelRole
from agent_ls.core.loop import LoopLimits
from agent_ls.core.ports import Approver, ModelClient
from agent_ls.instructions.activation import SkillActivations
from agent_ls.instructions.agent_context import AgentContext, load_agent_context
from agent_ls.instructions.skills import Skill
from agent_ls.models.resolution import open_model, resolve_model
from agent_ls.models.roles import OTHER_ROLES, resolve_role, role_model_string
from agent_ls.policy.approvals import append_allow_rules
from agent_ls.policy.engine import PermissionPolicy
from agent_ls.policy.rules import BUILTIN_RULES, Rule
from agent_ls.runtime import ModelOpener, Session, new_session_id
from agent_ls.sessions.redaction import Redactor
from agent_ls.sessions.store import is_session_file, state_dir, workspace_folder
from agent_ls.settings import EditorSettings, EnvSnapshot
from agent_ls.tools import read_only_tools, sent_tools
from agent_ls.tools.base import ToolContext
from agent_ls.tools.memory import MemoryNotes, workspace_memory_path
from agent_ls.tools.registry import ToolRegistry
from agent_ls.tools.task import Subagents
from agent_ls.workspace.layered_copy import LayeredCopy
from agent_ls.workspace.overlay import BufferSource, Overlay
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.secret_index import SecretIndex
from agent_ls.workspace.shadow import ShadowCopy
from agent_ls.workspace.shell_runner import ShellRunner

if TYPE_CHECKING:  # imported at run time only by an editor's session (start-up of agent-ls run)
    from agent_ls.core.problems import ProblemSource
    from agent_ls.mcp_client.config import ServerConfig
    from agent_ls.mcp_client.hub import McpHub
    from agent_ls.mcp_client.hubs import McpHubs

APPROVALS_FILE = "mcp-approvals.json"
"""The workspace MCP servers the user chose "Always allow" for, in the user state dir (docs/mcp.md)."""

NO_ENVIRONMENT = "no model: this session was assembled without an environment to resolve one from"


def assemble_session(
    *,
    root: Path,
    approver: Approver,
    environ: Mapping[str, str],
    config: LoadedConfig | None = None,
    env: EnvSnapshot | None = None,
    focus: Path | None = None,
    model: str | None = None,
    editor: EditorSettings | None = None,
    buffers: BufferSource | None = None,
    limits: LoopLimits | None = None,
    tool_timeout_s: float = 60.0,
    session_id: str | None = None,
    context: AgentContext | None = None,
    reload_context: Callable[[], AgentContext] | None = None,
    context_generation: Callable[[], int] | None = None,
    secret_index: SecretIndex | None = None,
    problems: ProblemSource | None = None,
    mcp_hub: McpHub | None = None,
    own_mcp: bool = True,
) -> Session:
    """Build a session for ``root`` from a front end's settings (module docstring). Blocking: it reads
    the instruction files (the LSP server calls it in a worker thread; it must not touch ``buffers``,
    the approver or the server there, only keep them).

    Args:
        root: the workspace root.
        approver: answers "ask" verdicts (the editor's prompt, the terminal's, or a fixed answer).
        environ: the environment the shell's allowlisted child environment is built from.
        config: the config files of ``root`` (``config.load_config``); None: built-in defaults. Its
            ``[shell]`` mode and ``[sandbox]`` switch go to the shell runner, its secret patterns to the
            path policy, its provider key variables to the list the child environment never gets.
        env: the environment snapshot the instructions (home, user config directory) and the model
            (``AGENT_LS_MODEL``, keys) are resolved from. None: a bare session with no instructions
            and no model of its own (unit tests give ``context`` and ``open_model`` themselves).
        focus: the absolute path of the file in focus, or None (the root): its AGENTS.md chain
            applies.
        model: the model string asked for (``--model``, the ``model`` of ``agent.run``), or None.
        editor: the editor settings (``agentLs.*``): the model, ``maxTurns`` and permission rules
            (the last source); None outside an editor.
        buffers: the editor's open documents (unsaved text), or None outside an editor.
        limits: the loop's stop conditions; None: the editor's (``maxTurns``), else the defaults.
        tool_timeout_s: the per-tool timeout in seconds (default 60, as in the seed harness).
        session_id: the id to use; a new one when None.
        context: the AGENTS.md chain and skills, already loaded; None: loaded here (with ``env``).
        secret_index: the workspace's secret index (``SecretIndexes.get``), shared by the front end's
            sessions; None: one of the session's own, built from now on in the background and closed
            with the session.
        reload_context: loads the context again when ``context_generation`` moved; None: the same
            loading as step 1, when ``env`` is given.
        context_generation: a counter that moves when an instruction or skill file changes (the file
            watcher); read before each model call.
        problems: the editor's problems for ``root`` (the LSP front end's); None: no ``problems`` tool.
        mcp_hub: the workspace's MCP servers (``mcp_hub_for``), shared by the front end's sessions; None:
            with ``own_mcp`` and ``env``, built here when servers are configured, owned by the session (the
            front end closes it: ``Session.mcp``); else no MCP tools.
        own_mcp: False for a session that never runs (a stored proposal shown or applied).
    """
    root = root.resolve()
    config = config or LoadedConfig()
    editor_rules = editor.permissions.rules()[0] if editor is not None else ()

    # One path policy for the instructions, the tools, the shell's paths and the shadow copy.
    paths = path_policy_for(root, config)

    def load() -> AgentContext:
        if env is None:
            return AgentContext(root)
        return load_agent_context(
            workspace_root=root, focus=focus, config=config, env=env, is_secret=paths.is_secret
        )

    if context is None:
        context = load()
    if reload_context is None and env is not None:
        reload_context = load
    paths.allow_reading(context.readable_dirs())
    policy = _permission_policy(paths, config, editor_rules)
    sandbox: Literal["detect"] | None = "detect" if config.permissions.sandbox_enabled else None
    shadow = ShadowCopy(root, paths=paths)
    owns_index = secret_index is None
    if secret_index is None:
        secret_index = SecretIndex(root, paths.is_secret)
        start_when_idle(secret_index.start)
    layered = LayeredCopy(root, secret_index, owns_index=owns_index)
    overlay = Overlay(root, buffers, shadow=shadow, environ=environ, sandbox=sandbox, paths=paths)
    activations = SkillActivations(context.skills, root)

    def skill_dirs() -> list[Path]:
        """The folders of the activated skills that may be read outside the workspace (for the sandbox)."""
        readable = set(paths.extra_dirs)
        return [folder for folder in activations.active_folders() if folder.resolve() in readable]

    runner = ShellRunner(
        shadow,
        overlay,
        environ,
        sandbox=sandbox,
        mode=config.permissions.shell_mode,
        key_names=_key_names(config),
        paths=paths,
        skill_dirs=skill_dirs,
        layered=layered,
        # A command's change enters the proposal unless its edit is denied (a .git file; every file in
        # a plan run, whose policy refuses edits: nothing reaches the proposal then).
        may_propose=lambda rel: policy.check_path(rel, write=True).verdict != "deny",
    )
    nested = context.nested()
    # One redactor for what the tools return (the model, the transcript, the session file) and what the
    # harness reads back: the key values of the environment and of the providers' api_key_env, key formats.
    redact = Redactor.from_environ(environ, _key_names(config)).text
    registry = ToolRegistry(
        sent_tools(),
        policy,
        approver,
        ToolContext(workspace=overlay, runner=runner, instructions=nested),
        tool_timeout_s=tool_timeout_s,
        redact=redact,
    )

    def load_skill_tools(skill: Skill) -> None:
        """A skill's ``allowed-tools`` names the deferred tools it uses (code-review: review_findings)."""
        registry.load(skill.allowed_tools)

    activations.on_activate = load_skill_tools
    session_id = session_id or new_session_id()
    subagent_tools = ToolRegistry(
        read_only_tools(),
        policy,
        approver,
        ToolContext(workspace=overlay, runner=runner),
        tool_timeout_s=tool_timeout_s,
        redact=redact,
    )
    owned = mcp_hub is None
    if mcp_hub is None and env is not None and own_mcp:
        mcp_hub = mcp_hub_for(root, config, env, environ)
    mcp = None
    if mcp_hub is not None:
        from agent_ls.mcp_client.tools import SessionMcp  # the SDK, only with servers configured

        mcp = SessionMcp(mcp_hub, approver, owned=owned)
    if limits is None:
        limits = editor.loop_limits() if editor is not None else LoopLimits()
    budget = config.budget  # agent-ls.toml's [budget] where the editor or the command line set none
    limits = replace(
        limits,
        max_tokens=limits.max_tokens or budget.max_tokens,
        max_cost_usd=limits.max_cost_usd or budget.max_cost_usd,
    )
    return Session(
        session_id=session_id,
        root=root,
        config=config,
        context=context,
        policy=policy,
        shadow=shadow,
        overlay=overlay,
        runner=runner,
        nested=nested,
        registry=registry,
        activations=activations,
        limits=limits,
        open_model=model_opener(model, editor, env, config, replay_root=root),
        compact_threshold=config.compaction.threshold or DEFAULT_THRESHOLD,
        open_summarizer=role_opener("compaction", model, editor, env, config),
        open_subagent_model=role_opener("subagent", model, editor, env, config),
        reload_context=reload_context,
        context_generation=context_generation,
        memory=_memory(root, environ) if env is not None else None,
        redact=redact,
        subagents=Subagents(session_id, str(root), subagent_tools),
        problems=problems,
        mcp=mcp,
    )


def mcp_hub_for(
    root: Path,
    config: LoadedConfig,
    env: EnvSnapshot,
    environ: Mapping[str, str],
    hubs: McpHubs | None = None,
    disabled: Sequence[str] = (),
    given: Sequence[ServerConfig] = (),
) -> McpHub | None:
    """The MCP hub of ``root`` (``mcp_client.hub``): the user's ``mcp.json`` and the workspace's
    ``.mcp.json`` under ``config``'s ``[mcp]`` and trust; None when no server is configured (the SDK is then
    never imported). ``environ`` locates the state dir (``AGENT_LS_STATE_DIR``) where approvals are kept;
    ``env`` expands the entries' variables. With ``hubs`` (a front end's, called on its event loop), the
    hub it keeps for that configuration; else a new one the caller closes. ``disabled``: more server names
    not to start (the editor's ``agentLs.mcp.disabled``). ``given``: servers the editor gave for this
    session (ACP ``session/new`` ``mcpServers``), scope ``user`` (the user's own, as their mcp.json's), in
    place of configured ones of the same name. Reads two small files; starts nothing."""
    from agent_ls.mcp_client.config import load_servers

    user_dir = config.user_file.parent if config.user_file is not None else None
    servers = load_servers(root, user_dir, frozenset([*(config.mcp.disabled or ()), *disabled]))
    if given:
        names = {server.name for server in given}
        kept = tuple(server for server in servers.servers if server.name not in names)
        servers = replace(servers, servers=(*given, *kept))
    if not servers.servers:
        return None
    from agent_ls.mcp_client.hub import ApprovalStore, HubSettings, McpHub

    table = config.mcp
    settings = HubSettings(
        startup_timeout_s=table.startup_timeout_s or HubSettings.startup_timeout_s,
        call_timeout_s=table.call_timeout_s or HubSettings.call_timeout_s,
        defer_over_tokens=(
            table.defer_over_tokens if table.defer_over_tokens is not None else HubSettings.defer_over_tokens
        ),
    )
    store = ApprovalStore(state_dir(environ) / APPROVALS_FILE)

    # What a server writes on stderr is shown (status, errors, doctor): key values are redacted first.
    redact = Redactor.from_environ(environ, _key_names(config))

    def build() -> McpHub:
        return McpHub(
            root,
            servers,
            env,
            trusted=config.workspace_trusted,
            approvals=store,
            settings=settings,
            redact=redact.text,
        )

    if hubs is None:
        return build()
    return hubs.get(root, (servers, settings, config.workspace_trusted), build)


def _key_names(config: LoadedConfig) -> list[str]:
    """The variables the configured providers read their API keys from (``api_key_env``)."""
    return [p.api_key_env for p in config.providers.values() if p.api_key_env]


def start_when_idle(start: Callable[[], None]) -> None:
    """Call ``start`` (a background job: the secret index's walk) when this thread's event loop first
    has nothing to run, that is once the run first waits (on the sandbox probe, then on the model), so
    that its thread does not compete for the GIL with the building of the first request (issue 16: a
    34,000-entry workspace's walk delayed ``agent-ls run``'s first request by about 100 ms, now about
    30 ms; docs/benchmarks.md). At once when no loop runs here (the
    language server assembles sessions in a worker thread, with an index started when the workspace
    opened). The job still starts on demand if something needs it first (``SecretIndex.masks``)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        start()
        return
    loop.call_soon(start)


def _memory(root: Path, environ: Mapping[str, str]) -> MemoryNotes:
    """The notes file of ``root`` (``<state dir>/memory/<workspace folder>/notes.md``)."""
    path = workspace_memory_path(state_dir(environ), workspace_folder(root))
    return MemoryNotes(path, Redactor.from_environ(environ).text)


def model_opener(
    model: str | None,
    editor: EditorSettings | None,
    env: EnvSnapshot | None,
    config: LoadedConfig,
    *,
    replay_root: Path | None = None,
) -> ModelOpener:
    """Resolves the model (``models.resolution.resolve_model``: the asked-for string, the editor's,
    ``AGENT_LS_MODEL``, the config's) and builds its client, when called; raises ``ConfigError``, also
    for a role's model that cannot be used (``models.roles.resolve_role``: said before the run, not in
    the middle of it). The roles' clients are not built here.

    ``replay:<session.jsonl>`` replays a recorded session (``sessions.replayed``), comparing each request
    with the recorded one in the workspace ``replay_root``; without ``replay_root`` it is refused."""

    def opened() -> ModelClient:
        if env is None:
            raise ConfigError(NO_ENVIRONMENT)
        settings = editor or EditorSettings()
        main = resolve_model(model, settings, env, config)
        for role in OTHER_ROLES:
            resolve_role(role, main, settings, env, config)
        if main.wire_api == "replay" and is_session_file(main.model):
            if replay_root is None:
                raise ConfigError(f"replay:{main.model}: a session is replayed in a workspace only")
            from agent_ls.sessions.replayed import SessionReplayModel  # read only when chosen

            return SessionReplayModel(main.model, replay_root)
        return open_model(main)

    return opened


def role_opener(
    role: ModelRole,
    model: str | None,
    editor: EditorSettings | None,
    env: EnvSnapshot | None,
    config: LoadedConfig,
) -> ModelOpener | None:
    """Opens the model of ``role`` (``models.roles``; ``model`` is the main model asked for, whose provider
    decides which overrides apply); None when no model is configured for the role (the run's own model
    does its work). Raises ``ConfigError`` when called."""
    settings = editor or EditorSettings()
    if env is None or role_model_string(role, settings, config) is None:
        return None

    def opened() -> ModelClient:
        main = resolve_model(model, settings, env, config)
        choice = resolve_role(role, main, settings, env, config)
        assert choice is not None, "role_model_string said the role has a model"
        return open_model(choice)

    return opened


def build_policy(
    root: Path,
    config: LoadedConfig,
    editor_rules: Sequence[Rule] = (),
    readable_dirs: Sequence[Path] = (),
    *,
    sandboxed: bool = False,
) -> PermissionPolicy:
    """The permission policy for a workspace: rules from every source, and the configured secrets.

    Args:
        root: the workspace root.
        config: the loaded config files (``LoadedConfig()`` for none: built-in rules only, and no
            "Always allow", since there is no user config file to write).
        editor_rules: the rules of the editor settings (``agentLs.permissions.allow/ask/deny``).
        readable_dirs: folders outside the workspace whose files may be read, never written (the
            folders of user and bundled skills); secret files in them stay refused.
        sandboxed: whether commands run in a sandbox (``sandbox.unsandboxed_reason`` is empty). False,
            the safe side, until the caller knows.
    """
    return _permission_policy(path_policy_for(root, config, readable_dirs), config, editor_rules, sandboxed)


def _permission_policy(
    paths: PathPolicy, config: LoadedConfig, editor_rules: Sequence[Rule], sandboxed: bool = False
) -> PermissionPolicy:
    permissions = config.permissions
    write = functools.partial(append_allow_rules, config.user_file) if config.user_file is not None else None
    return PermissionPolicy(
        paths,
        (*BUILTIN_RULES, *permissions.rules, *editor_rules),
        shell_mode=permissions.shell_mode,
        write_rules=write,
        sandboxed=sandboxed,
    )


class SecretIndexes:
    """The secret index (``workspace.secret_index``) of each workspace a front end serves, shared by its
    sessions, so that one walk serves them all and a session's first command finds it built: the
    language server asks for it when the editor opens the workspace. Keyed by the root and the secret
    patterns of its config (a config that changes them gets a new index). Thread-safe."""

    def __init__(self) -> None:
        self._indexes: dict[tuple[object, ...], SecretIndex] = {}
        self._lock = threading.Lock()

    def get(self, root: Path, config: LoadedConfig) -> SecretIndex:
        """The index of ``root`` under ``config``'s secret patterns, started (built in the background)."""
        permissions = config.permissions
        key = (
            root.resolve(),
            tuple(permissions.secret_files),
            tuple(permissions.not_secret_files),
            config.user_file,
        )
        with self._lock:
            index = self._indexes.get(key)
            if index is None:
                index = SecretIndex(root, path_policy_for(root, config).is_secret)
                self._indexes[key] = index
        index.start()
        return index

    def close(self) -> None:
        """Stop every index's watch and forget them. Idempotent."""
        with self._lock:
            indexes, self._indexes = list(self._indexes.values()), {}
        for index in indexes:
            index.close()
