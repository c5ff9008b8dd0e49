"""``agent.context``: what the next request of a session holds, part by part.

The session's model client is opened (no request is sent) so that the body is measured as that client
builds it (``Session.context_report``); the work runs in a worker thread, the editor is answered
meanwhile.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.handlers.commands import session_entry
from agent_ls.lsp.state import AgentLanguageServer


async def context(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.context {sessionId?}`` → ``{contextWindow, used, free, parts: [{name, tokens}]}``.

    ``sessionId`` left out means the latest session. Raises ``JsonRpcInvalidParams`` for an unknown
    session (or none yet), and for a model that cannot be opened (its one-line reason).
    """
    params = parse_params(p.SessionParams, arguments)
    entry = session_entry(ls, params.session_id)
    if entry is None:
        which = f"no session {params.session_id!r}" if params.session_id else "no session yet"
        raise JsonRpcInvalidParams(f"{which}; run a task first (the task /context answers for a new one)")
    try:
        model = entry.session.open_model()  # builds a client; sends nothing
    except Exception as exc:
        raise JsonRpcInvalidParams(f"cannot open the model: {exc}") from exc
    try:
        report = await asyncio.to_thread(entry.session.context_report, model)
    finally:
        await model.aclose()
    return p.ContextResult(
        context_window=report.context_window,
        used=report.used,
        free=report.free,
        parts=[p.ContextPartWire(name=part.name, tokens=part.tokens) for part in report.parts],
        memory=p.MemoryFileWire(path=report.memory_path, bytes=report.memory_bytes)
        if report.memory_path
        else None,
    ).wire()
