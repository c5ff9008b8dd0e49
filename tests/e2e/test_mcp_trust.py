"""A workspace's ``.mcp.json`` never starts a process until the workspace is trusted or the user approved
that server (issue 18, docs/mcp.md "Trust"): a cloned repository must not launch processes on open.
Through a real ``agent-ls serve``; the probe server writes a marker file the moment it starts, so its
absence proves nothing was spawned."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import (
    SECRET_KEY,
    SERVER_ENV,
    command,
    field,
    model_settings,
    prepare_client,
    run_ended,
    start,
)
from tests.e2e.mcp_helpers import (
    McpScene,
    call,
    digest,
    environ_of,
    last_result,
    mcp_scene,
    mcp_status,
    tool_names,
)
from tests.support.mcp_servers import PROBE, calls, probe_entry, starts, time_entry, write_servers
from tests.support.model_server import FakeModelServer


@pytest.fixture(autouse=True)
def mcp(tmp_path: Path) -> Iterator[McpScene]:
    with mcp_scene(tmp_path) as scene:
        yield scene


@pytest.fixture
def marker(workspace: Path, tmp_path: Path) -> Path:
    """The marker of the probe the workspace's ``.mcp.json`` declares (absent: it never started)."""
    path = tmp_path / "probe.marker"
    write_servers(workspace / ".mcp.json", {"probe": probe_entry(path)})
    return path


async def run_task(client: LanguageClient, task: str) -> Any:
    started = await command(client, "agent.run", {"task": task})
    return await run_ended(client, field(started, "sessionId"), timeout_s=90)


def mcp_prompts(client: LanguageClient) -> list[Any]:
    return [p for p in client.agent["prompts"] if "MCP server" in p.message]  # type: ignore[attr-defined]


async def test_no_process_starts_on_open_on_status_or_when_the_user_denies(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, marker: Path
) -> None:
    model_server.steps.extend([{"content": "first"}, {"content": "second"}])
    client.agent["answers"].append("Deny")  # type: ignore[attr-defined]
    await start(client, workspace, model_settings(model_server))
    assert starts(marker) == 0  # initialize
    await command(client, "agent.status", {})
    assert starts(marker) == 0
    status = await mcp_status(client)
    probe = status["probe"]
    assert (probe["scope"], probe["state"]) == ("workspace", "needs approval"), probe
    assert starts(marker) == 0 and client.agent["prompts"] == []  # type: ignore[attr-defined]

    ended = await run_task(client, "Look around")
    assert field(ended, "status") == "done", field(ended, "reason")
    (question,) = mcp_prompts(client)
    assert "probe" in question.message and f"{sys.executable} {PROBE}" in question.message, question.message
    assert starts(marker) == 0
    assert not [name for name in tool_names(model_server.requests[0]) if name.startswith("mcp__")]
    assert (await mcp_status(client))["probe"]["state"] == "denied"

    ended = await run_task(client, "Again")  # "Deny" holds for this process: no second question
    assert field(ended, "status") == "done", field(ended, "reason")
    assert len(mcp_prompts(client)) == 1 and starts(marker) == 0


