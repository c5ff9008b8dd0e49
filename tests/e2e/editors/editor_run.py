"""Running a real editor headless against ``agent-ls serve`` and the fake model server.

The editor scripts beside this file (``agent_ls_e2e.lua``, ``agent_ls_e2e.el``) take their inputs from
``AGENT_LS_E2E_*`` environment variables and write one JSON result file (see ``EditorRun``); the tests
assert on it and on the requests the fake model server recorded. Every assertion message carries the
editor's exit code, stdout, stderr, the result file and the editor's own LSP log, so a failure in CI
says what the editor saw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.conftest import fix_step
from tests.support.model_server import FakeModelServer

HERE = Path(__file__).parent
EDITOR_TIMEOUT_S = 60
SECRET_KEY = "sk-editor-e2e-secret-0123456789"

TASK = "Fix the failing test"
MARKER = "# unsaved edit in the editor"
ANSWER = "Fixed mean()."
APPLY_QUESTION = "Apply 1 file(s) (+1 −1)?"
# agent.applyProposal's answers (Neovim drops the null message; Emacs keeps it).
DISCARDED = {
    "result": {
        "applied": False,
        "failureReason": "discarded by the user",
        "changesApplied": 0,
        "changesKept": 0,
        "keptFiles": [],
    }
}
APPLIED = {
    "result": {
        "applied": True,
        "message": "applied 1 of 1 change in 1 file",
        "changesApplied": 1,
        "changesKept": 0,
        "keptFiles": [],
    }
}

# The model: read stats.py, run a command the policy asks about, fix the bug, answer.
STEPS: list[dict[str, Any]] = [
    {"tool_calls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "stats.py"}}]},
    {"tool_calls": [{"id": "call_ask", "name": "bash", "arguments": {"command": "make lint"}}]},
    fix_step("call_edit"),
    {"content": ANSWER},
]

# Editor-written logs kept under the editor's $HOME, shown on failure.
_LOGS = (".cache/nvim/lsp.log", "eglot-events.log")


@dataclass
class EditorRun:
    """What the editor script recorded.

    ``result`` keys: ``editor``; ``error`` (null, or why the script stopped); ``capabilities`` (what
    the editor declared); ``started`` (the agent.run result); ``progress`` (``{token, kind, title,
    message}`` of every ``$/progress``); ``questions`` (``{message, actions, answer}`` of every prompt,
    plus ``via`` in Emacs); ``log`` (``window/logMessage`` lines); ``run_ended``; ``apply`` and
    ``proposal_after`` (``{result}`` or ``{error}`` of agent.applyProposal and of agent.proposal after
    it); ``apply_edits`` (the ``workspace/applyEdit`` params received); ``buffer`` (the unsaved buffer
    text at the end) and ``modified``.
    """

    result: dict[str, Any]
    elapsed_s: float
    report: str

    def progress_kinds(self) -> list[str]:
        token = self.result["started"]["progressToken"]
        return [p["kind"] for p in self.result["progress"] if p["token"] == token]


def run_editor(
    argv: list[str],
    *,
    tmp_path: Path,
    workspace: Path,
    model_server: FakeModelServer,
    permission: str,
    apply: str,
    extra_env: dict[str, str] | None = None,
) -> EditorRun:
    """Run ``argv`` (the editor with its script) under ``timeout``; return what the script recorded."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    result_file = tmp_path / "editor-result.json"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "AGENT_LS_API_KEY": SECRET_KEY,
        "AGENT_LS_E2E_PYTHON": sys.executable,
        "AGENT_LS_E2E_ROOT": str(workspace),
        "AGENT_LS_E2E_FILE": str(workspace / "stats.py"),
        "AGENT_LS_E2E_BASE_URL": model_server.base_url,
        "AGENT_LS_E2E_TASK": TASK,
        "AGENT_LS_E2E_MARKER": MARKER,
        "AGENT_LS_E2E_PERMISSION": permission,
        "AGENT_LS_E2E_APPLY": apply,
        "AGENT_LS_E2E_RESULT": str(result_file),
        **(extra_env or {}),
    }
    for name in ("AGENT_LS_MODEL", "AGENT_LS_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        env.pop(name, None)
    started = time.monotonic()
    proc = subprocess.run(
        ["timeout", "-k", "5", str(EDITOR_TIMEOUT_S), *argv],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=EDITOR_TIMEOUT_S + 30,
        check=False,
    )
    elapsed = time.monotonic() - started
    raw = result_file.read_text() if result_file.exists() else ""
    timed_out = " (killed by timeout)" if proc.returncode in (124, 137) else ""
    parts = [
        f"$ {' '.join(argv)}",
        f"exit code {proc.returncode} after {elapsed:.1f} s{timed_out}",
        f"--- stdout ---\n{proc.stdout}",
        f"--- stderr ---\n{proc.stderr}",
        f"--- result file ---\n{raw or '(none)'}",
    ]
    for log in (home / name for name in _LOGS):
        if log.exists():
            parts.append(f"--- {log.name} (last 20000 chars) ---\n{log.read_text(errors='replace')[-20000:]}")
    report = "\n".join(parts)
    print(f"{argv[0]}: {elapsed:.1f} s")
    assert proc.returncode == 0 and raw, report
    result: dict[str, Any] = json.loads(raw)
    assert result["error"] is None, report
    return EditorRun(result=result, elapsed_s=elapsed, report=report)


def sample_text(workspace: Path) -> str:
    return (workspace / "stats.py").read_text()


def check_model_saw_the_editor(model_server: FakeModelServer, run: EditorRun, permission_reply: str) -> None:
    """``permission_reply``: ``allowed``, ``denied`` (the user answered) or ``headless`` (nobody could)."""
    """The model's side: the task and focus, the unsaved buffer, the permission outcome, the call ids."""
    requests = model_server.requests
    assert len(requests) == len(STEPS), run.report
    first_user = next(m for m in requests[0]["messages"] if m["role"] == "user")["content"]
    assert TASK in first_user and "File in focus: stats.py" in first_user, first_user
    assert all(h.get("authorization") == f"Bearer {SECRET_KEY}" for h in model_server.request_headers)
    tool_results = [m for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_results] == ["call_read", "call_ask", "call_edit"]
    # Each result reaches the model wrapped as data (core/context.py wrap_tool_result): unwrap it.
    assert all(m["content"].startswith("<tool_result tool=") for m in tool_results), tool_results
    read, ask, edit = (m["content"].split("\n", 1)[1].removesuffix("\n</tool_result>") for m in tool_results)
    assert MARKER in read.splitlines()[0], read  # the unsaved line typed at the top, seen as line 1
    assert "(len(values) - 1)" in read
    if permission_reply == "allowed":
        assert not ask.startswith("denied"), ask  # make ran in the shadow copy (its output varies)
    elif permission_reply == "headless":  # nobody could be asked: the model is told so (issue 12.16)
        unasked = 'denied: make lint was not run (no rule matches "make lint"); nobody could be asked'
        unasked += " (headless)."
        assert ask == unasked, ask
    else:
        assert ask == "denied by user: make lint was not run.", ask
    assert edit.startswith("Edited stats.py (1 replacement)"), edit
    ended = run.result["run_ended"]
    assert ended["sessionId"] == run.result["started"]["sessionId"]
    assert (ended["status"], ended["answer"]) == ("done", ANSWER), run.report
    proposal = dict(ended["proposal"])
    assert not proposal.pop("governedBy")  # no AGENTS.md in the sample (Emacs reads {} back as null)
    assert proposal == {"files": ["stats.py"], "added": 1, "removed": 1}
    assert not any(SECRET_KEY in line for line in run.result["log"])
