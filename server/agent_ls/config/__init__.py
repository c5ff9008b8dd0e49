"""The configuration files: the user's ``agent-ls.toml`` and a workspace's, merged, with diagnostics.

Files:

- user config: ``$AGENT_LS_CONFIG_DIR/agent-ls.toml`` when that variable is set, else
  ``<user config dir>/agent-ls/agent-ls.toml`` (``~/.config/agent-ls/agent-ls.toml`` on Linux);
- workspace config: ``<workspace root>/agent-ls.toml``.

Schema (docs/configuration.md has the full table)::

    model = "anthropic/claude-sonnet-4-5"   # default model string
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

``load_config`` does, for the user file and then the workspace file:

1. read and parse with tomllib; a file that cannot be read or is not TOML gives an error diagnostic and
   is ignored whole;
2. refuse values under names like secrets (``api_key``, ``token``, ...): keys never live in files;
3. workspace only: drop ``trusted_workspaces`` (a workspace never trusts itself), and unless the
   user config lists the workspace in ``trusted_workspaces``, drop the sensitive keys
   (``SENSITIVE_KEYS``), whatever would loosen permissions (``permissions.allow``,
   ``permissions.not_secret_files``, ``shell.mode = "workspace"``, ``sandbox.enabled = false``) and
   any setting that names a local file to be read or run as part of the agent (``model =
   "replay:<path>"``; ``skills.paths`` outside the workspace), with a warning on each key;
4. drop providers whose name cannot appear in a model string;
5. validate with pydantic: a wrong value is dropped with an error diagnostic, the rest is kept;
6. report unknown keys as warnings and drop them;
7. drop the permission rules that cannot be read (``policy/rules.py`` ``parse_rule``), secret
   patterns that are not gitignore-style patterns, and ``secret_files`` patterns that would take files
   off the secret list (``!.env``: the list only grows, from any file), with an error on each;

then merges the workspace over the user config, key by key (a provider and its prices too), and reports
a provider that is not built in and lacks ``wire_api`` or ``base_url``. Every problem becomes a
``ConfigDiagnostic``; loading never raises and never prints. Permission rules are not merged key by
key: each file's rules are kept with their source (``LoadedConfig.permissions``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

# platformdirs knows each OS's per-user config location (XDG on Linux, Application Support on macOS,
# AppData on Windows); writing those rules ourselves would get one of them wrong.
import platformdirs
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from agent_ls.file_diagnostics import FileDiagnostic
from agent_ls.policy.rules import Rule, parse_rules
from agent_ls.policy.user_rules import (
    USER_SOURCE,
    WORKSPACE_SOURCE,
    PermissionConfig,
    PermissionsTable,
    SandboxTable,
    ShellTable,
    drop_bad_entries,
    loosening_hint,
    loosens,
)
from agent_ls.settings import EnvSnapshot

CONFIG_FILE_NAME = "agent-ls.toml"
CONFIG_DIR_ENV = "AGENT_LS_CONFIG_DIR"

WireApi = Literal["openai-chat", "anthropic", "openai-responses"]
Severity = Literal["error", "warning"]
KeyPath = tuple[str, ...]
KeyTest = Callable[[KeyPath, Any], bool]
Report = Callable[[KeyPath, Severity, str], None]

# What an untrusted workspace may not set: these decide where requests, and so the API key, are sent.
SENSITIVE_KEYS = frozenset({"providers", "base_url", "api_key_env", "trusted_workspaces"})
# Key names that would hold a secret: refused in every file (after lower-casing, "-" read as "_").
SECRET_KEY_NAME = re.compile(r"(?:^|_)(?:api_?key|apikey|key|secret|token|password|passwd)$")
# models/resolution.py REPLAY_PREFIX; config does not import the model layer.
REPLAY_MODEL_PREFIX = "replay:"
PROVIDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
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


class ConfigFile(_Table):
    """One ``agent-ls.toml``, as validated."""

    model: str | None = None
    trusted_workspaces: list[str] | None = None
    retry: RetryConfig | None = None
    providers: dict[str, ProviderConfig] | None = None
    permissions: PermissionsTable | None = None
    shell: ShellTable | None = None
    sandbox: SandboxTable | None = None
    instructions: InstructionsConfig | None = None
    skills: SkillsConfig | None = None


ConfigDiagnostic = FileDiagnostic
"""A problem in a config file (``file_diagnostics.FileDiagnostic``)."""


@dataclass(frozen=True)
class LoadedConfig:
    """The user config with the workspace config merged over it.

    Attributes:
        model: the default model string (the workspace's, else the user's), or None.
        model_source: the file ``model`` came from, for messages.
        retry: the retry caps set in either file (unset fields: ``RetryPolicy`` defaults).
        providers: named providers by name, as configured (not yet merged with the built-in ones).
        user_file: where the user config is looked for (it may not exist).
        workspace_file: the workspace config looked for, or None without a workspace.
        workspace_trusted: the user config lists the workspace in ``trusted_workspaces``.
        permissions: the rules and switches of both files, after the trust rule.
        diagnostics: every problem found, user file first, each file's by position.
    """

    model: str | None = None
    model_source: Path | None = None
    retry: RetryConfig = field(default_factory=RetryConfig)
    providers: Mapping[str, ProviderConfig] = field(default_factory=dict)
    user_file: Path | None = None
    workspace_file: Path | None = None
    workspace_trusted: bool = False
    permissions: PermissionConfig = field(default_factory=PermissionConfig)
    instructions: InstructionsConfig = field(default_factory=InstructionsConfig)
    skills: SkillsConfig = field(default_factory=SkillsConfig)
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
    user = _ConfigText.load(user_file, untrusted_hint=None)
    trusted_roots = _trusted_roots(user)

    workspace_file: Path | None = None
    workspace = _ConfigText(Path())
    trusted = False
    if workspace_root is not None:
        root = workspace_root.expanduser().resolve()
        workspace_file = root / CONFIG_FILE_NAME
        trusted = root in trusted_roots
        # The user config dir opened as a workspace: one file, read once, as the user config.
        if workspace_file != user_file.expanduser().resolve():
            hint = None if trusted else _untrusted_hint(root, user_file)
            workspace = _ConfigText.load(workspace_file, untrusted_hint=hint, workspace=True)
            workspace.source = WORKSPACE_SOURCE
    merged = ConfigFile.model_validate(_deep_merge(user.values, workspace.values))
    for name, provider in (merged.providers or {}).items():
        if name not in BUILTIN_PROVIDER_NAMES and None in (provider.wire_api, provider.base_url):
            defined_in = user if name in user.values.get("providers", {}) else workspace
            defined_in.report(
                ("providers", name),
                "error",
                f'provider {name!r} needs wire_api ("openai-chat", "anthropic" or "openai-responses") '
                "and base_url",
            )
    return LoadedConfig(
        model=merged.model,
        model_source=(workspace_file if "model" in workspace.values else user_file) if merged.model else None,
        retry=merged.retry or RetryConfig(),
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
        diagnostics=(*user.sorted_problems(), *workspace.sorted_problems()),
    )


def _untrusted_hint(root: Path, user_file: Path) -> str:
    return (
        "this workspace is not trusted, and only a trusted workspace's agent-ls.toml may choose providers, "
        "base URLs or key variables (a cloned repository could otherwise send your API key to any host); "
        f'to trust it, add "{root}" to trusted_workspaces in {user_file}'
    )


@dataclass
class _ConfigText:
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
    def load(cls, path: Path, *, untrusted_hint: str | None, workspace: bool = False) -> _ConfigText:
        """Steps 1 to 6 of the module docstring for one file; absent or unusable: no values.

        ``untrusted_hint`` (None: trusted) is the reason given for each sensitive key dropped;
        ``workspace`` True drops ``trusted_workspaces`` as well (a workspace never trusts itself).
        """
        loaded = cls(path)
        try:
            # utf-8-sig: a byte order mark (Windows editors add one) is not part of the TOML.
            text = path.read_text(encoding="utf-8-sig")
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
                    f"{_dotted(key)} = \"replay:...\" is ignored: an untrusted workspace may only choose "
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
            report(key, "warning", f"unknown key {_dotted(key)} is ignored; known here: {', '.join(known)}")
            _drop_at(raw, key)
        config = ConfigFile.model_validate(raw) if unknown else config
        loaded.values = config.model_dump(exclude_none=True)
        drop_bad_entries(
            loaded.values.get("permissions", {}),
            lambda name, message: report(("permissions", name), "error", message),
        )
        return loaded


# The built-in providers (models/resolution.py PROVIDERS); a table of one of these names needs no wire_api.
BUILTIN_PROVIDER_NAMES = frozenset({"openai", "ollama", "openrouter", "anthropic", "openai-responses"})


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


def _names_a_local_script(key: KeyPath, value: Any) -> bool:
    """True for ``model = "replay:<path>"``: a file on this machine that would play the model."""
    return key == ("model",) and isinstance(value, str) and value.strip().startswith(REPLAY_MODEL_PREFIX)


def _skill_paths_leave_workspace(key: KeyPath, value: Any) -> bool:
    """True for a ``skills.paths`` list with an entry that could point outside the workspace."""
    if key != ("skills", "paths") or not isinstance(value, list):
        return False
    return any(not isinstance(entry, str) or not is_inner_relative(entry) for entry in value)


def _holds_a_secret(key: KeyPath, value: Any) -> bool:
    """A value (not a table: ``[providers.key]`` is a provider) under a name like ``api_key``."""
    return not isinstance(value, dict) and bool(SECRET_KEY_NAME.search(key[-1].lower().replace("-", "_")))


def _trusted_roots(user: _ConfigText) -> set[Path]:
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


def _deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` merged onto ``base``: tables key by key, any other value replaced."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _dotted(key: KeyPath) -> str:
    return ".".join(part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else f'"{part}"' for part in key)


class KeyLocator:
    """Where each key of a TOML text is: tomllib keeps no positions, so the text is scanned.

    Understands table headers (``[a.b]``, ``[[a]]``), dotted keys (``a.b = 1``), bare, basic and
    literal keys, and skips the inside of multi-line strings. Keys inside inline tables are not
    indexed: they are located at their table's key, which is on the same line.
    """

    _BARE = re.compile(r"[A-Za-z0-9_-]+")

    def __init__(self, text: str) -> None:
        self._where: dict[KeyPath, tuple[int, int, int]] = {}
        table: KeyPath = ()
        closing: str | None = None
        for number, line in enumerate(text.splitlines()):
            if closing is not None:
                if closing in line:
                    closing = None
                continue
            start = len(line) - len(line.lstrip())
            if line.startswith("[", start):
                inner = start + (2 if line.startswith("[[", start) else 1)
                parsed = self._key(line, inner)
                if parsed is not None:
                    table = tuple(name for name, _, _ in parsed[0])
                    self._record(number, (), parsed[0])
                continue
            parsed = self._key(line, start)
            if parsed is None:
                continue
            parts, after = parsed
            rest = line[after:].lstrip()
            if not rest.startswith("="):
                continue
            self._record(number, table, parts)
            value = rest[1:].lstrip()
            for quote in ('"""', "'''"):
                if value.startswith(quote) and value.count(quote) == 1:
                    closing = quote

    def _record(self, number: int, table: KeyPath, parts: list[tuple[str, int, int]]) -> None:
        first = parts[0][1]
        for index, (_, _, end) in enumerate(parts):
            path = (*table, *(name for name, _, _ in parts[: index + 1]))
            self._where.setdefault(path, (number, first, end))

    def _key(self, line: str, pos: int) -> tuple[list[tuple[str, int, int]], int] | None:
        """The dotted key starting at ``pos``: its parts (name, start, end) and the index after it."""
        parts: list[tuple[str, int, int]] = []
        while True:
            while pos < len(line) and line[pos] in " \t":
                pos += 1
            if pos >= len(line):
                return None
            if line[pos] in "\"'":
                quote = line[pos]
                end = pos + 1
                while end < len(line) and line[end] != quote:
                    end += 2 if quote == '"' and line[end] == "\\" else 1
                if end >= len(line):
                    return None
                try:
                    name = tomllib.loads(f"k = {line[pos : end + 1]}")["k"]
                except tomllib.TOMLDecodeError:
                    return None
                parts.append((name, pos, end + 1))
                pos = end + 1
            else:
                bare = self._BARE.match(line, pos)
                if bare is None:
                    return None
                parts.append((bare[0], pos, bare.end()))
                pos = bare.end()
            while pos < len(line) and line[pos] in " \t":
                pos += 1
            if pos < len(line) and line[pos] == ".":
                pos += 1
                continue
            return parts, pos

    def locate(self, key: KeyPath) -> tuple[int, int, int]:
        """(line, start, end) of ``key``, else of its longest located prefix, else (0, 0, 0)."""
        for length in range(len(key), 0, -1):
            found = self._where.get(key[:length])
            if found is not None:
                return found
        return 0, 0, 0
