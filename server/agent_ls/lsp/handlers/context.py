"""``agent.context``: what the next request of a session holds, part by part.

The session's model client is opened (no request is sent) so that the body is measured as that client
builds it (``Session.context_report``); with no model configured, as a Chat Completions request. With no
session yet, a new one is assembled and measured (what a first run's request would hold), then closed: it
is neither kept nor stored. The work runs in a worker thread, the editor is answered meanwhile.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.handlers import sessions
from agent_ls.lsp.handlers.commands import assemble_for, root_for
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.runtime import Session, new_session_id, open_or_reason


async def context(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.context {sessionId?}`` → ``{contextWindow, used, free, parts: [{name, tokens}], memory?,
    noModel?}``.

    ``sessionId`` left out means the latest session of this server, else a new session of the first
    workspace folder (measured, not kept); a stored session's id loads it (``sessions.entry_for``).
    Raises ``JsonRpcInvalidParams`` for an unknown session id.
    """
    params = parse_params(p.SessionParams, arguments)
    entry = await sessions.entry_for(ls, params.session_id, functools.partial(assemble_for, ls))
    if entry is None and params.session_id is not None:
        raise JsonRpcInvalidParams(f"no session {params.session_id!r}")
    fresh: Session | None = None
    if entry is None:
        fresh = await assemble_for(ls, root_for(ls, None), new_session_id())
    session = entry.session if entry is not None else fresh
    assert session is not None
    model, no_model = open_or_reason(session.open_model)  # builds a client; sends nothing
    try:
        report = await asyncio.to_thread(session.context_report, model, no_model)
    finally:
        if model is not None:
            await model.aclose()
        if fresh is not None:
            fresh.close()
    return p.ContextResult(
        context_window=report.context_window,
        used=report.used,
        free=report.free,
        parts=[p.ContextPartWire(name=part.name, tokens=part.tokens) for part in report.parts],
        memory=p.MemoryFileWire(path=report.memory_path, bytes=report.memory_bytes)
        if report.memory_path
        else None,
        no_model=report.no_model or None,
    ).wire()
