"""The editor's problems from a real Neovim 0.7: the docs' snippet (docs/modes.md, "The editor's
problems") forwards ``vim.diagnostic`` with ``agent/didChangeProblems``; the scripted model calls
``problems`` and the request the fake model server records holds the other language server's diagnostic,
not agent-ls's own."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import require_tool
from tests.e2e.editors.editor_run import HERE, run_editor
from tests.support.model_server import FakeModelServer

DOCS = Path(__file__).parents[3] / "docs" / "modes.md"


def _snippet() -> str:
    """The Lua block of the docs' section on the editor's problems, as written there."""
    section = DOCS.read_text(encoding="utf-8").split("## The editor's problems", 1)[1]
    (block,) = re.findall(r"```lua\n(.*?)```", section, re.S)
    return block


def test_neovim_forwards_its_diagnostics_with_the_documented_snippet(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    nvim = require_tool("nvim")
    snippet = tmp_path / "forward_problems.lua"
    snippet.write_text(_snippet() + "\nreturn forward_problems\n", encoding="utf-8")
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "c1", "name": "problems", "arguments": {"path": "."}}]},
            {"tool_calls": [{"id": "c2", "name": "problems", "arguments": {"path": "stats.py"}}]},
            {"content": "One problem."},
        ]
    )
    script = HERE / "problems_e2e.lua"
    run = run_editor(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {script}"],
        tmp_path=tmp_path,
        workspace=workspace,
        model_server=model_server,
        permission="Deny",
        apply="Discard",
        extra_env={"AGENT_LS_E2E_SNIPPET": str(snippet)},
    )
    assert run.result["error"] is None, run.report
    assert run.result["run_ended"]["status"] == "done", run.report
    tools = {
        m["tool_call_id"]: m["content"] for m in model_server.requests[-1]["messages"] if m["role"] == "tool"
    }
    assert "stats.py: 1 error\n1 file: 1 error" in tools["c1"], run.report
    assert "stats.py:8:12 error pyright: Possible off-by-one" in tools["c2"], run.report
    assert "our own finding" not in str(model_server.requests[-1])
    # The empty buffer's list went out as Lua's empty table ({}), and was read as an empty list.
    assert "agent/didChangeProblems: a file ignored" not in run.report, run.report
