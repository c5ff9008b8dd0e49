"""A stored proposal is judged again by the edit rules when it is applied (issue 16, finding F6): a session
file that another program wrote (the state dir is the user's, not agent-ls's alone) cannot make
``agent-ls apply`` or ``run --continue --apply`` write ``.git/hooks/pre-commit`` or ``.env``; the whole
apply is refused, naming the files, and the allowed files apply once those are discarded."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agent_ls.sessions.store import SessionStore
from tests.support.agent_cli import run, script, user_environment

HOOK = "#!/bin/sh\necho PWNED > /tmp/pwned\n"


def _write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def _plant(state: Path, root: Path) -> None:
    """Append to the session file a proposal of a hook and a .env, as a hostile local program would."""
    (session_file,) = SessionStore(state).folder(root).glob("*.jsonl")
    lines = session_file.read_text().splitlines()
    record = next(json.loads(line) for line in lines if json.loads(line)["kind"] == "proposal")
    change = next(c for c in record["changes"] if c["path"] == "a.txt")
    planted = [
        {**change, "path": path, "isNew": True, "baseText": "", "baseVersion": None, "newText": text}
        for path, text in ((".git/hooks/pre-commit", HOOK), (".env", "TOKEN=x\n"))
    ]
    record = {**record, "changes": planted, "removed": []}
    session_file.write_text("\n".join([*lines, json.dumps(record)]) + "\n")


def _agent_ls(*args: str, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run(args, cwd=root, env=env)


def test_a_planted_hook_or_secret_file_in_a_stored_proposal_is_never_applied(tmp_path: Path) -> None:
    root, state = tmp_path / "proj", tmp_path / "state"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / "a.txt").write_text("one\n")
    env = user_environment(AGENT_LS_STATE_DIR=str(state))
    model = script(tmp_path / "s.json", [_write("a.txt", "ONE\n"), {"content": "ok"}])
    ran = _agent_ls("run", "--model", model, "change a", root=root, env=env)
    assert ran.returncode == 0, ran.stderr
    _plant(state, root)

    refused = _agent_ls("apply", root=root, env=env)
    assert refused.returncode == 1, refused.stderr
    assert "not applying, nothing written: the edit rules refuse .env (" in refused.stderr
    assert ".git/hooks/pre-commit (" in refused.stderr and "discard them to apply the rest" in refused.stderr
    named = _agent_ls("apply", ".git/hooks/pre-commit", root=root, env=env)
    assert named.returncode == 1 and "the edit rules refuse .git/hooks/pre-commit" in named.stderr
    model = script(tmp_path / "t.json", [{"content": "nothing to add"}])
    resumed = _agent_ls("run", "--continue", "--apply", "--model", model, "go on", root=root, env=env)
    assert resumed.returncode == 1 and "the edit rules refuse .env" in resumed.stderr, resumed.stderr
    assert not (root / ".git" / "hooks" / "pre-commit").exists() and not (root / ".env").exists()
    assert (root / "a.txt").read_text() == "one\n"

    assert _agent_ls("discard", ".env", ".git/hooks/pre-commit", root=root, env=env).returncode == 0
    applied = _agent_ls("apply", root=root, env=env)
    assert applied.returncode == 0, applied.stderr
    assert (root / "a.txt").read_text() == "ONE\n" and not (root / ".env").exists()
