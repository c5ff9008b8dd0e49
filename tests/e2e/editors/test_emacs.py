"""agent-ls in a real Emacs 28 with eglot (Debian's 1.9), batch mode.

eglot 1.9 declares only ``workspace.applyEdit`` and ``workspaceEdit.documentChanges`` of what the server
looks at: no ``window`` section at all, although it answers window/showMessageRequest (with
``completing-read``) and ignores $/progress without complaint. So, with the configuration
docs/editors.md gives:

- stock: no progress and no permission question (an "ask" resolves to the headless default, deny, with
  a log line); the server does not ask before applying either, and eglot asks its own question instead
  (``eglot-confirm-server-initiated-edits``: "Server wants to edit ... Proceed?", ``y-or-n-p``).
- prompts: the ``agent-ls-eglot`` class from docs/editors.md declares what eglot already handles, so
  progress, the permission question and the server's "Apply 1 file(s)?" question all work, and eglot's
  own confirmation is turned off for this server so the user is asked once.

Apply edits the unsaved buffer on top of the user's change; Discard changes nothing, in the buffer or on
disk.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import require_tool
from tests.e2e.conftest import BUGGY, FIXED, fix_step
from tests.e2e.editors.editor_run import (
    APPLIED,
    APPLY_QUESTION,
    DISCARDED,
    HERE,
    MARKER,
    STEPS,
    EditorRun,
    check_model_saw_the_editor,
    run_editor,
    sample_text,
)
from tests.support.model_server import FakeModelServer


def _run_emacs(
    setup: str, apply: str, tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> EditorRun:
    emacs = require_tool("emacs")
    model_server.steps.extend(STEPS)
    return run_editor(
        # Not -Q: Debian's site-start puts elpa-eglot on the load path.
        [emacs, "--batch", "-l", str(HERE / "agent_ls_e2e.el")],
        tmp_path=tmp_path,
        workspace=workspace,
        model_server=model_server,
        permission="Allow once",
        apply=apply,
        extra_env={"AGENT_LS_E2E_EMACS_SETUP": setup},
    )


def _check_buffer_and_disk(run: EditorRun, apply: str, disk_before: str, workspace: Path) -> None:
    assert sample_text(workspace) == disk_before  # eglot edits the buffer; nothing is saved
    assert run.result["modified"] is True
    expected = disk_before.replace(BUGGY, FIXED) if apply == "Apply" else disk_before
    assert run.result["buffer"] == f"{MARKER}\n" + expected, run.report


@pytest.mark.parametrize("apply", ["Apply", "Discard"])
def test_emacs_stock_eglot_denies_asks_and_confirms_the_edit_itself(
    apply: str, tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    disk_before = sample_text(workspace)
    run = _run_emacs("stock", apply, tmp_path, workspace, model_server)
    result, report = run.result, run.report
    check_model_saw_the_editor(model_server, run, "headless")

    capabilities = result["capabilities"]
    assert "window" not in capabilities
    assert capabilities["workspace"]["workspaceEdit"] == {"documentChanges": True}

    # No progress, no showMessageRequest: the "ask" became the headless default, with a log line.
    assert run.progress_kinds() == []
    assert any(
        line.startswith("agent-ls: denied bash 'make lint' (the editor cannot show permission prompts")
        for line in result["log"]
    ), result["log"]
    # The one question is eglot's own, before it applies the server's edit.
    (question,) = result["questions"]
    assert question["via"] == "y-or-n-p", report
    assert question["message"].startswith("[eglot] Server wants to edit:")
    (edit,) = result["apply_edits"]
    (change,) = edit["documentChanges"]
    assert change["textDocument"]["uri"] == (workspace / "stats.py").as_uri()

    _check_buffer_and_disk(run, apply, disk_before, workspace)
    if apply == "Apply":
        assert result["apply"]["result"]["applied"] is True, report
        assert result["proposal_after"] == {"result": {"files": []}}, report
    else:
        # eglot answers "n" with a JSON-RPC error ("User cancelled server edit"). Today the server passes
        # that error on as the agent.applyProposal error; either way nothing is applied and the
        # proposal is kept.
        apply_response = result["apply"]
        assert "User cancelled server edit" in apply_response.get("error", "") or (
            apply_response["result"]["applied"] is False
        ), report
        (kept,) = result["proposal_after"]["result"]["files"]
        assert kept["path"] == "stats.py"


@pytest.mark.parametrize("apply", ["Apply", "Discard"])
def test_emacs_with_the_agent_ls_eglot_class_asks_and_applies_only_on_apply(
    apply: str, tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    disk_before = sample_text(workspace)
    run = _run_emacs("prompts", apply, tmp_path, workspace, model_server)
    result, report = run.result, run.report
    check_model_saw_the_editor(model_server, run, "allowed")

    assert result["capabilities"]["window"]["workDoneProgress"] is True
    kinds = run.progress_kinds()
    assert kinds[0] == "begin" and kinds[-1] == "end" and set(kinds[1:-1]) == {"report"}, report

    permission_question, apply_question = result["questions"]
    assert permission_question["via"] == "completing-read"
    assert "agent-ls wants to run bash: make lint" in permission_question["message"], report
    assert permission_question["actions"] == ["Allow once", "Allow for this session", "Always allow", "Deny"]
    assert apply_question["via"] == "completing-read"
    assert APPLY_QUESTION in apply_question["message"] and apply_question["actions"] == ["Apply", "Discard"]

    _check_buffer_and_disk(run, apply, disk_before, workspace)
    assert result["proposal_after"] == {"result": {"files": []}}, report
    if apply == "Apply":
        assert result["apply"] == {"result": {**APPLIED["result"], "failureReason": None}}, report
        assert len(result["apply_edits"]) == 1
    else:
        assert result["apply"] == {"result": {**DISCARDED["result"], "message": None}}, report
        assert result["apply_edits"] == []


def test_emacs_initialization_options_alone_survive_eglots_empty_configuration(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    run = _run_emacs("init-options-only", "Apply", tmp_path, workspace, model_server)
    assert run.result["run_ended"]["status"] == "done", run.result["run_ended"]["reason"]


def test_the_agent_ls_eglot_class_in_the_docs_is_the_one_tested() -> None:
    """docs/editors.md gives users the class the "prompts" runs above load from agent_ls_e2e.el."""
    script = (HERE / "agent_ls_e2e.el").read_text()
    tested = script[script.index("(defclass agent-ls-eglot") : script.index(";;; The flow.")]
    docs = (HERE.parents[2] / "docs" / "editors.md").read_text()
    assert " ".join(tested.split()) in " ".join(docs.split())


NOTES = "# Notes\n\nmean() divides by len(values).\n"


def test_emacs_applies_one_file_of_two_and_discards_the_other_by_uri(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    """``files`` subsets (issue 16), with the agent-ls eglot class: agent.applyProposal of stats.py only
    (NOTES.md, a new file eglot could not create, is not sent), then agent.discardProposal of NOTES.md by
    the URI agent.proposal gives."""
    emacs = require_tool("emacs")
    write = {"name": "write_file", "arguments": {"path": "NOTES.md", "content": NOTES}}
    model_server.steps.extend([fix_step("call_edit"), {"tool_calls": [write]}, {"content": "done"}])
    disk_before = sample_text(workspace)
    stats, notes = (workspace / "stats.py").as_uri(), (workspace / "NOTES.md").as_uri()
    run = run_editor(
        [emacs, "--batch", "-l", str(HERE / "agent_ls_e2e.el")],
        tmp_path=tmp_path,
        workspace=workspace,
        model_server=model_server,
        permission="Deny",
        apply="Apply",
        extra_env={"AGENT_LS_E2E_EMACS_SETUP": "prompts", "AGENT_LS_E2E_SUBSET": stats},
    )
    result, report = run.result, run.report
    (question,) = result["questions"]  # only stats.py is asked about
    assert APPLY_QUESTION in question["message"] and question["answer"] == "Apply", report
    assert result["apply"] == {
        "result": {
            "applied": True,
            "failureReason": None,
            "message": "applied 1 of 1 change in 1 file; 1 other file still pending",
            "changesApplied": 1,
            "changesKept": 0,
            "keptFiles": [notes],
        }
    }, report
    (pending,) = result["proposal_between"]["result"]["files"]
    assert (pending["path"], pending["uri"], pending["proposedText"]) == ("NOTES.md", notes, NOTES), report
    assert result["discard"] == {"result": {"discarded": True, "keptFiles": []}}, report
    assert result["proposal_after"] == {"result": {"files": []}}, report
    assert result["buffer"] == f"{MARKER}\n" + disk_before.replace(BUGGY, FIXED), report
    assert not (workspace / "NOTES.md").exists() and sample_text(workspace) == disk_before
