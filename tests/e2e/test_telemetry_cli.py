"""The OpenTelemetry export of a real ``agent-ls run`` (docs/telemetry.md): with ``AGENT_LS_OTEL=1`` the
run's spans reach an OTLP/HTTP collector on 127.0.0.1; no key and no text of the run are in what is sent;
without the switch nothing is sent, even with ``OTEL_EXPORTER_OTLP_ENDPOINT`` set."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import agent_cli
from tests.support.model_server import FakeModelServer
from tests.support.otlp_collector import OtlpCollector

PLANTED_KEY = "sk-proj-otelPlantedKey0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH"
TASK = "Summarize conf.py for the billing team"
ANSWER = "conf.py holds one setting"


def _run(root: Path, collector: OtlpCollector, **extra: str) -> tuple[int, str, FakeModelServer]:
    steps = [
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "cat conf.py"}}]},
        {"tool_calls": [{"id": "c2", "name": "read_file", "arguments": {"path": "conf.py"}}]},
        {"content": ANSWER},
    ]
    with FakeModelServer(steps) as server:
        env = agent_cli.user_environment(
            AGENT_LS_BASE_URL=server.base_url,
            OPENAI_API_KEY=PLANTED_KEY,
            OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint,
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
            **extra,
        )
        args = ["run", TASK, "--model", "openai/test-model", "--workspace", str(root), "--yes"]
        done = agent_cli.run(args, cwd=root, env=env)
    return done.returncode, done.stderr, server


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "conf.py").write_text(f'API_KEY = "{PLANTED_KEY}"\nMARKER = "conf-marker-7731"\n')
    return root


def test_a_run_with_the_export_switched_on_sends_its_spans_and_none_of_its_text(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    with OtlpCollector() as collector:
        code, stderr, server = _run(root, collector, AGENT_LS_OTEL="1")
        spans = collector.spans()  # sent before the process ended: shutdown() flushed them
        bodies = b"".join(collector.bodies)
    assert code == 0, stderr
    assert len(server.requests) == 3
    assert "conf-marker-7731" in json.dumps(server.requests)  # the model did see the file and the key
    assert set(collector.paths) == {"/v1/traces"}

    names = sorted(s.name for s in spans)
    tools = ["execute_tool bash", "execute_tool read_file"]
    assert names == sorted(["invoke_agent agent-ls", *["turn"] * 3, *["chat test-model"] * 3, *tools])
    by_id = {s.span_id: s for s in spans}
    (run,) = (s for s in spans if s.name == "invoke_agent agent-ls")
    assert run.parent_span_id == ""
    assert {s.trace_id for s in spans} == {run.trace_id}
    for span in spans:
        parent = by_id.get(span.parent_span_id)
        expected = {"invoke_agent agent-ls": None, "turn": run.name}.get(span.name, "turn")
        assert (parent.name if parent else None) == expected, span.name
    session_id = re.search(r"agent-ls: session (\S+)", stderr)
    assert session_id is not None
    assert run.attributes["gen_ai.conversation.id"] == session_id[1]
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["agent_ls.run.status"] == "done"
    assert run.resource["service.name"] == "agent-ls"
    chat = next(s for s in spans if s.name.startswith("chat"))
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.request.model"] == "test-model"
    assert chat.attributes["gen_ai.usage.input_tokens"] > 0
    assert chat.attributes["agent_ls.request.bytes"] > 0
    bash = next(s for s in spans if s.name == "execute_tool bash")
    assert bash.attributes["gen_ai.tool.call.id"] == "c1"
    assert bash.attributes["agent_ls.verdict"] in {"allow", "ask"}
    assert bash.attributes["agent_ls.is_error"] is False

    for text in (PLANTED_KEY, PLANTED_KEY[8:30], TASK, ANSWER, "conf-marker-7731", "cat conf.py"):
        assert text.encode() not in bodies, text


def test_without_the_switch_nothing_is_sent_even_with_an_otlp_endpoint_set(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    with OtlpCollector() as collector:
        code, stderr, _ = _run(root, collector)
    assert code == 0, stderr
    assert collector.bodies == []


def test_switched_on_without_the_extra_the_run_stops_with_the_install_line(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    shim = tmp_path / "no-otel"  # as if opentelemetry were not installed: Python's "None in sys.modules"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text("import sys\nsys.modules['opentelemetry'] = None\n")
    with OtlpCollector() as collector:
        code, stderr, server = _run(root, collector, AGENT_LS_OTEL="1", PYTHONPATH=str(shim))
    assert code == 2, stderr
    assert stderr.strip().splitlines() == [
        "agent-ls: AGENT_LS_OTEL is set but opentelemetry is not installed: pip install 'agent-ls[otel]'"
    ]
    assert server.requests == [] and collector.bodies == []
