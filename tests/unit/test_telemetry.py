"""The OpenTelemetry export (sessions/telemetry.py, sessions/otel_spans.py): a scripted event sequence
recorded by the SDK's in-memory exporter; span names, parents, GenAI attributes, and no text of the run."""

from __future__ import annotations

import itertools
import sys

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agent_ls.core.events import (
    Event,
    MessageCompleted,
    MessageDelta,
    ModelCall,
    ModelRetrying,
    RunEnded,
    RunStarted,
    SubagentEvent,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageReported,
    VerdictGiven,
)
from agent_ls.core.messages import RequestSent, Usage
from agent_ls.sessions.otel_spans import SpanExport, provider_and_model
from agent_ls.sessions.telemetry import INSTALL_HINT, Telemetry, switched_on

SECRETS = ("Fix the bug in billing.py", "rm -rf build", "print('hunter2')", "the answer text", "sk-planted")
"""Texts of the scripted run: a task, a command, a tool output, an answer, a key-looking string."""
SECOND = 1_000_000_000


def _events() -> list[Event]:
    usage = Usage(input_tokens=120, output_tokens=30, cached_input_tokens=100, cost_usd=0.002)
    call = ModelCall(model="openai/gpt-4.1", latency_s=1.5, request=RequestSent(size_bytes=2048, sha256="ab"))
    sub_call = ModelCall(model="local/qwen", latency_s=0.5)
    return [
        RunStarted(session_id="s-1", task=SECRETS[0], model="openai/gpt-4.1"),
        TurnStarted(turn=1, max_turns=10),
        ModelRetrying(attempt=2, max_attempts=4, wait_s=1.0, reason="HTTP 529 sk-planted"),
        MessageDelta(text=SECRETS[3]),
        MessageCompleted(text=SECRETS[3], reasoning=SECRETS[3]),
        UsageReported(usage=usage, total=usage, call=call),
        ToolCallStarted(call_id="c1", name="bash", arguments=f'{{"command": "{SECRETS[1]}"}}'),
        VerdictGiven(
            call_id="c1",
            name="bash",
            verdict="ask",
            rule="bash: * (built-in)",
            subject=SECRETS[1],
            approval="once",
            unasked="--yes",
        ),
        ToolCallFinished(call_id="c1", name="bash", is_error=True, output=SECRETS[2]),
        ToolCallStarted(call_id="c2", name="task", arguments=SECRETS[0]),
        SubagentEvent("c2", "look around", RunStarted(session_id="s-1", task=SECRETS[0], model="local/qwen")),
        SubagentEvent("c2", "look around", TurnStarted(turn=1, max_turns=5)),
        SubagentEvent("c2", "look around", UsageReported(usage=usage, total=usage, call=sub_call)),
        SubagentEvent(
            "c2", "look around", RunEnded(status="done", reason="", answer=SECRETS[3], usage=usage)
        ),
        ToolCallFinished(call_id="c2", name="task", is_error=False, output=SECRETS[3]),
        TurnStarted(turn=2, max_turns=10),
        UsageReported(usage=usage, total=usage + usage, call=call),
        RunEnded(status="done", reason=f"done: {SECRETS[3]}", answer=SECRETS[3], usage=usage + usage),
    ]


def _record(events: list[Event]) -> list[ReadableSpan]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ticks = itertools.count(100 * SECOND, SECOND)  # one second per event: exact timestamps
    export = SpanExport(provider, clock=lambda: next(ticks))
    seen: list[Event] = []
    sink = export.sink(seen.append)
    for event in events:
        sink(event)
    assert seen == events  # forwarded unchanged, in order
    return list(exporter.get_finished_spans())


