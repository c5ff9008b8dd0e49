"""``agent.traceHtml`` (issue 19): a real ``agent-ls serve`` gives a stored session's trajectory as the
same inert HTML page ``agent-ls trace html`` writes, for the VS Code session view's "Trace" link."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start
from tests.support.model_server import FakeModelServer


async def test_the_editor_gets_a_stored_session_as_an_inert_page(
    client: LanguageClient, tmp_path: Path, model_server: FakeModelServer
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "page.html").write_text("<script>alert(1)</script><img src=x onerror=alert(2)>\n")
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "page.html"}}]}
    model_server.steps.extend([read, {"content": "Read it."}])
    await start(client, root, model_settings(model_server))
    session_id = field(await command(client, "agent.run", {"task": "read page.html"}), "sessionId")
    assert field(await run_ended(client, session_id), "status") == "done"

    page = await command(client, "agent.traceHtml", {"sessionId": session_id})
    html = field(page, "html")
    assert field(page, "sessionId") == session_id
    assert f"agent-ls trace {session_id}" in html and "read_file" in html and "Read it." in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;" in html
    assert "<script" not in html and "<img" not in html
    with pytest.raises(JsonRpcException, match="no session nosuch is stored"):
        await command(client, "agent.traceHtml", {"sessionId": "nosuch"})
