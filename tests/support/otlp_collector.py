"""A tiny OTLP/HTTP trace collector on 127.0.0.1 for the tests of the OpenTelemetry export
(docs/telemetry.md): it answers ``POST /v1/traces`` with 200, keeps each raw body, and decodes the spans
with ``opentelemetry-proto`` (the protobuf messages the OTLP exporter sends)."""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

TRACES_PATH = "/v1/traces"


@dataclass(frozen=True)
class CollectedSpan:
    """One span as received: its name, attributes (plain Python values), ids (hex) and times (ns)."""

    name: str
    attributes: dict[str, Any]
    span_id: str
    parent_span_id: str
    trace_id: str
    start_ns: int
    end_ns: int
    resource: dict[str, Any]


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind is not None else None


class OtlpCollector:
    """Records what an OTLP/HTTP exporter posts. Use as a context manager; ``endpoint`` is the base URL
    for ``OTEL_EXPORTER_OTLP_ENDPOINT``."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with collector._lock:
                    collector.paths.append(self.path)
                    collector.bodies.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> OtlpCollector:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def spans(self) -> list[CollectedSpan]:
        """Every span received so far, in the order received."""
        with self._lock:
            bodies = list(self.bodies)
        found: list[CollectedSpan] = []
        for body in bodies:
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        found.append(
                            CollectedSpan(
                                name=span.name,
                                attributes={a.key: _value(a.value) for a in span.attributes},
                                span_id=span.span_id.hex(),
                                parent_span_id=span.parent_span_id.hex(),
                                trace_id=span.trace_id.hex(),
                                start_ns=span.start_time_unix_nano,
                                end_ns=span.end_time_unix_nano,
                                resource=resource,
                            )
                        )
        return found
