"""``agent-ls acp`` when things go wrong: a client write that fails halfway through an apply, a cancel
with tool calls open, a workspace that is the whole disk, attachments that are secrets or try to break
out of their block. A real ``agent-ls acp`` subprocess driven by the SDK's client side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp import RequestError, schema, text_block

from tests.e2e.test_acp import EDIT, PRICE, _env, _records, _shop
from tests.support.acp_client import EditorClient, agent_ls_acp, initialized
from tests.support.model_server import FakeModelServer

TAX = {"name": "write_file", "arguments": {"path": "tax.py", "content": "RATE = 0.2\n"}}


class FailingWrites(EditorClient):
    """An editor whose ``fs/write_text_file`` fails for the paths in ``failing``."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: set[str] = set()

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any) -> Any:
        if path in self.failing:
            raise RequestError.internal_error({"details": "disk full"})
        return await super().write_text_file(session_id, path, content, **kw)


async def test_a_write_failing_halfway_leaves_only_the_unwritten_files_pending(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    client = FailingWrites()
    client.failing = {str(root / "tax.py")}
    steps = [{"tool_calls": [EDIT, TAX]}, {"content": "Rounded, taxed."}, {"content": "Again."}]
    with FakeModelServer(steps) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("Round and tax")])
            first = client.message_text()
            client.failing = set()
            await conn.prompt(session_id=sid, prompt=[text_block("Apply again")])
    log = (tmp_path / "acp.log").read_text()
    assert [path for path, _ in client.writes] == [str(root / "price.py"), str(root / "tax.py")], log
    assert "writing tax.py failed" in first and "written: price.py" in first, first
    [_, second] = [asked.title for asked, _ in client.questions]
    assert second is not None and second.startswith("Apply the changes to 1 file "), second
    removed = [r for r in _records(root) if r["kind"] == "proposal" and r.get("removed")]
    assert [r["removed"] for r in removed] == [["price.py"]], json.dumps(removed)
    assert PRICE in (root / "price.py").read_text()  # the client wrote (the editor's buffer), not agent-ls


async def test_a_failed_mcp_server_and_a_defanged_image_are_told_to_the_user(tmp_path: Path) -> None:
    root = _shop(tmp_path)
    broken = schema.McpServerStdio(name="broken", command=str(tmp_path / "no-such-server"), args=[], env=[])
    client = EditorClient()
    with FakeModelServer([{"content": "Look ![o](https://evil.example/o.png?k=1)"}]) as server:
        async with agent_ls_acp(client, cwd=root, env=_env(server), stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[broken])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("Look")])
    said = client.message_text()
    assert "agent-ls: mcp broken: failed" in said, said
    assert "agent-ls: ⚠ not loaded: images or embeds in the model's text, from evil.example" in said, said
    assert "![" not in said
