"""``load_config``: the user's ``agent-ls.toml`` and a workspace's, each checked, then merged.

Files:

- user config: ``$AGENT_LS_CONFIG_DIR/agent-ls.toml`` when that variable is set, else
  ``<user config dir>/agent-ls/agent-ls.toml`` (``~/.config/agent-ls/agent-ls.toml`` on Linux);
- workspace config: ``<workspace root>/agent-ls.toml``.

``load_config`` does, for the user file and then the workspace file:

1. read and parse with tomllib; a file that cannot be read or is not TOML gives an error diagnostic and
   is ignored whole;
2. refuse values under names like secrets (``api_key``, ``token``, ...): keys never live in files;
3. workspace only: drop ``trusted_workspaces`` (a workspace never trusts itself), and unless the
   user config lists the workspace in ``trusted_workspaces``, drop the sensitive keys
   (``file_checks.SENSITIVE_KEYS``), whatever would loosen permissions (``permissions.allow``,
   ``permissions.not_secret_files``, ``shell.mode = "workspace"``, ``sandbox.enabled = false``) and
   any setting that names a local file to be read or run as part of the agent (``model =
   "replay:<path>"``; ``skills.paths`` outside the workspace), with a warning on each key;
4. drop providers whose name cannot appear in a model string;
5. validate with pydantic: a wrong value is dropped with an error diagnostic, the rest is kept;
6. report unknown keys as warnings and drop them;
7. drop the permission rules that cannot be read (``policy/rules.py`` ``parse_rule``), secret
   patterns that are not gitignore-style patterns, and ``secret_files`` patterns that would take files
   off the secret list (``!.env``: the list only grows, from any file), with an error on each;

(``file_checks.py`` ``ConfigText.load`` does these seven steps for one file), then reads each file's
aliases of ``[models]`` (``_role_aliases``: ``model`` is ``models.main``, ``[compaction] model`` is
``models.compaction``; a file that sets both spellings of a role gets a warning and its ``[models]`` value
wins), then merges the workspace
over the user config, key by key (a provider and its prices too), and reports a provider that is not
built in and lacks ``wire_api`` or ``base_url``. Every problem becomes a ``ConfigDiagnostic``; loading
never raises and never prints. Permission rules are not merged key by key: each file's rules are kept
with their source (``LoadedConfig.permissions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# platformdirs knows each OS's per-user config location (XDG on Linux, Application Support on macOS,
# AppData on Windows); writing those rules ourselves would get one of them wrong.
import platformdirs

from agent_ls.config.file_checks import ConfigDiagnostic, ConfigText
from agent_ls.config.schema import (
    BudgetConfig,
    CompactionConfig,
    ConfigFile,
    InstructionsConfig,
    McpConfig,
    ModelsConfig,
    ProviderConfig,
    RetryConfig,
    SkillsConfig,
)
from agent_ls.policy.user_rules import WORKSPACE_SOURCE, PermissionConfig
from agent_ls.settings import EnvSnapshot

CONFIG_FILE_NAME = "agent-ls.toml"
CONFIG_DIR_ENV = "AGENT_LS_CONFIG_DIR"

# The built-in providers (models/resolution.py PROVIDERS); a table of one of these names needs no wire_api.
BUILTIN_PROVIDER_NAMES = frozenset({"openai", "ollama", "openrouter", "anthropic", "openai-responses"})


@dataclass(frozen=True)
class LoadedConfig:
    """The user config with the workspace config merged over it.

    Attributes:
        model: the default model string (the workspace's, else the user's), or None.
        model_source: the file ``model`` came from, for messages.
        retry: the retry caps set in either file (unset fields: ``RetryPolicy`` defaults).
        budget: the run budgets of ``[budget]`` (workspace over user), used where nothing else set one.
        models: the model string of the compaction and subagent roles of ``[models]`` (workspace over
            user; ``[compaction] model`` read as ``models.compaction``), unset roles None; ``models.main``
            is always None: the main model is ``model`` (``[models] main`` or ``model``).
        compaction: ``[compaction]`` (workspace over user): the threshold and the summarizer's model
            (``models.compaction``).
        providers: named providers by name, as configured (not yet merged with the built-in ones).
        user_file: where the user config is looked for (it may not exist).
        workspace_file: the workspace config looked for, or None without a workspace.
        workspace_trusted: the user config lists the workspace in ``trusted_workspaces``.
        permissions: the rules and switches of both files, after the trust rule.
        mcp: ``[mcp]`` (workspace over user), ``disabled`` holding the names of both files.
        diagnostics: every problem found, user file first, each file's by position.
    """

    model: str | None = None
    model_source: Path | None = None
    models: ModelsConfig = field(default_factory=ModelsConfig)
    retry: RetryConfig = field(default_factory=RetryConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    compaction: CompactionConfig = field(default_factory=CompactionConfig)
    providers: Mapping[str, ProviderConfig] = field(default_factory=dict)
    user_file: Path | None = None
    workspace_file: Path | None = None
    workspace_trusted: bool = False
    permissions: PermissionConfig = field(default_factory=PermissionConfig)
    instructions: InstructionsConfig = field(default_factory=InstructionsConfig)
    skills: SkillsConfig = field(default_factory=SkillsConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    diagnostics: tuple[ConfigDiagnostic, ...] = ()


def user_config_file(env: EnvSnapshot) -> Path:
    """``$AGENT_LS_CONFIG_DIR/agent-ls.toml``, else ``<user config dir>/agent-ls/agent-ls.toml``."""
    configured = env.get(CONFIG_DIR_ENV)
    directory = _expanded(configured) if configured else None
    return (directory or platformdirs.user_config_path() / "agent-ls") / CONFIG_FILE_NAME


def _expanded(path: str) -> Path | None:
    """``path`` with a leading ``~`` or ``~user`` expanded; None when that home is unknown."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        return None


