"""The pydantic tables of one ``agent-ls.toml``: what each key may hold.

The file, as these tables read it (docs/configuration.md has the full table)::

    model = "anthropic/claude-sonnet-4-5"   # default model string (the main role's)
    [models]                                  # a model per role (models/roles.py); unset: the main one
    main = "anthropic/claude-sonnet-4-5"      # the same as model above (set one of the two)
    compaction = "openai/gpt-4.1-mini"        # writes compaction summaries ([compaction] model: alias)
    subagent = "openai/gpt-4.1-mini"          # runs the task tool's subagents
    trusted_workspaces = ["~/code/app"]       # user config only; "~" expanded, compared by resolved path
    [retry]                                   # caps of models/retry.py RetryPolicy
    max_attempts = 4
    max_wait_s = 60
    max_total_wait_s = 120
    [providers.local]                         # a named provider: model strings "local/<model>"
    wire_api = "openai-chat"                  # "openai-chat" | "anthropic" | "openai-responses"
    base_url = "http://127.0.0.1:8080/v1"
    api_key_env = "LOCAL_API_KEY"             # the NAME of the variable holding the key
    context_window = 32768
    max_output_tokens = 4096
    stream = false
    [providers.local.prices]                  # US dollars per million tokens
    input = 0.5
    output = 1.5
    cached_input = 0.05
    [permissions]                             # allow, ask, deny, secret_files, not_secret_files;
    [shell]                                   # mode; and [sandbox] enabled: schema in
                                              # policy/user_rules.py, rule syntax in policy/rules.py
    [mcp]                                     # MCP servers (docs/mcp.md): disabled = ["name"],
    call_timeout_s = 60                       # startup_timeout_s = 30, defer_over_tokens = 2000

The tables only validate values; the checks that depend on which file a key is in (trust, secrets,
unknown keys) are in ``file_checks.py``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from agent_ls.policy.user_rules import PermissionsTable, SandboxTable, ShellTable

WireApi = Literal["openai-chat", "anthropic", "openai-responses"]
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"


def is_inner_relative(path: str) -> bool:
    """True for a relative path that cannot climb out (``CLAUDE.md``, ``.claude/CLAUDE.md``): no leading
    ``/`` or ``~``, no ``..`` part, no backslash or NUL."""
    parts = path.split("/")
    return (
        bool(path) and not path.startswith(("/", "~")) and ".." not in parts and not set("\\\0") & set(path)
    )


def _inner_relative(path: str) -> str:
    if not is_inner_relative(path):
        raise ValueError("must be a relative path inside the folder (no leading / or ~, no '..')")
    return path


class _Table(BaseModel):
    # Strict: TOML values are typed, so "false" is a string, not a boolean. Extra keys are kept only so
    # that they can be reported as unknown (they are never used).
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


class PricesConfig(_Table):
    """``[providers.<name>.prices]``: US dollars per million tokens."""

    input: float | None = Field(default=None, ge=0)
    output: float | None = Field(default=None, ge=0)
    cached_input: float | None = Field(default=None, ge=0)


class RetryConfig(_Table):
    """``[retry]``: the caps of ``models/retry.py`` ``RetryPolicy``; unset keys keep its defaults."""

    max_attempts: int | None = Field(default=None, ge=1, le=20)
    max_wait_s: float | None = Field(default=None, ge=0, le=600)
    max_total_wait_s: float | None = Field(default=None, ge=0, le=3600)


class BudgetConfig(_Table):
    """``[budget]``: a run's budgets (``core/budgets.py``), used where the editor's settings, ``agent.run``
    or the command line set none: ``max_tokens`` (input plus output tokens of the run's model calls) and
    ``max_cost_usd`` (US dollars, from the provider's prices)."""

    max_tokens: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class CompactionConfig(_Table):
    """``[compaction]`` (``core/compaction.py``): ``threshold`` is the fraction of the usable window
    (context window minus max output tokens) that starts a compaction (default 0.8); ``model`` is a model
    string for the summaries (a cheaper one), else the run's own model writes them: an alias of
    ``[models] compaction``, which wins when one file sets both."""

    threshold: float | None = Field(default=None, ge=0.1, le=0.95)
    model: str | None = Field(default=None, min_length=1)


MODEL_ROLES = ("main", "compaction", "subagent")
"""The roles a model can be named for in ``[models]`` (``core.events.ModelRole``)."""


class ModelsConfig(_Table):
    """``[models]``: a model string per role. ``main`` is what the top-level ``model`` names (an alias:
    one file sets one of the two); ``compaction`` writes compaction summaries (``[compaction] model`` is
    its alias); ``subagent`` runs the ``task`` tool's subagents. An unset role uses the main model."""

    main: str | None = Field(default=None, min_length=1)
    compaction: str | None = Field(default=None, min_length=1)
    subagent: str | None = Field(default=None, min_length=1)


class ProviderConfig(_Table):
    """``[providers.<name>]``: a named provider, or additions to the built-in provider of that name.

    Attributes:
        wire_api: the API the server speaks.
        base_url: the API root up to and including ``/v1``.
        api_key_env: the name of the environment variable that holds the key (never the key).
        context_window: the model's context window, in tokens.
        max_output_tokens: the cap on output tokens sent with each request.
        stream: False for servers that break when streaming (llama.cpp with tool_choice "auto").
        prices: US dollars per million tokens.
    """

    wire_api: WireApi | None = None
    base_url: str | None = None
    api_key_env: str | None = Field(default=None, pattern=ENV_NAME_PATTERN)
    context_window: int | None = Field(default=None, ge=1)
    max_output_tokens: int | None = Field(default=None, ge=1)
    stream: bool | None = None
    prices: PricesConfig | None = None


class InstructionsConfig(_Table):
    """``[instructions]``: AGENTS.md discovery and budgets (``instructions/agents_md.py``); unset keys keep
    the defaults (markers ``[".git"]``, fallbacks ``["CLAUDE.md"]``, 32 KiB per file and in total)."""

    project_root_markers: list[str] | None = None
    fallback_filenames: list[Annotated[str, AfterValidator(_inner_relative)]] | None = None
    max_file_bytes: int | None = Field(default=None, ge=0, le=4 * 1024 * 1024)
    max_total_bytes: int | None = Field(default=None, ge=0, le=16 * 1024 * 1024)


class SkillsConfig(_Table):
    """``[skills]``: ``paths`` are more skill roots (``.gemini/skills``): relative to the workspace root,
    or absolute / ``~`` in the user config or a trusted workspace's."""

    paths: list[str] | None = None


class McpConfig(_Table):
    """``[mcp]`` (``mcp_client``, docs/mcp.md): servers not to start (``disabled``: names of ``.mcp.json``
    or the user's ``mcp.json``; any file may, it only tightens, and the lists of both files add up), seconds
    to start a server (spawn, initialize, first tools/list) and per tools/call, and the estimated tokens of
    MCP tool schemas above which every MCP tool is deferred (its name sent, its schema on demand)."""

    disabled: list[str] | None = None
    startup_timeout_s: float | None = Field(default=None, gt=0, le=600)
    call_timeout_s: float | None = Field(default=None, gt=0, le=3600)
    defer_over_tokens: int | None = Field(default=None, ge=0)


class ConfigFile(_Table):
    """One ``agent-ls.toml``, as validated."""

    model: str | None = None
    models: ModelsConfig | None = None
    trusted_workspaces: list[str] | None = None
    retry: RetryConfig | None = None
    budget: BudgetConfig | None = None
    compaction: CompactionConfig | None = None
    providers: dict[str, ProviderConfig] | None = None
    permissions: PermissionsTable | None = None
    shell: ShellTable | None = None
    sandbox: SandboxTable | None = None
    instructions: InstructionsConfig | None = None
    skills: SkillsConfig | None = None
    mcp: McpConfig | None = None
