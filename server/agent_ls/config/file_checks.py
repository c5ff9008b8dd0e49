"""One ``agent-ls.toml`` read and checked on its own: steps 1 to 7 of ``loading.py``'s docstring.

``ConfigText.load`` reads and parses the file, refuses secrets, applies the trust rule to a workspace's
file (``SENSITIVE_KEYS``, loosening permissions, local scripts, skill folders outside the workspace),
drops bad provider names, validates with ``schema.ConfigFile`` value by value, drops unknown keys and
unreadable permission entries. Each problem becomes a ``ConfigDiagnostic`` placed on its key by
``key_locator.KeyLocator``. It is apart from ``loading.py`` because none of this depends on the other
file: merging the two, and deciding whether the workspace is trusted, is ``loading.py``'s.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from agent_ls.config.key_locator import KeyLocator, KeyPath
from agent_ls.config.schema import MODEL_ROLES, ConfigFile, is_inner_relative
from agent_ls.core.file_diagnostics import FileDiagnostic
from agent_ls.policy.rules import Rule, parse_rules
from agent_ls.policy.user_rules import USER_SOURCE, drop_bad_entries, loosening_hint, loosens
from agent_ls.workspace.regular_files import open_regular

Severity = Literal["error", "warning"]
KeyTest = Callable[[KeyPath, Any], bool]
Report = Callable[[KeyPath, Severity, str], None]

# What an untrusted workspace may not set: these decide where requests, and so the API key, are sent.
SENSITIVE_KEYS = frozenset({"providers", "base_url", "api_key_env", "trusted_workspaces"})
# Key names that would hold a secret: refused in every file (after lower-casing, "-" read as "_").
SECRET_KEY_NAME = re.compile(r"(?:^|_)(?:api_?key|apikey|key|secret|token|password|passwd)$")
# models/resolution.py REPLAY_PREFIX; config does not import the model layer.
REPLAY_MODEL_PREFIX = "replay:"
PROVIDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

ConfigDiagnostic = FileDiagnostic
"""A problem in a config file (``file_diagnostics.FileDiagnostic``)."""


@dataclass
class ConfigText:
    """One file as read: its valid keys as plain data, the problems found, and where its keys are."""

    path: Path
    values: dict[str, Any] = field(default_factory=dict)
    problems: list[ConfigDiagnostic] = field(default_factory=list)
    locator: KeyLocator | None = None
    source: str = USER_SOURCE

    def rules(self) -> list[Rule]:
        """The file's permission rules (all readable: ``load`` dropped the others), with its source."""
        table = self.values.get("permissions", {})
        return parse_rules(((v, table.get(v, [])) for v in ("allow", "ask", "deny")), self.source)[0]

    def patterns(self, name: str) -> list[str]:
        """The file's ``permissions.<name>`` list (``secret_files``, ``not_secret_files``)."""
        found: list[str] = self.values.get("permissions", {}).get(name, [])
        return found

    def sorted_problems(self) -> list[ConfigDiagnostic]:
        return sorted(self.problems, key=lambda problem: (problem.line, problem.character))

    def report(self, key: KeyPath, severity: Severity, message: str) -> None:
        line, start, end = self.locator.locate(key) if self.locator else (0, 0, 0)
        self.problems.append(ConfigDiagnostic(self.path, line, start, end, severity, message))

    @classmethod
    def load(cls, path: Path, *, untrusted_hint: str | None, workspace: bool = False) -> ConfigText:
        """Steps 1 to 7 of ``loading.py``'s docstring for one file; absent or unusable: no values.

        ``untrusted_hint`` (None: trusted) is the reason given for each sensitive key dropped;
        ``workspace`` True drops ``trusted_workspaces`` as well (a workspace never trusts itself).
        """
        loaded = cls(path)
        try:
            # utf-8-sig: a byte order mark (Windows editors add one) is not part of the TOML. Opened
            # without blocking: a FIFO named agent-ls.toml is "not a regular file", not a hang.
            with open_regular(path) as handle:
                text = handle.read().decode("utf-8-sig")
        except FileNotFoundError:
            return loaded
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            loaded.report((), "error", f"cannot read this file: {reason}; it is ignored")
            return loaded
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            loaded.problems.append(_syntax_error(path, text, exc))
            return loaded
        except RecursionError:  # tomllib recurses per nesting level: a hostile file can exhaust the stack
            message = "invalid TOML: arrays or tables nested too deeply; this file is ignored"
            loaded.report((), "error", message)
            return loaded
        loaded.locator = KeyLocator(text)
        report = loaded.report

        for key, _ in _drop_where(raw, _holds_a_secret):
            report(
                key,
                "error",
                f"{_dotted(key)} is refused: API keys never live in config files; put the key in an "
                'environment variable and name that variable with api_key_env = "NAME" in the provider\'s '
                "table",
            )
        if workspace:
            for key, _ in _drop_where(raw, lambda k, _: k == ("trusted_workspaces",)):
                report(key, "warning", "trusted_workspaces is ignored here: only the user config can trust")
        if untrusted_hint is not None:
            for dropped, value in _drop_where(raw, lambda k, _: k[-1] in SENSITIVE_KEYS):
                for key in _leaves(dropped, value):
                    report(key, "warning", f"{_dotted(key)} is ignored: {untrusted_hint}")
            for key, _ in _drop_where(raw, loosens):
                report(key, "warning", f"{_dotted(key)} is ignored: {loosening_hint(untrusted_hint)}")
            for key, _ in _drop_where(raw, _names_a_local_script):
                report(
                    key,
                    "warning",
                    f'{_dotted(key)} = "replay:..." is ignored: an untrusted workspace may only choose '
                    "among your network providers (a replay script on disk would write every tool call and "
                    f"answer the agent gives); {untrusted_hint}",
                )
            for key, _ in _drop_where(raw, _skill_paths_leave_workspace):
                report(
                    key,
                    "warning",
                    f"{_dotted(key)} is ignored: an untrusted workspace may only name skill folders inside "
                    f"itself (relative paths without '..'); {untrusted_hint}",
                )
        providers = raw.get("providers")
        for name in (
            [n for n in providers if not PROVIDER_NAME.fullmatch(n)] if isinstance(providers, dict) else []
        ):
            report(
                ("providers", name),
                "error",
                f"provider name {name!r} is ignored: use letters, digits, '.', '_' and '-' only "
                "(it is the part before the first '/' of a model string)",
            )
            del raw["providers"][name]

        config = _validated(raw, report)
        unknown = list(_unknown_keys(config, ()))
        for key, known in unknown:
            if key[:1] == ("models",) and len(key) == 2:  # a role that does not exist: never silently
                report(key, "error", unknown_role(key[1]))
            else:
                report(
                    key, "warning", f"unknown key {_dotted(key)} is ignored; known here: {', '.join(known)}"
                )
            _drop_at(raw, key)
        config = ConfigFile.model_validate(raw) if unknown else config
        loaded.values = config.model_dump(exclude_none=True)
        drop_bad_entries(
            loaded.values.get("permissions", {}),
            lambda name, message: report(("permissions", name), "error", message),
        )
        return loaded


