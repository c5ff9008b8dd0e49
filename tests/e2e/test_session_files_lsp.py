"""``agent.listSessions`` and ``agent.proposal`` through a real ``agent-ls serve`` when a session file is
damaged or another process runs a session (new-user trial F2/F4): the damaged file's bad line is
skipped, the others are listed, and a session whose run lock another process holds is ``running``."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_lsp import ClientServerConfig, LanguageClient

from agent_ls.sessions.redaction import Redactor
from agent_ls.sessions.run_lock import RunLock
from agent_ls.sessions.store import SessionStore
from tests.e2e.conftest import SERVER_ENV, command, field, prepare_client, start

DEEP = "[" * 100_000 + "1" + "]" * 100_000


def _stored(store: SessionStore, root: Path, session_id: str) -> Path:
    log = store.create(root, session_id)
    log.append("run_start", {"run": 1, "task": f"task {session_id}", "model": "m"})
    log.append("run_end", {"run": 1, "status": "done", "reason": "", "answer": "", "usage": {}})
    log.close()
    return log.path


def _files(state: Path, root: Path) -> Path:
    """Three stored sessions of ``root``: calm, deep (one line nested 100,000 deep), busy; returns busy's."""
    store, root = SessionStore(state, Redactor(())), root.resolve()
    _stored(store, root, "calm")
    deep = _stored(store, root, "deep")
    with deep.open("a") as file:
        file.write('{"kind":"message","at":"2099-01-01T00:00:00.000Z","message":' + DEEP + "}\n")
    return _stored(store, root, "busy")


async def test_a_damaged_file_and_a_run_elsewhere_are_listed(tmp_path: Path, workspace: Path) -> None:
    state = tmp_path / "state"
    busy = _files(state, workspace)
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "agent_ls", "serve"],
        server_env=SERVER_ENV | {"AGENT_LS_STATE_DIR": str(state)},
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    prepare_client(client)
    try:
        await start(client, workspace)
        with RunLock(busy):  # this test process is "another process" to the server
            listed = field(await command(client, "agent.listSessions", {}), "sessions")
        status = {s["sessionId"]: s["status"] for s in listed}
        assert status == {"busy": "running", "calm": "done", "deep": "done"}
        proposal = await command(client, "agent.proposal", {"sessionId": "deep"})
        assert field(proposal, "files") == []
    finally:
        await client.shutdown_session()
        await client.stop()
