"""Trajectories (issue 19): what a real ``agent-ls run`` records of each model call and tool call, and
``agent-ls trace show`` / ``agent-ls trace html`` reading it back (docs/sessions.md, "Reading a
trajectory"). Real processes against the scripted model server on 127.0.0.1; the HTML page is opened in
headless Chromium, whose DOM and screenshot are checked."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support import agent_cli
from tests.support.model_server import FakeModelServer

HOSTILE = (
    "<script>document.title='pwned-by-script'</script>\n"
    "<img src=x onerror=\"document.title='pwned-by-img'\">\n"
    '<a href="https://evil.example/">click</a>\n'
)
STEPS: list[dict[str, Any]] = [
    {"tool_calls": [{"id": "c_read", "name": "read_file", "arguments": {"path": "page.html"}}]},
    {
        "tool_calls": [
            {
                "id": "c_edit",
                "name": "edit_file",
                "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"},
            }
        ]
    },
    {"content": "Fixed add()."},
]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, Path, Path, FakeModelServer]:
    """One real ``agent-ls run`` (priced provider) on a workspace holding hostile HTML the model reads;
    returns the workspace, the state dir, the session file and the model server."""
    root, state, config = tmp_path / "ws", tmp_path / "state", tmp_path / "cfg"
    root.mkdir()
    config.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "page.html").write_text(HOSTILE)
    (config / "agent-ls.toml").write_text("[providers.openai.prices]\ninput = 2.0\noutput = 8.0\n")
    with FakeModelServer(list(STEPS)) as server:
        env = agent_cli.user_environment(
            config,
            AGENT_LS_STATE_DIR=str(state),
            AGENT_LS_BASE_URL=server.base_url,
            AGENT_LS_API_KEY="sk-trace-test-key-0123456789abcdef",
        )
        done = agent_cli.run(["run", "fix add", "--model", "openai/test-model", "--yes"], cwd=root, env=env)
        assert done.returncode == 0, done.stderr
    (session,) = state.glob("sessions/*/*.jsonl")
    return root, state, session, server


def _trace(args: list[str], root: Path, state: Path) -> subprocess.CompletedProcess[str]:
    env = agent_cli.user_environment(AGENT_LS_STATE_DIR=str(state))
    return agent_cli.run(["trace", *args, "--workspace", str(root)], cwd=root, env=env)


def test_each_model_call_records_model_provider_latency_cost_and_the_request_it_sent(
    recorded: tuple[Path, Path, Path, FakeModelServer],
) -> None:
    _, _, session, server = recorded
    lines = _lines(session)
    assert lines[0]["kind"] == "session" and lines[0]["harness"]  # agent_ls.__version__
    usage = [line for line in lines if line["kind"] == "usage"]
    assert len(usage) == len(server.requests) == 3
    for line, body, headers in zip(usage, server.requests, server.request_headers, strict=True):
        assert line["model"] == "openai/test-model" and line["provider"] == "openai"
        assert 0 < line["latencyS"] < 30
        assert line["usage"]["costUsd"] is not None and line["usage"]["costUsd"] > 0
        assert line["requestBytes"] == int(headers["content-length"])
        sent = json.dumps(body, ensure_ascii=False).encode()  # the client's own encoding, re-made
        assert line["requestSha256"] == hashlib.sha256(sent).hexdigest()
    assert "authorization" not in session.read_text().lower()


def test_each_tool_call_records_its_duration_beside_its_verdict_and_rule(
    recorded: tuple[Path, Path, Path, FakeModelServer],
) -> None:
    lines = _lines(recorded[2])
    tools = {line["callId"]: line for line in lines if line["kind"] == "tool"}
    verdicts = {line["callId"]: line for line in lines if line["kind"] == "verdict"}
    assert set(tools) == {"c_read", "c_edit"} == set(verdicts)
    assert all(0 <= tool["durationS"] < 30 and tool["isError"] is False for tool in tools.values())
    assert verdicts["c_edit"]["rule"] and verdicts["c_edit"]["verdict"] == "allow"


def test_trace_show_prints_the_timeline(recorded: tuple[Path, Path, Path, FakeModelServer]) -> None:
    root, state, session, _ = recorded
    shown = _trace(["show", session.stem], root, state)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert f"session {session.stem}" in text
    assert "run 1 · done: the model answered · openai/test-model" in text
    assert re.search(r"turn 1 · openai/test-model · [\d.]+ m?s · [\d,]+ in / [\d,]+ out · \$0\.\d+", text)
    assert re.search(r"request [\d,]+ bytes sha256 [0-9a-f]{12}", text)
    assert re.search(r"edit_file calc\.py · allow \(edit: .+\) · [\d.]+ m?s · Edited calc\.py", text)
    assert "answer: Fixed add()." in text
    assert "proposal (pending), 1 file:\n  calc.py  +1 -1" in text
    assert _trace(["show"], root, state).stdout == text  # the latest by default
    missing = _trace(["show", "nosuchsession"], root, state)
    assert missing.returncode == 2 and "no session nosuchsession" in missing.stderr


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (CI installs it with apt: .ci/run)")
        pytest.skip("chromium is not installed (apt install chromium)")
    return found


def _headless(chromium: str, *args: str) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]
    return subprocess.run([chromium, *flags, *args], capture_output=True, text=True, timeout=120, check=False)


def test_trace_html_is_a_self_contained_inert_page_that_chromium_renders(
    recorded: tuple[Path, Path, Path, FakeModelServer], tmp_path: Path
) -> None:
    root, state, session, _ = recorded
    page = tmp_path / "trace.html"
    written = _trace(["html", session.stem, "-o", str(page)], root, state)
    assert written.returncode == 0, written.stderr
    html = page.read_text(encoding="utf-8")
    assert oct(page.stat().st_mode & 0o777) == "0o600"
    # The tool result's markup is text: escaped, never an element; nothing loads from anywhere.
    assert "&lt;script&gt;document.title=&#x27;pwned-by-script&#x27;&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&quot;" in html
    assert not re.search(r"<(script|img|link|iframe|object|embed)\b", html, re.IGNORECASE)
    assert not re.search(r"<[a-z][^>]*\s(src|href)\s*=", html, re.IGNORECASE)  # no attribute loads
    assert "default-src 'none'" in html
    for expected in ("Run 1", "Turn 2", "edit_file", "Final proposal (pending)", "+    return a + b"):
        assert expected in html
    assert html.count('class="bar in"') == 3 and html.count('class="bar lat"') == 3

    chromium = _chromium()
    dom = _headless(chromium, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<title>agent-ls trace" in dom.stdout and "pwned" not in dom.stdout.split("</title>")[0]
    assert not re.search(r"<(script|img)\b", dom.stdout, re.IGNORECASE)
    shot = tmp_path / "trace.png"
    taken = _headless(chromium, "--window-size=1200,1400", f"--screenshot={shot}", page.as_uri())
    assert taken.returncode == 0 and shot.is_file(), taken.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(png[16:20]), int.from_bytes(png[20:24])) == (1200, 1400)
    assert len(png) > 30_000  # a blank page is a few kilobytes; this one has text, bars and a diff
    if keep := os.environ.get("AGENT_LS_KEEP_TRACE_SCREENSHOT"):
        shutil.copy(shot, keep)  # to look at it: docs/sessions.md


OLD_SESSION = [  # a session as agent-ls wrote it before issue 19: no call facts, no tool lines
    {"kind": "run_start", "run": 1, "task": "Say hi", "model": "replay:old.json"},
    {"kind": "message", "message": {"role": "system", "text": "You are an agent."}},
    {"kind": "message", "message": {"role": "user", "text": "Say hi"}},
    {
        "kind": "message",
        "message": {
            "role": "assistant",
            "text": "",
            "toolCalls": [{"callId": "c1", "name": "list_files", "arguments": "{}"}],
        },
    },
    {
        "kind": "usage",
        "usage": {"inputTokens": 100, "outputTokens": 5, "cachedInputTokens": 0, "estimated": True},
        "role": "main",
    },
    {"kind": "verdict", "callId": "c1", "name": "list_files", "verdict": "allow", "rule": "read: **"},
    {
        "kind": "message",
        "message": {
            "role": "tool",
            "callId": "c1",
            "name": "list_files",
            "content": "a.txt",
            "isError": False,
        },
    },
    {"kind": "message", "message": {"role": "assistant", "text": "Hi from the old run."}},
    {"kind": "usage", "usage": {"inputTokens": 120, "outputTokens": 6}},
    {"kind": "run_end", "run": 1, "status": "done", "reason": "the model answered", "answer": "Hi"},
]


def test_a_session_file_written_before_the_call_facts_still_resumes_and_traces(tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    folder = state / "sessions" / _workspace_folder(root)
    folder.mkdir(parents=True)
    header = {"kind": "session", "format": 1, "harness": "0.1.0", "workspace": str(root.resolve())}
    header |= {"sessionId": "old1", "createdAt": "2026-11-30T20:46:21.123Z"}
    at = {"at": "2026-11-30T20:46:22.000Z"}
    lines = [header, *({**line, **at} for line in OLD_SESSION)]
    (folder / "old1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))

    shown = _trace(["show", "old1"], root, state)
    assert shown.returncode == 0, shown.stderr
    assert "turn 1 · ~100 in / ~5 out\n    list_files {} · allow (read: **) · a.txt" in shown.stdout
    assert "turn 2 · 120 in / 6 out" in shown.stdout

    script = agent_cli.script(tmp_path / "new.json", [{"content": "Hi again."}])
    env = agent_cli.user_environment(AGENT_LS_STATE_DIR=str(state))
    args = ["run", "--session", "old1", "again", "--model", script, "--workspace", str(root)]
    done = agent_cli.run(args, cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    again = _trace(["show", "old1"], root, state).stdout
    assert "run 2 · done: the model answered" in again and "answer: Hi again." in again
    assert re.search(r"run 2 .*\n  task: again\n  turn 1 · replay:\S+ · [\d.]+ m?s · ~[\d,]+ in", again)


def _workspace_folder(root: Path) -> str:
    from agent_ls.sessions.store import workspace_folder

    return workspace_folder(root.resolve())
