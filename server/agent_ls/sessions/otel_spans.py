"""A run's events as OpenTelemetry spans: the one module of agent-ls that imports ``opentelemetry``.

Loaded only when telemetry is switched on (``sessions.telemetry``), so a run without it never imports the
SDK. The spans, with their parents (docs/telemetry.md has every attribute)::

    invoke_agent agent-ls                 RunStarted .. RunEnded
      turn                                TurnStarted .. the next TurnStarted or RunEnded
        chat <model>                      from UsageReported: ends at the event, starts latency_s before
        execute_tool <tool>               ToolCallStarted .. ToolCallFinished (verdict and rule on it)
          invoke_agent agent-ls           a ``task`` call's subagent run (SubagentEvent), the same tree

Attribute names follow the OpenTelemetry GenAI semantic conventions (semantic-conventions
``docs/gen-ai/gen-ai-spans.md`` and ``gen-ai-agent-spans.md``: ``gen_ai.operation.name``,
``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.usage.*``, ``gen_ai.tool.*``,
``gen_ai.conversation.id``); ours are ``agent_ls.*``. Never recorded: the task, any message or reasoning
text, tool arguments and outputs, the subject of a verdict, a run's reason line, MCP or check output. The
events that carry only text (``MessageDelta``, ``MessageCompleted``, ...) make no span at all.

The tracer provider is our own, never the global one: other libraries in the process (the MCP SDK calls
the OpenTelemetry API) keep their no-op tracer, so what leaves the machine is only what this module sends.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
from opentelemetry.util.types import AttributeValue

from agent_ls import __version__
from agent_ls.core.events import (
    ContextCompacted,
    Event,
    EventSink,
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
from agent_ls.core.messages import Usage

AGENT_NAME = "agent-ls"
INSTRUMENTATION_SCOPE = "agent_ls"
# The model string's provider part as GenAI's gen_ai.provider.name well-known values spell it; any other
# provider (a named one of agent-ls.toml, ollama, openrouter) keeps its own name, as the conventions say.
PROVIDER_NAMES = {"openai-responses": "openai"}
REPLAY_PREFIX = "replay:"  # models/resolution.py REPLAY_PREFIX; not imported: sessions sits above models
log = logging.getLogger(__name__)
Clock = Callable[[], int]
"""Now, in nanoseconds since the epoch (``time.time_ns``): the span timestamps."""


class SpanExport:
    """The spans of a process's runs and where they go: our own tracer provider (never the global one).

    ``sink`` wraps a run's event sink; ``shutdown`` exports what is still queued, then stops.
    """

    def __init__(self, provider: TracerProvider, clock: Clock = time.time_ns) -> None:
        self.provider = provider
        self._tracer = provider.get_tracer(INSTRUMENTATION_SCOPE, __version__)
        self._clock = clock

    @classmethod
    def over_otlp(cls, environ: Mapping[str, str]) -> SpanExport:
        """Export over OTLP/HTTP (protobuf) in batches, configured by the standard
        ``OTEL_EXPORTER_OTLP_*`` variables (endpoint, headers, timeout; the OpenTelemetry SDK reads them).

        ``service.name`` is ``agent-ls`` unless ``OTEL_SERVICE_NAME`` sets another;
        ``OTEL_RESOURCE_ATTRIBUTES`` adds to the resource. Raises ``ImportError`` when the OTLP exporter
        is not installed.
        """
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        name = environ.get("OTEL_SERVICE_NAME") or AGENT_NAME
        resource = Resource.create({"service.name": name, "service.version": __version__})
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        return cls(provider)

    def sink(self, forward: EventSink) -> EventSink:
        """A sink that records each event as spans (a fresh ``RunTracer``), then passes it on unchanged.

        Keeps ``EventSink``'s contract: recording never raises (a failure is logged once per sink) and
        never blocks (the batch processor exports on its own thread)."""
        tracer = RunTracer(self._tracer, clock=self._clock)
        failed = False

        def record(event: Event) -> None:
            nonlocal failed
            if not failed:
                try:
                    tracer.record(event)
                except Exception:
                    failed = True
                    log.warning("OpenTelemetry: this run's spans stop here", exc_info=True)
            forward(event)

        return record

    def shutdown(self) -> None:
        """Export the queued spans and stop; blocks up to the exporter's timeout
        (``OTEL_EXPORTER_OTLP_TIMEOUT``, 10 s by default) when the collector does not answer."""
        self.provider.shutdown()


def provider_and_model(model: str) -> tuple[str, str]:
    """``(gen_ai.provider.name, gen_ai.request.model)`` of a model string: ``openai/gpt-4.1`` gives
    ``("openai", "gpt-4.1")``, ``local/qwen`` ``("local", "qwen")``, ``replay:s.json`` ``("replay", "")``
    (a script path is not a model name, and may name the user's files)."""
    if model.startswith(REPLAY_PREFIX):
        return "replay", ""
    provider, slash, name = model.partition("/")
    if not slash:
        return "_OTHER", model
    return PROVIDER_NAMES.get(provider, provider), name


def usage_attributes(usage: Usage) -> dict[str, AttributeValue]:
    """GenAI's token counts (``gen_ai.usage.*``) and ours: cost in US dollars when priced, and whether
    the counts are estimates (bytes / 4; the provider reported none)."""
    attributes: dict[str, AttributeValue] = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cached_input_tokens,
        "agent_ls.usage.estimated": usage.estimated,
    }
    if usage.cost_usd is not None:
        attributes["agent_ls.cost_usd"] = usage.cost_usd
    return attributes