def _by_name(spans: list[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    named: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        named.setdefault(span.name, []).append(span)
    return named


def _parent_name(span: ReadableSpan, spans: list[ReadableSpan]) -> str:
    if span.parent is None:
        return "-"
    return next(s.name for s in spans if s.context is not None and s.context.span_id == span.parent.span_id)


def test_the_spans_of_a_run_nest_run_turn_model_call_and_tool_call() -> None:
    spans = _record(_events())
    assert sorted((s.name, _parent_name(s, spans)) for s in spans) == sorted(
        [
            ("invoke_agent agent-ls", "-"),
            ("turn", "invoke_agent agent-ls"),
            ("chat gpt-4.1", "turn"),
            ("execute_tool bash", "turn"),
            ("execute_tool task", "turn"),
            ("invoke_agent agent-ls", "execute_tool task"),  # the subagent's run
            ("turn", "invoke_agent agent-ls"),
            ("chat qwen", "turn"),
            ("turn", "invoke_agent agent-ls"),
            ("chat gpt-4.1", "turn"),
        ]
    )
    assert len({s.context.trace_id for s in spans if s.context is not None}) == 1


def test_attributes_follow_the_genai_conventions() -> None:
    named = _by_name(_record(_events()))
    run = next(s for s in named["invoke_agent agent-ls"] if s.parent is None)
    assert run.attributes is not None
    assert {k: run.attributes[k] for k in ("gen_ai.operation.name", "gen_ai.conversation.id")} == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": "s-1",
    }
    assert run.attributes["gen_ai.provider.name"] == "openai"
    assert run.attributes["gen_ai.request.model"] == "gpt-4.1"
    assert run.attributes["gen_ai.usage.input_tokens"] == 240
    assert run.attributes["agent_ls.run.status"] == "done"
    assert run.status.status_code is StatusCode.UNSET

    chat = named["chat gpt-4.1"][0]
    assert chat.attributes is not None
    assert dict(chat.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4.1",
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 30,
        "gen_ai.usage.cache_read.input_tokens": 100,
        "agent_ls.usage.estimated": False,
        "agent_ls.cost_usd": 0.002,
        "agent_ls.role": "main",
        "agent_ls.latency_s": 1.5,
        "agent_ls.request.bytes": 2048,
    }
    assert chat.end_time is not None and chat.start_time is not None
    assert chat.end_time - chat.start_time == 1_500_000_000  # after the fact: ends at the event

    bash = named["execute_tool bash"][0]
    assert bash.attributes is not None
    assert dict(bash.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "bash",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function",
        "agent_ls.verdict": "ask",
        "agent_ls.rule": "bash: * (built-in)",
        "agent_ls.approval": "once",
        "agent_ls.approval.unasked": "--yes",
        "agent_ls.is_error": True,
        "error.type": "tool_error",
    }
    assert bash.status.status_code is StatusCode.ERROR
    assert bash.status.description is None  # never the output

    first_turn = min(named["turn"], key=lambda s: s.start_time or 0)
    assert [e.name for e in first_turn.events] == ["agent_ls.model_retry"]
    sub = next(s for s in named["invoke_agent agent-ls"] if s.parent is not None)
    assert sub.attributes is not None and sub.attributes["agent_ls.subagent"] is True
    qwen = named["chat qwen"][0].attributes or {}
    assert (qwen["gen_ai.provider.name"], qwen["gen_ai.request.model"]) == ("local", "qwen")


def test_no_text_of_the_run_is_in_any_span() -> None:
    spans = _record(_events())
    dumped = "\n".join(span.to_json() for span in spans)
    for text in SECRETS:
        assert text not in dumped
    assert "hunter2" not in dumped and "billing" not in dumped


def test_a_cancelled_run_ends_its_open_spans_and_an_error_run_is_marked() -> None:
    usage = Usage(input_tokens=1, output_tokens=1)
    spans = _record(
        [
            RunStarted(session_id="s-2", task="t", model="anthropic/claude"),
            TurnStarted(turn=1, max_turns=3),
            ToolCallStarted(call_id="c", name="read", arguments="{}"),
            RunEnded(status="error", reason="provider said sk-planted", answer="", usage=usage),
        ]
    )
    named = _by_name(spans)
    assert set(named) == {"invoke_agent agent-ls", "turn", "execute_tool read"}
    tool = named["execute_tool read"][0]
    assert tool.attributes is not None and tool.attributes["agent_ls.unfinished"] is True
    run = named["invoke_agent agent-ls"][0]
    assert run.status.status_code is StatusCode.ERROR
    assert run.attributes is not None and run.attributes["error.type"] == "run_error"
    assert "sk-planted" not in "".join(s.to_json() for s in spans)


def test_a_compaction_summary_without_call_facts_is_a_zero_length_chat_span() -> None:
    usage = Usage(input_tokens=5, output_tokens=2)
    spans = _record(
        [
            RunStarted(session_id="s", task="t", model="openai/gpt-4.1"),
            TurnStarted(turn=1, max_turns=3),
            UsageReported(usage=usage, total=usage, role="compaction"),
            RunEnded(status="done", reason="", answer="", usage=usage),
        ]
    )
    chat = _by_name(spans)["chat gpt-4.1"][0]
    assert chat.attributes is not None and chat.attributes["agent_ls.role"] == "compaction"
    assert chat.start_time == chat.end_time


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("openai/gpt-4.1", ("openai", "gpt-4.1")),
        ("openai-responses/o3", ("openai", "o3")),
        ("anthropic/claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("local/org/model:q4", ("local", "org/model:q4")),
        ("replay:/home/me/secret-project/s.json", ("replay", "")),
        ("bare", ("_OTHER", "bare")),
    ],
)
def test_provider_and_model_of_a_model_string(model: str, expected: tuple[str, str]) -> None:
    assert provider_and_model(model) == expected


def test_the_switch_is_agent_ls_otel_and_the_standard_endpoint_alone_does_not_switch_it_on() -> None:
    assert not switched_on({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert not switched_on({"AGENT_LS_OTEL": "0"})
    assert switched_on({"AGENT_LS_OTEL": " True "})
    off = Telemetry({})
    assert off.open() is None
    forward = print
    assert off.traced(forward) is forward
    off.shutdown()


def test_switched_on_without_the_extra_gives_one_line_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if the exporter were not installed: an import of it fails (Python's documented sys.modules None).
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    telemetry = Telemetry({"AGENT_LS_OTEL": "1"})
    problem = telemetry.open()
    assert problem is not None and "\n" not in problem
    assert problem.endswith(INSTALL_HINT) and "opentelemetry.exporter" in problem
    assert telemetry.open() is None  # said once; the export stays off
    assert telemetry.traced(print) is print
