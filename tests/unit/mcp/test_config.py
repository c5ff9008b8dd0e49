"""The MCP servers of ``.mcp.json`` and the user's ``mcp.json`` (``mcp_client.config``), in Claude Code's
format: entries, precedence, ``${VAR}`` expansion, refusals, and ``disabled``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ls.mcp_client.config import (
    Expanded,
    McpServers,
    MissingVariable,
    ServerConfig,
    expand,
    load_servers,
)
from agent_ls.mcp_client.hub import McpHub
from agent_ls.mcp_client.status import check
from agent_ls.settings import EnvSnapshot


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "ws"
    directory.mkdir()
    return directory


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "config"
    directory.mkdir()
    return directory


def write(path: Path, servers: Any) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def test_claude_code_entries_stdio_and_http(root: Path) -> None:
    source = write(
        root / ".mcp.json",
        {
            "git": {
                "command": "uvx",
                "args": ["mcp-server-git", "--repository", "."],
                "env": {"TOKEN": "${GIT_TOKEN}"},
                "cwd": "tools",
                "alwaysAllow": ["x"],  # another client's key: ignored
            },
            "typed": {"type": "stdio", "command": "node", "args": ["srv.js"]},
            "api": {
                "type": "http",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer ${T}"},
            },
            "bare-url": {"url": "http://127.0.0.1:9/other"},
        },
    )
    found = load_servers(root, None)
    assert found.problems == () and found.files == (source,)
    assert found.servers == (
        ServerConfig(
            "git",
            "workspace",
            "stdio",
            command="uvx",
            args=("mcp-server-git", "--repository", "."),
            env={"TOKEN": "${GIT_TOKEN}"},
            cwd="tools",
            source=source,
        ),
        ServerConfig("typed", "workspace", "stdio", command="node", args=("srv.js",), source=source),
        ServerConfig(
            "api",
            "workspace",
            "http",
            url="http://127.0.0.1:9/mcp",
            headers={"Authorization": "Bearer ${T}"},
            source=source,
        ),
        ServerConfig("bare-url", "workspace", "http", url="http://127.0.0.1:9/other", source=source),
    )
    # What the user approves: the command line and the headers as written, variables unexpanded.
    assert found.servers[0].target == "TOKEN='${GIT_TOKEN}' uvx mcp-server-git --repository . (in tools)"
    assert found.servers[2].target == "http://127.0.0.1:9/mcp (headers: Authorization: Bearer ${T})"
    assert found.servers[2].variables == ("T",)


def test_a_workspace_entry_replaces_the_user_entry_of_the_same_name(root: Path, user_dir: Path) -> None:
    user = write(user_dir / "mcp.json", {"time": {"command": "user-time"}, "mine": {"command": "mine"}})
    workspace = write(root / ".mcp.json", {"time": {"command": "repo-time"}})
    found = load_servers(root, user_dir)
    assert [(s.name, s.scope, s.command, s.source) for s in found.servers] == [
        ("mine", "user", "mine", user),
        ("time", "workspace", "repo-time", workspace),  # a workspace server now: it needs trust or approval
    ]
    assert found.files == (user, workspace)


def test_no_files_no_servers(root: Path, user_dir: Path) -> None:
    assert load_servers(root, user_dir) == McpServers()
    assert load_servers(None, None) == McpServers()


def test_variables_are_expanded_with_defaults_from_the_environment() -> None:
    server = ServerConfig(
        "s",
        "user",
        "stdio",
        command="${BIN:-python3}",
        args=("--repo", "${REPO}", "--mode=${MODE:-fast}", "$NOT_BRACED"),
        env={"TOKEN": "${TOKEN}", "EMPTY": "${EMPTY:-}"},
    )
    env = EnvSnapshot({"REPO": "/src/app", "TOKEN": "t-1", "MODE": "slow"})
    assert expand(server, env) == Expanded(
        command="python3",
        args=("--repo", "/src/app", "--mode=slow", "$NOT_BRACED"),
        env={"TOKEN": "t-1", "EMPTY": ""},
        url="",
        headers={},
    )
    http = ServerConfig(
        "h", "user", "http", url="http://${HOST:-127.0.0.1}:${PORT}/mcp", headers={"X": "${T}"}
    )
    assert expand(http, EnvSnapshot({"PORT": "8123", "T": "v"})) == Expanded(
        command="", args=(), env={}, url="http://127.0.0.1:8123/mcp", headers={"X": "v"}
    )


def test_a_missing_variable_without_default_is_named() -> None:
    server = ServerConfig("s", "user", "stdio", command="srv", args=("${API_TOKEN}",))
    with pytest.raises(MissingVariable) as raised:
        expand(server, EnvSnapshot({}))
    assert str(raised.value) == "needs ${API_TOKEN}, which is not set"


async def test_a_server_with_a_missing_variable_fails_with_that_reason_and_starts_nothing(root: Path) -> None:
    marker = root / "started"
    servers = McpServers(
        (ServerConfig("s", "user", "stdio", command="touch", args=(str(marker), "${API_TOKEN}")),)
    )
    hub = McpHub(root, servers, EnvSnapshot({}))
    try:
        [reported] = await check(hub)
    finally:
        await hub.aclose()
    assert (reported["state"], reported["detail"]) == ("failed", "needs ${API_TOKEN}, which is not set")
    assert not marker.exists()


def test_sse_is_refused_and_the_other_servers_still_load(root: Path) -> None:
    source = write(
        root / ".mcp.json",
        {"old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}, "ok": {"command": "srv"}},
    )
    found = load_servers(root, None)
    assert [s.name for s in found.servers] == ["ok"]
    assert found.problems == (
        f'{source}: server \'old\': type "sse" (the 2024-11-05 transport) is not supported; use "http"',
    )


def test_a_file_that_is_not_json_is_one_problem_and_the_other_file_still_loads(
    root: Path, user_dir: Path
) -> None:
    write(user_dir / "mcp.json", {"time": {"command": "t"}})
    (root / ".mcp.json").write_text('{"mcpServers": {"x": ', encoding="utf-8")
    found = load_servers(root, user_dir)
    assert [s.name for s in found.servers] == ["time"]
    [problem] = found.problems
    assert problem.startswith(f"{root / '.mcp.json'}: not valid JSON (")
    assert problem.endswith("); its MCP servers are left out")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[]", 'no "mcpServers" object; nothing to start'),
        ('{"mcpServers": []}', '"mcpServers" must be an object of named servers'),
    ],
)
def test_a_file_without_servers_says_so(root: Path, text: str, problem: str) -> None:
    (root / ".mcp.json").write_text(text, encoding="utf-8")
    assert load_servers(root, None).problems == (f"{root / '.mcp.json'}: {problem}",)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"args": ["x"]}, 'needs "command" (stdio) or "type": "http" with "url"; left out'),
        ({"type": "http"}, 'an HTTP server needs "url"; left out'),
        ({"command": "x", "args": "not a list"}, "args: Input should be a valid list; left out"),
        ({"command": 3}, "command: Input should be a valid string; left out"),
    ],
)
def test_an_entry_that_does_not_validate_is_left_out(root: Path, entry: dict[str, Any], problem: str) -> None:
    source = write(root / ".mcp.json", {"bad": entry, "ok": {"command": "srv"}})
    found = load_servers(root, None)
    assert [s.name for s in found.servers] == ["ok"]
    assert found.problems == (f"{source}: server 'bad': {problem}",)


@pytest.mark.parametrize("name", ["git__x", "git._x", "git_", "git.", "a..b", "", "x" * 41, "sp ace", "é"])
def test_a_name_that_would_blur_server_and_tool_is_refused(root: Path, name: str) -> None:
    """``__`` ends the server's part of ``mcp__<server>__<tool>``; ``.`` reads as ``_`` there, so
    ``git._x`` and ``git_`` would fall under the rules of server ``git``."""
    source = write(root / ".mcp.json", {name: {"command": "srv"}, "git": {"command": "git-srv"}})
    found = load_servers(root, None)
    assert [s.name for s in found.servers] == ["git"]
    [problem] = found.problems
    assert problem.startswith(f"{source}: server {name!r}: a name holds letters, digits, '_', '-', '.'")


@pytest.mark.parametrize("name", ["git", "my.server", "a-b_c", "_x", "v1.2-beta", "x" * 40])
def test_plain_names_are_accepted(root: Path, name: str) -> None:
    write(root / ".mcp.json", {name: {"command": "srv"}})
    assert [s.name for s in load_servers(root, None).servers] == [name]


def test_disabled_in_the_entry_or_by_name(root: Path, user_dir: Path) -> None:
    write(user_dir / "mcp.json", {"off": {"command": "a", "disabled": True}, "named": {"command": "b"}})
    write(root / ".mcp.json", {"on": {"command": "c"}})
    found = load_servers(root, user_dir, frozenset({"named", "not-configured"}))
    assert [(s.name, s.disabled) for s in found.servers] == [("off", True), ("named", True), ("on", False)]


async def test_a_disabled_server_is_reported_and_never_started(root: Path) -> None:
    marker = root / "started"
    servers = McpServers(
        (ServerConfig("off", "user", "stdio", command="touch", args=(str(marker),), disabled=True),)
    )
    hub = McpHub(root, servers, EnvSnapshot({}))
    try:
        [reported] = await check(hub)
    finally:
        await hub.aclose()
    assert reported["state"] == "disabled" and reported["tools"] == []
    assert not marker.exists()


def test_the_fingerprint_follows_what_runs() -> None:
    base = ServerConfig("s", "workspace", "stdio", command="srv", args=("a",), env={"K": "v"})
    same = ServerConfig("s", "workspace", "stdio", command="srv", args=("a",), env={"K": "v"}, disabled=True)
    assert base.fingerprint == same.fingerprint
    for changed in (
        ServerConfig("s", "workspace", "stdio", command="srv", args=("b",), env={"K": "v"}),
        ServerConfig("s", "workspace", "stdio", command="srv", args=("a",), env={"K": "w"}),
        ServerConfig("s", "workspace", "stdio", command="other", args=("a",), env={"K": "v"}),
        ServerConfig("s", "workspace", "stdio", command="srv", args=("a",), env={"K": "v"}, cwd="sub"),
    ):
        assert changed.fingerprint != base.fingerprint


def test_an_oversized_file_is_not_read(root: Path) -> None:
    (root / ".mcp.json").write_text(" " * 1_000_001 + "{}", encoding="utf-8")
    found = load_servers(root, None)
    assert found.servers == () and len(found.problems) == 1
    assert "over 1,000,000 bytes; its MCP servers are left out" in found.problems[0]
