"""The permission tables of ``agent-ls.toml`` (``[permissions]``, ``[shell]``, ``[sandbox]``).

Schema (``agent_ls.config`` validates it, reports problems as diagnostics, and applies the trust rule)::

    [permissions]
    allow = ["Bash(npm run test:*)", "bash: make *", "Read(docs/**)"]
    ask = ["Bash(git push --force*)"]
    deny = ["Bash(curl *)", "Read(./secrets/**)"]
    secret_files = ["*.key"]            # extra secret patterns (gitignore-style, no "!"); any file may add
    not_secret_files = [".env.local"]   # removed from the secret list: user config (or a trusted workspace)
    [shell]
    mode = "shadow"                     # or "workspace": commands run in the real tree, stricter verdicts
    [sandbox]
    enabled = true                      # bubblewrap when present

Trust: an untrusted workspace's file may only tighten. Its ``permissions.allow``,
``permissions.not_secret_files``, ``shell.mode = "workspace"`` and ``sandbox.enabled = false`` are
ignored (each with a warning); its ``ask``, ``deny`` and ``secret_files`` apply. This module holds the
table models and the result (``PermissionConfig``); ``agent_ls.config`` does the reading.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pathspec
from pydantic import BaseModel, ConfigDict

from agent_ls.policy.rules import Rule, RuleSyntaxError, parse_rule
from agent_ls.workspace.paths import secret_pattern_problem

ShellMode = Literal["shadow", "workspace"]

USER_SOURCE = "user config"
WORKSPACE_SOURCE = "workspace agent-ls.toml"
EDITOR_SOURCE = "editor settings"


class _Table(BaseModel):
    # As config/schema.py's tables: TOML values are typed (strict), extra keys kept only to be reported.
    # Built when a config file's table is validated, not at import (start-up time).
    model_config = ConfigDict(extra="allow", strict=True, frozen=True, defer_build=True)


class PermissionsTable(_Table):
    """``[permissions]``: rule strings per verdict, and changes to the secret-file list."""

    allow: list[str] | None = None
    ask: list[str] | None = None
    deny: list[str] | None = None
    secret_files: list[str] | None = None
    not_secret_files: list[str] | None = None


class ShellTable(_Table):
    """``[shell]``: ``mode`` is where commands run (the session's shadow copy, or the real tree)."""

    mode: ShellMode | None = None


class SandboxTable(_Table):
    """``[sandbox]``: ``enabled = false`` runs commands without bubblewrap even where it works."""

    enabled: bool | None = None


@dataclass(frozen=True)
class PermissionConfig:
    """What the config files say about permissions, after the trust rule.

    Attributes:
        rules: the rules of the user config then the workspace config, each with its source (the
            built-in rules and the editor settings' are not here).
        secret_files: extra secret-file patterns (gitignore-style), user's then workspace's.
        not_secret_files: paths taken out of the secret list (user config, or a trusted workspace's);
            the only way out of it.
        shell_mode: ``shadow`` (default) or ``workspace``.
        sandbox_enabled: False when a trusted file turned the sandbox off.
    """

    rules: tuple[Rule, ...] = ()
    secret_files: tuple[str, ...] = ()
    not_secret_files: tuple[str, ...] = ()
    shell_mode: ShellMode = "shadow"
    sandbox_enabled: bool = True


def loosens(key: tuple[str, ...], value: Any) -> bool:
    """True for a key (path of table names) and value an untrusted workspace may not set."""
    if key in (("permissions", "allow"), ("permissions", "not_secret_files")):
        return True
    return (key == ("shell", "mode") and value == "workspace") or (
        key == ("sandbox", "enabled") and value is False
    )


def loosening_hint(trust_hint: str) -> str:
    """The warning's reason for a dropped permission key; ``trust_hint`` ends with "to trust it, ..."."""
    trust = trust_hint[trust_hint.find("to trust it") :] if "to trust it" in trust_hint else trust_hint
    return (
        "this workspace is not trusted, and an untrusted workspace's agent-ls.toml may only tighten "
        "permissions (add ask or deny rules, or secret files), so that a cloned repository cannot allow "
        f"commands for itself; {trust}"
    )


def drop_bad_entries(table: dict[str, list[str]], report: Callable[[str, str], None]) -> None:
    """Remove from ``table`` (a validated ``[permissions]`` as plain data) the entries that cannot work.

    Rule strings must parse (``parse_rule``); secret patterns must be non-empty gitignore-style
    patterns, and a ``secret_files`` pattern may not re-include (``!.env``, also as a fullwidth ``！``:
    ``workspace/paths.py`` ``secret_pattern_problem``), since any file, even an untrusted workspace's,
    may add secret files and none may take the built-in ones away. ``report(key, message)`` is called
    once per entry removed, with its key (``allow``).
    """
    for name, entries in table.items():
        kept = []
        for entry in entries:
            try:
                if name in ("allow", "ask", "deny"):
                    parse_rule(entry, "deny", "")
                elif not entry.strip():
                    raise RuleSyntaxError("an empty pattern matches nothing")
                elif name == "secret_files":
                    problem = secret_pattern_problem(entry)
                    if problem is not None:
                        raise RuleSyntaxError(f"{entry!r}: {problem}")
                else:
                    # An exemption may use "!" (it only narrows the exemption); it must compile.
                    pathspec.GitIgnoreSpec.from_lines([entry])
            except ValueError as exc:  # RuleSyntaxError, and pathspec's pattern errors
                report(name, f"permissions.{name}: {exc}; this entry is ignored")
            else:
                kept.append(entry)
        table[name] = kept
