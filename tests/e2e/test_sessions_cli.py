"""``agent-ls run --session ID``, ``run --continue`` (with ``--apply``) and ``agent-ls sessions`` as a user
runs them: real processes against the scripted model server on 127.0.0.1, one session store
(docs/sessions.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.agent_cli import run, start, user_environment, wait_for_line
from tests.support.model_server import FakeModelServer

KEY = "sk-cli-sessions-secret-0123456789abcdef"


def _env(state: Path, model: FakeModelServer) -> dict[str, str]:
    return user_environment(
        AGENT_LS_STATE_DIR=str(state),
        AGENT_LS_API_KEY=KEY,
        AGENT_LS_BASE_URL=model.base_url,
        AGENT_LS_MODEL="openai/test-model",
    )


def _agent_ls(*args: str, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run(args, cwd=root, env=env)


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    return root


def _write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def _sessions(root: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    listed = _agent_ls("sessions", "--json", "--workspace", str(root), root=root, env=env)
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout)["sessions"])


def test_continue_and_session_extend_one_proposal_and_apply_it_whole(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    steps = [
        _write("b.txt", "bee\n"),
        {"content": "Wrote b."},
        _write("c.txt", "sea\n"),
        {"content": "Wrote c."},
        _write("d.txt", "dee\n"),
        {"content": "Wrote d."},
    ]
    with FakeModelServer(steps) as model:
        env = _env(state, model)
        first = _agent_ls("run", "write b.txt", "--yes", root=root, env=env)
        assert first.returncode == 0, first.stderr
        (listed,) = _sessions(root, env)
        session_id = listed["sessionId"]
        assert f"session {session_id}" in first.stderr
        assert listed["title"] == "write b.txt" and listed["pendingFiles"] == ["b.txt"]

        second = _agent_ls("run", "now c.txt", "--session", session_id, "--yes", root=root, env=env)
        assert second.returncode == 0, second.stderr
        texts = [json.dumps(m) for m in model.requests[2]["messages"]]
        assert "write b.txt" in texts[1] and any("Wrote b." in t for t in texts)
        assert "+bee" in second.stdout and "+sea" in second.stdout  # the cumulative diff

        third = _agent_ls("run", "and d.txt", "--continue", "--yes", "--apply", root=root, env=env)
        assert third.returncode == 0, third.stderr
        assert any("Wrote c." in json.dumps(m) for m in model.requests[4]["messages"])
    assert (root / "b.txt").read_text() == "bee\n"
    assert (root / "c.txt").read_text() == "sea\n"
    assert (root / "d.txt").read_text() == "dee\n"
    (listed,) = _sessions(root, env)
    assert listed["runs"] == 3 and listed["pendingFiles"] == [] and listed["status"] == "done"
    text = _agent_ls("sessions", "--workspace", str(root), root=root, env=env)
    assert session_id in text.stdout and "3 runs" in text.stdout and "write b.txt" in text.stdout
    stored = next(state.rglob(f"{session_id}.jsonl")).read_text()
    assert KEY not in stored
    kinds = [json.loads(line)["kind"] for line in stored.splitlines()]
    assert kinds[-2:] == ["apply", "proposal_cleared"]


def test_continue_without_a_session_and_an_unknown_session_are_usage_errors(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    with FakeModelServer([]) as model:
        env = _env(state, model)
        nothing = _agent_ls("run", "go on", "--continue", root=root, env=env)
        assert nothing.returncode == 2 and "no session to continue" in nothing.stderr
        unknown = _agent_ls("run", "go on", "--session", "0123456789ab", root=root, env=env)
        assert unknown.returncode == 2 and "no session 0123456789ab" in unknown.stderr
        assert model.requests == []


def test_a_run_killed_mid_tool_is_repaired_and_continued(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    sleeper = {"id": "call_sleep", "name": "bash", "arguments": {"command": "sleep 28.75"}}
    notes = {"id": "call_b", "name": "write_file", "arguments": {"path": "b.txt", "content": "bee\n"}}
    steps = [{"tool_calls": [notes, sleeper]}, _write("c.txt", "sea\n"), {"content": "Done."}]
    with FakeModelServer(steps) as model:
        env = _env(state, model)
        killed = subprocess.Popen(
            [sys.executable, "-m", "agent_ls", "run", "write b, then sleep", "--yes"],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            assert killed.stderr is not None
            seen = b""
            while b"sleep 28.75" not in seen and time.monotonic() < deadline:
                seen += killed.stderr.read1(4096)
            assert b"sleep 28.75" in seen, seen
            time.sleep(0.5)
        finally:
            os.killpg(killed.pid, signal.SIGKILL)  # the run and its command
            killed.wait(timeout=30)
        (listed,) = _sessions(root, env)
        assert listed["status"] == "interrupted" and listed["pendingFiles"] == ["b.txt"]

        go_on = _agent_ls("run", "go on", "--continue", "--yes", "--apply", root=root, env=env)
        assert go_on.returncode == 0, go_on.stderr
        resumed = model.requests[1]["messages"]
        results = {m["tool_call_id"]: m["content"] for m in resumed if m["role"] == "tool"}
        assert "interrupted" in results["call_sleep"] and "interrupted" not in results["call_b"]
    assert (root / "b.txt").read_text() == "bee\n" and (root / "c.txt").read_text() == "sea\n"


def test_a_session_running_in_another_process_is_refused_until_that_process_ends(tmp_path: Path) -> None:
    """One run per session across processes (an editor's server and a terminal, two terminals): the
    second is refused with the holder's pid and writes nothing; a SIGKILL of the holder frees the session."""
    root, state = _project(tmp_path), tmp_path / "state"
    sleeper = {"id": "call_sleep", "name": "bash", "arguments": {"command": "sleep 29.25"}}
    steps = [{"tool_calls": [sleeper]}, _write("c.txt", "sea\n"), {"content": "Done."}]
    with FakeModelServer(steps) as model:
        env = _env(state, model)
        holder = start(["run", "sleep a while", "--yes"], cwd=root, env=env)
        try:
            wait_for_line(holder, "sleep 29.25")
            (listed,) = _sessions(root, env)
            sid = listed["sessionId"]
            stored = (state / "sessions").rglob(f"{sid}.jsonl")
            (path,) = list(stored)
            size = path.stat().st_size
            second = _agent_ls("run", "and c.txt", "--session", sid, "--yes", root=root, env=env)
            assert second.returncode == 2, second.stderr
            assert f"session {sid} is running a task in agent-ls process {holder.pid}" in second.stderr
            assert len(model.requests) == 1 and path.stat().st_size == size  # nothing sent, nothing written
        finally:
            holder.kill()  # SIGKILL; its sandboxed command dies with it (--die-with-parent)
            holder.wait(timeout=30)
        go_on = _agent_ls("run", "and c.txt", "--continue", "--yes", "--apply", root=root, env=env)
        assert go_on.returncode == 0, go_on.stderr
    assert (root / "c.txt").read_text() == "sea\n"
