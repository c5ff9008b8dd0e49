"""The OpenTelemetry export of a real ``agent-ls serve`` (docs/telemetry.md): with ``AGENT_LS_OTEL=1`` an
editor's run becomes spans under one ``invoke_agent`` span, sent to an OTLP/HTTP collector on 127.0.0.1
by the time the server has shut down (before the batch's own 5 s delay), none holding the key or the
task."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import HOME_DIR, command, field, model_settings, prepare_client, run_ended, start
from tests.support.model_server import FakeModelServer
from tests.support.otlp_collector import OtlpCollector

API_KEY = "sk-proj-PLANTEDotelLspKey0123456789abcdefghij"
TASK = "explain stats.py to the planted-task reader"


async def test_an_editor_run_is_sent_as_spans_by_shutdown(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "stats.py"}}]},
            {"content": "It computes a mean."},
        ]
    )
    (tmp_path / "cfg").mkdir()
    with OtlpCollector() as collector:
        env = {"AGENT_LS_API_KEY": API_KEY, "HOME": str(HOME_DIR), "AGENT_LS_OTEL": "1"}
        env |= {"AGENT_LS_CONFIG_DIR": str(tmp_path / "cfg"), "AGENT_LS_STATE_DIR": str(tmp_path / "state")}
        env |= {
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
            "NO_PROXY": "127.0.0.1",
            "no_proxy": "127.0.0.1",
        }
        config = ClientServerConfig(
            server_command=[sys.executable, "-m", "agent_ls", "serve"], server_env=env
        )
        client = await config.start()
        assert isinstance(client, LanguageClient)
        prepare_client(client)
        try:
            await start(client, workspace, model_settings(model_server))
            result = await command(client, "agent.run", {"task": TASK})
            session_id = field(result, "sessionId")
            ended = await run_ended(client, session_id, timeout_s=60)
            assert field(ended, "status") == "done"
            await client.shutdown_session()
        finally:
            await client.stop()
        spans = collector.spans()
        bodies = b"".join(collector.bodies)
    names = sorted(s.name for s in spans)
    assert names == sorted(
        [
            "invoke_agent agent-ls",
            "turn",
            "turn",
            "chat test-model",
            "chat test-model",
            "execute_tool read_file",
        ]
    )
    (run,) = (s for s in spans if s.name == "invoke_agent agent-ls")
    assert run.attributes["gen_ai.conversation.id"] == session_id
    assert {s.trace_id for s in spans} == {run.trace_id}
    assert API_KEY.encode() not in bodies and TASK.encode() not in bodies
    assert b"It computes a mean." not in bodies
