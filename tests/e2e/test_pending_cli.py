"""``agent-ls apply [FILE...]`` and ``agent-ls discard [FILE...]`` (issue 16): all or part of a stored
session's proposal from a terminal, as a user runs them: real processes against the scripted model server
on 127.0.0.1, one session store (docs/sessions.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.agent_cli import run, user_environment
from tests.support.model_server import FakeModelServer

KEY = "sk-cli-pending-secret-0123456789abcdef"


def _write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def _agent_ls(*args: str, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run(args, cwd=root, env=env)


def _pending(root: Path, env: dict[str, str]) -> list[str]:
    listed = _agent_ls("sessions", "--json", root=root, env=env)
    assert listed.returncode == 0, listed.stderr
    (session,) = json.loads(listed.stdout)["sessions"]
    return list(session["pendingFiles"])


def test_apply_and_discard_some_files_of_a_stored_proposal(tmp_path: Path) -> None:
    root, state = tmp_path / "proj", tmp_path / "state"
    (root / "docs").mkdir(parents=True)
    (root / "a.txt").write_text("one\n")
    steps = [
        _write("a.txt", "ONE\n"),
        _write("b.txt", "bee\n"),
        _write("docs/c.txt", "sea\n"),
        {"content": "ok"},
    ]
    with FakeModelServer(steps) as model:
        env = user_environment(
            AGENT_LS_STATE_DIR=str(state),
            AGENT_LS_API_KEY=KEY,
            AGENT_LS_BASE_URL=model.base_url,
            AGENT_LS_MODEL="openai/test-model",
        )
        ran = _agent_ls("run", "write three files", root=root, env=env)
        assert ran.returncode == 0, ran.stderr
    assert _pending(root, env) == ["a.txt", "b.txt", "docs/c.txt"]

    unknown = _agent_ls("apply", "README.md", root=root, env=env)
    assert unknown.returncode == 2 and "README.md is not a file of the proposal" in unknown.stderr
    assert "a.txt, b.txt, docs/c.txt" in unknown.stderr

    # From a subfolder, a file named relative to it.
    applied = run(["apply", "c.txt", "--workspace", str(root)], cwd=root / "docs", env=env)
    assert applied.returncode == 0, applied.stderr
    assert "applied docs/c.txt; still pending: a.txt, b.txt" in applied.stderr
    assert (root / "docs" / "c.txt").read_text() == "sea\n" and not (root / "b.txt").exists()
    assert _pending(root, env) == ["a.txt", "b.txt"]

    discarded = _agent_ls("discard", "b.txt", root=root, env=env)
    assert discarded.returncode == 0 and "discarded b.txt; still pending: a.txt" in discarded.stderr
    assert _pending(root, env) == ["a.txt"]

    (root / "a.txt").write_text("one, typed\n")  # the user changed it since the agent read it
    stale = _agent_ls("apply", root=root, env=env)
    assert stale.returncode == 1 and "not applying, nothing written" in stale.stderr, stale.stderr
    assert (root / "a.txt").read_text() == "one, typed\n" and _pending(root, env) == ["a.txt"]

    rest = _agent_ls("discard", root=root, env=env)
    assert rest.returncode == 0 and "discarded a.txt" in rest.stderr and _pending(root, env) == []
    nothing = _agent_ls("apply", root=root, env=env)
    assert nothing.returncode == 1 and "has no pending proposal" in nothing.stderr
    assert KEY not in applied.stderr + discarded.stderr + stale.stderr
