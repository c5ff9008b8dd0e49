"""The model of each role: ``main`` (the run's own turns), ``compaction`` (the summaries of
``core.compaction``) and ``subagent`` (the ``task`` tool's runs).

A role's model string, highest first: the editor's ``agentLs.models.<role>`` (not for ``main``), then
``[models] <role>`` of the config files (``[compaction] model`` is an alias of ``models.compaction``;
``agent_ls.config``); unset, the role uses the main model (``resolve_model``: ``--model``,
``agentLs.model``, ``AGENT_LS_MODEL``, ``[models] main`` / ``model``).

A role's model is resolved like the main one, with one difference: the overrides of the main model's
endpoint (``agentLs.baseUrl``, ``AGENT_LS_BASE_URL``, ``AGENT_LS_API_KEY``) apply to it only when its
provider is the main model's. So ``[models] compaction = "anthropic/claude-haiku-4-5"`` next to a local
main model on ``agentLs.baseUrl`` goes to Anthropic with ``ANTHROPIC_API_KEY``, and the key meant for one
endpoint is never sent to another.
"""

from __future__ import annotations

from typing import assert_never

from agent_ls.config import LoadedConfig
from agent_ls.core.errors import ConfigError
from agent_ls.core.events import ModelRole
from agent_ls.models.resolution import ModelChoice, parse_model_string, providers_of, resolve_model
from agent_ls.settings import EditorSettings, EnvSnapshot

OTHER_ROLES: tuple[ModelRole, ...] = ("compaction", "subagent")
"""The roles whose model may differ from the main one."""


def role_model_string(
    role: ModelRole, editor: EditorSettings, config: LoadedConfig
) -> tuple[str, str] | None:
    """(model string, where it was set) of ``role`` when one is configured for it, else None (the role
    uses the main model). ``main`` is never configured here: ``resolve_model`` picks it."""
    match role:
        case "main":
            return None
        case "compaction":
            from_editor, from_config = editor.models.compaction, config.models.compaction
        case "subagent":
            from_editor, from_config = editor.models.subagent, config.models.subagent
        case _:
            assert_never(role)
    if from_editor and from_editor.strip():
        return from_editor.strip(), f"agentLs.models.{role}"
    if from_config and from_config.strip():
        return from_config.strip(), f"models.{role} in agent-ls.toml"
    return None


def resolve_role(
    role: ModelRole, main: ModelChoice, editor: EditorSettings, env: EnvSnapshot, config: LoadedConfig
) -> ModelChoice | None:
    """The model of ``role``, or None when the role uses the main model (``main``). Pure: opens nothing.

    Raises:
        ConfigError: the role's model string is invalid, names an unknown provider, or needs a key that
            is not set; the message starts with where the string was set (``models.subagent in
            agent-ls.toml: ...``).
    """
    configured = role_model_string(role, editor, config)
    if configured is None:
        return None
    model_string, source = configured
    try:
        provider, _ = parse_model_string(model_string, providers_of(config))
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    same_endpoint = provider == main.provider
    choice = resolve_model(model_string, editor, env, config, model_source=source, overrides=same_endpoint)
    if choice.key_required and choice.api_key is None:  # said at the start of the run, not mid-run
        raise ConfigError(
            f"{source}: no API key for {choice.model_string}: set {choice.key_env} in the environment of "
            "agent-ls"
        )
    return choice
