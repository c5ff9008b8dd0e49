"""Settings, parsed once: editor settings (section ``agentLs``) and the environment variables we read.

This is the only module that reads ``os.environ`` (besides ``key_handoff``, which runs first and moves
the API keys out of it into memory: ``EnvSnapshot.from_environ`` answers them); everything below
receives a ``Settings`` or an ``EnvSnapshot``. Editor settings arrive in LSP ``initializationOptions`` and
``workspace/didChangeConfiguration`` (either the ``agentLs`` object itself or ``{"agentLs": {...}}``).
The ``agent-ls.toml`` files are read by ``agent_ls.config``, which finds the user's through an
``EnvSnapshot``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_ls import key_handoff
from agent_ls.core.events import Verdict
from agent_ls.core.loop import LoopLimits
from agent_ls.policy.rules import Rule, parse_rules
from agent_ls.policy.user_rules import EDITOR_SOURCE

# The variables agent-ls reads by name. A user's config may name more: the key variable of a provider
# (``api_key_env``), which ``EnvSnapshot.get`` answers too. Values are never logged.
ENV_VARS = (
    "AGENT_LS_MODEL",
    "AGENT_LS_BASE_URL",
    "AGENT_LS_API_KEY",
    "AGENT_LS_CONFIG_DIR",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "ANTHROPIC_API_KEY",
)


class EnvSnapshot:
    """A copy of the environment taken once, answering one variable at a time.

    It holds every variable, because a provider's key variable is named in the user config
    (``api_key_env``) and is not known in advance; but it only answers ``get(name)``, and its ``repr``
    shows no name and no value, so logging a snapshot cannot leak a key.
    """

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> EnvSnapshot:
        """A snapshot of ``environ``, or of this process's environment and the keys handed over at start
        (``key_handoff.received``) when None."""
        if environ is None:
            return cls({**os.environ, **key_handoff.received()})
        return cls(environ)

    def get(self, name: str) -> str | None:
        """The value of ``name``, or None when it is unset or empty."""
        return self._values.get(name) or None

    def __repr__(self) -> str:
        return f"EnvSnapshot(<{len(self._values)} variables, values hidden>)"


class PermissionSettings(BaseModel):
    """The ``agentLs.permissions`` object (machine scope in VS Code).

    Attributes:
        headless: how an "ask" verdict resolves when nobody can be asked (a client without
            ``window/showMessageRequest``, such as Helix): ``deny`` (default) or ``allow``.
        allow: rule strings (``policy/rules.py`` syntax: ``bash: make *``, ``Bash(npm run test:*)``),
            the last source after the built-in rules, the user config and the workspace config.
            VS Code declares the setting machine-scoped, so a workspace's ``.vscode/settings.json``
            cannot set it.
        ask: rule strings whose match means ask.
        deny: rule strings whose match means deny.
    """

    model_config = ConfigDict(extra="ignore")

    headless: Literal["deny", "allow"] = "deny"
    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)

    def rules(self) -> tuple[list[Rule], list[str]]:
        """The rules, with source ``editor settings``, and one line per string that is not a rule."""
        lists: list[tuple[Verdict, list[str]]] = [
            ("allow", self.allow),
            ("ask", self.ask),
            ("deny", self.deny),
        ]
        rules, problems = parse_rules(lists, EDITOR_SOURCE)
        return rules, [f"agentLs.permissions: {problem}; this rule is ignored" for problem in problems]


class ModelRoleSettings(BaseModel):
    """The ``agentLs.models`` object: a model string per role other than the main one (``agentLs.model``),
    over ``[models]`` of agent-ls.toml (``models/roles.py``)."""

    model_config = ConfigDict(extra="ignore")

    compaction: str | None = None
    subagent: str | None = None


class McpSettings(BaseModel):
    """The ``agentLs.mcp`` object: ``disabled``, names of MCP servers not to start in this editor (over
    ``[mcp] disabled`` of agent-ls.toml; it only tightens, so a workspace's settings may set it)."""

    model_config = ConfigDict(extra="ignore")

    disabled: list[str] = Field(default_factory=list)


class EditorSettings(BaseModel):
    """The ``agentLs`` settings section, camelCase on the wire. Unset or empty values never override.

    Attributes:
        model: model string, ``<provider>/<model>`` or ``replay:<path>``.
        base_url: overrides the provider's base URL (``agentLs.baseUrl``).
        models: the compaction and subagent roles' models (``agentLs.models``).
        max_turns: stop after this many turns (default 15).
        max_tokens: a run's token budget (input plus output tokens of its model calls), or None.
        max_cost_usd: a run's cost budget in US dollars (from the provider's prices), or None.
        trace: ``off`` | ``messages`` | ``verbose``; forwarded to the log level of transcript lines.
        permissions: see ``PermissionSettings``.
        mcp: see ``McpSettings``.
    """

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    model: str | None = None
    base_url: str | None = Field(default=None, alias="baseUrl")
    models: ModelRoleSettings = Field(default_factory=ModelRoleSettings)
    max_turns: int | None = Field(default=None, alias="maxTurns", ge=1, le=200)
    max_tokens: int | None = Field(default=None, alias="maxTokens", ge=1)
    max_cost_usd: float | None = Field(default=None, alias="maxCostUsd", gt=0, allow_inf_nan=False)
    trace: str = "off"
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)

    def loop_limits(self) -> LoopLimits:
        """The loop's stop conditions: ``maxTurns`` (default 15), ``maxTokens`` and ``maxCostUsd``."""
        limits = LoopLimits(max_turns=self.max_turns) if self.max_turns else LoopLimits()
        return replace(limits, max_tokens=self.max_tokens, max_cost_usd=self.max_cost_usd)

    @classmethod
    def from_client(cls, raw: Any, base: EditorSettings | None = None) -> tuple[EditorSettings, list[str]]:
        """Parse client-sent settings over ``base`` (the current ones, if any).

        Only the values the client actually sent override ``base``: unset, null or empty values
        never do, so eglot's ``didChangeConfiguration`` with ``settings: {}`` right after
        ``initialized`` keeps what ``initializationOptions`` set.

        Returns:
            The settings, and one line per problem; invalid values are dropped, never fatal.
        """
        if isinstance(raw, Mapping) and isinstance(raw.get("agentLs"), Mapping):
            raw = raw["agentLs"]
        data: dict[str, Any] = base.model_dump(by_alias=True) if base is not None else {}
        if not isinstance(raw, Mapping):
            return cls.model_validate(data), []
        for key, value in raw.items():
            if value in (None, "") or value == {}:
                continue
            if isinstance(value, Mapping) and isinstance(data.get(key), dict):
                data[key] = {**data[key], **{k: v for k, v in value.items() if v not in (None, "")}}
            else:
                data[key] = value
        try:
            settings = cls.model_validate(data)
        except ValidationError as exc:
            problems = [f"agentLs.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
            bad = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
            kept = {k: v for k, v in data.items() if k not in bad}
            if base is not None:
                kept.update({k: v for k, v in base.model_dump(by_alias=True).items() if k in bad})
            settings = cls.model_validate(kept)
            return settings, problems + settings.permissions.rules()[1]
        return settings, settings.permissions.rules()[1]


def process_environ() -> dict[str, str]:
    """A copy of this process's environment, from which the shell builds its small allowlisted one."""
    return dict(os.environ)
