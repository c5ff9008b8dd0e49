"""agent-ls in a real Neovim (Debian's 0.7.2), headless, through ``vim.lsp.start_client``.

Neovim 0.7 declares window.showMessage and window.workDoneProgress but no changeAnnotationSupport, and
its workspace/applyEdit handler applies edits at once, without a preview. So the whole flow is visible
here: progress begin/report/end, the permission question, and the server's own ask-before-apply
question ("Apply 1 file(s) (+1 −1)?") that stands in for the missing preview. Apply edits the unsaved
buffer on top of the user's change; Discard changes nothing, in the buffer or on disk.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.e2e.conftest import BUGGY, FIXED, fix_step
from tests.e2e.editors.editor_run import (
    ANSWER,
    APPLIED,
    APPLY_QUESTION,
    DISCARDED,
    HERE,
    MARKER,
    STEPS,
    check_model_saw_the_editor,
    run_editor,
    sample_text,
)
from tests.support.model_server import FakeModelServer


@pytest.mark.parametrize(
    ("apply", "permission"), [("Apply", "Allow once"), ("Discard", "Deny")], ids=["Apply", "Discard"]
)
def test_neovim_runs_asks_and_applies_only_on_apply(
    apply: str, permission: str, tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    nvim = require_tool("nvim")
    model_server.steps.extend(STEPS)
    disk_before = sample_text(workspace)
    run = run_editor(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {HERE / 'agent_ls_e2e.lua'}"],
        tmp_path=tmp_path,
        workspace=workspace,
        model_server=model_server,
        permission=permission,
        apply=apply,
    )
    result, report = run.result, run.report
    check_model_saw_the_editor(model_server, run, "allowed" if permission == "Allow once" else "denied")

    # What Neovim 0.7 declares decides what the server does.
    window = result["capabilities"]["window"]
    assert window["workDoneProgress"] is True and "showMessage" in window
    assert "changeAnnotationSupport" not in result["capabilities"]["workspace"]["workspaceEdit"]

    kinds = run.progress_kinds()
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds, report
    assert set(kinds[1:-1]) == {"report"}, report
    end = [p for p in result["progress"] if p["kind"] == "end"][-1]
    assert end["message"].startswith("done: the model answered · ") and " in, " in end["message"]

    permission_question, apply_question = result["questions"]
    assert permission_question["message"].startswith("agent-ls wants to run bash: make lint"), report
    assert permission_question["actions"] == ["Allow once", "Allow for this session", "Always allow", "Deny"]
    assert permission_question["answer"] == permission
    assert apply_question["message"] == APPLY_QUESTION and apply_question["actions"] == ["Apply", "Discard"]

    # The proposal is gone either way: applied, or discarded by the user's answer.
    assert result["proposal_after"] == {"result": {"files": []}}, report
    assert result["empty_table"] == {
        "proposal": {"result": {"files": []}},
        "cancel": {"result": {"cancelled": False}},
        "applyProposal": {
            "result": {
                "applied": False,
                "failureReason": "there is no proposed change to apply",
                "changesApplied": 0,
                "changesKept": 0,
                "keptFiles": [],
            }
        },
    }, report
    assert sample_text(workspace) == disk_before  # Neovim edits the buffer; nothing is saved
    assert result["modified"] is True
    if apply == "Apply":
        assert result["apply"] == APPLIED, report
        (edit,) = result["apply_edits"]
        (change,) = edit["edit"]["documentChanges"]
        assert change["textDocument"]["uri"] == (workspace / "stats.py").as_uri()
        assert isinstance(change["textDocument"]["version"], int)  # the version the agent read
        assert "changeAnnotations" not in edit["edit"]
        assert result["buffer"] == f"{MARKER}\n" + disk_before.replace(BUGGY, FIXED), report
    else:
        assert result["apply"] == DISCARDED, report
        assert result["apply_edits"] == []
        assert result["buffer"] == f"{MARKER}\n" + disk_before, report


NOTES = "# Notes\n\nmean() divides by len(values).\n"
SUBSET_STEPS = [
    fix_step("call_edit"),
    {
        "tool_calls": [
            {"id": "call_notes", "name": "write_file", "arguments": {"path": "NOTES.md", "content": NOTES}}
        ]
    },
    {"content": ANSWER},
]


def test_neovim_applies_one_file_of_two_and_discards_the_other_by_uri(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    """``files`` subsets (issue 16): agent.applyProposal of stats.py only, then agent.discardProposal of
    the files left (NOTES.md), each by the URI agent.proposal gives."""
    nvim = require_tool("nvim")
    model_server.steps.extend(SUBSET_STEPS)
    disk_before = sample_text(workspace)
    stats, notes = (workspace / "stats.py").as_uri(), (workspace / "NOTES.md").as_uri()
    run = run_editor(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {HERE / 'agent_ls_e2e.lua'}"],
        tmp_path=tmp_path,
        workspace=workspace,
        model_server=model_server,
        permission="Deny",
        apply="Apply",
        extra_env={"AGENT_LS_E2E_SUBSET": stats},
    )
    result, report = run.result, run.report
    assert result["run_ended"]["proposal"]["files"] == ["NOTES.md", "stats.py"], report
    (question,) = result["questions"]  # only stats.py is asked about
    assert question["message"] == APPLY_QUESTION and question["answer"] == "Apply", report
    assert result["apply"] == {
        "result": {
            "applied": True,
            "message": "applied 1 of 1 change in 1 file; 1 other file still pending",
            "changesApplied": 1,
            "changesKept": 0,
            "keptFiles": [notes],
        }
    }, report
    (edit,) = result["apply_edits"]
    assert [c["textDocument"]["uri"] for c in edit["edit"]["documentChanges"]] == [stats], report
    (pending,) = result["proposal_between"]["result"]["files"]
    assert (pending["path"], pending["uri"], pending["proposedText"]) == ("NOTES.md", notes, NOTES), report
    assert result["discard"] == {"result": {"discarded": True, "keptFiles": []}}, report
    assert result["proposal_after"] == {"result": {"files": []}}, report
    assert result["buffer"] == f"{MARKER}\n" + disk_before.replace(BUGGY, FIXED), report
    assert not (workspace / "NOTES.md").exists() and sample_text(workspace) == disk_before
