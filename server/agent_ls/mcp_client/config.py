"""The MCP servers a workspace is configured with, in Claude Code's ``.mcp.json`` format.

Files, read in this order (a later entry of the same name replaces an earlier one):

- the user's ``<user config dir>/agent-ls/mcp.json`` (``$AGENT_LS_CONFIG_DIR/mcp.json``): scope ``user``;
- the workspace's ``<root>/.mcp.json``: scope ``workspace``, started only in a trusted workspace or once
  the user approved it (``hub.py``).

Each holds ``{"mcpServers": {"<name>": <entry>}}``; an entry is, as in Claude Code (code.claude.com/docs/
en/mcp, "Project scope")::

    {"command": "npx", "args": ["-y", "pkg"], "env": {"K": "${K}"}, "cwd": "tools"}   # stdio (type "stdio")
    {"type": "http", "url": "https://host/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}

plus ``"disabled": true`` (Cline's spelling) to keep an entry without starting it. ``${VAR}`` and
``${VAR:-default}`` are expanded from the environment in ``command``, ``args``, ``env`` values, ``url``
and ``headers`` when the server starts (``expand``), never in what is shown to the user. ``type: "sse"``
(the 2024-11-05 transport, replaced by streamable HTTP) is refused with a problem. A file that cannot be
read or parsed, and an entry that does not validate, give one problem line each and are left out; the
others still load. Never raises for file contents.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_ls.settings import EnvSnapshot

WORKSPACE_FILE = ".mcp.json"
USER_FILE = "mcp.json"
Scope = Literal["user", "workspace"]
Transport = Literal["stdio", "http"]
MAX_FILE_BYTES = 1_000_000
"""A larger .mcp.json is not read (a repository's file is read at every run)."""
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class _Entry(BaseModel):
    """One ``mcpServers`` entry as written (unknown keys ignored: Claude Code's files carry more)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    type: Literal["stdio", "http", "streamable-http", "streamableHttp", "sse"] | None = None
    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = Field(default=None, min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)
    disabled: bool = False


@dataclass(frozen=True)
class ServerConfig:
    """One configured MCP server.

    Attributes:
        name: the ``mcpServers`` key (``[A-Za-z0-9_.-]``, at most 40 characters, no ``__``: it would
            read as the end of the server's part of a tool name).
        scope: ``user`` (the user's mcp.json) or ``workspace`` (the workspace's .mcp.json).
        transport: ``stdio`` (a process the host starts) or ``http`` (streamable HTTP).
        command, args, env, cwd: the process of a stdio server, as written (``${VAR}`` unexpanded); ``cwd``
            relative to the workspace root, None for the root.
        url, headers: the endpoint of an HTTP server, as written.
        disabled: ``"disabled": true`` in the entry, or named in ``[mcp] disabled``.
        source: the file it came from.
    """

    name: str
    scope: Scope
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    source: Path | None = None

    @property
    def target(self) -> str:
        """What the user is shown and approves: the command line (``python3 -m srv --flag``, with its
        ``env`` as ``K=${K}`` in front) or the URL (with its headers, ``Authorization: Bearer ${TOKEN}``);
        as written, variables unexpanded (a front end redacts what it shows of the user's own files)."""
        if self.transport == "http":
            headers = "; ".join(f"{key}: {value}" for key, value in sorted(self.headers.items()))
            return self.url + (f" (headers: {headers})" if headers else "")
        env = " ".join(f"{key}={shlex.quote(value)}" for key, value in sorted(self.env.items()))
        line = shlex.join([self.command, *self.args])
        cwd = f" (in {self.cwd})" if self.cwd else ""
        return (f"{env} {line}" if env else line) + cwd

    @property
    def variables(self) -> tuple[str, ...]:
        """The environment variables the entry's ``${VAR}`` references read (sorted): what the server is
        given from the user's environment, said in the question before a workspace server starts."""
        texts = [self.command, *self.args, *self.env.values(), self.url, *self.headers.values()]
        return tuple(sorted({match.group(1) for text in texts for match in _VARIABLE.finditer(text)}))

    @property
    def fingerprint(self) -> str:
        """SHA-256 of everything that decides what runs or where requests go: an approval holds for this
        exact entry, and a changed one asks again."""
        what = [self.transport, self.command, list(self.args), sorted(self.env.items()), self.cwd]
        what += [self.url, sorted(self.headers.items())]
        return hashlib.sha256(json.dumps(what).encode()).hexdigest()


@dataclass(frozen=True)
class Expanded:
    """A server's entry with its variables expanded (``expand``): what is spawned or connected to."""

    command: str
    args: tuple[str, ...]
    env: dict[str, str]
    url: str
    headers: dict[str, str]


@dataclass(frozen=True)
class McpServers:
    """The configured servers (user first, then workspace, by name within each) and the problems found."""

    servers: tuple[ServerConfig, ...] = ()
    problems: tuple[str, ...] = ()
    files: tuple[Path, ...] = ()

    def named(self, name: str) -> ServerConfig | None:
        return next((server for server in self.servers if server.name == name), None)


def load_servers(
    root: Path | None, user_dir: Path | None, disabled: frozenset[str] = frozenset()
) -> McpServers:
    """Read the user's ``mcp.json`` in ``user_dir`` and ``root``'s ``.mcp.json`` (module docstring).

    Args:
        root: the workspace root, or None (user servers only).
        user_dir: the user config directory (``agent-ls.toml``'s), or None.
        disabled: names ``[mcp] disabled`` turns off (any config file may: it only tightens).
    """
    found: dict[str, ServerConfig] = {}
    problems: list[str] = []
    files: list[Path] = []
    places: tuple[tuple[Path | None, Scope], ...] = (
        (user_dir / USER_FILE if user_dir else None, "user"),
        (root / WORKSPACE_FILE if root else None, "workspace"),
    )
    for path, scope in places:
        if path is None:
            continue
        raw = _read(path, problems)
        if raw is None:
            continue
        files.append(path)
        for name, entry in raw.items():
            server = _server(name, entry, scope, path, problems)
            if server is not None:
                found.pop(name, None)  # the workspace's comes after the user's, in the order shown
                found[name] = server
    servers = tuple(
        ServerConfig(**{**s.__dict__, "disabled": True}) if s.name in disabled else s for s in found.values()
    )
    return McpServers(servers, tuple(problems), tuple(files))


def _read(path: Path, problems: list[str]) -> dict[str, Any] | None:
    try:
        found = path.stat()
        if not stat.S_ISREG(found.st_mode):  # a symlink to /dev/stdin, /dev/zero or a FIFO would hang
            problems.append(f"{path}: not a regular file; its MCP servers are left out")
            return None
        if found.st_size > MAX_FILE_BYTES:
            problems.append(f"{path}: over {MAX_FILE_BYTES:,} bytes; its MCP servers are left out")
            return None
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            problems.append(f"{path}: over {MAX_FILE_BYTES:,} bytes; its MCP servers are left out")
            return None
        text = raw.decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: cannot be read ({exc}); its MCP servers are left out")
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        problems.append(f"{path}: not valid JSON ({exc}); its MCP servers are left out")
        return None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if servers is None:
        problems.append(f'{path}: no "mcpServers" object; nothing to start')
        return None
    if not isinstance(servers, dict):
        problems.append(f'{path}: "mcpServers" must be an object of named servers')
        return None
    return servers


def _server(name: str, entry: Any, scope: Scope, path: Path, problems: list[str]) -> ServerConfig | None:
    where = f"{path}: server {name!r}"
    shown = name.replace(".", "_")  # as in tool names and rules (naming.py)
    if not _NAME.fullmatch(name) or "__" in shown or shown.endswith("_"):
        # "__" separates server and tool in tool names and rules: "git__x", "git._x" or "git_" (whose
        # tools read mcp__git___t) would fall under the rules of server "git".
        problems.append(
            f"{where}: a name holds letters, digits, '_', '-', '.' (at most 40), never '__' (nor '._', "
            "'..', '_.'), and does not end with '_' or '.'"
        )
        return None
    try:
        parsed = _Entry.model_validate(entry)
    except ValidationError as exc:
        error = exc.errors()[0]
        at = ".".join(str(part) for part in error["loc"]) or "(entry)"
        problems.append(f"{where}: {at}: {error['msg']}; left out")
        return None
    if parsed.type == "sse":
        problems.append(f'{where}: type "sse" (the 2024-11-05 transport) is not supported; use "http"')
        return None
    http = parsed.type in ("http", "streamable-http", "streamableHttp")
    http = http or (parsed.type is None and bool(parsed.url))
    if http and not parsed.url:
        problems.append(f'{where}: an HTTP server needs "url"; left out')
        return None
    if not http and not parsed.command:
        problems.append(f'{where}: needs "command" (stdio) or "type": "http" with "url"; left out')
        return None
    return ServerConfig(
        name=name,
        scope=scope,
        transport="http" if http else "stdio",
        command=parsed.command or "",
        args=tuple(parsed.args),
        env=dict(parsed.env),
        cwd=parsed.cwd,
        url=parsed.url or "",
        headers=dict(parsed.headers),
        disabled=parsed.disabled,
        source=path,
    )


class MissingVariable(ValueError):
    """A ``${VAR}`` without a default names a variable that is not set."""


def expand(server: ServerConfig, env: EnvSnapshot) -> Expanded:
    """``server``'s command, args, env values, url and header values with ``${VAR}`` / ``${VAR:-default}``
    replaced from ``env``. Raises ``MissingVariable`` (``needs ${VAR}, which is not set``)."""

    def one(text: str) -> str:
        def value(match: re.Match[str]) -> str:
            found = env.get(match.group(1))
            if found is not None:
                return found
            if match.group(2) is not None:
                return match.group(2)
            raise MissingVariable(f"needs ${{{match.group(1)}}}, which is not set")

        return _VARIABLE.sub(value, text)

    return Expanded(
        command=one(server.command),
        args=tuple(one(arg) for arg in server.args),
        env={key: one(value) for key, value in server.env.items()},
        url=one(server.url),
        headers={key: one(value) for key, value in server.headers.items()},
    )
