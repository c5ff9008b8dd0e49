"""Review findings in real editors: Neovim 0.7 (vim.diagnostic) and Emacs 28 + eglot 1.9 (flymake).

``/code-review`` runs through ``agent.runSkill``; the scripted model reports two findings with
``review_findings``; each editor shows them as its own diagnostics, with source ``agent-ls review``, and
asking for the code actions on the first finding's line (with the diagnostics the editor holds there,
``data`` included) offers "Agent: Fix this finding", whose command continues the review's session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import require_tool
from tests.e2e.editors.editor_run import HERE, EditorRun, run_editor
from tests.support.model_server import FakeModelServer

FINDINGS = [
    {"path": "stats.py", "line": 8, "severity": "warning", "message": "divides by n-1"},
    {"path": "stats.py", "line": 11, "endLine": 13, "severity": "info", "message": "spread([]) raises"},
]
STEPS: list[dict[str, Any]] = [
    {"tool_calls": [{"id": "c1", "name": "review_findings", "arguments": {"findings": FINDINGS}}]},
    {"content": "stats.py:8: warning: divides by n-1\nstats.py:11: info: spread([]) raises"},
]


def _run(argv: list[str], tmp_path: Path, workspace: Path, model_server: FakeModelServer) -> EditorRun:
    model_server.steps.extend(STEPS)
    return run_editor(
        argv,
        tmp_path=tmp_path,
        workspace=workspace,
        model_server=model_server,
        permission="Deny",
        apply="Discard",
        extra_env={"AGENT_LS_E2E_FINDINGS": str(len(FINDINGS))},
    )


def _check_fix_action(run: EditorRun) -> None:
    session_id = run.result["started"]["sessionId"]
    fix = [a for a in run.result["actions"] if a["title"] == "Agent: Fix this finding"]
    assert len(fix) == 1, run.report
    assert (fix[0]["kind"], fix[0]["command"]) == ("quickfix", "agent.run"), run.report
    (argument,) = fix[0]["arguments"]
    assert argument["sessionId"] == session_id
    assert argument["task"].startswith("Fix this finding of your review: stats.py line 8 (warning): divides")


def test_neovim_shows_review_findings_as_diagnostics(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    nvim = require_tool("nvim")
    script = HERE / "review_findings_e2e.lua"
    run = _run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {script}"],
        tmp_path,
        workspace,
        model_server,
    )
    assert run.result["run_ended"]["status"] == "done", run.report
    assert run.result["diagnostics"] == [
        {
            "lnum": 7,
            "end_lnum": 7,
            "col": 0,
            "end_col": 42,
            "severity": 2,  # vim.diagnostic.severity.WARN
            "message": "divides by n-1",
            "source": "agent-ls review",
        },
        {
            "lnum": 10,
            "end_lnum": 12,
            "col": 0,
            "end_col": 36,
            "severity": 3,  # vim.diagnostic.severity.INFO
            "message": "spread([]) raises",
            "source": "agent-ls review",
        },
    ], run.report
    _check_fix_action(run)


def test_emacs_eglot_shows_review_findings_in_flymake(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    emacs = require_tool("emacs")
    # Not -Q: Debian's site-start puts elpa-eglot on the load path.
    run = _run(
        [emacs, "--batch", "-l", str(HERE / "review_findings_e2e.el")], tmp_path, workspace, model_server
    )
    assert run.result["run_ended"]["status"] == "done", run.report
    assert run.result["diagnostics"] == [
        {"line": 8, "end_line": 8, "type": "eglot-warning", "text": "agent-ls review: divides by n-1"},
        {"line": 11, "end_line": 13, "type": "eglot-note", "text": "agent-ls review: spread([]) raises"},
    ], run.report
    _check_fix_action(run)
