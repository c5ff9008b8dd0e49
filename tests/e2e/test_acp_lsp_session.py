"""A session started over LSP (a real ``agent-ls serve``, ``agent.run``) loads in ``agent-ls acp``
(``session/load``): its history is replayed as updates, and the next prompt goes on with it and its
pending proposal, which is written through the ACP client once accepted."""

from __future__ import annotations

import sys
from pathlib import Path

from acp import text_block
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import (
    BUGGY,
    FIXED,
    SERVER_ENV,
    command,
    field,
    fix_step,
    prepare_client,
    run_ended,
    start,
)
from tests.support import agent_cli
from tests.support.acp_client import EditorClient, agent_ls_acp, initialized
from tests.support.model_server import FakeModelServer


async def test_a_session_started_over_lsp_loads_and_goes_on_over_acp(tmp_path: Path, workspace: Path) -> None:
    state = tmp_path / "state"
    server = FakeModelServer([fix_step(), {"content": "Fixed the mean."}, {"content": "Yes, it is fixed."}])
    with server:
        config = ClientServerConfig(
            server_command=[sys.executable, "-m", "agent_ls", "serve"],
            server_env=SERVER_ENV | {"AGENT_LS_STATE_DIR": str(state)},
        )
        lsp = await config.start()
        assert isinstance(lsp, LanguageClient)
        prepare_client(lsp)
        try:
            await start(lsp, workspace, {"model": "openai/test-model", "baseUrl": server.base_url})
            started = await command(lsp, "agent.run", {"task": "Fix the mean"})
            sid = field(started, "sessionId")
            assert field(await run_ended(lsp, sid), "status") == "done"
        finally:
            await lsp.shutdown_session()
            await lsp.stop()

        env = agent_cli.user_environment(
            AGENT_LS_BASE_URL=server.base_url, AGENT_LS_MODEL="openai/test", AGENT_LS_STATE_DIR=str(state)
        )
        client = EditorClient()
        async with agent_ls_acp(client, cwd=workspace, env=env, stderr=tmp_path / "acp.log") as conn:
            await initialized(conn, fs=True)
            assert await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[]) is not None
            replayed = list(client.updates)
            answer = await conn.prompt(session_id=sid, prompt=[text_block("Is the mean fixed?")])
    assert answer.stop_reason == "end_turn", (tmp_path / "acp.log").read_text()
    kinds = [u.session_update for u in replayed]
    assert kinds[:4] == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    assert "Fix the mean" in replayed[0].content.text
    assert replayed[1].kind == "edit" and replayed[3].content.text == "Fixed the mean."
    assert "Fix the mean" in str(server.requests[-1]["messages"])
    stats = workspace / "stats.py"
    [(path, text)] = client.writes  # the LSP run's proposal, applied from ACP once accepted
    assert path == str(stats) and FIXED in text and BUGGY not in text
    assert BUGGY in stats.read_text()  # the editor writes its buffer; the disk is not ours to write