def load_config(env: EnvSnapshot, workspace_root: Path | None) -> LoadedConfig:
    """Read the user config and the workspace's, in the order of the module docstring.

    Args:
        env: the environment (only ``AGENT_LS_CONFIG_DIR`` is read here).
        workspace_root: the workspace whose ``agent-ls.toml`` is read, or None.

    Returns:
        The merged config; every problem is in its ``diagnostics``. Never raises for file contents.
    """
    user_file = user_config_file(env)
    user = ConfigText.load(user_file, untrusted_hint=None)
    trusted_roots = _trusted_roots(user)

    workspace_file: Path | None = None
    workspace = ConfigText(Path())
    trusted = False
    if workspace_root is not None:
        root = workspace_root.expanduser().resolve()
        workspace_file = root / CONFIG_FILE_NAME
        trusted = root in trusted_roots
        # The user config dir opened as a workspace: one file, read once, as the user config.
        if workspace_file != user_file.expanduser().resolve():
            hint = None if trusted else _untrusted_hint(root, user_file)
            workspace = ConfigText.load(workspace_file, untrusted_hint=hint, workspace=True)
            workspace.source = WORKSPACE_SOURCE
    for text in (user, workspace):
        _role_aliases(text)
    merged = ConfigFile.model_validate(_deep_merge(user.values, workspace.values))
    models = merged.models or ModelsConfig()
    for name, provider in (merged.providers or {}).items():
        if name not in BUILTIN_PROVIDER_NAMES and None in (provider.wire_api, provider.base_url):
            defined_in = user if name in user.values.get("providers", {}) else workspace
            defined_in.report(
                ("providers", name),
                "error",
                f'provider {name!r} needs wire_api ("openai-chat", "anthropic" or "openai-responses") '
                "and base_url",
            )
    in_workspace = "main" in workspace.values.get("models", {})
    return LoadedConfig(
        model=models.main,
        model_source=(workspace_file if in_workspace else user_file) if models.main else None,
        models=models.model_copy(update={"main": None}),  # the main model is ``model``
        retry=merged.retry or RetryConfig(),
        budget=merged.budget or BudgetConfig(),
        compaction=(merged.compaction or CompactionConfig()).model_copy(update={"model": models.compaction}),
        providers=dict(merged.providers or {}),
        user_file=user_file,
        workspace_file=workspace_file,
        workspace_trusted=trusted,
        permissions=PermissionConfig(
            rules=(*user.rules(), *workspace.rules()),
            secret_files=(*user.patterns("secret_files"), *workspace.patterns("secret_files")),
            not_secret_files=(*user.patterns("not_secret_files"), *workspace.patterns("not_secret_files")),
            shell_mode=(merged.shell and merged.shell.mode) or "shadow",
            sandbox_enabled=not merged.sandbox or merged.sandbox.enabled is not False,
        ),
        instructions=merged.instructions or InstructionsConfig(),
        skills=merged.skills or SkillsConfig(),
        mcp=_mcp(merged.mcp, user, workspace),
        diagnostics=(*user.sorted_problems(), *workspace.sorted_problems()),
    )


def _mcp(merged: McpConfig | None, user: ConfigText, workspace: ConfigText) -> McpConfig:
    """``[mcp]`` with ``disabled`` the names of both files (a workspace may only add to the user's list)."""
    names = [
        name
        for text in (user, workspace)
        for name in (text.values.get("mcp") or {}).get("disabled") or []
        if isinstance(name, str)
    ]
    if not names:
        return merged or McpConfig()
    return (merged or McpConfig()).model_copy(update={"disabled": list(dict.fromkeys(names))})


def _role_aliases(text: ConfigText) -> None:
    """Move ``model`` to ``models.main`` and ``[compaction] model`` to ``models.compaction`` in ``text``'s
    values, so that the merge compares one key per role; where the file sets both spellings of a role, the
    ``[models]`` one is kept and the other is reported."""
    values = text.values
    for alias, role in ((("model",), "main"), (("compaction", "model"), "compaction")):
        table = values if len(alias) == 1 else values.get(alias[0], {})
        if alias[-1] not in table:
            continue
        value = table.pop(alias[-1])
        models = values.setdefault("models", {})
        if role in models:
            text.report(
                alias,
                "warning",
                f"{'.'.join(alias)} is ignored: models.{role} in the same file names the {role} model "
                f"({'.'.join(alias)} is its older spelling)",
            )
        else:
            models[role] = value


def _untrusted_hint(root: Path, user_file: Path) -> str:
    return (
        "this workspace is not trusted, and only a trusted workspace's agent-ls.toml may choose providers, "
        "base URLs or key variables (a cloned repository could otherwise send your API key to any host); "
        f'to trust it, add "{root}" to trusted_workspaces in {user_file}'
    )


def _trusted_roots(user: ConfigText) -> set[Path]:
    """The resolved paths of the user's ``trusted_workspaces``; entries that are not absolute are reported."""
    roots: set[Path] = set()
    for entry in user.values.get("trusted_workspaces") or []:
        path = _expanded(entry)
        if path is not None and path.is_absolute():
            roots.add(path.resolve())
        else:
            user.report(
                ("trusted_workspaces",),
                "warning",
                f"trusted_workspaces entry {entry!r} is ignored: use an absolute path or one starting with ~",
            )
    return roots


def _deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` merged onto ``base``: tables key by key, any other value replaced."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
