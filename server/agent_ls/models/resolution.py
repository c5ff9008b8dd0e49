"""Model strings, and which wire API, model, base URL, key and limits a run uses.

A model string is ``<provider>/<model>``, split at the first ``/`` (``openrouter/anthropic/claude-sonnet-4``
is provider ``openrouter``, model ``anthropic/claude-sonnet-4``), or ``replay:<path>``. The providers are
the built-in ones below and every ``[providers.<name>]`` table of the config files (``agent_ls/config/``);
a table named like a built-in provider changes only the keys it sets (adds prices to ``openai``, say).

Built-in providers:

================  ================  ============================  ==================
provider          wire API          default base URL              key variable
================  ================  ============================  ==================
openai            openai-chat       https://api.openai.com/v1     OPENAI_API_KEY
ollama            openai-chat       http://localhost:11434/v1     (none)
openrouter        openai-chat       https://openrouter.ai/api/v1  OPENROUTER_API_KEY
anthropic         anthropic         https://api.anthropic.com/v1  ANTHROPIC_API_KEY
openai-responses  openai-responses  https://api.openai.com/v1     OPENAI_API_KEY
================  ================  ============================  ==================

Resolution, highest first (``resolve_model`` is a pure function of its inputs):

========  ==================================================================================
model     the ``model`` argument (``--model``); ``agentLs.model``; ``AGENT_LS_MODEL``; ``model`` of the
          workspace ``agent-ls.toml``; ``model`` of the user ``agent-ls.toml``
base URL  ``agentLs.baseUrl``; ``AGENT_LS_BASE_URL``; ``OPENAI_BASE_URL`` (``openai/`` and
          ``openai-responses/`` only); the provider's ``base_url`` in the config; the built-in default
API key   ``AGENT_LS_API_KEY``; the variable the provider's ``api_key_env`` names in the config, else
          the built-in key variable (a configured ``api_key_env`` replaces it, with no fallback)
limits    ``stream``, ``context_window``, ``max_output_tokens``, ``prices``: the provider's config;
          ``[retry]``: the config, field by field, else the ``RetryPolicy`` defaults
========  ==================================================================================

A workspace file's providers, base URLs and key variables are in the loaded config only when the user
trusts that workspace (``agent_ls.config``), so a cloned repository cannot redirect a key.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal, assert_never
from urllib.parse import urlsplit

from agent_ls.config import LoadedConfig, ProviderConfig, RetryConfig, WireApi
from agent_ls.core.errors import ConfigError
from agent_ls.core.ports import ModelClient
from agent_ls.models.base import Prices, WireConfig
from agent_ls.models.retry import RetryingModel, RetryPolicy
from agent_ls.settings import EditorSettings, EnvSnapshot

REPLAY_PREFIX = "replay:"

PROVIDERS: dict[str, ProviderConfig] = {
    "openai": ProviderConfig(
        wire_api="openai-chat", base_url="https://api.openai.com/v1", api_key_env="OPENAI_API_KEY"
    ),
    "ollama": ProviderConfig(wire_api="openai-chat", base_url="http://localhost:11434/v1"),
    "openrouter": ProviderConfig(
        wire_api="openai-chat", base_url="https://openrouter.ai/api/v1", api_key_env="OPENROUTER_API_KEY"
    ),
    "anthropic": ProviderConfig(
        wire_api="anthropic", base_url="https://api.anthropic.com/v1", api_key_env="ANTHROPIC_API_KEY"
    ),
    "openai-responses": ProviderConfig(
        wire_api="openai-responses", base_url="https://api.openai.com/v1", api_key_env="OPENAI_API_KEY"
    ),
}
"""The built-in providers (the first table of the module docstring)."""

# The OpenAI SDKs apply OPENAI_BASE_URL to every OpenAI endpoint, Responses included.
OPENAI_BASE_URL_PROVIDERS = frozenset({"openai", "openai-responses"})

NO_MODEL = (
    "no model configured: pass --model, set the agentLs.model editor setting, set AGENT_LS_MODEL, "
    'or set model = "..." in agent-ls.toml (e.g. ollama/qwen2.5-coder:7b)'
)


def valid_forms(providers: Collection[str]) -> str:
    """The hint listing the valid model strings with ``providers``, sorted."""
    names = sorted(providers)
    listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)
    return f"use <provider>/<model> with provider {listed} (e.g. ollama/qwen2.5-coder:7b), or replay:<path>"


VALID_FORMS = valid_forms(PROVIDERS)
"""The hint with the built-in providers only."""


@dataclass(frozen=True)
class ModelChoice:
    """The resolved model of a run.

    Attributes:
        model_string: the string as chosen (``ollama/qwen2.5-coder:7b``, ``replay:demo.json``).
        provider: the provider's name (built-in or configured), or ``replay``.
        model: what the server calls the model; for ``replay`` the script path as given.
        wire_api: the API to speak, or ``replay``.
        base_url: the API root (``http://localhost:11434/v1``); None for ``replay``.
        api_key: the key to send, or None; never shown by ``repr``.
        key_required: True when the endpoint cannot work without a key (``open_model`` then refuses a
            choice without one before any request).
        key_env: the variable the key came from, or the one to set when there is no key (named in
            auth errors); None when the provider takes no key.
        stream: use server-sent events.
        context_window: the model's context window in tokens, when configured.
        max_output_tokens: the cap on output tokens per request, when configured.
        prices: US dollars per million tokens, when configured (else costs are unknown).
        retry: the retry caps (``RetryingModel``).
    """

    model_string: str
    provider: str
    model: str
    wire_api: WireApi | Literal["replay"]
    base_url: str | None
    api_key: str | None = field(default=None, repr=False)
    key_env: str | None = None
    key_required: bool = False
    stream: bool = True
    context_window: int | None = None
    max_output_tokens: int | None = None
    prices: Prices | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)


def providers_of(config: LoadedConfig) -> dict[str, ProviderConfig]:
    """The built-in providers with the configured ones merged over them, key by key (prices too)."""
    merged = dict(PROVIDERS)
    for name, configured in config.providers.items():
        base = merged.get(name)
        if base is None:
            merged[name] = configured
            continue
        data = {**base.model_dump(exclude_none=True), **configured.model_dump(exclude_none=True)}
        if base.prices is not None and configured.prices is not None:
            data["prices"] = {
                **base.prices.model_dump(exclude_none=True),
                **configured.prices.model_dump(exclude_none=True),
            }
        merged[name] = ProviderConfig.model_validate(data)
    return merged


def parse_model_string(model_string: str, providers: Collection[str] = PROVIDERS) -> tuple[str, str]:
    """Split ``model_string`` into (provider, model); for ``replay:<path>`` the model is the path.

    Args:
        model_string: the string to split; surrounding blanks are ignored.
        providers: the provider names known (the built-in ones by default).

    Raises:
        ConfigError: no ``/``, an unknown provider or an empty part; the one-line message lists the
            valid forms.
    """
    text = model_string.strip()
    if text.startswith(REPLAY_PREFIX):
        path = text[len(REPLAY_PREFIX) :]
        if not path:
            raise ConfigError(
                f"invalid model string {model_string!r}: empty replay path; {valid_forms(providers)}"
            )
        return "replay", path
    provider, slash, model = text.partition("/")
    if not slash or not provider or not model:
        raise ConfigError(f"invalid model string {model_string!r}: {valid_forms(providers)}")
    if provider not in providers:
        raise ConfigError(
            f"unknown provider {provider!r} in model string {model_string!r}: {valid_forms(providers)}"
        )
    return provider, model


def resolve_model(
    model_arg: str | None,
    editor: EditorSettings,
    env: EnvSnapshot,
    config: LoadedConfig,
    *,
    model_source: str = "--model",
    overrides: bool = True,
) -> ModelChoice:
    """Pick the model, wire API, base URL, key and limits by the tables in the module docstring.

    Unset, empty and blank values never count.

    Args:
        model_arg: ``--model`` or the ``model`` of ``agent.run``, or None.
        editor: the ``agentLs`` settings.
        env: the environment.
        config: the config files as loaded (``config.load_config``).
        model_source: where ``model_arg`` came from, for messages (``models.subagent in agent-ls.toml``).
        overrides: False leaves out the overrides meant for the main model's endpoint (``agentLs.baseUrl``,
            ``AGENT_LS_BASE_URL``, ``AGENT_LS_API_KEY``): a role's model of another provider
            (``models/roles.py``) gets that provider's own base URL and key, never the main one's key.

    Raises:
        ConfigError: no model anywhere (message ``NO_MODEL``), an invalid model string (the message says
            where it came from), a configured provider without ``wire_api`` or ``base_url``, or a base URL
            that is not http(s).
    """
    chosen = _first(
        (model_arg, model_source),
        (editor.model, "agentLs.model"),
        (env.get("AGENT_LS_MODEL"), "AGENT_LS_MODEL"),
        (config.model, str(config.model_source or "agent-ls.toml")),
    )
    if chosen is None:
        raise ConfigError(NO_MODEL)
    model_string, model_source = chosen
    providers = providers_of(config)
    try:
        name, model = parse_model_string(model_string, providers)
    except ConfigError as exc:
        raise ConfigError(f"{model_source}: {exc}") from None
    if name == "replay":
        return ModelChoice(model_string, name, model, wire_api="replay", base_url=None)

    provider = providers[name]
    where = f"[providers.{name}] of agent-ls.toml ({config.user_file})"
    if provider.wire_api is None:
        raise ConfigError(
            f'provider {name!r} has no wire_api: set wire_api = "openai-chat", "anthropic" or '
            f'"openai-responses" in {where}'
        )
    configured = config.providers.get(name)
    url_chosen = _first(
        (editor.base_url if overrides else None, "agentLs.baseUrl"),
        (env.get("AGENT_LS_BASE_URL") if overrides else None, "AGENT_LS_BASE_URL"),
        (env.get("OPENAI_BASE_URL") if name in OPENAI_BASE_URL_PROVIDERS else None, "OPENAI_BASE_URL"),
        (configured.base_url if configured else None, f"providers.{name}.base_url in agent-ls.toml"),
        (provider.base_url, "the default"),
    )
    if url_chosen is None:
        raise ConfigError(f"provider {name!r} has no base_url: set base_url in {where}")
    base_url, url_source = url_chosen
    _check_base_url(base_url, url_source)
    key_env = provider.api_key_env
    key = _first(
        (env.get("AGENT_LS_API_KEY") if overrides else None, "AGENT_LS_API_KEY"),
        (env.get(key_env) if key_env else None, key_env or ""),
    )
    return ModelChoice(
        model_string,
        name,
        model,
        wire_api=provider.wire_api,
        base_url=base_url,
        api_key=key[0] if key else None,
        key_env=key[1] if key else key_env,
        # The provider's own service needs a key, and so does one whose key variable the user named;
        # a base URL the user chose (a local server, a keyless proxy) may need none.
        key_required=bool(key_env)
        and (url_source == "the default" or bool(configured and configured.api_key_env)),
        stream=provider.stream if provider.stream is not None else True,
        context_window=provider.context_window,
        max_output_tokens=provider.max_output_tokens,
        prices=_prices(provider),
        retry=_retry_policy(config.retry),
    )


def _prices(provider: ProviderConfig) -> Prices | None:
    """The provider's prices; a price left out of a given table counts as 0, no table as unknown."""
    if provider.prices is None:
        return None
    return Prices(
        input=provider.prices.input or 0.0,
        output=provider.prices.output or 0.0,
        cached_input=provider.prices.cached_input,
    )


