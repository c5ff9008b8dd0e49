"""The language server's side of the OpenTelemetry export (docs/telemetry.md, ``sessions.telemetry``).

The export is opened at the first run (never at start-up, so a server with it off or on loads the SDK only
when a run begins), wraps each run's event sink, and is shut down at ``shutdown``.
"""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types as t

from agent_ls.core.events import EventSink
from agent_ls.lsp.state import AgentLanguageServer

log = logging.getLogger(__name__)


def traced(ls: AgentLanguageServer, forward: EventSink) -> EventSink:
    """``forward``, recorded as spans first when ``AGENT_LS_OTEL`` switched the export on.

    Switched on without the ``otel`` extra, the first run shows the one-line problem (how to install it)
    as a warning; the runs go on without the export.
    """
    telemetry = ls.state.telemetry
    if (problem := telemetry.open()) is not None:
        log.warning("%s", problem)
        ls.window_show_message(
            t.ShowMessageParams(type=t.MessageType.Warning, message=f"agent-ls: {problem}")
        )
    return telemetry.traced(forward)


async def shutdown(ls: AgentLanguageServer) -> None:
    """Send the queued spans and stop the export (in a worker thread: it waits for the collector, at most
    the exporter's timeout)."""
    await asyncio.to_thread(ls.state.telemetry.shutdown)
