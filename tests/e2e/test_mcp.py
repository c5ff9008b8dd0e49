"""MCP servers' tools through a real ``agent-ls serve`` (issue 18, docs/mcp.md): discovery, a scripted
model calling them under the permission policy, the results it reads back, and the failures a server can
have (a crash mid-call, no answer, its tool list changing). Real servers: ``mcp-server-time`` and
``mcp-server-git`` from PyPI, and the SDK probe of tests/support/mcp_servers over stdio and streamable HTTP
on 127.0.0.1. The servers are in the user ``mcp.json``, so they start without a question."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import SECRET_KEY, command, field, model_settings, run_ended, start
from tests.e2e.mcp_helpers import (
    McpScene,
    call,
    digest,
    environ_of,
    last_failed,
    last_result,
    mcp_scene,
    mcp_status,
    tool_names,
    tool_schema,
    transcript,
)
from tests.support.mcp_servers import HttpProbe, calls, git_entry, probe_entry, starts, time_entry
from tests.support.mcp_servers.probe import NOTES
from tests.support.model_server import FakeModelServer


@pytest.fixture(autouse=True)
def mcp(tmp_path: Path) -> Iterator[McpScene]:
    with mcp_scene(tmp_path) as scene:
        yield scene


def git_repository(path: Path) -> Path:
    """A new git repository at ``path`` (no commits)."""
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


async def run_task(client: LanguageClient, task: str, **extra: Any) -> Any:
    """``agent.run`` of ``task``; returns its ``agent/runEnded``."""
    started = await command(client, "agent.run", {"task": task, **extra})
    return await run_ended(client, field(started, "sessionId"), timeout_s=90)


async def test_status_lists_each_server_with_its_tools_version_resources_and_prompts(
    client: LanguageClient, workspace: Path, mcp: McpScene, tmp_path: Path
) -> None:
    marker, off = tmp_path / "probe.marker", tmp_path / "off.marker"
    mcp.user_servers(
        {
            "time": mcp.tagged(time_entry()),
            "probe": probe_entry(marker),
            "broken": probe_entry(exit_at_start="broken on purpose: no licence file"),
            "off": probe_entry(off, disabled=True),
        }
    )
    await start(client, workspace)
    status = await mcp_status(client)

    clock = status["time"]
    assert (clock["scope"], clock["transport"], clock["state"]) == ("user", "stdio", "connected"), clock
    assert clock["serverInfo"] == {"name": "mcp-time", "version": version("mcp-server-time")}
    assert clock["protocolVersion"] and "mcp_server_time" in clock["target"]
    tools = {tool["name"]: tool for tool in clock["tools"]}
    assert set(tools) == {"mcp__time__get_current_time", "mcp__time__convert_time"}
    current = tools["mcp__time__get_current_time"]
    assert (current["original"], current["readOnly"], current["destructive"]) == (
        "get_current_time",
        True,
        False,
    )
    assert current["schemaTokens"] > 0 and clock["schemaTokens"] >= current["schemaTokens"]
    assert clock["deferred"] is False

    probe = status["probe"]
    assert probe["state"] == "connected" and probe["serverInfo"] == {"name": "probe", "version": "1.2.3"}
    probe_tools = {tool["original"]: tool for tool in probe["tools"]}
    assert probe_tools["echo"]["readOnly"] is True and probe_tools["wipe"]["destructive"] is True
    assert probe["resources"] == [{"uri": "probe://notes", "name": "notes", "mimeType": "text/plain"}]
    assert probe["prompts"] == [{"name": "greet", "description": "Greet someone."}]
    assert starts(marker) == 1

    broken = status["broken"]
    assert broken["state"] == "failed" and broken["tools"] == [], broken
    assert "broken on purpose: no licence file" in broken["stderrTail"]

    assert status["off"]["state"] == "disabled" and starts(off) == 0


async def test_a_key_a_server_writes_on_stderr_is_never_shown(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, mcp: McpScene
) -> None:
    env = {"AGENT_LS_API_KEY": "${AGENT_LS_API_KEY}"}  # the server is given the key...
    mcp.user_servers({"leaky": probe_entry(exit_at_start="no licence for ${AGENT_LS_API_KEY}", env=env)})
    model_server.steps.append({"content": "ok"})
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "Anything")
    assert field(ended, "status") == "done", field(ended, "reason")
    status = await mcp_status(client)

    assert "no licence for" in status["leaky"]["stderrTail"] and "mcp leaky: failed" in transcript(client)
    assert SECRET_KEY not in json.dumps(status) and SECRET_KEY not in transcript(client)


async def test_model_calls_an_allowed_time_tool_and_reads_the_result_in_the_next_request(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    user_config: Callable[[str], None],
) -> None:
    mcp.user_servers({"time": mcp.tagged(time_entry())})
    user_config('[permissions]\nallow = ["mcp__time"]\n')
    model_server.steps.extend(
        [call("c1", "mcp__time__get_current_time", timezone="UTC"), {"content": "It is Tuesday."}]
    )
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "What time is it in UTC?")
    assert field(ended, "status") == "done", field(ended, "reason")

    first, second = model_server.requests
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(tool_names(first))
    assert "timezone" in tool_schema(first, "mcp__time__get_current_time")["properties"]
    result = last_result(second)
    assert '"timezone": "UTC"' in result and '"day_of_week"' in result, result
    assert client.agent["prompts"] == []  # type: ignore[attr-defined]
    assert f"mcp time: connected (2 tools, mcp-time {version('mcp-server-time')})" in transcript(client)


async def test_a_denied_tool_and_an_unanswered_question_never_reach_the_server(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    user_config: Callable[[str], None],
    tmp_path: Path,
) -> None:
    marker = tmp_path / "probe.marker"
    mcp.user_servers({"probe": probe_entry(marker)})
    user_config('[permissions]\ndeny = ["mcp__probe__wipe"]\n')
    model_server.steps.extend(
        [
            call("c1", "mcp__probe__wipe", path="src"),
            call("c2", "mcp__probe__echo", text="hi"),
            {"content": "ok"},
        ]
    )
    await start(client, workspace, model_settings(model_server))  # no answers: the question is dismissed
    ended = await run_task(client, "Clean up")
    assert field(ended, "status") == "done", field(ended, "reason")

    requests = model_server.requests
    assert "Blocked by policy (mcp__probe__wipe" in last_result(requests[1]), last_result(requests[1])
    unanswered = last_result(requests[2])
    assert unanswered.startswith("denied") and "was not run" in unanswered, unanswered
    assert last_failed(requests[1]) and last_failed(requests[2])
    (prompt,) = client.agent["prompts"]  # type: ignore[attr-defined]
    assert "mcp__probe__echo" in prompt.message
    assert starts(marker) == 1 and calls(marker) == []


async def test_results_image_error_and_the_questions_annotations_inform(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    user_config: Callable[[str], None],
    tmp_path: Path,
) -> None:
    marker = tmp_path / "probe.marker"
    mcp.user_servers({"probe": probe_entry(marker)})
    user_config('[permissions]\nallow = ["mcp__probe__image", "mcp__probe__fail"]\n')
    model_server.steps.extend(
        [
            call("c1", "mcp__probe__image"),
            call("c2", "mcp__probe__fail"),
            call("c3", "mcp__probe__wipe", path="build"),
            call("c4", "mcp__probe__echo", text="said once"),
            {"content": "ok"},
        ]
    )
    client.agent["answers"].extend(["Allow once", "Allow once"])  # type: ignore[attr-defined]
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "Look at the image")
    assert field(ended, "status") == "done", field(ended, "reason")

    requests = model_server.requests
    assert "[image: image/png, 1,234 bytes]" in last_result(requests[1]), last_result(requests[1])
    failed = last_result(requests[2])
    assert last_failed(requests[2]) and "the probe failed on purpose" in failed, failed
    assert "wiped build" in last_result(requests[3])
    assert "said once" in last_result(requests[4])
    wipe, echo = client.agent["prompts"]  # type: ignore[attr-defined]
    assert "mcp__probe__wipe" in wipe.message and "build" in wipe.message
    assert "Always allow" not in [a.title for a in wipe.actions]  # destructiveHint: never "always"
    assert "Allow once" in [a.title for a in wipe.actions]
    assert "the server says it only reads (a hint, not checked)" in echo.message  # readOnlyHint: only said
    assert calls(marker) == ["image", "fail", "wipe", "echo"]


async def test_a_server_that_crashes_mid_call_gives_a_clear_error_and_the_next_call_reconnects(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    user_config: Callable[[str], None],
    tmp_path: Path,
) -> None:
    marker = tmp_path / "probe.marker"
    mcp.user_servers({"probe": probe_entry(marker)})
    user_config('[permissions]\nallow = ["mcp__probe"]\n')
    model_server.steps.extend(
        [
            call("c1", "mcp__probe__crash"),
            call("c2", "mcp__probe__echo", text="back again"),
            {"content": "ok"},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "Crash it")
    assert field(ended, "status") == "done", field(ended, "reason")

    crashed = last_result(model_server.requests[1])
    assert crashed.startswith("Error: MCP server 'probe' stopped during the call to crash"), crashed
    assert last_failed(model_server.requests[1])
    assert "not retried" in crashed
    assert "back again" in last_result(model_server.requests[2])
    assert starts(marker) == 2 and calls(marker) == ["crash", "echo"]


async def test_a_server_that_never_answers_times_out_and_the_run_continues(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    user_config: Callable[[str], None],
    tmp_path: Path,
) -> None:
    marker = tmp_path / "probe.marker"
    mcp.user_servers({"probe": probe_entry(marker)})
    user_config('[permissions]\nallow = ["mcp__probe"]\n\n[mcp]\ncall_timeout_s = 2\n')
    model_server.steps.extend(
        [call("c1", "mcp__probe__hang"), call("c2", "mcp__probe__echo", text="still here"), {"content": "ok"}]
    )
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "Wait for it")
    assert field(ended, "status") == "done", field(ended, "reason")

    timed_out = last_result(model_server.requests[1])
    assert timed_out.startswith("Error: MCP server 'probe' did not answer hang"), timed_out
    assert last_failed(model_server.requests[1])
    assert re.search(r"within 2(\.0)? s", timed_out) and "not retried" in timed_out, timed_out
    assert "still here" in last_result(model_server.requests[2])
    assert calls(marker) == ["hang", "echo"]  # hang was called once: never retried


async def test_list_changed_offers_the_new_tool_in_the_next_request_without_the_earlier_approval(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    tmp_path: Path,
) -> None:
    marker = tmp_path / "probe.marker"
    mcp.user_servers({"probe": probe_entry(marker)})
    model_server.steps.extend(
        [call("c1", "mcp__probe__grow"), call("c2", "mcp__probe__grown", number=41), {"content": "ok"}]
    )
    client.agent["answers"].extend(["Allow for this session", "Allow once"])  # type: ignore[attr-defined]
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "Grow")
    assert field(ended, "status") == "done", field(ended, "reason")

    first, second, third = model_server.requests
    assert "mcp__probe__grow" in tool_names(first) and "mcp__probe__grown" not in tool_names(first)
    assert "number" in tool_schema(second, "mcp__probe__grown")["properties"]
    assert "42" in last_result(third)
    grow, grown = client.agent["prompts"]  # type: ignore[attr-defined]
    assert "mcp__probe__grow" in grow.message and "mcp__probe__grown" in grown.message
    assert calls(marker) == ["grow", "grown"]


async def test_mcp_server_git_over_stdio_reports_a_repository_status(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    user_config: Callable[[str], None],
    tmp_path: Path,
) -> None:
    repo = git_repository(tmp_path / "repo")
    (repo / "notes.txt").write_text("untracked notes\n")
    mcp.user_servers({"git": mcp.tagged(git_entry(repo))})
    user_config('[permissions]\nallow = ["mcp__git__git_status"]\n')
    model_server.steps.extend([call("c1", "mcp__git__git_status", repo_path=str(repo)), {"content": "ok"}])
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "What is the state of the repository?")
    assert field(ended, "status") == "done", field(ended, "reason")

    assert "mcp__git__git_log" in tool_names(model_server.requests[0])
    result = last_result(model_server.requests[1])
    assert "Untracked files" in result and "notes.txt" in result, result


async def test_many_schemas_are_deferred_until_load_tools_loads_them(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    user_config: Callable[[str], None],
    tmp_path: Path,
) -> None:
    repo = git_repository(tmp_path / "repo")
    mcp.user_servers({"git": mcp.tagged(git_entry(repo))})
    user_config('[permissions]\nallow = ["mcp__git"]\n\n[mcp]\ndefer_over_tokens = 100\n')
    model_server.steps.extend(
        [
            call("c1", "load_tools", names=["mcp__git__git_status"]),
            call("c2", "mcp__git__git_status", repo_path=str(repo)),
            {"content": "ok"},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "Status?")
    assert field(ended, "status") == "done", field(ended, "reason")

    first, second, third = model_server.requests
    assert not [name for name in tool_names(first) if name.startswith("mcp__")]
    (load,) = [t["function"] for t in first["tools"] if t["function"]["name"] == "load_tools"]
    assert "mcp__git__git_status" in load["description"], load["description"]
    assert "repo_path" in tool_schema(second, "mcp__git__git_status")["properties"]
    assert "On branch" in last_result(third), last_result(third)
    assert (await mcp_status(client))["git"]["deferred"] is True


@pytest.fixture
def http_probe(tmp_path: Path) -> Iterator[HttpProbe]:
    """The probe over streamable HTTP; a test lists it before ``client``, so it stops after the
    language server closed its session."""
    with HttpProbe(tmp_path / "http.marker") as probe:
        yield probe


async def test_a_streamable_http_server_on_localhost_is_discovered_and_called(
    http_probe: HttpProbe,
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    user_config: Callable[[str], None],
) -> None:
    url = http_probe.url
    web = {"type": "http", "url": url, "headers": {"X-Probe-Token": "${AGENT_LS_API_KEY}"}}
    mcp.user_servers({"web": web, "old": {"type": "sse", "url": url[:-4] + "/sse"}})
    user_config('[permissions]\nallow = ["mcp__web__echo", "mcp__web__headers"]\n')
    model_server.steps.extend(
        [call("c1", "mcp__web__echo", text="over http"), call("c2", "mcp__web__headers"), {"content": "ok"}]
    )
    await start(client, workspace, model_settings(model_server))
    status = await mcp_status(client)
    assert (status["web"]["transport"], status["web"]["state"]) == ("http", "connected"), status["web"]
    assert status["web"]["target"].startswith(url), status["web"]["target"]
    assert status["web"]["serverInfo"] == {"name": "probe-http", "version": "1.2.3"}
    assert "old" not in status and any("sse" in line for line in status[""]["problems"]), status[""]

    ended = await run_task(client, "Echo over HTTP")
    assert field(ended, "status") == "done", field(ended, "reason")
    assert "over http" in last_result(model_server.requests[1])
    assert environ_of(last_result(model_server.requests[2]))["x-probe-token"] == digest(SECRET_KEY)
    assert SECRET_KEY not in json.dumps(status) and SECRET_KEY not in transcript(client)
    assert http_probe.marker is not None and calls(http_probe.marker) == ["echo", "headers"]


async def test_a_resource_attached_to_a_task_reaches_the_model(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, mcp: McpScene
) -> None:
    mcp.user_servers({"probe": probe_entry(mcp.tmp_path / "probe.marker")})
    model_server.steps.append({"content": "Friday."})
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "When is the release?", resource="probe:probe://notes")
    assert field(ended, "status") == "done", field(ended, "reason")

    sent = json.dumps(model_server.requests[0]["messages"])
    assert NOTES in sent and "probe://notes" in sent


async def test_names_that_sanitise_alike_stay_distinct_and_route_to_their_own_server(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, mcp: McpScene
) -> None:
    mcp.user_servers(
        {"my.docs": probe_entry(env={"WHICH": "dotted"}), "my_docs": probe_entry(env={"WHICH": "plain"})}
    )
    await start(client, workspace, model_settings(model_server))
    status = await mcp_status(client)
    names = {
        name: {t["original"]: t["name"] for t in status[name]["tools"]} for name in ("my.docs", "my_docs")
    }
    every = [name for tools in names.values() for name in tools.values()]
    assert len(set(every)) == len(every) == 20, names
    assert all(len(name) <= 64 and re.fullmatch(r"[A-Za-z0-9_-]+", name) for name in every), every
    dotted, plain = names["my.docs"]["environ"], names["my_docs"]["environ"]
    assert "mcp__my_docs__environ" in (dotted, plain), names
    hashed = dotted if plain == "mcp__my_docs__environ" else plain
    assert re.fullmatch(r"mcp__my_docs__[A-Za-z0-9_-]*_[0-9a-f]{8}", hashed), hashed

    model_server.steps.extend([call("c1", dotted), call("c2", plain), {"content": "ok"}])
    client.agent["answers"].extend(["Allow once", "Allow once"])  # type: ignore[attr-defined]
    ended = await run_task(client, "Which is which?")
    assert field(ended, "status") == "done", field(ended, "reason")
    assert environ_of(last_result(model_server.requests[1]))["WHICH"] == digest("dotted")
    assert environ_of(last_result(model_server.requests[2]))["WHICH"] == digest("plain")


def gone(pid: int, within_s: float = 15) -> bool:
    """Whether process ``pid`` has ended (or is a zombie), waiting up to ``within_s`` seconds for it."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z" or time.monotonic() > deadline:
            return state == "Z"
        time.sleep(0.1)


