"""MCP servers through ``agent-ls run`` and ``agent-ls doctor`` as a user runs them (issue 18,
docs/mcp.md): the terminal asks before a workspace server starts and ``--yes`` never approves one, a
trusted workspace starts its servers in the workspace root, ``${VAR}`` expansion, a server's environment
that holds no key unless its entry names it, a key a server prints never shown, a resource attached with
``--resource``, a run ended by a signal stopping its servers, and doctor's ``mcp`` check."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.mcp_helpers import McpScene, call, digest, environ_of, mcp_scene, result_of, tool_names
from tests.support import agent_cli, sweep
from tests.support.mcp_servers import PROBE, calls, probe_entry, starts, time_entry, write_servers
from tests.support.mcp_servers.probe import NOTES
from tests.support.model_server import FakeModelServer

KEY = "sk-mcp-e2e-key-that-must-stay-home-0123456789"
SAFE_DEFAULT = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}


@pytest.fixture(autouse=True)
def mcp(tmp_path: Path) -> Iterator[McpScene]:
    with mcp_scene(tmp_path) as scene:
        yield scene


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "proj"
    directory.mkdir()
    (directory / "README.md").write_text("A project.\n")
    return directory


@pytest.fixture
def config(tmp_path: Path) -> Path:
    directory = tmp_path / "config"
    directory.mkdir()
    return directory


def run(
    root: Path, config: Path, server: FakeModelServer, *args: str, **env: str
) -> tuple[int, str, list[Any]]:
    """``agent-ls run --model openai/test --workspace ROOT ARGS`` against ``server``; (exit code, stderr,
    the model requests)."""
    environment = agent_cli.user_environment(config, AGENT_LS_BASE_URL=server.base_url, **env)
    environment.setdefault("OPENAI_API_KEY", "sk-unused-test-key-000000000000000000000")
    arguments = ["run", *args, "--model", "openai/test", "--workspace", str(root)]
    done = agent_cli.run(arguments, cwd=root, env=environment)
    sweep.record("agent-ls run stderr", [done.stderr, done.stdout])
    return done.returncode, done.stderr, server.requests


def results(requests: list[Any]) -> list[str]:
    """The tool results of the last request, in order."""
    return [result_of(m)[0] for m in requests[-1]["messages"] if m["role"] == "tool"]


def test_yes_never_approves_a_workspace_server(root: Path, config: Path, tmp_path: Path) -> None:
    marker = tmp_path / "probe.marker"
    write_servers(root / ".mcp.json", {"probe": probe_entry(marker)})
    steps = [call("c1", "mcp__probe__echo", text="hi"), {"content": "ok"}]
    with FakeModelServer(steps) as server:
        code, stderr, requests = run(root, config, server, "Echo", "--yes")
    assert code == 0, stderr
    assert starts(marker) == 0
    assert not [name for name in tool_names(requests[0]) if name.startswith("mcp__")]
    assert "mcp__probe__echo" in results(requests)[0] and "hi" not in results(requests)[0]


def test_a_trusted_workspace_runs_its_servers_in_the_root_or_their_cwd(
    root: Path, config: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "probe.marker"
    (root / "sub").mkdir()
    write_servers(root / ".mcp.json", {"here": probe_entry(marker), "there": probe_entry(marker, cwd="sub")})
    (config / "agent-ls.toml").write_text(
        f'trusted_workspaces = ["{root}"]\n\n[permissions]\nallow = ["mcp__here", "mcp__there"]\n'
    )
    steps = [call("c1", "mcp__here__where"), call("c2", "mcp__there__where"), {"content": "ok"}]
    with FakeModelServer(steps) as server:
        code, stderr, requests = run(root, config, server, "Where?")
    assert code == 0, stderr
    here, there = results(requests)
    assert (here.strip(), there.strip()) == (str(root), str(root / "sub"))
    assert starts(marker) == 2 and calls(marker) == ["where", "where"]
    assert "mcp here: connected (10 tools, probe 1.2.3)" in stderr, stderr


def test_variables_are_expanded_and_no_key_reaches_a_server_unless_its_entry_names_it(
    root: Path, config: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "probe.marker"
    named_env = {"OPENAI_API_KEY": "${OPENAI_API_KEY}", "WHO": "${PROBE_WHO}", "HI": "${PROBE_HI:-hello}"}
    write_servers(
        config / "mcp.json",
        {
            "plain": probe_entry(marker),
            "named": {**probe_entry(marker, name="${PROBE_NAME}"), "env": named_env},
            "unset": probe_entry(marker, name="${PROBE_UNSET_VARIABLE}"),
        },
    )
    (config / "agent-ls.toml").write_text('[permissions]\nallow = ["mcp__plain", "mcp__named"]\n')
    steps = [call("c1", "mcp__plain__environ"), call("c2", "mcp__named__environ"), {"content": "ok"}]
    with FakeModelServer(steps) as server:
        code, stderr, requests = run(
            root, config, server, "Env?", OPENAI_API_KEY=KEY, PROBE_WHO="world", PROBE_NAME="named-probe"
        )
    assert code == 0, stderr
    plain, named = (environ_of(text) for text in results(requests))
    assert set(plain) - {"LC_CTYPE"} <= SAFE_DEFAULT, sorted(plain)  # Python adds LC_CTYPE itself
    assert named["OPENAI_API_KEY"] == digest(KEY)
    assert (named["WHO"], named["HI"]) == (digest("world"), digest("hello"))
    assert set(named) - {"OPENAI_API_KEY", "WHO", "HI", "LC_CTYPE"} <= SAFE_DEFAULT, sorted(named)
    assert "mcp named: connected (10 tools, named-probe 1.2.3)" in stderr, stderr
    assert "mcp unset: failed: needs ${PROBE_UNSET_VARIABLE}, which is not set" in stderr, stderr
    assert KEY not in stderr, stderr
    assert starts(marker) == 2


def test_a_resource_attached_with_the_resource_option_reaches_the_model(
    root: Path, config: Path, tmp_path: Path
) -> None:
    write_servers(config / "mcp.json", {"probe": probe_entry(tmp_path / "probe.marker")})
    with FakeModelServer([{"content": "Friday."}]) as server:
        code, stderr, requests = run(root, config, server, "When?", "--resource", "probe:probe://notes")
    assert code == 0, stderr
    assert NOTES in json.dumps(requests[0]["messages"])


def test_doctor_reports_each_server_without_starting_a_workspace_one(
    root: Path, config: Path, tmp_path: Path, mcp: McpScene
) -> None:
    marker = tmp_path / "probe.marker"
    write_servers(
        config / "mcp.json",
        {
            "time": mcp.tagged(time_entry()),
            "broken": probe_entry(exit_at_start="broken on purpose: no licence file"),
        },
    )
    write_servers(root / ".mcp.json", {"probe": probe_entry(marker)})
    with FakeModelServer([]) as server:
        env = agent_cli.user_environment(config, AGENT_LS_BASE_URL=server.base_url, OPENAI_API_KEY=KEY)
        arguments = ["doctor", "--workspace", str(root), "--model", "openai/test"]
        done = agent_cli.run(arguments, cwd=root, env=env)
    out = done.stdout + done.stderr
    sweep.record("agent-ls doctor output", [out])
    (heading,) = [line for line in out.splitlines() if line.startswith(("✓ mcp:", "✗ mcp:"))]
    assert "3 servers: 1 connected, 1 failed, 1 needs approval" in heading, out
    section = out[out.index(heading) :]
    lines = dict(re.findall(r"^ +(\w+) \((?:user|workspace), (?:stdio|http)\): (.*)$", section, re.M))
    assert lines["time"] == f"connected: 2 tools, mcp-time {version('mcp-server-time')}", section
    assert "mcp__time__get_current_time" in section
    assert lines["broken"].startswith("failed") and "broken on purpose: no licence file" in section, section
    assert lines["probe"].startswith("needs approval"), section
    assert starts(marker) == 0
    assert KEY not in out


def test_a_key_a_server_writes_on_stderr_reaches_neither_the_transcript_nor_doctor(
    root: Path, config: Path
) -> None:
    env = {"OPENAI_API_KEY": "${OPENAI_API_KEY}"}  # the server is given the key, and prints it
    leaky = probe_entry(exit_at_start="bad key ${OPENAI_API_KEY}", env=env)
    write_servers(config / "mcp.json", {"leaky": leaky})
    with FakeModelServer([{"content": "ok"}]) as server:
        code, stderr, _ = run(root, config, server, "Anything", OPENAI_API_KEY=KEY)
        url = server.base_url
        environment = agent_cli.user_environment(config, AGENT_LS_BASE_URL=url, OPENAI_API_KEY=KEY)
        arguments = ["doctor", "--workspace", str(root), "--model", "openai/test"]
        doctor = agent_cli.run(arguments, cwd=root, env=environment)
    assert code == 0, stderr
    assert "mcp leaky: failed" in stderr and "bad key" in stderr, stderr
    assert "bad key" in doctor.stdout + doctor.stderr
    for where, text in (("run", stderr), ("doctor", doctor.stdout + doctor.stderr)):
        assert KEY not in text, where


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_run_ended_by_a_signal_stops_a_server_that_outlives_its_stdin(
    root: Path, config: Path, tmp_path: Path, signum: int
) -> None:
    marker = tmp_path / "probe.marker"
    write_servers(config / "mcp.json", {"probe": probe_entry(marker, linger=True)})
    with FakeModelServer([{"content": "slow answer", "delay_s": 120}]) as server:
        env = agent_cli.user_environment(config, AGENT_LS_BASE_URL=server.base_url, OPENAI_API_KEY=KEY)
        arguments = ["run", "Wait", "--model", "openai/test", "--workspace", str(root)]
        process = agent_cli.start(arguments, cwd=root, env=env)
        try:
            agent_cli.wait_for_line(process, "mcp probe: connected")
            assert starts(marker) == 1
            process.send_signal(signum)
            _, rest = process.communicate(timeout=60)
        finally:
            process.kill()
            process.wait()
    assert process.returncode == 128 + signum, rest
    assert "Traceback" not in rest
    # The autouse scene then finds no probe left (it would linger forever without a signal).


@pytest.mark.parametrize("answer", ["y", "n", None], ids=["yes", "no", "no terminal"])
def test_the_terminal_asks_before_starting_a_workspace_server(
    root: Path, config: Path, tmp_path: Path, answer: str | None
) -> None:
    marker = tmp_path / "probe.marker"
    write_servers(root / ".mcp.json", {"probe": probe_entry(marker)})
    (config / "agent-ls.toml").write_text('[permissions]\nallow = ["mcp__probe__echo"]\n')
    steps = [call("c1", "mcp__probe__echo", text="from the terminal"), {"content": "ok"}]
    primary, secondary = pty.openpty()
    try:
        with FakeModelServer(steps) as server:
            env = agent_cli.user_environment(config, AGENT_LS_BASE_URL=server.base_url, OPENAI_API_KEY=KEY)
            child = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "agent_ls",
                    "run",
                    "Echo",
                    "--model",
                    "openai/test",
                    "--workspace",
                    str(root),
                ],
                cwd=root,
                env=env,
                stdin=secondary if answer else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            if answer:
                os.write(primary, f"{answer}\n".encode())
            _, stderr = child.communicate(timeout=120)
            requests = server.requests
    finally:
        os.close(primary)
        os.close(secondary)
    assert child.returncode == 0, stderr
    if answer is None:
        assert "not started; trust the workspace" in stderr, stderr
    else:
        assert "agent-ls wants to run an MCP server start (mcp): probe: " in stderr, stderr
        assert f"{sys.executable} {PROBE}" in stderr
    if answer == "y":
        assert starts(marker) == 1 and "from the terminal" in results(requests)[0]
    else:
        assert starts(marker) == 0 and "from the terminal" not in results(requests)[0]