async def test_allow_once_starts_the_workspace_server_and_its_tools_reach_the_model(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    marker: Path,
    user_config: Callable[[str], None],
) -> None:
    user_config('[permissions]\nallow = ["mcp__probe__echo", "mcp__probe__environ"]\n')
    # The entry hands the server the key: the question shows that, as written, never the key itself.
    entry = probe_entry(marker, env={"PROBE_TOKEN": "${AGENT_LS_API_KEY}"})
    write_servers(workspace / ".mcp.json", {"probe": entry})
    echo, environ = call("c1", "mcp__probe__echo", text="approved"), call("c2", "mcp__probe__environ")
    model_server.steps.extend([echo, environ, {"content": "ok"}])
    client.agent["answers"].append("Allow once")  # type: ignore[attr-defined]
    await start(client, workspace, model_settings(model_server))
    assert starts(marker) == 0

    ended = await run_task(client, "Echo")
    assert field(ended, "status") == "done", field(ended, "reason")
    (question,) = client.agent["prompts"]  # type: ignore[attr-defined]
    assert "MCP server" in question.message and f"{sys.executable} {PROBE}" in question.message
    assert "PROBE_TOKEN='${AGENT_LS_API_KEY}'" in question.message and SECRET_KEY not in question.message
    assert "mcp__probe__echo" in tool_names(model_server.requests[0])
    assert "approved" in last_result(model_server.requests[1])
    assert environ_of(last_result(model_server.requests[2]))["PROBE_TOKEN"] == digest(SECRET_KEY)
    assert starts(marker) == 1 and calls(marker) == ["echo", "environ"]
    assert (await mcp_status(client))["probe"]["state"] == "connected"


async def test_a_trusted_workspace_starts_its_servers_without_a_question(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    marker: Path,
    user_config: Callable[[str], None],
) -> None:
    user_config(f'trusted_workspaces = ["{workspace}"]\n\n[permissions]\nallow = ["mcp__probe__where"]\n')
    model_server.steps.extend([call("c1", "mcp__probe__where"), {"content": "ok"}])
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "Where are you?")
    assert field(ended, "status") == "done", field(ended, "reason")

    assert client.agent["prompts"] == []  # type: ignore[attr-defined]
    assert last_result(model_server.requests[1]).strip() == str(workspace)  # runs in the workspace root
    assert starts(marker) == 1


@pytest.mark.parametrize("where", ["workspace agent-ls.toml", "editor setting"])
async def test_a_disabled_server_is_never_started_nor_asked_about(
    where: str, client: LanguageClient, workspace: Path, model_server: FakeModelServer, marker: Path
) -> None:
    settings = model_settings(model_server)
    if where == "editor setting":
        settings["mcp"] = {"disabled": ["probe"]}
    else:  # allowed in an untrusted workspace: it only tightens
        (workspace / "agent-ls.toml").write_text('[mcp]\ndisabled = ["probe"]\n')
    model_server.steps.append({"content": "ok"})
    await start(client, workspace, settings)
    ended = await run_task(client, "Look around")
    assert field(ended, "status") == "done", field(ended, "reason")

    assert (await mcp_status(client))["probe"]["state"] == "disabled"
    assert client.agent["prompts"] == [] and starts(marker) == 0  # type: ignore[attr-defined]


@asynccontextmanager
async def language_server(
    state: Path, root: Path, model: FakeModelServer, answers: list[str]
) -> AsyncIterator[LanguageClient]:
    """Another real ``agent-ls serve`` with its state dir (where approvals are kept) in ``state``,
    initialized on ``root``, answering ``answers``."""
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "agent_ls", "serve"],
        server_env=SERVER_ENV | {"AGENT_LS_STATE_DIR": str(state)},
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    prepare_client(client)
    client.agent["answers"].extend(answers)  # type: ignore[attr-defined]
    try:
        await start(client, root, model_settings(model))
        yield client
    finally:
        if client._server is not None and client._server.returncode is None:
            await client.shutdown_session()
        await client.stop()


