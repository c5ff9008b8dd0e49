"""Session files a user (or anything that can write the state dir) damaged, runs that did nothing, and
inputs at the edge, through ``agent-ls run`` / ``sessions`` / ``apply`` as a user runs them
(docs/sessions.md): one bad file never hides the others, a running session says ``running``, a no-op run
stores nothing, the JSONL stays valid UTF-8."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_ls.terminal_text import OUTPUT_CLOSED
from tests.support.agent_cli import run, script, start, user_environment

DEEP = "[" * 100_000 + "1" + "]" * 100_000


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    return root


def _env(state: Path) -> dict[str, str]:
    return user_environment(AGENT_LS_STATE_DIR=str(state))


def _agent_ls(*args: str, root: Path, env: dict[str, str], input: str | None = None) -> Any:
    return run(args, cwd=root, env=env, input=input)


def _listed(root: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    listed = _agent_ls("sessions", "--json", root=root, env=env)
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout)["sessions"])


def _one_session(tmp_path: Path, root: Path, env: dict[str, str]) -> Path:
    model = script(tmp_path / "s.json", [{"content": "Done."}])
    first = _agent_ls("run", "base", "--model", model, root=root, env=env)
    assert first.returncode == 0, first.stderr
    (path,) = (Path(env["AGENT_LS_STATE_DIR"]) / "sessions").rglob("*.jsonl")
    return path


def test_a_deeply_nested_line_is_skipped_and_every_command_still_works(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    env = _env(state)
    good = _one_session(tmp_path, root, env)
    header = json.loads(good.read_text().splitlines()[0]) | {"sessionId": "h_deep"}
    deep = f'{{"kind":"message","at":"2099-12-01T05:00:00.000Z","message":{DEEP}}}'
    # a hostile header too: nesting inside the header line itself
    (good.parent / "h_deep.jsonl").write_text(json.dumps(header) + "\n" + deep + "\n")
    (good.parent / "h_worse.jsonl").write_text(DEEP + "\n")
    listed = _listed(root, env)
    assert {s["sessionId"] for s in listed} == {good.stem, "h_deep"}, listed
    text = _agent_ls("sessions", root=root, env=env)
    assert text.returncode == 0 and "Traceback" not in text.stderr, text.stderr
    assert "session h_worse left out" in text.stderr
    model = script(tmp_path / "go.json", [{"content": "Went on."}])
    went = _agent_ls("run", "go", "--session", "h_deep", "--model", model, root=root, env=env)
    assert went.returncode == 0 and "Traceback" not in went.stderr, went.stderr
    assert "Went on." in went.stderr
    for command in ("apply", "discard"):
        settled = _agent_ls(command, "--session", "h_deep", root=root, env=env)
        assert "Traceback" not in settled.stderr and "has no pending proposal" in settled.stderr


def test_a_session_another_process_runs_is_listed_running(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    env = _env(state)
    model = script(tmp_path / "slow.json", [{"content": "slow", "delay_s": 90}])
    holder = start(["run", "slow one", "--model", model], cwd=root, env=env)
    try:
        deadline, listed = time.monotonic() + 60, []
        while not listed and time.monotonic() < deadline:
            listed = _listed(root, env)
            time.sleep(0.2)
        assert [s["status"] for s in listed] == ["running"], listed
        text = _agent_ls("sessions", root=root, env=env)
        assert "  running  " in text.stdout, text.stdout
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert [s["status"] for s in _listed(root, env)] == ["interrupted"]  # killed: its lock is free


def test_a_run_that_did_nothing_stores_no_session(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    env = _env(state)
    model = script(tmp_path / "sum.json", [{"content": "## Goal\nsummary"}])
    compact = _agent_ls("run", "/compact", "--model", model, root=root, env=env)
    assert compact.returncode == 0, compact.stderr
    assert "nothing to compact" in compact.stderr and "(go on with --continue" not in compact.stderr
    context = _agent_ls("run", "/context", "--model", model, root=root, env=env)
    assert context.returncode == 0 and "(go on with --continue" not in context.stderr, context.stderr
    assert _listed(root, env) == []
    again = _agent_ls("run", "/compact", "--continue", "--model", model, root=root, env=env)
    assert again.returncode == 2 and "no session to continue" in again.stderr


def test_a_newer_format_file_is_named_not_hidden(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    env = _env(state)
    good = _one_session(tmp_path, root, env)
    header = json.loads(good.read_text().splitlines()[0]) | {"sessionId": "future", "format": 99}
    (good.parent / "future.jsonl").write_text(json.dumps(header) + "\n")
    text = _agent_ls("sessions", root=root, env=env)
    assert text.returncode == 0 and good.stem in text.stdout
    assert "session future left out" in text.stderr and "format 99" in text.stderr, text.stderr


def test_a_task_with_invalid_utf8_keeps_the_session_file_utf8(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    env = _env(state)
    model = script(tmp_path / "s.json", [{"content": "Done."}])
    done = subprocess.run(
        [sys.executable, "-m", "agent_ls", "run", "-", "--model", model],
        cwd=root,
        env=env,
        input=b"\xff\xfe fix it",
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (path,) = (state / "sessions").rglob("*.jsonl")
    lines = path.read_bytes().decode("utf-8").splitlines()  # strict: a lone surrogate as bytes fails
    (start_line,) = [json.loads(line) for line in lines if '"run_start"' in line]
    assert start_line["task"] == "\udcff\udcfe fix it"  # read back as it came in


def test_non_finite_budgets_are_refused(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    env = _env(state)
    model = script(tmp_path / "s.json", [{"content": "Done."}])
    for value in ("nan", "inf", "-inf"):
        refused = _agent_ls("run", "x", f"--max-cost={value}", "--model", model, root=root, env=env)
        assert refused.returncode == 2, refused.stderr
        assert "--max-cost must be above 0 and finite" in refused.stderr
    (root / "agent-ls.toml").write_text("[budget]\nmax_cost_usd = nan\n")
    config = _agent_ls("run", "x", "--model", model, root=root, env=env)
    assert "max_cost_usd" in config.stderr and "finite" in config.stderr, config.stderr


def test_apply_from_outside_the_workspace_reads_relative_files_in_the_workspace(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    env = _env(state)
    (root / "sub").mkdir()
    writes = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": p, "content": f"{p}\n"}}]}
        for p in ("b.txt", "c.txt", "sub/d.txt")
    ]
    model = script(tmp_path / "w.json", [*writes, {"content": "Wrote them."}])
    wrote = _agent_ls("run", "write", "--yes", "--model", model, root=root, env=env)
    assert wrote.returncode == 0, wrote.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "c.txt").write_text("not the workspace's\n")
    applied = _agent_ls("apply", "--workspace", str(root), "b.txt", root=elsewhere, env=env)
    assert applied.returncode == 0, applied.stderr
    assert (root / "b.txt").read_text() == "b.txt\n"
    absolute = _agent_ls("apply", "--workspace", str(root), str(root / "c.txt"), root=elsewhere, env=env)
    assert absolute.returncode == 0, absolute.stderr
    assert (root / "c.txt").read_text() == "c.txt\n"
    # inside the workspace, a name is read from the current folder, as Git reads a pathspec
    missing = _agent_ls("apply", "--workspace", "..", "sub/d.txt", root=root / "sub", env=env)
    assert missing.returncode == 2 and f"(read as {root}/sub/sub/d.txt)" in missing.stderr
    assert "sub/d.txt is not a file of the proposal" in missing.stderr, missing.stderr
    here = _agent_ls("apply", "--workspace", "..", "d.txt", root=root / "sub", env=env)
    assert here.returncode == 0, here.stderr
    assert (root / "sub" / "d.txt").read_text() == "sub/d.txt\n"


@pytest.mark.parametrize("flags", [(), ("--debug",)])
def test_a_reader_that_goes_away_stops_the_run_and_its_record_says_so(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """``agent-ls run … 2>&1 | head -1``: the closed transcript stops the run like SIGPIPE (exit 141);
    the stored run is ``cancelled`` with that reason, not an internal error of agent-ls (``--debug``'s
    request dumps, printed inside the model call, included)."""
    root, state = _project(tmp_path), tmp_path / "state"
    env = _env(state)
    listing = {"tool_calls": [{"name": "list_files", "arguments": {}}], "delay_s": 2}
    model = script(tmp_path / "slow.json", [listing, {"content": "never read", "delay_s": 5}])
    reader, writer = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_ls", "run", "slowly", "--model", model, *flags],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=writer,
        stderr=writer,
    )
    os.close(writer)
    with os.fdopen(reader, "rb") as head:
        head.readline()  # as head -1 does, then the reader is gone
    assert process.wait(timeout=120) == 141
    (path,) = (state / "sessions").rglob("*.jsonl")
    (end,) = [json.loads(line) for line in path.read_text().splitlines() if '"run_end"' in line]
    assert end["status"] == "cancelled", end
    assert end["reason"] == OUTPUT_CLOSED
    assert [s["status"] for s in _listed(root, env)] == ["cancelled"]


def test_continue_without_a_model_uses_the_sessions_model(tmp_path: Path) -> None:
    root, state = _project(tmp_path), tmp_path / "state"
    env = _env(state)
    model = script(tmp_path / "two.json", [{"content": "First."}, {"content": "Second."}])
    first = _agent_ls("run", "one", "--model", model, root=root, env=env)
    assert first.returncode == 0, first.stderr
    again = _agent_ls("run", "two", "--continue", root=root, env=env)  # no --model, none configured
    assert again.returncode == 0, again.stderr
    assert f"model {model}, as in the session's last run" in again.stderr and "First." in again.stderr
    other = script(tmp_path / "other.json", [{"content": "Other."}])
    chosen = _agent_ls("run", "three", "--continue", root=root, env=env | {"AGENT_LS_MODEL": other})
    assert chosen.returncode == 0 and "Other." in chosen.stderr, chosen.stderr
    assert "as in the session's last run" not in chosen.stderr
