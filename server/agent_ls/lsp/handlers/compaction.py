"""``agent.compact``: compact a session's history now, between runs (``core.compaction``).

The summary is asked of the session's model (a request is sent); the compacted history is written to the
session file as a ``compaction`` record, so a later load starts from it.
"""

from __future__ import annotations

import functools
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_ls.core.errors import AgentLsError
from agent_ls.core.events import ContextCompacted
from agent_ls.lsp import protocol as p
from agent_ls.lsp.command_args import parse_params
from agent_ls.lsp.handlers import sessions
from agent_ls.lsp.handlers.commands import assemble_for
from agent_ls.lsp.state import AgentLanguageServer
from agent_ls.sessions.resume import compaction_payload


async def compact(ls: AgentLanguageServer, *arguments: Any) -> dict[str, Any]:
    """``agent.compact {sessionId?, focus?}`` → ``{how, tokensBefore, tokensAfter, pruned}``.

    Raises ``JsonRpcInvalidParams`` for an unknown session, one with no history yet, a model that cannot
    be opened or a summary that failed (its one-line reason), and ``JsonRpcInvalidRequest`` while the
    session runs a task.
    """
    params = parse_params(p.CompactParams, arguments)
    entry = await sessions.entry_for(ls, params.session_id, functools.partial(assemble_for, ls))
    if entry is None:
        which = f"no session {params.session_id!r}" if params.session_id else "no session yet"
        raise JsonRpcInvalidParams(f"{which}; run a task first")
    session = entry.session
    sessions.refuse_if_running(ls, session.session_id)
    if len(session.history) < 2:
        raise JsonRpcInvalidParams(f"session {session.session_id} has no history to compact yet")
    try:
        model = session.open_model()
    except Exception as exc:
        raise JsonRpcInvalidParams(f"cannot open the model: {exc}") from exc
    try:
        done = await session.compactor(model).compact(
            session.history, list(session.registry.specs()), model, force=True, focus=params.focus or ""
        )
    except AgentLsError as exc:
        raise JsonRpcInvalidParams(f"compaction failed: {exc}") from exc
    finally:
        await model.aclose()
    event = ContextCompacted("manual", done.how, done.tokens_before, done.tokens_after, done.pruned)
    sessions.record(entry, "compaction", compaction_payload(session, event))
    return p.CompactResult(
        how=done.how, tokens_before=done.tokens_before, tokens_after=done.tokens_after, pruned=done.pruned
    ).wire()