def _syntax_error(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> ConfigDiagnostic:
    """An error diagnostic at tomllib's position (its message ends "(at line L, column C)", 1-based)."""
    message = str(exc)
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if found:
        line, column = int(found[1]) - 1, int(found[2]) - 1
        message = message[: found.start()]
    else:
        message = re.sub(r"\s*\(at end of document\)$", "", message)
        lines = text.splitlines() or [""]
        line, column = len(lines) - 1, len(lines[-1])
    return ConfigDiagnostic(
        path, line, column, column + 1, "error", f"invalid TOML: {message}; this file is ignored"
    )


def unknown_role(name: str) -> str:
    """The error for ``[models] <name>`` when ``name`` is not a role (``schema.MODEL_ROLES``)."""
    roles = ", ".join(MODEL_ROLES)
    why = ""
    if "commit" in name.lower() or "title" in name.lower():
        why = " (agent-ls writes no commit messages, and session titles need no model call)"
    return f"unknown model role models.{_dotted((name,))} is ignored: the roles are {roles}{why}"


# The keys that name a model: the top-level ``model``, each ``[models]`` role and ``[compaction] model``.
MODEL_KEYS = frozenset({("model",), ("compaction", "model"), *(("models", role) for role in MODEL_ROLES)})


def _names_a_local_script(key: KeyPath, value: Any) -> bool:
    """True for a model key (``MODEL_KEYS``) set to ``"replay:<path>"``: a file on this machine that would
    play the model."""
    return key in MODEL_KEYS and isinstance(value, str) and value.strip().startswith(REPLAY_MODEL_PREFIX)


def _skill_paths_leave_workspace(key: KeyPath, value: Any) -> bool:
    """True for a ``skills.paths`` list with an entry that could point outside the workspace."""
    if key != ("skills", "paths") or not isinstance(value, list):
        return False
    return any(not isinstance(entry, str) or not is_inner_relative(entry) for entry in value)


def _holds_a_secret(key: KeyPath, value: Any) -> bool:
    """A value (not a table: ``[providers.key]`` is a provider) under a name like ``api_key``."""
    return not isinstance(value, dict) and bool(SECRET_KEY_NAME.search(key[-1].lower().replace("-", "_")))


def _validated(raw: dict[str, Any], report: Report) -> ConfigFile:
    """``raw`` validated; each wrong value is reported, removed, and validation tried again."""
    for _ in range(100):  # each round removes at least one key, and a file has few
        try:
            return ConfigFile.model_validate(raw)
        except ValidationError as exc:
            for error in exc.errors():
                key = _drop_at(raw, error["loc"])
                if not key:
                    continue
                if key[-1] == "api_key_env":
                    message = (
                        "api_key_env must be the NAME of an environment variable (letters, digits and _, "
                        "like LOCAL_API_KEY), never the key itself; the value is ignored"
                    )
                else:
                    message = f"{_dotted(key)}: {error['msg']}; the value is ignored"
                report(key, "error", message)
    raise AssertionError("config validation did not settle")  # pragma: no cover


def _drop_at(raw: dict[str, Any], loc: tuple[int | str, ...]) -> KeyPath:
    """Remove the deepest table key on ``loc`` (a whole array for an error inside one); its path.

    Returns () when ``loc`` is no longer there (an earlier error of the same round removed it).
    """
    table: Any = raw
    path: list[str] = []
    for step in loc:
        if not isinstance(table, dict) or not isinstance(step, str) or step not in table:
            return ()
        path.append(step)
        if not isinstance(table[step], dict) or len(path) == len(loc):
            del table[step]
            return tuple(path)
        table = table[step]
    return ()


def _drop_where(raw: dict[str, Any], test: KeyTest, prefix: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    """Remove every key (at any depth) for which ``test(path, value)`` holds; yield (path, removed value)."""
    for key in list(raw):
        path = (*prefix, key)
        if test(path, raw[key]):
            yield path, raw.pop(key)
        elif isinstance(raw[key], dict):
            yield from _drop_where(raw[key], test, path)


def _leaves(key: KeyPath, value: Any) -> Iterator[KeyPath]:
    """``key`` itself, or for a non-empty table the path of each value in it, at any depth."""
    if isinstance(value, dict) and value:
        for name, child in value.items():
            yield from _leaves((*key, name), child)
    else:
        yield key


def _unknown_keys(table: BaseModel, prefix: KeyPath) -> Iterator[tuple[KeyPath, list[str]]]:
    """(path, the known keys at that level) of each extra key, at any depth."""
    known = list(type(table).model_fields)
    for key in table.model_extra or {}:
        yield (*prefix, key), known
    for name in known:
        value = getattr(table, name)
        if isinstance(value, BaseModel):
            yield from _unknown_keys(value, (*prefix, name))
        elif isinstance(value, dict):
            for child_name, child in value.items():
                if isinstance(child, BaseModel):
                    yield from _unknown_keys(child, (*prefix, name, child_name))


def _dotted(key: KeyPath) -> str:
    return ".".join(part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else f'"{part}"' for part in key)
