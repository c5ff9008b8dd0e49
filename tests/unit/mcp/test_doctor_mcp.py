"""``agent-ls doctor``'s MCP check as a user runs it: a real ``agent-ls doctor`` process, real MCP servers
(``mcp-server-time`` from PyPI over stdio), a command that does not exist, a server that exits at once,
and a cloned repository's ``.mcp.json`` that must start nothing in an untrusted workspace."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_doctor import Ran, doctor

TIME_SERVER = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
MISSING = "agent-ls-no-such-command-18"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "user config"
    directory.mkdir()
    return directory


def servers_file(path: Path, servers: dict[str, Any]) -> None:
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def run_doctor(workspace: Path, config_dir: Path, *args: str) -> Ran:
    """``agent-ls doctor`` with its own state dir (where approvals would be kept)."""
    state = config_dir.parent / "state"
    return doctor(*args, workspace=workspace, config_dir=config_dir, env={"AGENT_LS_STATE_DIR": str(state)})


def mcp_section(ran: Ran) -> list[str]:
    """The ``mcp`` check's line and its detail lines."""
    lines = ran.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line[2:].startswith("mcp: "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return lines[start:end]


def test_a_user_server_is_connected_and_its_tools_listed(workspace: Path, config_dir: Path) -> None:
    servers_file(config_dir / "mcp.json", {"time": TIME_SERVER})
    ran = run_doctor(workspace, config_dir)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    section = mcp_section(ran)
    assert section[0] == "✓ mcp: 1 server: 1 connected"
    assert section[1].startswith("    time (user, stdio): connected: 2 tools, mcp-time ")
    assert section[2] == f"      {shlex.join([sys.executable, *TIME_SERVER['args']])}"
    assert section[3].startswith("      2 tools, ~") and section[3].endswith(
        " schema tokens, sent with every request:"
    )
    names = [line.split()[0] for line in section[4:]]
    assert names == ["mcp__time__get_current_time", "mcp__time__convert_time"]
    assert all(" [read-only] ~" in line for line in section[4:]), section


def test_json_carries_the_agent_mcp_status_shape(workspace: Path, config_dir: Path) -> None:
    servers_file(config_dir / "mcp.json", {"time": TIME_SERVER})
    ran = run_doctor(workspace, config_dir, "--json")
    report = json.loads(ran.stdout)
    assert report["ok"] is True
    assert [check["name"] for check in report["checks"]][-1] == "mcp"
    assert report["mcp"]["problems"] == []
    [server] = report["mcp"]["servers"]
    assert {key: server[key] for key in ("name", "scope", "transport", "state", "deferred")} == {
        "name": "time",
        "scope": "user",
        "transport": "stdio",
        "state": "connected",
        "deferred": False,
    }
    assert server["serverInfo"]["name"] == "mcp-time" and server["protocolVersion"]
    tool = server["tools"][0]
    assert {key: tool[key] for key in ("name", "original", "readOnly", "destructive")} == {
        "name": "mcp__time__get_current_time",
        "original": "get_current_time",
        "readOnly": True,
        "destructive": False,
    }
    assert server["schemaTokens"] == sum(t["schemaTokens"] for t in server["tools"]) > 0


def test_without_an_mcp_file_there_is_no_mcp_check(workspace: Path, config_dir: Path) -> None:
    ran = run_doctor(workspace, config_dir, "--json")
    report = json.loads(ran.stdout)
    assert [check["name"] for check in report["checks"]] == ["sandbox", "ripgrep", "model", "config"]
    assert report["mcp"] == {"servers": [], "problems": []}


def test_a_server_that_cannot_start_is_an_error_with_the_reason(workspace: Path, config_dir: Path) -> None:
    exits = [sys.executable, "-c", "import sys; sys.stderr.write('boom: TOKEN missing\\n'); sys.exit(3)"]
    servers = {
        "time": TIME_SERVER,
        "missing": {"command": MISSING},
        "exits": {"command": exits[0], "args": exits[1:]},
        "off": {"command": MISSING, "disabled": True},
    }
    servers_file(config_dir / "mcp.json", servers)
    ran = run_doctor(workspace, config_dir)
    assert ran.returncode == 1, ran.stdout
    section = mcp_section(ran)
    assert section[0] == "✗ mcp: 4 servers: 1 connected, 2 failed, 1 disabled"
    missing = section.index(
        f"    missing (user, stdio): failed: cannot start {MISSING!r}: command not found "
        "(is it installed, on PATH?)"
    )
    assert section[missing + 1] == f"      {MISSING}"
    exited = next(i for i, line in enumerate(section) if line.startswith("    exits (user, stdio): failed: "))
    assert "boom: TOKEN missing" in section[exited]
    assert section[exited + 2] == "      stderr: boom: TOKEN missing"  # the stderr tail, after the command
    assert "    off (user, stdio): disabled" in section


def test_an_unreadable_mcp_file_is_an_error(workspace: Path, config_dir: Path) -> None:
    (workspace / ".mcp.json").write_text('{"mcpServers": {', encoding="utf-8")
    ran = run_doctor(workspace, config_dir)
    assert ran.returncode == 1
    section = mcp_section(ran)
    assert section[0] == "✗ mcp: no server could be read; 1 problem"
    assert section[1].startswith(f"    problem: {workspace / '.mcp.json'}: not valid JSON (")
    assert section[1].endswith("); its MCP servers are left out")


def marker_server(marker: Path) -> dict[str, Any]:
    """A "server" that only writes ``marker``: proof that its command was run."""
    return {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').write('spawned')"]}


def test_a_workspace_server_of_an_untrusted_workspace_needs_approval_and_nothing_starts(
    workspace: Path, config_dir: Path
) -> None:
    marker = workspace.parent / "spawned"
    servers_file(workspace / ".mcp.json", {"repo": marker_server(marker)})
    ran = run_doctor(workspace, config_dir)
    assert ran.returncode == 0, ran.stdout  # waiting for an approval is a warning
    section = mcp_section(ran)
    assert section[:2] == [
        "! mcp: 1 server: 1 needs approval",
        "    repo (workspace, stdio): needs approval: not started: approve it when asked, or trust the "
        "workspace",
    ]
    assert not marker.exists()


def test_the_same_server_starts_in_a_trusted_workspace(workspace: Path, config_dir: Path) -> None:
    """The marker proves the test above: trusted, the same entry is run (and fails: it speaks no MCP)."""
    marker = workspace.parent / "spawned"
    servers_file(workspace / ".mcp.json", {"repo": marker_server(marker)})
    (config_dir / "agent-ls.toml").write_text(
        f"trusted_workspaces = [{str(workspace)!r}]\n", encoding="utf-8"
    )
    ran = run_doctor(workspace, config_dir)
    assert mcp_section(ran)[0] == "✗ mcp: 1 server: 1 failed"
    assert marker.read_text() == "spawned"


def test_no_server_process_outlives_doctor(workspace: Path, config_dir: Path) -> None:
    pid_file = workspace.parent / "server.pid"
    python = shlex.join([sys.executable, *TIME_SERVER["args"]])
    wrapped = {"command": "sh", "args": ["-c", f"echo $$ > {shlex.quote(str(pid_file))}; exec {python}"]}
    servers_file(config_dir / "mcp.json", {"time": wrapped})
    ran = run_doctor(workspace, config_dir)
    assert mcp_section(ran)[0] == "✓ mcp: 1 server: 1 connected", ran.stdout
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10  # the process may still be on its way out when doctor returns
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[-1]
    except FileNotFoundError:
        return False
    return not state.startswith("Z")  # a zombie has ended


def test_an_mcp_file_without_servers_is_fine(workspace: Path, config_dir: Path) -> None:
    servers_file(workspace / ".mcp.json", {})
    ran = run_doctor(workspace, config_dir)
    assert mcp_section(ran) == [f"✓ mcp: no servers in {workspace / '.mcp.json'}"]


def test_a_server_disabled_in_agent_ls_toml_is_reported_and_not_started(
    workspace: Path, config_dir: Path
) -> None:
    marker = workspace.parent / "spawned"
    servers_file(config_dir / "mcp.json", {"mine": marker_server(marker)})
    (config_dir / "agent-ls.toml").write_text('[mcp]\ndisabled = ["mine"]\n', encoding="utf-8")
    ran = run_doctor(workspace, config_dir)
    assert mcp_section(ran)[:2] == ["✓ mcp: 1 server: 1 disabled", "    mine (user, stdio): disabled"]
    assert not marker.exists()