@dataclass
class RunTracer:
    """Records the spans of one session's runs, one event at a time (``record``), in event order.

    A ``task`` call's subagent gets a ``RunTracer`` of its own whose spans are children of that call's
    span. Events out of order (a finish without a start) are ignored; ``RunEnded`` ends every span still
    open. Not thread-safe: the loop emits from one task.
    """

    tracer: Tracer
    parent: Context | None = None
    subagent: bool = False
    clock: Clock = time.time_ns
    _run: Span | None = None
    _model: str = ""
    _turn: Span | None = None
    _tools: dict[str, Span] = field(default_factory=dict)
    _subagents: dict[str, RunTracer] = field(default_factory=dict)

    def record(self, event: Event) -> None:
        """Open, annotate or end the spans ``event`` concerns; events of no span are ignored."""
        now = self.clock()
        if isinstance(event, RunStarted):
            self._start_run(event, now)
        elif self._run is None:
            return  # an event outside a run (none today): nothing to hang it on
        elif isinstance(event, TurnStarted):
            self._end_turn(now)
            self._turn = self.tracer.start_span(
                "turn",
                context=trace.set_span_in_context(self._run),
                attributes={"agent_ls.turn": event.turn, "agent_ls.max_turns": event.max_turns},
                start_time=now,
            )
        elif isinstance(event, UsageReported):
            self._model_call(event, now)
        elif isinstance(event, ModelRetrying):
            attributes = {"agent_ls.attempt": event.attempt, "agent_ls.max_attempts": event.max_attempts}
            self._innermost().add_event(
                "agent_ls.model_retry", {**attributes, "agent_ls.wait_s": event.wait_s}, timestamp=now
            )
        elif isinstance(event, ContextCompacted):
            self._innermost().add_event(
                "agent_ls.compaction",
                {
                    "agent_ls.compaction.reason": event.reason,
                    "agent_ls.compaction.how": event.how,
                    "agent_ls.compaction.tokens_before": event.tokens_before,
                    "agent_ls.compaction.tokens_after": event.tokens_after,
                },
                timestamp=now,
            )
        elif isinstance(event, ToolCallStarted):
            self._tools[event.call_id] = self.tracer.start_span(
                f"execute_tool {event.name}",
                context=trace.set_span_in_context(self._innermost()),
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": event.name,
                    "gen_ai.tool.call.id": event.call_id,
                    "gen_ai.tool.type": "function",
                },
                start_time=now,
            )
        elif isinstance(event, VerdictGiven):
            self._verdict(event)
        elif isinstance(event, ToolCallFinished):
            self._finish_tool(event, now)
        elif isinstance(event, SubagentEvent):
            self._subagent_event(event)
        elif isinstance(event, RunEnded):
            self._end_run(event, now)

    def _start_run(self, event: RunStarted, now: int) -> None:
        if self._run is not None:  # a run that never ended (a crash mid-run): close it first
            self._close_open(now)
            self._run.end(end_time=now)
        provider, model = provider_and_model(event.model)
        self._model = model
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": AGENT_NAME,
            "gen_ai.agent.version": __version__,
            "gen_ai.conversation.id": event.session_id,
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model,
            "agent_ls.sandboxed": not event.unsandboxed,
            "agent_ls.subagent": self.subagent,
        }
        self._run = self.tracer.start_span(
            f"invoke_agent {AGENT_NAME}", context=self.parent, attributes=attributes, start_time=now
        )

    def _innermost(self) -> Span:
        """The open turn's span, else the run's: where a model call, a tool call or a note belongs."""
        span = self._turn or self._run
        assert span is not None  # record() only calls this inside a run
        return span

    def _model_call(self, event: UsageReported, now: int) -> None:
        call = event.call
        model = self._model
        attributes: dict[str, AttributeValue] = {"gen_ai.operation.name": "chat", "agent_ls.role": event.role}
        start = now
        if call is not None:
            provider, model = provider_and_model(call.model)
            attributes["gen_ai.provider.name"] = provider
            attributes["agent_ls.latency_s"] = call.latency_s
            start = now - max(0, round(call.latency_s * 1e9))
            if call.request is not None:
                attributes["agent_ls.request.bytes"] = call.request.size_bytes
        if model:
            attributes["gen_ai.request.model"] = model
        attributes.update(usage_attributes(event.usage))
        span = self.tracer.start_span(
            f"chat {model}".strip(),
            context=trace.set_span_in_context(self._innermost()),
            kind=SpanKind.CLIENT,
            attributes=attributes,
            start_time=start,
        )
        span.end(end_time=now)

    def _verdict(self, event: VerdictGiven) -> None:
        span = self._tools.get(event.call_id)
        if span is None:  # an acceptance check's verdict: no tool call of the model's
            return
        span.set_attribute("agent_ls.verdict", event.verdict)
        span.set_attribute("agent_ls.rule", event.rule)
        if event.approval is not None:
            span.set_attribute("agent_ls.approval", event.approval)
        if event.unasked:
            span.set_attribute("agent_ls.approval.unasked", event.unasked)

    def _finish_tool(self, event: ToolCallFinished, now: int) -> None:
        span = self._tools.pop(event.call_id, None)
        self._subagents.pop(event.call_id, None)
        if span is None:
            return
        span.set_attribute("agent_ls.is_error", event.is_error)
        if event.is_error:  # the conventions' error.type: low cardinality, never the output text
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=now)

    def _subagent_event(self, event: SubagentEvent) -> None:
        child = self._subagents.get(event.call_id)
        if child is None:
            parent = self._tools.get(event.call_id) or self._innermost()
            child = RunTracer(
                self.tracer, parent=trace.set_span_in_context(parent), subagent=True, clock=self.clock
            )
            self._subagents[event.call_id] = child
        child.record(event.event)

    def _end_turn(self, now: int) -> None:
        if self._turn is not None:
            self._turn.end(end_time=now)
            self._turn = None

    def _close_open(self, now: int) -> None:
        """End what a run left open (a cancelled run's tool calls), innermost first."""
        for child in self._subagents.values():
            child._close_open(now)
            if child._run is not None:
                child._run.end(end_time=now)
                child._run = None
        self._subagents.clear()
        for span in self._tools.values():
            span.set_attribute("agent_ls.unfinished", True)
            span.end(end_time=now)
        self._tools.clear()
        self._end_turn(now)

    def _end_run(self, event: RunEnded, now: int) -> None:
        self._close_open(now)
        assert self._run is not None
        self._run.set_attribute("agent_ls.run.status", event.status)
        self._run.set_attribute("agent_ls.run.mode", event.mode)
        self._run.set_attributes(usage_attributes(event.usage))
        if event.status == "error":  # the reason line stays out: it may quote a provider's message
            self._run.set_attribute("error.type", "run_error")
            self._run.set_status(Status(StatusCode.ERROR))
        self._run.end(end_time=now)
        self._run = None