def _retry_policy(retry: RetryConfig) -> RetryPolicy:
    defaults = RetryPolicy()
    return RetryPolicy(
        max_attempts=defaults.max_attempts if retry.max_attempts is None else retry.max_attempts,
        max_wait_s=defaults.max_wait_s if retry.max_wait_s is None else retry.max_wait_s,
        max_total_wait_s=(
            defaults.max_total_wait_s if retry.max_total_wait_s is None else retry.max_total_wait_s
        ),
    )


def _check_base_url(base_url: str, source: str) -> None:
    """Refuse URLs we cannot use safely: another scheme, credentials in the URL, a query or fragment.

    The message never repeats credentials found in the URL.
    """
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = base_url if "@" not in base_url else "<hidden: it contains credentials>"
        raise ConfigError(f"base URL {shown!r} (from {source}) must start with http:// or https://")
    if parts.username or parts.password:
        raise ConfigError(
            f"base URL from {source} contains credentials; remove them and set AGENT_LS_API_KEY instead"
        )
    if parts.query or parts.fragment:
        raise ConfigError(f"base URL {base_url!r} (from {source}) must not have a query string or fragment")


def open_model(choice: ModelChoice, *, timeout_s: float = 120.0) -> ModelClient:
    """Build the client for ``choice``: the wire client of ``choice.wire_api`` in a ``RetryingModel``
    with ``choice.retry``, or a ``ReplayModel`` (never retried) for ``replay``.

    A replay path is relative to the current directory unless absolute.

    Args:
        choice: from ``resolve_model``.
        timeout_s: the per-request timeout of the wire client, in seconds.

    Raises:
        ConfigError: the replay script cannot be read or has the wrong shape; the endpoint needs a key
            and there is none (``key_required``), naming the variable to set.
    """
    # Each wire API's module is imported when it is chosen: a run loads one of them (start-up time).
    if choice.wire_api == "replay":
        from agent_ls.models.replay import ReplayModel

        return ReplayModel(choice.model)
    if choice.key_required and choice.api_key is None:  # said now, not after three retries of a 401
        raise ConfigError(
            f"no API key for {choice.model_string}: set {choice.key_env} (or AGENT_LS_API_KEY) in the "
            "environment of agent-ls (in VS Code: Agent: Set API Key)"
        )
    assert choice.base_url is not None, "resolve_model sets a base URL for every wire API"
    wire = WireConfig(
        model=choice.model,
        base_url=choice.base_url,
        api_key=choice.api_key,
        model_name=choice.model_string,
        key_env=choice.key_env,
        stream=choice.stream,
        max_output_tokens=choice.max_output_tokens,
        context_window=choice.context_window,
        prices=choice.prices,
        timeout_s=timeout_s,
    )
    client: ModelClient
    match choice.wire_api:
        case "openai-chat":
            from agent_ls.models.openai_chat import OpenAIChatClient

            client = OpenAIChatClient(wire)
        case "anthropic":
            from agent_ls.models.anthropic import AnthropicClient

            client = AnthropicClient(wire)
        case "openai-responses":
            from agent_ls.models.openai_responses import OpenAIResponsesClient

            client = OpenAIResponsesClient(wire)
        case _:
            assert_never(choice.wire_api)
    return RetryingModel(client, choice.retry)


def _first(*candidates: tuple[str | None, str]) -> tuple[str, str] | None:
    """The first (value, source) pair whose value is set and not blank, with the value stripped."""
    for value, source in candidates:
        if value is not None and value.strip():
            return value.strip(), source
    return None