async def test_always_allow_is_remembered_for_the_exact_entry_and_a_changed_entry_asks_again(
    workspace: Path, model_server: FakeModelServer, marker: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    model_server.steps.extend([{"content": "one"}, {"content": "two"}, {"content": "three"}])
    async with language_server(state, workspace, model_server, ["Always allow"]) as client:
        ended = await run_task(client, "First")
        assert field(ended, "status") == "done", field(ended, "reason")
        (question,) = mcp_prompts(client)
        assert "Always allow" in [a.title for a in question.actions]
        assert starts(marker) == 1

    async with language_server(state, workspace, model_server, []) as client:
        ended = await run_task(client, "Second")
        assert field(ended, "status") == "done", field(ended, "reason")
        assert mcp_prompts(client) == [] and starts(marker) == 2  # remembered: no question

    write_servers(workspace / ".mcp.json", {"probe": probe_entry(marker, name="changed")})
    async with language_server(state, workspace, model_server, []) as client:  # dismissed
        assert (await mcp_status(client))["probe"]["state"] == "needs approval"
        ended = await run_task(client, "Third")
        assert field(ended, "status") == "done", field(ended, "reason")
        (question,) = mcp_prompts(client)
        assert "--name changed" in question.message
        assert starts(marker) == 2


async def test_an_editor_without_prompts_never_starts_a_workspace_server_even_when_headless_allows(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, marker: Path
) -> None:
    capabilities = t.ClientCapabilities(window=t.WindowClientCapabilities(work_done_progress=False))
    settings = model_settings(model_server, permissions={"headless": "allow"})
    model_server.steps.append({"content": "ok"})
    await start(client, workspace, settings, capabilities)
    ended = await run_task(client, "Look around")
    assert field(ended, "status") == "done", field(ended, "reason")

    assert (await mcp_status(client))["probe"]["state"] == "needs approval"
    assert starts(marker) == 0


async def test_shutdown_stops_a_server_that_outlives_its_stdin(
    client: LanguageClient, workspace: Path, mcp: McpScene, tmp_path: Path
) -> None:
    marker = tmp_path / "lingering.marker"
    mcp.user_servers({"lingering": probe_entry(marker, linger=True)})
    await start(client, workspace)
    assert (await mcp_status(client))["lingering"]["state"] == "connected"
    assert starts(marker) == 1
    # The client fixture shuts the language server down; the autouse scene then finds no probe left.


async def test_a_workspace_entry_named_like_a_user_server_replaces_it_and_needs_approval(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, mcp: McpScene, tmp_path: Path
) -> None:
    marker = tmp_path / "impostor.marker"
    mcp.user_servers({"time": mcp.tagged(time_entry())})
    write_servers(
        workspace / ".mcp.json",
        {"time": probe_entry(marker), "web": {"type": "http", "url": "http://127.0.0.1:9/mcp"}},
    )
    model_server.steps.append({"content": "ok"})
    client.agent["answers"].extend(["Deny", "Deny"])  # type: ignore[attr-defined]
    await start(client, workspace, model_settings(model_server))
    status = await mcp_status(client)
    assert (status["time"]["scope"], status["time"]["state"]) == ("workspace", "needs approval")
    assert str(PROBE) in status["time"]["target"]
    assert (status["web"]["scope"], status["web"]["state"]) == ("workspace", "needs approval")

    ended = await run_task(client, "What time is it?")
    assert field(ended, "status") == "done", field(ended, "reason")
    questions = mcp_prompts(client)
    assert sorted(q.message.count("http://127.0.0.1:9/mcp") > 0 for q in questions) == [False, True]
    assert starts(marker) == 0
    assert not [name for name in tool_names(model_server.requests[0]) if name.startswith("mcp__")]


async def test_a_session_approval_does_not_cover_an_entry_changed_since(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, marker: Path, tmp_path: Path
) -> None:
    model_server.steps.extend([{"content": "one"}, {"content": "two"}])
    client.agent["answers"].append("Allow for this session")  # type: ignore[attr-defined]
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "First")
    assert field(ended, "status") == "done", field(ended, "reason")
    assert len(mcp_prompts(client)) == 1 and starts(marker) == 1

    swapped = tmp_path / "swapped.marker"  # the repository (or an applied edit) changes the entry
    write_servers(workspace / ".mcp.json", {"probe": probe_entry(swapped, name="swapped")})
    ended = await run_task(client, "Second")  # the question is dismissed
    assert field(ended, "status") == "done", field(ended, "reason")
    assert len(mcp_prompts(client)) == 2 and "--name swapped" in mcp_prompts(client)[1].message
    assert starts(swapped) == 0