async def test_a_server_that_never_finishes_starting_fails_and_is_stopped_and_the_run_goes_on(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    user_config: Callable[[str], None],
) -> None:
    marker = mcp.tmp_path / "slow.marker"
    mcp.user_servers({"slow": probe_entry(marker, hang_at_start=True)})
    user_config("[mcp]\nstartup_timeout_s = 2\n")  # only the hung server is configured: no race
    model_server.steps.extend([call("c1", "mcp__slow__echo", text="hi"), {"content": "ok"}])
    await start(client, workspace, model_settings(model_server))
    ended = await run_task(client, "Echo")
    assert field(ended, "status") == "done", field(ended, "reason")

    assert not [name for name in tool_names(model_server.requests[0]) if name.startswith("mcp__")]
    assert "hi" not in last_result(model_server.requests[1]) and last_failed(model_server.requests[1])
    assert re.search(r"mcp slow: failed: .*within 2(\.0)? s", transcript(client)), transcript(client)
    (pid,) = [int(line.split()[1]) for line in marker.read_text().splitlines()]
    assert await asyncio.to_thread(gone, pid), "the server that never started is still running"


async def test_cancelling_a_run_during_a_call_that_never_answers_leaves_the_server_usable(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    mcp: McpScene,
    user_config: Callable[[str], None],
) -> None:
    marker = mcp.tmp_path / "probe.marker"
    mcp.user_servers({"probe": probe_entry(marker)})
    user_config('[permissions]\nallow = ["mcp__probe"]\n')  # call_timeout_s stays 60: the cancel comes first
    model_server.steps.extend(
        [call("c1", "mcp__probe__hang"), call("c2", "mcp__probe__echo", text="next run")]
    )
    model_server.steps.append({"content": "ok"})
    await start(client, workspace, model_settings(model_server))
    started = await command(client, "agent.run", {"task": "Hang"})
    session_id = field(started, "sessionId")
    async with asyncio.timeout(30):
        while calls(marker) != ["hang"]:  # noqa: ASYNC110 (waits for the call to reach the server)
            await asyncio.sleep(0.05)
    assert field(await command(client, "agent.cancel", {"sessionId": session_id}), "cancelled") is True
    ended = await run_ended(client, session_id, timeout_s=30)
    assert field(ended, "status") == "cancelled", field(ended, "reason")

    ended = await run_task(client, "Echo")
    assert field(ended, "status") == "done", field(ended, "reason")
    assert "next run" in last_result(model_server.requests[-1])
    assert calls(marker) == ["hang", "echo"]
