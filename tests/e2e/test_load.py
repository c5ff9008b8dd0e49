"""Issue 12, the load suite: concurrent runs in one ``agent-ls serve`` across two workspace folders.

Each run reads ``shared.txt`` (whose text names its folder), writes ``out_<n>.txt`` saying what it read,
runs a command in its shadow copy and answers ``done <n>``. The fake model server answers each request
from that request's own conversation (its ``responder``), so runs interleave freely. No cross-talk means:
every run ends ``done`` with its own answer, its proposal holds exactly its own file, in its own folder,
with what its own folder's ``shared.txt`` says, and the shell saw its own folder's copy.

``AGENT_LS_FUZZ_LONG=1`` runs 40 at once instead of 10. The server's peak memory (``VmHWM``) is reported
in docs/reliability.md.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended
from tests.support.model_server import FakeModelServer

RUNS = 40 if os.environ.get("AGENT_LS_FUZZ_LONG") == "1" else 10
MAX_PEAK_RSS_MB = 400
TASK = re.compile(r"load run (\d+)\b")
SAW = re.compile(r"folder [AB]")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def respond(body: Any) -> dict[str, Any]:
    """The next step of the run whose conversation ``body`` carries (read, write + shell, answer)."""
    messages = body["messages"]
    number = next(m[1] for m in (TASK.search(_text(x)) for x in messages if x["role"] == "user") if m)
    results = [_text(m) for m in messages if m["role"] == "tool"]
    if not results:
        return {"delay_s": 0.02, "tool_calls": [{"name": "read_file", "arguments": {"path": "shared.txt"}}]}
    if len(results) == 1:
        saw = SAW.search(results[0])
        text = f"{number} saw {saw[0] if saw else 'nothing'}\n"
        return {
            "delay_s": 0.02,
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": f"out_{number}.txt", "content": text}},
                {"name": "bash", "arguments": {"command": f"cat out_{number}.txt shared.txt"}},
            ],
        }
    return {"content": f"done {number}; shell: {results[-1][-200:]}"}


def _server_pids() -> list[int]:
    """The ``agent-ls serve`` processes this test process started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(re.search(r"^PPid:\s+(\d+)", status, re.M)[1])  # type: ignore[index]
        if ppid == os.getpid() and b"agent_ls\0serve" in cmdline:
            found.append(int(entry.name))
    return found


def _peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)[1]) / 1024  # type: ignore[index]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for the server's memory")
async def test_concurrent_runs_in_two_folders_complete_without_cross_talk(
    client: LanguageClient, tmp_path: Path
) -> None:
    folders = {"A": tmp_path / "folder-a", "B": tmp_path / "folder-b"}
    for name, root in folders.items():
        (root / "src").mkdir(parents=True)
        (root / "shared.txt").write_text(f"this is folder {name}\n")
        (root / "src" / "main.py").write_text(f"print('{name}')\n")
    with FakeModelServer([], responder=respond) as model_server:
        await client.initialize_session(
            t.InitializeParams(
                capabilities=t.ClientCapabilities(),
                root_uri=folders["A"].as_uri(),
                workspace_folders=[t.WorkspaceFolder(uri=r.as_uri(), name=n) for n, r in folders.items()],
                initialization_options={"agentLs": model_settings(model_server)},
            )
        )
        folder_of = {n: "AB"[n % 2] for n in range(RUNS)}
        started = await asyncio.gather(
            *(
                command(
                    client,
                    "agent.run",
                    {"task": f"load run {n}", "uri": (folders[folder_of[n]] / "src" / "main.py").as_uri()},
                )
                for n in range(RUNS)
            )
        )
        ended = await asyncio.gather(
            *(run_ended(client, field(s, "sessionId"), timeout_s=240) for s in started)
        )
        (pid,) = _server_pids()
        peak_mb = _peak_rss_mb(pid)

        for n, (start, end) in enumerate(zip(started, ended, strict=True)):
            assert (field(end, "status"), field(end, "answer")[: len(f"done {n};")]) == ("done", f"done {n};")
            assert f"this is folder {folder_of[n]}" in field(end, "answer")  # the shell ran in its own copy
            proposal = await command(client, "agent.proposal", {"sessionId": field(start, "sessionId")})
            (file,) = field(proposal, "files")
            expected = folders[folder_of[n]] / f"out_{n}.txt"
            assert (field(file, "uri"), field(file, "proposedText")) == (
                expected.as_uri(),
                f"{n} saw folder {folder_of[n]}\n",
            )
        assert len(model_server.requests) == 3 * RUNS
    for root in folders.values():  # proposals only: nothing was written
        assert sorted(p.name for p in root.iterdir()) == ["shared.txt", "src"]
    print(f"\nload: {RUNS} concurrent runs, server peak RSS {peak_mb:.0f} MB")
    assert peak_mb < MAX_PEAK_RSS_MB
    shutil.rmtree(tmp_path, ignore_errors=True)
