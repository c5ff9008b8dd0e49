"""The optional OpenTelemetry export of runs (docs/telemetry.md): off unless ``AGENT_LS_OTEL`` is set.

Order, for a front end (``agent-ls run``, the language server): ``Telemetry(environ)`` once per process;
``open()`` before the first run (a one-line problem when switched on without the ``otel`` extra);
``traced(sink)`` around each run's event sink; ``shutdown()`` when the process is done, which exports what
is still queued. The OpenTelemetry SDK is imported by ``open()`` only when switched on
(``sessions.otel_spans``, the one module that imports it); a process with telemetry off never loads it.

Why a switch of our own: the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` is often set for other programs,
and alone it must not make agent-ls send anything. Why not a key of ``agent-ls.toml``: a workspace's file
could then send a cloned repository's runs wherever it likes. The ``OTEL_*`` variables then say where to
and how (endpoint, headers, timeout, service name), as for any OpenTelemetry SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from agent_ls.core.events import EventSink

if TYPE_CHECKING:
    from agent_ls.sessions.otel_spans import SpanExport

OTEL_SWITCH = "AGENT_LS_OTEL"
"""The environment variable that switches the export on: ``1``, ``true``, ``yes`` or ``on``."""
INSTALL_HINT = "pip install 'agent-ls[otel]'"
_ON = frozenset({"1", "true", "yes", "on"})


def switched_on(environ: Mapping[str, str]) -> bool:
    """True when ``AGENT_LS_OTEL`` asks for the export (case and surrounding spaces ignored)."""
    return (environ.get(OTEL_SWITCH) or "").strip().lower() in _ON


class Telemetry:
    """A process's span export, off unless switched on, opened once (``open``).

    Attributes:
        enabled: ``AGENT_LS_OTEL`` asked for the export (it may still have failed to open).
    """

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.enabled = switched_on(environ)
        self._service_name = environ.get("OTEL_SERVICE_NAME") or ""
        self._export: SpanExport | None = None
        self._tried = False

    def open(self) -> str | None:
        """Start the export when switched on. Returns a one-line problem the first time it cannot start
        (the ``otel`` extra is not installed: the line says how to install it), else None; after a
        problem the export stays off. Never raises; does nothing once tried or when switched off."""
        if not self.enabled or self._tried:
            return None
        self._tried = True
        try:
            from agent_ls.sessions.otel_spans import SpanExport

            self._export = SpanExport.over_otlp({"OTEL_SERVICE_NAME": self._service_name})
        except ImportError as exc:
            missing = exc.name or "opentelemetry"
            return f"{OTEL_SWITCH} is set but {missing} is not installed: {INSTALL_HINT}"
        return None

    def traced(self, forward: EventSink) -> EventSink:
        """``forward`` itself when the export is off; else a sink that records each event as spans, then
        passes it to ``forward`` unchanged (``otel_spans.SpanExport.sink``)."""
        return forward if self._export is None else self._export.sink(forward)

    def shutdown(self) -> None:
        """Export what is queued and stop (blocks up to the exporter's timeout); a no-op when off."""
        if self._export is not None:
            export, self._export = self._export, None
            export.shutdown()
