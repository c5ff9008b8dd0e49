"""``agent.traceHtml {sessionId}``: a stored session's trajectory as one self-contained, inert HTML page
(``sessions.trace_html``, the page ``agent-ls trace html`` writes), for the editor to show; the VS Code
session view opens it in a panel without scripts (docs/sessions.md, "Reading a trajectory")."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.sessions.store import SessionFormatError, SessionNotFound, SessionStore, check_id
from agent_ls.sessions.trace import build_trace
from agent_ls.sessions.trace_html import trace_html


def _page(store: SessionStore, roots: list[Path], session_id: str) -> str:
    """The page of ``session_id``, from its file in the first open folder that stores it. Blocking.

    Raises:
        SessionNotFound, SessionFormatError: as ``SessionStore.read``.
    """
    check_id(session_id)
    for root in roots:
        if store.path(root, session_id).is_file():
            return trace_html(build_trace(store.read(root, session_id)))
    raise SessionNotFound(f"no session {session_id} is stored for the open workspace folders")


async def trace_page(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.traceHtml {sessionId}`` → ``TraceHtmlResult``; InvalidParams when no open folder stores
    it. A session running in this server is read as written so far (its file is appended as it goes)."""
    params = parse_params(p.SessionHistoryParams, arguments)
    try:
        html = await asyncio.to_thread(_page, ls.state.store, list(ls.state.roots), params.session_id)
    except (SessionNotFound, SessionFormatError) as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    return p.TraceHtmlResult(session_id=params.session_id, html=html).wire()
