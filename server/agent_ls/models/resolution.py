"""Model strings, and which model, base URL and API key a run uses.

A model string is ``<provider>/<model>``, split at the first ``/`` (``openrouter/anthropic/claude-sonnet-4``
is provider ``openrouter``, model ``anthropic/claude-sonnet-4``), or ``replay:<path>``.

Resolution, highest first (``resolve_model`` is a pure function of its inputs):

========  ==================================================================================
model     the ``model`` argument (``--model``); ``agentLs.model``; ``AGENT_LS_MODEL``
base URL  ``agentLs.baseUrl``; ``AGENT_LS_BASE_URL``; ``OPENAI_BASE_URL`` (``openai/`` only);
          the provider's default
API key   ``AGENT_LS_API_KEY``; the provider's own variable (``OPENAI_API_KEY``,
          ``OPENROUTER_API_KEY``; none for ollama)
========  ==================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, assert_never
from urllib.parse import urlsplit

from agent_ls.core.errors import ConfigError
from agent_ls.core.ports import ModelClient
from agent_ls.models.openai_chat import OpenAIChatClient
from agent_ls.models.replay import ReplayModel
from agent_ls.settings import EditorSettings, EnvSnapshot

ChatProvider = Literal["openai", "ollama", "openrouter"]
Provider = ChatProvider | Literal["replay"]

REPLAY_PREFIX = "replay:"


@dataclass(frozen=True)
class ProviderDefaults:
    """What a provider brings: its default base URL and its own API key variable (None: no key)."""

    base_url: str
    key_env: str | None


PROVIDERS: dict[ChatProvider, ProviderDefaults] = {
    "openai": ProviderDefaults("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "ollama": ProviderDefaults("http://localhost:11434/v1", None),
    "openrouter": ProviderDefaults("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
}

VALID_FORMS = (
    "use <provider>/<model> with provider openai, ollama or openrouter "
    "(e.g. ollama/qwen2.5-coder:7b), or replay:<path>"
)
NO_MODEL = (
    "no model configured: pass --model, set the agentLs.model editor setting, "
    "or set AGENT_LS_MODEL (e.g. ollama/qwen2.5-coder:7b)"
)


@dataclass(frozen=True)
class ModelChoice:
    """The resolved model of a run.

    Attributes:
        model_string: the string as chosen (``ollama/qwen2.5-coder:7b``, ``replay:demo.json``).
        provider: ``openai``, ``ollama``, ``openrouter`` or ``replay``.
        model: what the server calls the model; for ``replay`` the script path as given.
        base_url: the API root (``http://localhost:11434/v1``); None for ``replay``.
        api_key: the key to send, or None; never shown by ``repr``.
    """

    model_string: str
    provider: Provider
    model: str
    base_url: str | None
    api_key: str | None = field(default=None, repr=False)


def parse_model_string(model_string: str) -> tuple[Provider, str]:
    """Split ``model_string`` into (provider, model); for ``replay:<path>`` the model is the path.

    Raises:
        ConfigError: no ``/``, an unknown provider or an empty part; the one-line message lists the
            valid forms.
    """
    text = model_string.strip()
    if text.startswith(REPLAY_PREFIX):
        path = text[len(REPLAY_PREFIX) :]
        if not path:
            raise ConfigError(f"invalid model string {model_string!r}: empty replay path; {VALID_FORMS}")
        return "replay", path
    provider, slash, model = text.partition("/")
    if not slash or not provider or not model:
        raise ConfigError(f"invalid model string {model_string!r}: {VALID_FORMS}")
    for known in PROVIDERS:
        if known == provider:
            return known, model
    raise ConfigError(f"unknown provider {provider!r} in model string {model_string!r}: {VALID_FORMS}")


def resolve_model(model_arg: str | None, editor: EditorSettings, env: EnvSnapshot) -> ModelChoice:
    """Pick the model, base URL and API key by the table in the module docstring.

    Unset, empty and blank values never count.

    Raises:
        ConfigError: no model anywhere (message ``NO_MODEL``), an invalid model string (the message says
            where it came from), or a base URL that is not http(s).
    """
    chosen = _first(
        (model_arg, "--model"), (editor.model, "agentLs.model"), (env.get("AGENT_LS_MODEL"), "AGENT_LS_MODEL")
    )
    if chosen is None:
        raise ConfigError(NO_MODEL)
    model_string, model_source = chosen
    try:
        provider, model = parse_model_string(model_string)
    except ConfigError as exc:
        raise ConfigError(f"{model_source}: {exc}") from None
    if provider == "replay":
        return ModelChoice(model_string, provider, model, base_url=None, api_key=None)

    defaults = PROVIDERS[provider]
    url_chosen = _first(
        (editor.base_url, "agentLs.baseUrl"),
        (env.get("AGENT_LS_BASE_URL"), "AGENT_LS_BASE_URL"),
        (env.get("OPENAI_BASE_URL") if provider == "openai" else None, "OPENAI_BASE_URL"),
    )
    base_url, url_source = url_chosen or (defaults.base_url, "the default")
    _check_base_url(base_url.strip(), url_source)
    key = _first(
        (env.get("AGENT_LS_API_KEY"), "AGENT_LS_API_KEY"),
        (env.get(defaults.key_env) if defaults.key_env else None, defaults.key_env or ""),
    )
    return ModelChoice(
        model_string, provider, model, base_url=base_url.strip(), api_key=key[0] if key else None
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
    """Build the client for ``choice``: ``ReplayModel`` for ``replay``, ``OpenAIChatClient`` otherwise.

    A replay path is relative to the current directory unless absolute.

    Raises:
        ConfigError: the replay script cannot be read or has the wrong shape.
    """
    match choice.provider:
        case "replay":
            return ReplayModel(choice.model)
        case "openai" | "ollama" | "openrouter":
            return OpenAIChatClient(
                model=choice.model,
                base_url=choice.base_url or PROVIDERS[choice.provider].base_url,
                api_key=choice.api_key,
                model_name=choice.model_string,
                key_env=PROVIDERS[choice.provider].key_env,
                timeout_s=timeout_s,
            )
        case _:
            assert_never(choice.provider)


def _first(*candidates: tuple[str | None, str]) -> tuple[str, str] | None:
    """The first (value, source) pair whose value is set and not blank, with the value stripped."""
    for value, source in candidates:
        if value is not None and value.strip():
            return value.strip(), source
    return None
